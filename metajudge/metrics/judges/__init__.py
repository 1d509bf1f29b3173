"""LLM-judge metrics: G-Eval, MT-RAIG Eval (faithfulness, completeness), answer equivalence and
MuDABench judging; the pairwise judge. Prompts are files in ``prompts/``; parsers are pure
functions in ``parsers``.

The metrics are registered by name in :mod:`metajudge.metrics.registry` (lazy ``"module:Class"``
targets); importing this package imports nothing heavy.
"""
