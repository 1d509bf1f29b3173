"""Meta-evaluation: how well metric scores agree with human labels. Computes; never renders and
never calls a model: judged scores and verdicts come in as data (the judging is in
:mod:`metajudge.runs`, the rendering in :mod:`metajudge.reports`; ``tests/test_structure.py``
checks the imports). Every result follows :class:`metajudge.results.Result`.

- :mod:`~metajudge.stats` — every statistic, once: correlations, pairwise accuracy,
  the tie-band decision, the annotator mean and leave-one-out reference, bootstrap, p-values,
  permutation and Williams tests, Holm.
- :mod:`~metajudge.analyses.metric_vs_human.protocol` — :class:`~metajudge.analyses.metric_vs_human.protocol.Protocol`, the
  options of a run as one frozen value.
- :mod:`~metajudge.analyses.metric_vs_human.aligned` — the aligned view (responses, pairs, items, labels,
  metric values) every analysis reads.
- :mod:`~metajudge.stats.estimates`, :mod:`~metajudge.analyses.metric_vs_human.levels` — estimates with
  bootstrap intervals (pooled, per item, per system, system-level; the human reference).
- :mod:`~metajudge.analyses.metric_vs_human.evaluate` — :func:`~metajudge.analyses.metric_vs_human.evaluate.meta_evaluate`
  (pairwise-difference cells in :mod:`~metajudge.analyses.metric_vs_human.cells`, pointwise in
  :mod:`~metajudge.analyses.metric_vs_human.pointwise`, comparisons in :mod:`~metajudge.analyses.metric_vs_human.compare`);
  its result type in :mod:`~metajudge.analyses.metric_vs_human.result`.
- :mod:`~metajudge.analyses.backbone_swap` — the backbone-swap analysis (its score sources in
  :mod:`~metajudge.scores.swap_sources`); :mod:`~metajudge.analyses.judge_biases` — judge
  diagnostics; :mod:`~metajudge.stats.agreement` — κ, Krippendorff's α.
- :mod:`~metajudge.analyses.metric_vs_human.normalize` — ``minmax`` (RAGChecker), ``sign``, ``raw``.
- :mod:`~metajudge.scores.readers.upstream`, :mod:`~metajudge.scores.files`,
  :mod:`~metajudge.scores.shipped` — score files and the columns a dataset card declares.

Runs end to end (load, score, evaluate, render) live in :mod:`metajudge.runs`. Nothing heavy
is imported here.
"""
