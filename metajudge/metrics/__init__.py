"""metajudge.metrics — every metric, with a registry and signatures.

- :mod:`~metajudge.metrics.base` — the ``Metric`` interface, ``ScoreItem``, ``MetricResult``.
- :mod:`~metajudge.metrics.registry` — ``register`` / ``get_metric`` / ``list_metrics`` / ``metric_info``.
- :mod:`~metajudge.metrics.lexical` — BLEU (sacreBLEU), ROUGE-L (rouge-score), METEOR (NLTK).
- :mod:`~metajudge.metrics.wordnet` — WordNet for METEOR (``metajudge setup wordnet``).
- :mod:`~metajudge.metrics.bertscore` — BERTScore through one loaded ``BERTScorer``.
- :mod:`~metajudge.metrics.numeric` — one number extractor and the named equivalence rules.
- :mod:`~metajudge.metrics.number_match` — T2-RAGBench Number Match.
- :mod:`~metajudge.metrics.retrieval` — MRR@k, Recall/Precision/F1/Hit@k.
- :mod:`~metajudge.metrics.mudabench` — MuDABench final / process / full accuracy aggregation.
- :mod:`~metajudge.scores.scoring` — ``score_dataset``, ``write_scores`` (read back by
  :func:`metajudge.scores.files.read_scores`).
- :mod:`~metajudge.metrics.judges` — the LLM judges (G-Eval, MT-RAIG Eval, answer equivalence).

Nothing heavy is imported here: models and libraries load when a metric is first used.
"""
