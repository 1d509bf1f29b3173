"""Runs end to end, above the engine and the reports: load, score, evaluate, render.

- :mod:`~metajudge.runs.meta_eval` — ``metajudge meta-eval`` (run folder, score cache).
- :mod:`~metajudge.runs.backbone_swap` — ``metajudge backbone-swap``.
- :mod:`~metajudge.runs.judge_diagnostics` — ``metajudge judge diagnostics``.
- :mod:`~metajudge.runs.baselines` — ``metajudge baselines check [--write]``.
- :mod:`~metajudge.cli.meta_eval`, :mod:`~metajudge.cli.swap` — their commands.

:mod:`metajudge.analyses` computes and :mod:`metajudge.reports` renders; neither imports the
other's runs, and only this package imports both.
"""
