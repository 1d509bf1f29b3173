"""metajudge — meta-evaluation and judge calibration.

How far can you trust a metric or an LLM judge compared with humans, and does that hold
when the judge's backbone changes?  ``import metajudge`` stays light: the public names below
load their modules on first use (PEP 562), and heavy libraries (torch, bert_score, llama_cpp,
matplotlib, pandas) load inside the functions that need them.

>>> import metajudge as mj                                               # doctest: +SKIP
>>> ds = mj.load_dataset("ragchecker_meta_eval")                         # doctest: +SKIP
>>> res = mj.meta_evaluate(ds, mj.shipped_scores(ds), mj.Protocol(n_boot=200))  # doctest: +SKIP
>>> res.value("ragchecker", "overall")                                   # doctest: +SKIP
0.6193...
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.3.0"

#: public name -> (module, attribute)
_LAZY: dict[str, tuple[str, str]] = {
    # one loader (metajudge.data.loading.load) under both names: a dataset name or a file
    "load_dataset": ("metajudge.data.loading", "load"),
    "load_file": ("metajudge.data.loading", "load"),
    "score": ("metajudge.scores.scoring", "score_dataset"),
    "read_scores": ("metajudge.scores.files", "read_scores"),
    "shipped_scores": ("metajudge.scores.shipped", "shipped_scores"),
    "Protocol": ("metajudge.analyses.metric_vs_human.protocol", "Protocol"),
    "MetaEvalResult": ("metajudge.analyses.metric_vs_human.result", "MetaEvalResult"),
    "meta_evaluate": ("metajudge.analyses.metric_vs_human.evaluate", "meta_evaluate"),
    "backbone_swap": ("metajudge.runs.backbone_swap", "run_backbone_swap"),
    "judge_diagnostics": ("metajudge.runs.judge_diagnostics", "run_judge_diagnostics"),
    "markdown": ("metajudge.reports.render", "markdown"),
    "plot": ("metajudge.reports.render", "plot"),
    # the backbone decision (issue 15)
    "decide": ("metajudge.runs.decide", "run_decide"),
    "decide_verdicts": ("metajudge.runs.decide", "run_decide_verdicts"),
    "judge_frontier": ("metajudge.runs.decide", "run_frontier_table"),
    "drift": ("metajudge.runs.decide", "run_drift"),
    "ppi_mean": ("metajudge.stats.ppi", "ppi_mean"),
    # selective judging with a human-agreement guarantee (issue 28)
    "calibrate_selective": ("metajudge.analyses.selective", "calibrate_selective"),
    "calibrate_fit": ("metajudge.analyses.calibration.fit", "calibrate_fit"),
    "calibrate_apply": ("metajudge.analyses.calibration.fit", "apply_result"),
    "calibrate_conformal": ("metajudge.analyses.calibration.conformal", "calibrate_conformal"),
    "rating_table": ("metajudge.analyses.calibration.sources", "table_from_csv"),
    "rating_table_from_scores": ("metajudge.analyses.calibration.sources", "table_from_scores"),
    "calibrate_sets": ("metajudge.analyses.calibration.verdict_sets", "calibrate_sets"),
    "verdict_table": ("metajudge.analyses.calibration.verdict_sets", "verdict_table"),
    # the judge card and several judges compared (issue 62; `metajudge judge card`)
    "judge_card": ("metajudge.runs.judge_cards", "judge_card"),
    "card_gate": ("metajudge.runs.judge_cards", "card_gate"),
    # one metric on hand-made inputs (notebooks/03_mtraig_eval_walkthrough.ipynb)
    "get_metric": ("metajudge.metrics.registry", "get_metric"),
    "list_metrics": ("metajudge.metrics.registry", "list_metrics"),
    "Input": ("metajudge.data.formats", "Input"),
    "ScoreItem": ("metajudge.metrics.base", "ScoreItem"),
    "response_key": ("metajudge.data.formats", "response_key"),
}

__all__ = [
    "Input",
    "MetaEvalResult",
    "Protocol",
    "ScoreItem",
    "__version__",
    "backbone_swap",
    "calibrate_apply",
    "calibrate_conformal",
    "calibrate_fit",
    "calibrate_selective",
    "calibrate_sets",
    "card_gate",
    "decide",
    "decide_verdicts",
    "drift",
    "get_metric",
    "judge_card",
    "judge_diagnostics",
    "judge_frontier",
    "list_metrics",
    "load_dataset",
    "load_file",
    "markdown",
    "meta_evaluate",
    "plot",
    "ppi_mean",
    "rating_table",
    "rating_table_from_scores",
    "read_scores",
    "response_key",
    "score",
    "shipped_scores",
    "verdict_table",
]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'metajudge' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
