"""Meta-evaluation: how well metric scores agree with human labels. Computes; never renders.

- :mod:`~metajudge.metaeval.stats` — every statistic, once: correlations, pairwise accuracy,
  the tie-band decision, the annotator mean and leave-one-out reference, bootstrap, p-values,
  permutation and Williams tests, Holm.
- :mod:`~metajudge.metaeval.options` — :class:`~metajudge.metaeval.options.Protocol`, the
  options of a run as one frozen value.
- :mod:`~metajudge.metaeval.aligned` — the aligned view (responses, pairs, items, labels,
  metric values) every analysis reads.
- :mod:`~metajudge.metaeval.estimates`, :mod:`~metajudge.metaeval.levels` — estimates with
  bootstrap intervals (pooled, per item, per system, system-level; the human reference).
- :mod:`~metajudge.metaeval.protocol` — :func:`~metajudge.metaeval.protocol.meta_evaluate`
  (pairwise-difference cells in :mod:`~metajudge.metaeval.cells`, pointwise in
  :mod:`~metajudge.metaeval.pointwise`, comparisons in :mod:`~metajudge.metaeval.compare`);
  its result type in :mod:`~metajudge.metaeval.result`.
- :mod:`~metajudge.metaeval.swap` — the backbone-swap analysis (its score sources in
  :mod:`~metajudge.metaeval.swap_sources`); :mod:`~metajudge.metaeval.biases` — judge
  diagnostics; :mod:`~metajudge.metaeval.agreement` — κ, Krippendorff's α.
- :mod:`~metajudge.metaeval.normalize` — ``minmax`` (RAGChecker), ``sign``, ``raw``.
- :mod:`~metajudge.metaeval.external`, :mod:`~metajudge.metaeval.score_files`,
  :mod:`~metajudge.metaeval.shipped` — score files and the columns a dataset card declares.

Runs end to end (load, score, evaluate, render) live in :mod:`metajudge.pipeline`. Nothing heavy
is imported here.
"""
