"""Backbone-swap agreement: one judge metric under two or more backbones on the same items.

DESIGN.md §4, after MT-RAIG Appendix C.1 / Table 8 (Pearson between the scores of the same judge
under different backbones). For every pair of backbones (X, Y) this reports

- Pearson and Spearman between the two item-score vectors, with percentile bootstrap CIs
  (items = inputs are resampled; all responses to one input stay together);
- on the normalised pairwise decisions (d = s(b) − s(a) → {−1, 0, 1}, tie band ε): Cohen's κ
  (unweighted and quadratic-weighted, the decisions being ordinal), the flip rate (strict
  reversals among pairs both decide) and the disagreement rate (ties included);
- each backbone's correlation with humans (with CIs) and a *paired* test of the difference
  (paired bootstrap on the same resamples, two-sided; Williams' test for the pooled Pearson;
  Holm correction across all backbone pairs) — "is the cheaper backbone significantly worse?";
- a verdict line that states that evidence.

Across all backbones: Krippendorff's α (interval and ordinal on the scores, ordinal on the
decisions; closed forms in :mod:`metajudge.metaeval.agreement`). The inter-human ceiling on
the same items is reported where the dataset has two or more annotators per item.

Human-correlation protocols (always named in the output):

- ``grouped`` — Likert data: Pearson across the systems of one input, averaged over inputs
  (LFTQA-Eval's ``correlation_calculation.py``, "instance-level"); NaN inputs skipped.
- ``pooled`` — Likert data: Pearson / Spearman over all responses at once.
- ``pairs`` — pairwise data: d = s(b) − s(a) against the annotators' mean label (positive = b
  better); decision accuracy against the sign of the mean label (human ties excluded).

The bootstrap is vectorised: one matrix of resampling counts (replicates × inputs) is drawn from
the ``numpy.random.Generator`` passed in and shared by every statistic, which is what makes the
differences *paired*; a weighted correlation per replicate then equals the correlation on the
resampled data (Spearman re-ranks each replicate with the weights).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from metajudge.data.formats import LikertRecord, PairwiseRecord, Record, mean_label, response_key
from metajudge.errors import InputError
from metajudge.metaeval import stats
from metajudge.metaeval.agreement import (
    cohen_kappa,
    decision_disagreement,
    decisions,
    flip_rate,
    krippendorff_alpha,
)

HumanProtocol = Literal["grouped", "pooled", "pairs"]
SWAP_VERSION = "1"

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]


@dataclass(frozen=True)
class SwapData:
    """Scores of one judge metric under several backbones, aligned on the same responses.

    ``scores[k, i]`` is backbone ``k``'s score of response ``keys[i]`` (NaN: not scored).
    ``pair_a``/``pair_b`` index the two responses of each pair (positive = b better).
    ``human_resp`` (responses × annotators) is set for Likert data; ``human_pair``
    (pairs × annotators) always (for Likert data: the difference of the annotators' means).
    """

    dataset: str
    metric: str
    dimension: str
    kind: Literal["likert", "pairwise"]
    backbones: tuple[str, ...]
    keys: tuple[str, ...]
    groups: IArr
    group_names: tuple[str, ...]
    scores: FArr
    pair_a: IArr
    pair_b: IArr
    pair_ids: tuple[str, ...]
    human_resp: FArr | None
    human_pair: FArr
    signatures: Mapping[str, str] = field(default_factory=dict)
    unscored: Mapping[str, int] = field(default_factory=dict)


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

    Likert records: one response per ``(id, system)``, key ``"{id}::{system}"``; pairs are all
    pairs of systems answering the same input, ordered by system name (as
    :func:`~metajudge.data.formats.likert_to_pairwise`). Pairwise records: keys ``"{id}::a"`` and
    ``"{id}::b"``. A response missing from a backbone's scores, or scored ``None``/NaN, counts as
    unscored for that backbone (reported, never imputed).
    """
    if len(scores) < 2:
        raise InputError(
            f"backbone swap needs two or more backbones, got {len(scores)}: {list(scores)}"
        )
    if not records:
        raise InputError("no records to compare the backbones on")
    backbones = tuple(scores)
    keys: list[str] = []
    group_of: list[int] = []
    gnames: list[str] = []
    gindex: dict[str, int] = {}
    pa: list[int] = []
    pb: list[int] = []
    pids: list[str] = []
    hpair: list[list[float]] = []
    hresp: list[list[float]] = []
    kinds = {type(r) for r in records}
    if len(kinds) != 1:
        raise InputError("records mix pairwise and Likert kinds")
    kind: Literal["likert", "pairwise"] = "likert" if kinds == {LikertRecord} else "pairwise"

    def _vals(v: Sequence[float | None] | None) -> list[float]:
        return [math.nan if x is None else float(x) for x in (v or ())]

    if kind == "likert":
        by_item: dict[str, list[LikertRecord]] = {}
        for r in records:
            assert isinstance(r, LikertRecord)
            by_item.setdefault(r.id, []).append(r)
        for item, recs in by_item.items():
            gi = gindex.setdefault(item, len(gnames))
            if gi == len(gnames):
                gnames.append(item)
            recs = sorted(recs, key=lambda r: r.system)
            first = len(keys)
            for r in recs:
                keys.append(response_key(r.id, r.system))
                group_of.append(gi)
                hresp.append(_vals(r.scores.get(dimension)))
            for i in range(len(recs)):
                for j in range(i + 1, len(recs)):
                    ma = mean_label(recs[i].scores.get(dimension, ()))
                    mb = mean_label(recs[j].scores.get(dimension, ()))
                    pa.append(first + i)
                    pb.append(first + j)
                    pids.append(f"{item}::{recs[i].system}|{recs[j].system}")
                    hpair.append([math.nan if ma is None or mb is None else mb - ma])
    else:
        for r in records:
            assert isinstance(r, PairwiseRecord)
            group = str(r.meta.get("item_id", r.id))  # pairs of one input are resampled together
            gi = gindex.setdefault(group, len(gnames))
            if gi == len(gnames):
                gnames.append(group)
            pa.append(len(keys))
            keys.append(response_key(r.id, "a"))
            pb.append(len(keys))
            keys.append(response_key(r.id, "b"))
            group_of += [gi, gi]
            pids.append(r.id)
            hpair.append(_vals(r.labels.get(dimension)))

    def _matrix(rows: list[list[float]]) -> FArr:
        width = max((len(x) for x in rows), default=1) or 1
        m = np.full((len(rows), width), np.nan)
        for i, x in enumerate(rows):
            m[i, : len(x)] = x
        return m

    s = np.full((len(backbones), len(keys)), np.nan)
    unscored: dict[str, int] = {}
    for k, bb in enumerate(backbones):
        col = scores[bb]
        for i, key in enumerate(keys):
            v = col.get(key)
            if v is not None and math.isfinite(float(v)):
                s[k, i] = float(v)
        unscored[bb] = int(np.isnan(s[k]).sum())
        if unscored[bb] == len(keys):
            raise InputError(
                f"backbone {bb!r} scored none of the {len(keys)} responses (keys look like {keys[0]!r})"
            )
    human_pair = _matrix(hpair)
    if np.all(np.isnan(human_pair)):
        raise InputError(f"no human labels for dimension {dimension!r} on these records")
    return SwapData(
        dataset=dataset,
        metric=metric,
        dimension=dimension,
        kind=kind,
        backbones=backbones,
        keys=tuple(keys),
        groups=np.asarray(group_of, dtype=np.int64),
        group_names=tuple(gnames),
        scores=s,
        pair_a=np.asarray(pa, dtype=np.int64),
        pair_b=np.asarray(pb, dtype=np.int64),
        pair_ids=tuple(pids),
        human_resp=_matrix(hresp) if kind == "likert" else None,
        human_pair=human_pair,
        signatures=dict(signatures or {}),
        unscored=unscored,
    )


# ---------------------------------------------------------------------------------------------
# Bootstrap: one count matrix per analysis (stats.bootstrap_weights), weighted statistics from stats.


@dataclass
class _Boot:
    """Resampling counts shared by every statistic of one analysis (this makes tests paired)."""

    counts: FArr  # (B, G): how often input g is drawn in replicate b
    level: float

    def interval(self, reps: FArr) -> tuple[float, float]:
        r = reps[np.isfinite(reps)]
        if r.size < max(10, 0.5 * reps.size):
            return (math.nan, math.nan)
        return stats.percentile_ci(r, self.level)


def _pvalue_two_sided(reps: FArr) -> float:
    """Two-sided bootstrap p-value of "difference = 0": 2·min(P*(Δ ≤ 0), P*(Δ ≥ 0)), (1+k)/(B+1)."""
    r = reps[np.isfinite(reps)]
    if r.size == 0:
        return math.nan
    k = min(int((r <= 0).sum()), int((r >= 0).sum()))
    return float(min(1.0, 2.0 * (1 + k) / (r.size + 1)))


# ---------------------------------------------------------------------------------------------
# The analysis


def _est(value: float, ci: tuple[float, float], n: int, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"value": _clean(value), "ci": [_clean(ci[0]), _clean(ci[1])], "n": int(n)}
    d.update(extra)
    return d


def _clean(v: float) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


def _corr_stat(x: FArr, y: FArr, groups: IArr, boot: _Boot, method: str) -> tuple[float, FArr, int]:
    """Point estimate, bootstrap replicates and n of a pooled correlation over units with both finite."""
    m = np.isfinite(x) & np.isfinite(y)
    x, y, g = x[m], y[m], groups[m]
    n = int(m.sum())
    if n < 3:
        return math.nan, np.full(boot.counts.shape[0], np.nan), n
    point = float(stats.weighted_statistic(method, x, y, np.ones((1, n)))[0])
    reps = stats.weighted_statistic(method, x, y, boot.counts[:, g])
    return point, reps, n


def _grouped_pearson(x: FArr, y: FArr, groups: IArr, n_groups: int) -> FArr:
    """Per-input Pearson across that input's responses (NaN where undefined), indexed by group.

    :func:`metajudge.metaeval.stats.grouped_correlation` computes the values; here they are put
    back at their group index so the shared bootstrap counts can weight them.
    """
    out = np.full(n_groups, np.nan)
    m = np.isfinite(x) & np.isfinite(y)
    if not m.any():
        return out
    g = groups[m]
    _, vals, _ = stats.grouped_correlation(x[m], y[m], g, statistic="pearson")
    uniq, first = np.unique(g, return_index=True)
    out[uniq[np.argsort(first, kind="mergesort")]] = (
        vals  # grouped_correlation orders groups by first appearance
    )
    return out


def _grouped_reps(per_group: FArr, boot: _Boot) -> tuple[float, FArr, int]:
    valid = np.isfinite(per_group)
    n = int(valid.sum())
    if n == 0:
        return math.nan, np.full(boot.counts.shape[0], np.nan), 0
    v = np.where(valid, per_group, 0.0)
    c = boot.counts
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (c @ v) / (c @ valid.astype(float))
    return float(per_group[valid].mean()), reps, n


def _mean_rows(m: FArr) -> FArr:
    with np.errstate(invalid="ignore"):
        cnt = np.isfinite(m).sum(1)
        s = np.where(np.isfinite(m), m, 0.0).sum(1)
        return np.where(cnt > 0, s / np.maximum(cnt, 1), np.nan)


def backbone_swap(
    data: SwapData,
    *,
    rng: np.random.Generator,
    n_boot: int = 1000,
    eps: float = 0.0,
    level: float = 0.95,
    human_protocol: HumanProtocol | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """Run the backbone-swap analysis on aligned scores; returns a JSON-serialisable report dict.

    ``rng`` draws the bootstrap counts (pass ``numpy.random.default_rng(seed)``; ``seed`` is only
    recorded in the protocol). ``eps`` is the tie band of the pairwise decisions (in score units).
    ``human_protocol`` defaults to ``grouped`` for Likert data and ``pairs`` for pairwise data.
    """
    if n_boot < 1:
        raise InputError(f"n_boot must be >= 1, got {n_boot}")
    proto: HumanProtocol = human_protocol or ("grouped" if data.kind == "likert" else "pairs")
    if proto in ("grouped", "pooled") and data.kind != "likert":
        raise InputError(
            f"human protocol {proto!r} needs Likert data; {data.dataset} is pairwise (use 'pairs')"
        )
    n_groups = len(data.group_names)
    boot = _Boot(counts=stats.bootstrap_weights(n_groups, n_boot, rng), level=level)

    bbs = data.backbones
    K = len(bbs)
    s = data.scores
    pair_groups = data.groups[data.pair_a]
    d = s[:, data.pair_b] - s[:, data.pair_a]  # K × pairs
    dec = np.vstack([decisions(d[k], eps=eps) for k in range(K)])
    h_pair = _mean_rows(data.human_pair)
    h_dec = decisions(h_pair, eps=0.0)
    h_resp = _mean_rows(data.human_resp) if data.human_resp is not None else None

    # ---- per backbone: correlation with humans
    per_bb: dict[str, Any] = {}
    human_reps: dict[str, FArr] = {}
    human_point: dict[str, float] = {}
    pooled_pearson_pt: dict[str, float] = {}
    for k, bb in enumerate(bbs):
        entry: dict[str, Any] = {
            "n_responses": int(np.isfinite(s[k]).sum()),
            "unscored": int(data.unscored.get(bb, 0)),
        }
        if h_resp is not None:
            for method in ("pearson", "spearman"):
                pt, reps, n = _corr_stat(s[k], h_resp, data.groups, boot, method)
                entry[f"pooled_{method}"] = _est(pt, boot.interval(reps), n)
                if proto == "pooled" and method == "pearson":
                    human_reps[bb], human_point[bb] = reps, pt
                if method == "pearson":
                    pooled_pearson_pt[bb] = pt
            per_group = _grouped_pearson(s[k], h_resp, data.groups, n_groups)
            pt, reps, n = _grouped_reps(per_group, boot)
            entry["grouped_pearson"] = _est(pt, boot.interval(reps), n, unit="inputs")
            if proto == "grouped":
                human_reps[bb], human_point[bb] = reps, pt
        pt, reps, n = _corr_stat(d[k], h_pair, pair_groups, boot, "pearson")
        entry["pairs_pearson"] = _est(pt, boot.interval(reps), n)
        if proto == "pairs":
            human_reps[bb], human_point[bb] = reps, pt
            pooled_pearson_pt[bb] = pt
        pt_s, reps_s, n_s = _corr_stat(d[k], h_pair, pair_groups, boot, "spearman")
        entry["pairs_spearman"] = _est(pt_s, boot.interval(reps_s), n_s)
        m = np.isfinite(dec[k]) & np.isfinite(h_dec) & (h_dec != 0)
        entry["pair_accuracy"] = {
            "value": _clean(float(np.mean(dec[k][m] == h_dec[m])) if m.any() else math.nan),
            "n": int(m.sum()),
            "policy": "human ties excluded; a judge tie counts as wrong",
        }
        entry["human"] = _est(
            human_point[bb], boot.interval(human_reps[bb]), _entry_n(entry, proto), protocol=proto
        )
        per_bb[bb] = entry

    # ---- per backbone pair
    pairs_out: list[dict[str, Any]] = []
    for i in range(K):
        for j in range(i + 1, K):
            x, y = bbs[i], bbs[j]
            out: dict[str, Any] = {"x": x, "y": y}
            for method in ("pearson", "spearman"):
                pt, reps, n = _corr_stat(s[i], s[j], data.groups, boot, method)
                out[method] = _est(pt, boot.interval(reps), n)
            m = np.isfinite(dec[i]) & np.isfinite(dec[j])
            out["kappa"] = _clean(cohen_kappa(dec[i][m], dec[j][m], labels=(-1.0, 0.0, 1.0)))
            out["kappa_quadratic"] = _clean(
                cohen_kappa(dec[i][m], dec[j][m], weights="quadratic", labels=(-1.0, 0.0, 1.0))
            )
            fr, n_dec = flip_rate(dec[i], dec[j])
            dis, n_both = decision_disagreement(dec[i], dec[j])
            out["flip_rate"] = {"value": _clean(fr), "n": n_dec}
            out["disagreement"] = {"value": _clean(dis), "n": n_both}
            out["n_pairs"] = int(m.sum())
            delta_reps = human_reps[y] - human_reps[x]
            delta = human_point[y] - human_point[x]
            hd: dict[str, Any] = {
                "protocol": proto,
                "x": _clean(human_point[x]),
                "y": _clean(human_point[y]),
                "delta": _clean(delta),
                "ci": list(map(_clean, boot.interval(delta_reps))),
                "p_bootstrap": _clean(_pvalue_two_sided(delta_reps)),
            }
            if proto in ("pooled", "pairs"):
                hx = h_resp if proto == "pooled" else h_pair
                sx = s[i] if proto == "pooled" else d[i]
                sy = s[j] if proto == "pooled" else d[j]
                mm = np.isfinite(sx) & np.isfinite(sy) & np.isfinite(hx)
                n_w = int(mm.sum())
                if n_w > 3:
                    r12 = float(np.corrcoef(sx[mm], hx[mm])[0, 1])
                    r13 = float(np.corrcoef(sy[mm], hx[mm])[0, 1])
                    r23 = float(np.corrcoef(sx[mm], sy[mm])[0, 1])
                    w = stats.williams_test(r13, r12, r23, n_w)
                    hd["williams"] = {
                        "t": _clean(w.t),
                        "p": _clean(w.p_two_sided),
                        "n": n_w,
                        "note": "assumes independent units",
                    }
            out["human_diff"] = hd
            pairs_out.append(out)
    for p, adj in zip(
        pairs_out,
        stats.holm([p["human_diff"]["p_bootstrap"] or math.nan for p in pairs_out]).tolist(),
        strict=True,
    ):
        p["human_diff"]["p_holm"] = _clean(adj)
        p["verdict"] = verdict_line(p, level=level)

    # ---- Krippendorff's alpha across all backbones
    alpha = {
        "interval_scores": _clean(krippendorff_alpha(s, level="interval")),
        "ordinal_scores": _clean(krippendorff_alpha(s, level="ordinal")),
        "ordinal_decisions": _clean(krippendorff_alpha(dec, level="ordinal")),
        "n_responses": int((np.isfinite(s).sum(0) >= 2).sum()),
        "n_pairs": int((np.isfinite(dec).sum(0) >= 2).sum()),
        "backbones": list(bbs),
    }

    return {
        "dataset": data.dataset,
        "metric": data.metric,
        "dimension": data.dimension,
        "kind": data.kind,
        "backbones": list(bbs),
        "signatures": dict(data.signatures),
        "protocol": {
            "name": f"backbone-swap|human:{proto}|boot:{n_boot}|ci:percentile{round(level * 100)}"
            f"|resample:inputs|eps:{eps:g}|seed:{seed}|version:{SWAP_VERSION}",
            "human_protocol": proto,
            "n_boot": n_boot,
            "seed": seed,
            "level": level,
            "eps": eps,
            "resampling_unit": "input (all responses and pairs of one input stay together)",
            "decisions": f"d = s(b) - s(a) -> sign with tie band |d| <= {eps:g}",
            "kappa": "Cohen 1960 on decisions {-1,0,1}; quadratic weights (Cohen 1968), decisions are ordinal",
            "alpha": "Krippendorff closed form (interval; ordinal = interval on mid-ranks)",
            "significance": "paired bootstrap (two-sided, shared resamples) + Holm across backbone pairs; Williams t for pooled Pearson",
        },
        "n": {
            "inputs": n_groups,
            "responses": len(data.keys),
            "responses_scored_by_all": int(np.isfinite(s).all(0).sum()),
            "pairs": len(data.pair_ids),
        },
        "per_backbone": per_bb,
        "pairs": pairs_out,
        "alpha": alpha,
        "ceiling": inter_human_ceiling(data, boot),
        "reliability": {
            bb: reliability_bins(
                s[k] if h_resp is not None else d[k], h_resp if h_resp is not None else h_pair
            )
            for k, bb in enumerate(bbs)
        },
    }


def _entry_n(entry: Mapping[str, Any], proto: str) -> int:
    key = {"grouped": "grouped_pearson", "pooled": "pooled_pearson", "pairs": "pairs_pearson"}[
        proto
    ]
    return int(entry[key]["n"])


def inter_human_ceiling(data: SwapData, boot: _Boot) -> dict[str, Any]:
    """Annotator vs annotator (two) or each annotator vs the others' mean (leave-one-out), same items."""
    h = data.human_resp if data.human_resp is not None else data.human_pair
    groups = data.groups if data.human_resp is not None else data.groups[data.pair_a]
    n_ann = int((np.isfinite(h).any(0)).sum())
    if h.shape[1] < 2 or n_ann < 2:
        return {
            "available": False,
            "reason": f"{data.dataset} has one human score per {'response' if data.human_resp is not None else 'pair'} (no per-annotator labels)",
        }
    vals, reps_all, ns = [], [], []
    for a in range(h.shape[1]):
        others = np.delete(h, a, axis=1)
        pt, reps, n = _corr_stat(h[:, a], _mean_rows(others), groups, boot, "pearson")
        vals.append(pt)
        reps_all.append(reps)
        ns.append(n)
    if h.shape[1] == 2:
        pt, reps, n = vals[0], reps_all[0], ns[0]
        how = "annotator 1 vs annotator 2, pooled Pearson"
    else:
        pt = float(np.nanmean(vals))
        reps = np.nanmean(np.vstack(reps_all), axis=0)
        n = min(ns)
        how = "each annotator vs the mean of the others (leave-one-out), pooled Pearson, averaged"
    unit = "responses" if data.human_resp is not None else "pairs"
    return {"available": True, "how": how + f" over {unit}", **_est(pt, boot.interval(reps), n)}


def reliability_bins(judge: FArr, human: FArr, *, n_bins: int = 10) -> dict[str, Any]:
    """Mean human score per bin of judge score (quantile bins; the distinct values when ≤ n_bins)."""
    h = _mean_rows(human) if human.ndim == 2 else human
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


def _fmt(v: float | None, nd: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{nd}f}"


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def verdict_line(pair: Mapping[str, Any], *, level: float = 0.95, alpha: float = 0.05) -> str:
    """One sentence stating the evidence for one backbone pair (Y compared with X)."""
    x, y = pair["x"], pair["y"]
    r, rho = pair["pearson"], pair["spearman"]
    hd = pair["human_diff"]
    ci = hd["ci"]
    p_holm = hd.get("p_holm")
    if hd["delta"] is None or p_holm is None:
        judgement = "the difference in human correlation cannot be tested"
    elif p_holm < alpha:
        judgement = f"{y} is significantly {'worse' if hd['delta'] < 0 else 'better'} than {x} against humans"
    else:
        judgement = f"no significant difference against humans at α = {alpha}"
    pct = round(level * 100)
    return (
        f"{y} agrees with {x} at r = {_fmt(r['value'])} [{_fmt(r['ci'][0])}, {_fmt(r['ci'][1])}], "
        f"ρ = {_fmt(rho['value'])} [{_fmt(rho['ci'][0])}, {_fmt(rho['ci'][1])}]; "
        f"κ_q = {_fmt(pair['kappa_quadratic'])}, flips {_fmt((pair['flip_rate']['value'] or 0) * 100, 1)}% of "
        f"{pair['flip_rate']['n']} pairs both decide; its human correlation ({hd['protocol']}) is "
        f"{_fmt(hd['y'])} vs {_fmt(hd['x'])} (Δ = {_fmt(hd['delta'])}, {pct}% CI [{_fmt(ci[0])}, {_fmt(ci[1])}], "
        f"p = {_fmt_p(hd['p_bootstrap'])}, Holm p = {_fmt_p(p_holm)}): {judgement}."
    )


# ---------------------------------------------------------------------------------------------
# Where the scores come from: external score files, or the judge run under each backbone.

#: Human dimension a judge metric is compared with, per dataset card dimension names.
_METRIC_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "faithfulness": ("faithfulness", "correctness", "consistency", "factual"),
    "completeness": ("completeness", "comprehensiveness", "coverage", "relevance"),
}


def metric_dimension(metric: str, dimensions: Sequence[str]) -> str:
    """The human dimension a judge metric is meant to track (``geval_faithfulness`` → ``faithfulness``).

    >>> metric_dimension("geval_completeness", ["faithfulness", "comprehensiveness"])
    'comprehensiveness'
    """
    for aspect, names in _METRIC_DIMENSIONS.items():
        if aspect in metric:
            for n in names:
                for d in dimensions:
                    if n in d.lower():
                        return d
    if len(dimensions) == 1:
        return dimensions[0]
    raise InputError(
        f"cannot tell which human dimension {metric!r} tracks; pass --dimension (one of {', '.join(dimensions)})",
        field="dimension",
    )


def _rows_to_scores(rows: Sequence[Mapping[str, Any]], metric: str) -> dict[str, float | None]:
    return {str(r["key"]): r["score"] for r in rows if r["metric"] == metric}


def external_scores(
    dataset: str,
    metric: str,
    specs: Sequence[str],
    *,
    records: Sequence[Record],
    dimension: str,
    data_dir: str | Path | None = None,
    subsets: Sequence[str] = (),
) -> tuple[dict[str, dict[str, float | None]], dict[str, str]]:
    """Per-backbone scores from external score columns; returns ``(scores, signatures)``.

    A spec is ``LABEL=PATH[:COLUMN]`` — any score file :func:`metajudge.metaeval.external.read_score_file`
    reads (JSONL score rows, CSV/JSON tables, LFTQA-Eval / HANNA / RAGChecker files); ``COLUMN``
    picks the metric when the file has several — or a bare column name the dataset ships:
    for ``lftqa_eval`` a G-Eval backbone (``gpt-4o``, ``gpt-4o-mini``,
    ``Meta-Llama-3.1-70B-Instruct-Turbo``; file ``geval_<backbone>_<dimension>``), for ``hanna``
    a column of ``hanna_metric_scores_llm.csv`` (e.g. ``hanna.beluga-13b_run1_coherence``).
    """
    from metajudge.metaeval import external as ext

    scores: dict[str, dict[str, float | None]] = {}
    sigs: dict[str, str] = {}
    for spec in (x.strip() for x in specs):
        if not spec:
            continue
        if "=" in spec:
            label, _, target = spec.partition("=")
            path, column = target, None
            if ":" in target and not Path(target).is_file():
                path, _, column = target.rpartition(":")
            rows = ext.read_score_file(path, records)
            names = sorted({r["metric"] for r in rows})
            if column is None:
                if len(names) != 1:
                    raise InputError(
                        f"{path} has several score columns ({', '.join(names)}); pick one with {label}={path}:COLUMN",
                        field="external",
                    )
                column = names[0]
            elif column not in names:
                raise InputError(
                    f"{path} has no score column {column!r} (it has {', '.join(names)})",
                    field="external",
                )
            got = [r for r in rows if r["metric"] == column]
            scores[label] = _rows_to_scores(got, column)
            sigs[label] = str(got[0]["signature"]) if got else f"{column}|external"
        elif dataset == "lftqa_eval":
            name = f"geval_{spec}_{dimension}"
            rows: list[Mapping[str, Any]] = []
            for sub in subsets or (None,):
                rows += ext.lftqa_metric_scores(
                    sub, data_dir=data_dir, metrics=[name], records=records
                )
            if not rows:
                raise InputError(
                    f"no LFTQA-Eval scores {name!r}: LFTQA-Eval ships G-Eval under gpt-4o, gpt-4o-mini and "
                    f"Meta-Llama-3.1-70B-Instruct-Turbo (got {spec!r})",
                    field="external",
                )
            scores[spec] = _rows_to_scores(rows, name)
            sigs[spec] = f"{name}|source:lftqa_eval@9b27cbc|external"
        elif dataset == "hanna":
            from metajudge.data.registry import resolve_file

            rows = ext.hanna_metric_scores(
                resolve_file("hanna", "hanna_metric_scores_llm.csv", data_dir),
                records=records,
                metrics=[spec],
            )
            if not rows:
                raise InputError(
                    f"no HANNA score column {spec!r} (names look like hanna.beluga-13b_run1_coherence)",
                    field="external",
                )
            scores[spec] = _rows_to_scores(rows, spec)
            sigs[spec] = str(rows[0]["signature"])
        else:
            raise InputError(
                f"external spec {spec!r}: use LABEL=PATH[:COLUMN] (bare names are known for lftqa_eval and hanna)",
                field="external",
            )
    return scores, sigs


def judge_scores(
    records: Sequence[Record],
    metric: str,
    backbones: Sequence[str],
    *,
    seed: int = 0,
    metric_options: Mapping[str, Any] | None = None,
) -> tuple[dict[str, dict[str, float | None]], dict[str, str], dict[str, Any]]:
    """Run judge ``metric`` under each backbone (one after the other) on every response of ``records``.

    Returns ``(scores, signatures, runs)``; ``runs[bb]`` has the judge's run summary (items
    scored/failed, parse failures and rate, calls, tokens, wall time) and the error counts.
    """
    import time

    from metajudge.metrics.base import ScoreItem, iter_responses
    from metajudge.metrics.registry import get_metric

    refs = list(iter_responses(records))
    items = [ScoreItem(r.key, r.response, r.reference, r.input) for r in refs]
    scores: dict[str, dict[str, float | None]] = {}
    sigs: dict[str, str] = {}
    runs: dict[str, Any] = {}
    for bb in backbones:
        m = get_metric(metric, backbone=bb, seed=seed, **dict(metric_options or {}))
        try:
            t0 = time.perf_counter()
            results = m.score_batch(items)
            wall = time.perf_counter() - t0
            scores[bb] = {r.key: r.score for r in results}
            sigs[bb] = m.signature
            summary = dict(getattr(m, "summary", {}) or {})
            errors: dict[str, int] = {}
            for r in results:
                if r.score is None:
                    errors[(r.error or "unscored").split(":")[0][:60]] = (
                        errors.get((r.error or "unscored").split(":")[0][:60], 0) + 1
                    )
            runs[bb] = {
                "wall_s": round(wall, 2),
                "n_items": len(items),
                "unscored": sum(errors.values()),
                "errors": errors,
                **summary,
            }
        finally:
            m.close()
    return scores, sigs, runs


def run_backbone_swap(
    dataset: str,
    metric: str,
    *,
    external: Sequence[str] = (),
    backbones: Sequence[str] = (),
    subset: str | None = None,
    limit: int | None = None,
    dimension: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    eps: float = 0.0,
    human_protocol: HumanProtocol | None = None,
    data_dir: str | Path | None = None,
    dataset_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Load ``dataset``, get per-backbone scores (external columns and/or judge runs), analyse.

    ``limit`` keeps the first ``limit`` items in dataset order: Likert inputs (with all their
    responses) or pairwise records.
    This is what ``metajudge backbone-swap`` runs.
    """
    from metajudge.data.registry import load_dataset

    if not external and not backbones:
        raise InputError(
            "give --external score columns or --backbones to run the judge under", field="backbones"
        )
    ds = load_dataset(dataset, data_dir=data_dir, **dict(dataset_options or {}))
    if subset:
        ds = ds.subset(subset)
    all_records = list(ds.records)
    records = list(all_records)
    if not records:
        raise InputError(f"dataset {dataset!r} has no human-labelled records")
    if limit is not None:
        keep: dict[str, None] = {}
        for r in records:
            if r.id not in keep and len(keep) >= limit:
                continue
            keep.setdefault(r.id, None)
        records = [r for r in records if r.id in keep]
    dim = dimension or metric_dimension(metric, ds.card.dimensions)
    if dim not in ds.card.dimensions:
        raise InputError(
            f"dataset {dataset!r} has no dimension {dim!r} (it has {', '.join(ds.card.dimensions)})",
            field="dimension",
        )
    scores: dict[str, dict[str, float | None]] = {}
    sigs: dict[str, str] = {}
    runs: dict[str, Any] = {}
    if external:
        subs = (subset,) if subset else tuple(ds.subsets)
        s, g = external_scores(
            dataset,
            metric,
            external,
            records=all_records,
            dimension=dim,
            data_dir=data_dir,
            subsets=subs,
        )
        scores.update(s)
        sigs.update(g)
    if backbones:
        s, g, runs = judge_scores(records, metric, backbones, seed=seed)
        scores.update(s)
        sigs.update(g)
    data = build_swap_data(
        records,
        scores,
        dimension=dim,
        metric=metric,
        dataset=dataset + (f"/{subset}" if subset else ""),
        signatures=sigs,
    )
    res = backbone_swap(
        data,
        rng=np.random.default_rng(seed),
        n_boot=n_boot,
        eps=eps,
        human_protocol=human_protocol,
        seed=seed,
    )
    if runs:
        res["runs"] = runs
    if limit is not None:
        res["n"]["limit_inputs"] = limit
    return res
