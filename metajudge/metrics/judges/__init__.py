"""LLM-judge metrics: G-Eval, MT-RAIG Eval (faithfulness, completeness), answer equivalence and
MuDABench judging. Prompts are files in ``prompts/``; parsers are pure functions in ``parsers``.

Importing this package only registers the metrics (lazy ``"module:Class"`` targets); nothing
heavy is imported until a metric is built.
"""

from __future__ import annotations

from metajudge.metrics.registry import register

register("geval", "metajudge.metrics.judges.geval:GEval", dimension="faithfulness")
register("geval_faithfulness", "metajudge.metrics.judges.geval:GEval", dimension="faithfulness")
register("geval_completeness", "metajudge.metrics.judges.geval:GEval", dimension="completeness")
register("mtraig_faithfulness", "metajudge.metrics.judges.mtraig:MTRAIGFaithfulness")
register("mtraig_completeness", "metajudge.metrics.judges.mtraig:MTRAIGCompleteness")
register("answer_equivalence", "metajudge.metrics.judges.equivalence:AnswerEquivalence")
register("mudabench_process", "metajudge.metrics.judges.mudabench_judge:FactCoverageJudge")
