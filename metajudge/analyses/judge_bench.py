"""An LLM judge's replies in a JUDGE-BENCH file, parsed and meta-evaluated against the humans.

JUDGE-BENCH (Bavaresco et al., ACL 2025) stores each judge's raw reply in the data file itself:
``instances[i].annotations[metric][<model name>] = "<raw reply>"``. :func:`metajudge.scores.readers.judge_bench.add_replies` writes
replies into a copy of a file that way; :func:`~metajudge.metrics.judges.parsers.labels.parse_reply`
turns one reply into a label with the rules of the upstream ``extract_answer``
(``eval_responses.py``, non-CoT prompts) — except that an unparseable reply is ``None`` and
counted, where upstream substitutes a random label;
:func:`evaluate_judge` compares the parsed labels with ``majority_human`` (categorical: accuracy,
Cohen's κ, macro-F1, confusion; :mod:`metajudge.stats.classification`) or ``mean_human`` (graded /
continuous: Pearson, Spearman, Kendall τ-b, as upstream with scipy), with the published results
of the paper's 11 judges (``results/regular/<set>.json``) loaded by :func:`published_results`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metajudge.data.formats import Scale
from metajudge.errors import InputError
from metajudge.metrics.judges.parsers.labels import parse_reply
from metajudge.results import Result

__all__ = ["evaluate_judge", "parse_reply", "published_results"]

if TYPE_CHECKING:
    from metajudge.data.registry import Dataset

NUMERIC_STATS = ("pearson", "spearman", "kendall")
CATEGORICAL_STATS = ("accuracy", "cohen_kappa", "macro_f1")


@dataclass(frozen=True)
class DimensionEval:
    dimension: str
    level: str  # categorical | numeric
    total: int
    valid: int
    scores: Mapping[str, float]
    confusion: tuple[tuple[int, ...], ...] = ()
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeEval(Result):
    dataset: str
    model: str
    rows: tuple[DimensionEval, ...]
    notes: tuple[str, ...] = field(default=())


def _gold(meta: Mapping[str, Any], dim: str, scale: Scale) -> str | float | None:
    if scale.labels is not None:
        raw = (meta.get("majority_human") or {}).get(dim)
        low = {x.lower(): x for x in scale.labels}
        return None if raw is None else low.get(str(raw).strip().lower())
    raw = (meta.get("mean_human") or {}).get(dim)
    return None if raw is None else float(raw)


def _check_stats(statistics: Sequence[str], scale: Scale, dim: str) -> None:
    allowed = CATEGORICAL_STATS if scale.labels is not None else NUMERIC_STATS
    bad = [s for s in statistics if s not in allowed]
    if bad:
        kind = "nominal labels" if scale.labels is not None else "numeric scores"
        raise InputError(
            f"{', '.join(bad)} make(s) no sense for {kind} of {dim!r} "
            f"(available: {', '.join(allowed)})",
            field="statistics",
        )


def evaluate_dimension(
    ds: Dataset, dim: str, model: str, statistics: Sequence[str] | None = None
) -> DimensionEval:
    """One dimension of ``ds``: ``model``'s parsed replies against the aggregated human label."""
    from metajudge.stats.classification import categorical_scores

    scale = ds.card.scale_of(dim)
    stats = tuple(statistics or (CATEGORICAL_STATS if scale.labels else NUMERIC_STATS))
    _check_stats(stats, scale, dim)
    gold, pred = [], []
    for r in ds.records:
        reply = ((r.meta.get("replies") or {}).get(dim) or {}).get(model)
        g = _gold(r.meta, dim, scale)
        if reply is None or g is None:
            continue
        gold.append(g)
        pred.append(parse_reply(str(reply), scale))
    valid = sum(p is not None for p in pred)
    if scale.labels is not None:
        cs = categorical_scores(gold, pred, scale.labels)  # type: ignore[arg-type]
        scores = {s: getattr(cs, s) for s in stats}
        return DimensionEval(dim, "categorical", len(gold), valid, scores, cs.confusion, cs.labels)
    pairs = [(g, p) for g, p in zip(gold, pred) if p is not None]
    return DimensionEval(dim, "numeric", len(gold), valid, _correlations(pairs, stats))


def _correlations(pairs: Sequence[tuple[Any, Any]], stats: Sequence[str]) -> dict[str, float]:
    from metajudge.stats import statistic

    if len(pairs) < 2:
        return {s: math.nan for s in stats}
    human, judge = [float(g) for g, _ in pairs], [float(p) for _, p in pairs]
    # NUMERIC_STATS are symmetric, so the order does not matter for the value; the ratings have
    # gone in human-first since the first release and stay so, keeping Kendall's last bits
    # (the engine's order is (name, judge, human): stats.correlation.statistic)
    return {s: statistic(s, human, judge) for s in stats}


def evaluate_judge(ds: Dataset, model: str, statistics: Sequence[str] | None = None) -> JudgeEval:
    """Every dimension of ``ds`` that holds replies of ``model``."""
    rows = tuple(evaluate_dimension(ds, d, model, statistics) for d in ds.card.dimensions)
    rows = tuple(r for r in rows if r.total)
    if not rows:
        raise InputError(f"{ds.name}: no replies of model {model!r}", field="model")
    notes = (
        (
            "invalid replies (no label found) are counted and left out of every statistic, "
            "never replaced by a random label (upstream eval_responses.py does replace them)"
        ),
    )
    return JudgeEval(ds.name, model, rows, notes)


def published_results(
    card_name: str, data_dir: str | Path | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """``{judge: {metric: {kappa, pearson, spearman, kendall, valid, total, alpha}}}`` published
    for JUDGE-BENCH set ``card_name`` (``results/regular/<set>.json``); empty if none."""
    from metajudge.data.fetch import local_relpath
    from metajudge.data.registry import load_card, resolve_file
    from metajudge.io import read_json

    rel = f"results_regular/{card_name}.json"
    if not any(local_relpath(f) == rel for f in load_card("dmg_judge_bench").files):
        return {}
    res = read_json(resolve_file("dmg_judge_bench", rel, data_dir))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for judge, metrics in res.items():
        for metric, v in metrics.items():
            cc = v.get("corr_coeff") or {}
            out.setdefault(judge, {})[metric] = {
                "cohen_kappa": float(v.get("kappa_score", math.nan)),
                **{k: float(cc.get(k, math.nan)) for k in NUMERIC_STATS},
                "valid": float(v.get("valid_responses", math.nan)),
                "total": float(v.get("total_responses", math.nan)),
                "alpha": float(v.get("krippendorff_alpha", math.nan)),
            }
    return out
