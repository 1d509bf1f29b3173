"""Runs end to end, above the engine and the reports: load, score, evaluate, render.

- :mod:`~metajudge.pipeline.meta_eval` — ``metajudge meta-eval`` (run folder, score cache).
- :mod:`~metajudge.pipeline.swap` — ``metajudge backbone-swap``.
- :mod:`~metajudge.pipeline.diagnostics` — ``metajudge judge diagnostics``.
- :mod:`~metajudge.pipeline.baselines` — ``metajudge baselines regenerate|check``.
- :mod:`~metajudge.pipeline.cli`, :mod:`~metajudge.pipeline.swap_cli` — their commands.

:mod:`metajudge.metaeval` computes and :mod:`metajudge.reports` renders; neither imports the
other's runs, and only this package imports both.
"""
