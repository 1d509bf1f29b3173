"""Meta-evaluation: how well metric scores agree with human labels (DESIGN.md §4).

- :mod:`~metajudge.metaeval.stats` — correlations, pairwise accuracy, bootstrap / Fisher-z CIs,
  paired bootstrap, permutation and Williams tests, Holm (plain functions, vectorised).
- :mod:`~metajudge.metaeval.normalize` — ``minmax`` (RAGChecker), ``sign`` (with a learned tie
  band), ``raw`` normalisation of score differences.
- :mod:`~metajudge.metaeval.external` — score files computed elsewhere → score rows.
- :mod:`~metajudge.metaeval.protocol` — :func:`~metajudge.metaeval.protocol.meta_evaluate`.
- :mod:`~metajudge.metaeval.options`, :mod:`~metajudge.metaeval.aligned`, :mod:`~metajudge.metaeval.cells`,
  :mod:`~metajudge.metaeval.compare`, :mod:`~metajudge.metaeval.estimates` — the engine's parts.
- :mod:`~metajudge.metaeval.shipped` — the score columns a dataset card declares.
- ``agreement``, ``biases``, ``swap`` — backbone-swap agreement and judge biases.

Nothing heavy is imported here.
"""
