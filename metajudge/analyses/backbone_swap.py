"""Backbone-swap agreement: one judge metric under two or more backbones on the same items.

After MT-RAIG Appendix C.1 / Table 8 (Pearson between the scores of the same judge under
different backbones). For every pair of backbones (X, Y) this reports

- Pearson and Spearman between the two score vectors, with percentile bootstrap CIs (items =
  inputs are resampled; all responses to one input stay together);
- on the pairwise decisions (d = s(b) − s(a) → {−1, 0, 1}, tie band ε,
  :func:`~metajudge.stats.tie_decisions`): Cohen's κ (unweighted and
  quadratic-weighted; every pair in both orientations,
  :func:`~metajudge.stats.agreement.decision_kappa`), the flip rate and the disagreement rate;
- each backbone's correlation with humans (with CIs) and a *paired* test of the difference
  (paired bootstrap on the same resamples, :func:`~metajudge.stats.bootstrap_p_value`;
  Williams' test for pooled and pair correlations; Holm across backbone pairs);
- a verdict line that states that evidence.

Across all backbones: Krippendorff's α (:mod:`metajudge.stats.agreement`). The inter-human
reference on the same units comes from :func:`metajudge.analyses.metric_vs_human.levels.loo_reference`.

Human-correlation protocols (always named in the output), all computed by
:mod:`metajudge.stats.estimates` exactly as the meta-evaluation computes them:

- ``grouped`` — Likert data: Pearson across the systems of one input, averaged over inputs
  (LFTQA-Eval's ``correlation_calculation.py``) against the annotators' mean; NaN inputs skipped.
- ``pooled`` — Likert data: Pearson / Spearman over all responses at once.
- ``pairs`` — d = s(b) − s(a) against the annotators' mean pair label; decision accuracy against
  the sign of the mean label (human ties excluded).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from metajudge import stats
from metajudge.analyses.metric_vs_human.aligned import AlignedView, align
from metajudge.analyses.metric_vs_human.levels import human_reference
from metajudge.analyses.metric_vs_human.protocol import Protocol
from metajudge.analyses.swap_summary import verdict_line
from metajudge.data.formats import Record
from metajudge.engine import Resamples
from metajudge.errors import InputError
from metajudge.results import ItemAccess, Result
from metajudge.stats import estimates as est
from metajudge.stats.agreement import (
    ORIENTATION,
    both_orientations,
    decision_disagreement,
    decision_kappa,
    flip_rate,
    krippendorff_alpha,
)

HumanProtocol = Literal["grouped", "pooled", "pairs"]
SWAP_VERSION = "3"  # 3: κ and α on decisions count both orientations of a pair

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]


@dataclass(frozen=True)
class SwapData:
    """Scores of one judge metric under several backbones on an :class:`AlignedView`.

    ``scores[k, i]`` is backbone ``k``'s score of response ``view.keys[i]`` (NaN: not scored).
    """

    dataset: str
    metric: str
    dimension: str
    view: AlignedView
    backbones: tuple[str, ...]
    scores: FArr
    signatures: Mapping[str, str] = field(default_factory=dict)
    unscored: Mapping[str, int] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.view.kind

    @property
    def keys(self) -> tuple[str, ...]:
        return self.view.keys

    @property
    def human_resp(self) -> FArr | None:
        """Responses × annotators labels (Likert data), else None."""
        r = self.view.resp_labels
        return None if r is None else r[self.dimension]

    @property
    def human_pair(self) -> FArr:
        return self.view.pair_labels[self.dimension]


@dataclass
class SwapResult(ItemAccess, Result):
    """The backbone-swap result (the module docstring says what each block holds).

    ``to_dict()`` is the ``swap.json`` layout. ``res["per_backbone"]``
    (:class:`~metajudge.results.ItemAccess`) keeps the spelling of the dict this result used to
    be; new code uses the attributes.
    """

    dataset: str
    metric: str
    dimension: str
    kind: str
    backbones: list[str]
    signatures: dict[str, str]
    protocol: dict[str, Any]
    n: dict[str, int]
    per_backbone: dict[str, dict[str, Any]]
    pairs: list[dict[str, Any]]
    alpha: dict[str, Any]
    ceiling: dict[str, Any]
    reliability: dict[str, dict[str, Any]]
    #: the live judge runs' summaries per backbone (empty for score columns; then not written)
    runs: dict[str, Any] = field(default_factory=dict)
    #: where the data was loaded from (:attr:`metajudge.data.registry.Dataset.source`; the report
    #: loads it again from there); not written when unknown
    source: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not self.runs:
            del d["runs"]
        if self.source is None:
            del d["source"]
        return d

    def to_pandas(self) -> Any:
        """One row per backbone: human correlation with CI, n, unscored responses."""
        import pandas as pd

        rows = []
        for bb, e in self.per_backbone.items():
            h = e["human"]
            lo, hi = h["ci"]
            rows.append(
                {"backbone": bb, "human": h["value"], "ci_low": lo, "ci_high": hi, "n": h["n"]}
                | {"protocol": h.get("protocol"), "unscored": e["unscored"]}
            )
        return pd.DataFrame(rows)


def build_swap_data(
    records: Sequence[Record],
    scores: Mapping[str, Mapping[str, float | None]],
    *,
    dimension: str,
    metric: str,
    dataset: str,
    signatures: Mapping[str, str] | None = None,
) -> SwapData:
    """Align per-backbone scores (keyed by :func:`~metajudge.data.formats.response_key`) with records.

    A response missing from a backbone's scores, or scored ``None``/NaN, counts as unscored for
    that backbone (reported, never imputed).
    """
    if len(scores) < 2:
        raise InputError(
            f"backbone swap needs two or more backbones, got {len(scores)}: {list(scores)}"
        )
    if not records:
        raise InputError("no records to compare the backbones on")
    view = align(records, dimensions=[dimension], dataset=dataset)
    backbones = tuple(scores)
    s = np.vstack([view.values(scores[bb]) for bb in backbones])
    unscored = {bb: int(np.isnan(s[k]).sum()) for k, bb in enumerate(backbones)}
    for bb, n in unscored.items():
        if n == len(view.keys):
            raise InputError(
                f"backbone {bb!r} scored none of the {n} responses (keys look like {view.keys[0]!r})"
            )
    if np.all(np.isnan(view.pair_labels[dimension])):
        raise InputError(f"no human labels for dimension {dimension!r} on these records")
    return SwapData(
        dataset, metric, dimension, view, backbones, s, dict(signatures or {}), unscored
    )


def _est(e: est.Estimate, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"value": _clean(e.value), "ci": [_clean(e.lo), _clean(e.hi)], "n": e.n}
    d.update(extra)
    return d


def _human_est(e: est.Estimate, statistic: str, level: float, **extra: Any) -> dict[str, Any]:
    """A correlation with humans and its CI by the one rule of every meta-evaluation value
    (:func:`~metajudge.stats.intervals.choose`): the percentile bootstrap above
    :data:`~metajudge.stats.intervals.SMALL_N` units, Fisher z or t at or below, none below 5
    (``ci_method`` names which)."""
    from metajudge.stats.intervals import SMALL_N

    if e.undefined is not None or not math.isfinite(e.value):
        return _est(e, **extra)
    iv = e.interval(statistic, level, small_n=SMALL_N)
    lo, hi = iv.ci or (None, None)
    d = {"value": _clean(e.value), "ci": [_clean(lo), _clean(hi)], "n": e.n}
    return {**d, "ci_method": iv.method, **extra}


def _clean(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


@dataclass
class _Ctx:
    """One analysis: data, per-backbone arrays, the shared resample counts."""

    data: SwapData
    proto: str
    W: FArr | Resamples
    level: float
    eps: float

    def __post_init__(self) -> None:
        v, s = self.data.view, self.data.scores
        self.d = s[:, v.pair_b] - s[:, v.pair_a]
        self.dec = np.vstack([stats.tie_decisions(row, self.eps) for row in self.d])
        self.h_pair = stats.annotator_mean(self.data.human_pair)
        hr = self.data.human_resp
        self.h_resp = stats.annotator_mean(hr) if hr is not None else None

    def pooled(self, method: str, x: FArr, y: FArr, unit: str) -> est.Estimate:
        v = self.data.view
        items = v.resp_item if unit == "response" else v.pair_item
        return est.pooled(method, x, y, items, self.W, self.level)

    def grouped(self, x: FArr) -> est.Estimate:
        v = self.data.view
        assert self.h_resp is not None
        return est.grouped("pearson", x, self.h_resp, v.resp_item, v.n_items, self.W, self.level)


def _per_backbone(ctx: _Ctx, k: int, bb: str) -> tuple[dict[str, Any], est.Estimate]:
    s = ctx.data.scores[k]
    entry: dict[str, Any] = {
        "n_responses": int(np.isfinite(s).sum()),
        "unscored": int(ctx.data.unscored.get(bb, 0)),
    }
    human: dict[str, est.Estimate] = {}
    if ctx.h_resp is not None:
        for method in ("pearson", "spearman"):
            e = ctx.pooled(method, s, ctx.h_resp, "response")
            entry[f"pooled_{method}"] = _human_est(e, method, ctx.level)
            human[f"pooled_{method}"] = e
        human["grouped"] = g = ctx.grouped(s)
        entry["grouped_pearson"] = _human_est(g, "pearson", ctx.level, unit="inputs")
    for method in ("pearson", "spearman"):
        e = ctx.pooled(method, ctx.d[k], ctx.h_pair, "pair")
        entry[f"pairs_{method}"] = _human_est(e, method, ctx.level)
        human[f"pairs_{method}"] = e
    acc = stats.accuracy_tally(
        human=ctx.h_pair, judge=ctx.dec[k], policy="exclude_human_ties", unjudged="drop"
    )
    entry["pair_accuracy"] = {
        "value": _clean(acc.value),
        "n": acc.n,
        "policy": "human ties excluded; a judge tie counts as wrong",
    }
    chosen = human[
        {"grouped": "grouped", "pooled": "pooled_pearson", "pairs": "pairs_pearson"}[ctx.proto]
    ]
    entry["human"] = _human_est(chosen, "pearson", ctx.level, protocol=ctx.proto)
    return entry, chosen


def _williams(ctx: _Ctx, i: int, j: int) -> dict[str, Any] | None:
    if ctx.proto == "grouped":
        return None
    pooled = ctx.proto == "pooled"
    hx = ctx.h_resp if pooled else ctx.h_pair
    sx = ctx.data.scores[i] if pooled else ctx.d[i]
    sy = ctx.data.scores[j] if pooled else ctx.d[j]
    assert hx is not None
    mm = np.isfinite(sx) & np.isfinite(sy) & np.isfinite(hx)
    n = int(mm.sum())
    if n <= 3:
        return None
    r12 = stats.pearson(sx[mm], hx[mm])
    r13 = stats.pearson(sy[mm], hx[mm])
    r23 = stats.pearson(sx[mm], sy[mm])
    w = stats.williams_test(r13, r12, r23, n)
    return {
        "t": _clean(w.t),
        "p": _clean(w.p_two_sided),
        "n": n,
        "note": "assumes independent units",
    }


def _pair(ctx: _Ctx, i: int, j: int, human: Sequence[est.Estimate]) -> dict[str, Any]:
    bbs, s, dec = ctx.data.backbones, ctx.data.scores, ctx.dec
    out: dict[str, Any] = {"x": bbs[i], "y": bbs[j]}
    for method in ("pearson", "spearman"):
        out[method] = _est(ctx.pooled(method, s[i], s[j], "response"))
    m = np.isfinite(dec[i]) & np.isfinite(dec[j])
    out["kappa"] = _clean(decision_kappa(dec[i][m], dec[j][m]))
    out["kappa_quadratic"] = _clean(decision_kappa(dec[i][m], dec[j][m], weights="quadratic"))
    fr, n_dec = flip_rate(dec[i], dec[j])
    dis, n_both = decision_disagreement(dec[i], dec[j])
    out["flip_rate"] = {"value": _clean(fr), "n": n_dec}
    out["disagreement"] = {"value": _clean(dis), "n": n_both}
    out["n_pairs"] = int(m.sum())
    hx, hy = human[i], human[j]
    nan = np.full(ctx.W.shape[0], np.nan)
    reps = (hy.samples if hy.samples is not None else nan) - (
        hx.samples if hx.samples is not None else nan
    )
    lo, hi = stats.percentile_ci(reps, ctx.level)
    hd: dict[str, Any] = {
        "protocol": ctx.proto,
        "x": _clean(hx.value),
        "y": _clean(hy.value),
        "delta": _clean(hy.value - hx.value),
        "ci": [_clean(lo), _clean(hi)],
        "p_bootstrap": _clean(stats.bootstrap_p_value(reps)),
    }
    w = _williams(ctx, i, j)
    if w is not None:
        hd["williams"] = w
    out["human_diff"] = hd
    return out


def _alpha(ctx: _Ctx) -> dict[str, Any]:
    s, dec = ctx.data.scores, ctx.dec
    return {
        "interval_scores": _clean(krippendorff_alpha(s, level="interval")),
        "ordinal_scores": _clean(krippendorff_alpha(s, level="ordinal")),
        "ordinal_decisions": _clean(krippendorff_alpha(both_orientations(dec), level="ordinal")),
        "n_responses": int((np.isfinite(s).sum(0) >= 2).sum()),
        "n_pairs": int((np.isfinite(dec).sum(0) >= 2).sum()),
        "backbones": list(ctx.data.backbones),
    }


_LEVEL = {"grouped": "item", "pooled": "global", "pairs": "global"}


def inter_human_ceiling(ctx: _Ctx) -> dict[str, Any]:
    """The inter-human reference matched to the human protocol: same units, same level.

    Leave-one-annotator-out (:func:`metajudge.analyses.metric_vs_human.levels.loo_reference`): per-response
    labels for ``grouped`` (per input, averaged) and ``pooled``, pair labels for ``pairs``.
    """
    data, v = ctx.data, ctx.data.view
    likert = ctx.proto != "pairs" and data.human_resp is not None
    h = data.human_resp if likert else data.human_pair
    assert h is not None
    unit = "responses" if likert else "pairs"
    items = v.resp_item if likert else v.pair_item
    systems = v.resp_system if likert else np.zeros(len(v.pair_ids), dtype=np.int64)
    lvl = _LEVEL[ctx.proto]
    args = (h, items, systems, v.n_items, ctx.W, ctx.level, ["pearson"])
    ref = human_reference(*args, unit_level=lvl, unit_name=unit)
    if ref.method is None:
        return {
            "available": False,
            "reason": f"{data.dataset}: {ref.estimates['pearson'].undefined}",
        }
    how = f"{ref.method}, leave-one-annotator-out Pearson at level {lvl} over {unit}"
    return {"available": True, "how": how, **_est(ref.estimates["pearson"])}


def _protocol_json(proto: str, n_boot: int, seed: int | None, level: float, eps: float) -> dict:
    return {
        "name": f"backbone-swap|human:{proto}|boot:{n_boot}|ci:percentile{round(level * 100)}"
        f"|resample:inputs|eps:{eps:g}|seed:{seed}|version:{SWAP_VERSION}",
        "human_protocol": proto,
        "n_boot": n_boot,
        "seed": seed,
        "level": level,
        "eps": eps,
        "resampling_unit": "input (all responses and pairs of one input stay together)",
        "decisions": f"d = s(b) - s(a) -> sign with tie band |d| <= {eps:g}",
        "kappa": "Cohen 1960 on decisions {-1,0,1}; quadratic weights (Cohen 1968), decisions are "
        f"ordinal; {ORIENTATION}",
        "alpha": "Krippendorff closed form (interval; ordinal = interval on mid-ranks); on "
        f"decisions: {ORIENTATION}",
        "orientation": ORIENTATION,
        "bootstrap_p": "2*min(#{d<=0}+1, #{d>=0}+1)/(B+1), capped at 1 (add-one smoothing)",
        "significance": "paired bootstrap (two-sided, shared resamples) + Holm across backbone pairs; Williams t for pooled / pair Pearson",
    }


def human_protocol_of(protocol: Protocol) -> HumanProtocol:
    """The swap's human protocol for a meta-evaluation :class:`Protocol` (annotators' mean).

    pointwise per item → ``grouped``; pointwise global → ``pooled``; pairwise-difference global →
    ``pairs``. Other combinations have no backbone-swap counterpart.
    """
    key = (protocol.correlate, protocol.level)
    table: dict[tuple[str, str], HumanProtocol] = {
        ("pointwise", "item"): "grouped",
        ("pointwise", "global"): "pooled",
        ("pairwise-difference", "global"): "pairs",
    }
    if key not in table:
        raise InputError(
            f"the backbone swap has no human protocol for {protocol.correlate} at level "
            f"{protocol.level} (use pointwise item/global or pairwise-difference global)",
            field="protocol",
        )
    return table[key]


def backbone_swap(
    data: SwapData,
    protocol: Protocol | None = None,
    *,
    rng: np.random.Generator | None = None,
    n_boot: int = 1000,
    eps: float = 0.0,
    level: float = 0.95,
    human_protocol: HumanProtocol | None = None,
    seed: int | None = None,
) -> SwapResult:
    """Run the backbone-swap analysis on aligned scores; returns a :class:`SwapResult`.

    With ``protocol`` (the meta-evaluation's :class:`~metajudge.analyses.metric_vs_human.protocol.Protocol`) its
    bootstrap (``n_boot``, ``seed``, ``ci_level``), tie band and correlation
    (:func:`human_protocol_of`) are used: the same protocol gives the same human correlations as
    :func:`~metajudge.analyses.metric_vs_human.evaluate.meta_evaluate`. Otherwise ``rng`` draws the bootstrap
    counts (pass ``numpy.random.default_rng(seed)``; ``seed`` is only recorded), ``eps`` is the
    tie band of the pairwise decisions (in score units) and ``human_protocol`` defaults to
    ``grouped`` for Likert data and ``pairs`` for pairwise data.
    """
    if protocol is not None:
        human_protocol = human_protocol_of(protocol)
        n_boot, seed, eps, level = (
            protocol.n_boot,
            protocol.seed,
            protocol.epsilon,
            protocol.ci_level,
        )
        rng = np.random.default_rng(protocol.seed)
    if rng is None:
        raise InputError("pass a protocol or a numpy Generator (rng)", field="rng")
    if n_boot < 1:
        raise InputError(f"n_boot must be >= 1, got {n_boot}")
    proto: HumanProtocol = human_protocol or ("grouped" if data.kind == "likert" else "pairs")
    if proto in ("grouped", "pooled") and data.kind != "likert":
        raise InputError(
            f"human protocol {proto!r} needs Likert data; {data.dataset} is pairwise (use 'pairs')"
        )
    v = data.view
    ctx = _Ctx(data, proto, Resamples.draw(v.n_items, n_boot, rng), level, eps)  # lazy, O(rows)
    bbs = data.backbones
    per_bb, human = {}, []
    for k, bb in enumerate(bbs):
        per_bb[bb], h = _per_backbone(ctx, k, bb)
        human.append(h)
    pairs_out = [_pair(ctx, i, j, human) for i in range(len(bbs)) for j in range(i + 1, len(bbs))]
    adj = stats.holm([p["human_diff"]["p_bootstrap"] or math.nan for p in pairs_out])
    floor = stats.PFloor.bootstrap(n_boot, len(pairs_out))
    for p, a in zip(pairs_out, adj.tolist(), strict=True):
        p["human_diff"]["p_holm"] = _clean(a)
        p["human_diff"]["p_at_floor"] = floor.at_floor(p["human_diff"]["p_bootstrap"])
        p["verdict"] = verdict_line(p, level=level)
    resp_h = ctx.h_resp is not None
    return SwapResult(
        dataset=data.dataset,
        metric=data.metric,
        dimension=data.dimension,
        kind=data.kind,
        backbones=list(bbs),
        signatures=dict(data.signatures),
        protocol=_protocol_json(proto, n_boot, seed, level, eps) | {"p_floor": floor.to_dict(0.05)},
        n={
            "inputs": v.n_items,
            "responses": len(v.keys),
            "responses_scored_by_all": int(np.isfinite(data.scores).all(0).sum()),
            "pairs": len(v.pair_ids),
        },
        per_backbone=per_bb,
        pairs=pairs_out,
        alpha=_alpha(ctx),
        ceiling=inter_human_ceiling(ctx),
        reliability={
            bb: quantile_reliability_bins(
                data.scores[k] if resp_h else ctx.d[k],
                ctx.h_resp if ctx.h_resp is not None else ctx.h_pair,
            )
            for k, bb in enumerate(bbs)
        },
    )


def quantile_reliability_bins(judge: FArr, human: FArr, *, n_bins: int = 10) -> dict[str, Any]:
    """Mean human score per bin of judge score (quantile bins; the distinct values when ≤ n_bins)."""
    h = stats.annotator_mean(human) if human.ndim == 2 else human
    m = np.isfinite(judge) & np.isfinite(h)
    x, y = judge[m], h[m]
    if x.size == 0:
        return {"judge_mean": [], "human_mean": [], "human_sd": [], "n": []}
    uniq = np.unique(x)
    if uniq.size <= n_bins:
        idx = np.searchsorted(uniq, x)
        nb = uniq.size
    else:
        edges = np.unique(np.quantile(x, np.linspace(0, 1, n_bins + 1)))
        idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, edges.size - 2)
        nb = edges.size - 1
    out: dict[str, list[float | int | None]] = {
        "judge_mean": [],
        "human_mean": [],
        "human_sd": [],
        "n": [],
    }
    for b in range(nb):
        sel = idx == b
        if not sel.any():
            continue
        out["judge_mean"].append(float(x[sel].mean()))
        out["human_mean"].append(float(y[sel].mean()))
        out["human_sd"].append(float(y[sel].std(ddof=1)) if sel.sum() > 1 else None)
        out["n"].append(int(sel.sum()))
    return out
