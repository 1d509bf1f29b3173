"""One argument order in :mod:`metajudge.stats`: the truth before the prediction, ``(human, judge)``.

A parameter is on the *human side* or the *judge side* when one of its name's ``_``-separated
words is in the vocabulary below; other names (``x``, ``y``, ``a``, ``b``, ``f``) take no side
(the symmetric statistics' ``(x, y)``, PPI's ``(y, f)``). A public function of any module of
``metajudge/stats`` whose first judge-side parameter comes before its first human-side one fails,
unless it is in :data:`ENGINE_ORDER`, where it says why.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable

import metajudge.stats

#: words that name the truth: human labels, gold labels, the outcome a prediction is scored on
HUMAN_SIDE = frozenset({"human", "gold", "truth", "true", "label", "labels", "outcome", "correct"})
#: words that name the prediction: a judge's or a metric's output, its scores and confidences
JUDGE_SIDE = frozenset({"judge", "pred", "prediction", "metric", "scores", "probs", "confidence"})

#: the functions that take the metric first, on purpose (each with its reason)
ENGINE_ORDER = {
    "metajudge.stats.correlation.statistic": (
        "the correlation engine's dispatch, (name, judge, human) as every correlate() request:"
        " symmetric in value for Pearson/Spearman/Kendall, whose last bits follow the order"
    ),
}


def _side(name: str) -> str | None:
    words = set(name.lower().split("_"))
    if words & HUMAN_SIDE:
        return "human"
    if words & JUDGE_SIDE:
        return "judge"
    return None


def judge_first(fn: Callable[..., object]) -> tuple[str, str] | None:
    """``(judge parameter, human parameter)`` when the judge side comes first, else ``None``."""
    first: dict[str, str] = {}
    for p in inspect.signature(fn).parameters.values():
        side = _side(p.name)
        if side == "human" and "judge" not in first:
            return None
        if side == "human":
            return first["judge"], p.name
        if side == "judge" and "judge" not in first:
            first["judge"] = p.name
    return None


def _two_sided(fn: Callable[..., object]) -> bool:
    sides = {_side(p) for p in inspect.signature(fn).parameters}
    return {"human", "judge"} <= sides


def _public_functions() -> dict[str, Callable[..., object]]:
    out: dict[str, Callable[..., object]] = {}
    for info in pkgutil.iter_modules(metajudge.stats.__path__):
        mod = importlib.import_module(f"metajudge.stats.{info.name}")
        for name, fn in vars(mod).items():
            if name.startswith("_") or not inspect.isfunction(fn):
                continue
            if fn.__module__ == mod.__name__:
                out[f"{mod.__name__}.{name}"] = fn
    return out


def test_the_check_fails_on_a_judge_first_signature() -> None:
    def wrong(judge_scores: list[float], gold: list[float]) -> None: ...

    def right(human: list[float], pred: list[float], labels: list[str]) -> None: ...

    assert judge_first(wrong) == ("judge_scores", "gold")
    assert judge_first(right) is None


def test_every_stats_function_takes_human_before_judge() -> None:
    fns = _public_functions()
    checked = {q for q, fn in fns.items() if _two_sided(fn)}
    # the functions the convention is about are seen by the check (it is not vacuous)
    for name in (
        "decisions.pair_credit",
        "decisions.accuracy_tally",
        "decisions.pairwise_accuracy",
        "calibration.mae",
        "calibration.expected_calibration_error",
        "calibration.reliability_bins",
        "classification.confusion",
        "selective.fixed_sequence_threshold",
        "spa.soft_pairwise_accuracy",
        "ppi.ppi_on_labels",
    ):
        assert f"metajudge.stats.{name}" in checked, name
    wrong = {q: judge_first(fns[q]) for q in sorted(checked) if judge_first(fns[q])}
    unexplained = {q: v for q, v in wrong.items() if q not in ENGINE_ORDER}
    assert not unexplained, f"judge-side parameter before the human side: {unexplained}"
    # every exception is still needed: the list cannot hide a function that has moved on
    assert set(wrong) == set(ENGINE_ORDER)
