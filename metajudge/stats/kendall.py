"""Kendall τ variants and the tie-aware pairwise-accuracy family, with tie calibration.

Every pair of responses (i < j, within one group when ``groups`` is given) is classified by the
metric difference Δx (a tie when ``|Δx| <= ε``) and the human difference Δy (a tie when
``Δy == 0``) into concordant C, discordant D, metric-only tie T_x, human-only tie T_y and
both-tied T_xy; tot = C + D + T_x + T_y + T_xy.

- τ_a = (C − D) / tot (Kendall 1938);
- τ_b = (C − D) / sqrt((tot − T_x − T_xy)(tot − T_y − T_xy)) (Kendall 1945);
- τ_c = 2 (C − D) / (n² (m − 1)/m), m = min(#distinct x, #distinct y) (Stuart 1953);
- τ_23 = (C + T_xy − D − T_x − T_y) / tot and acc_23 = (C + T_xy) / tot (Deutsch, Foster &
  Freitag 2023, "Ties Matter", §3: acc_eq when ε is calibrated) — the ``three_way`` pairwise
  accuracy of :func:`metajudge.stats.decisions.pairwise_accuracy` over the pairs of responses.

Tie calibration (Deutsch et al. 2023, §4): ε* = argmax_ε acc_23(ε), swept over 0 and the sorted
``|Δx|`` of every pair (the smallest maximiser). Fitting ε on the data it is scored on is
optimistic; :func:`tie_calibration` says so in its result and :func:`tie_calibration_cv` fits ε on
the other folds of items. With groups, the value is the mean over groups of the per-group
statistic (mt-metrics-eval's ``average_by`` rows), groups without a pair not counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.results import Result
from metajudge.stats.decisions import tie_decisions

VARIANTS: tuple[str, ...] = ("a", "b", "c", "23", "acc23")


@dataclass(frozen=True)
class Pairs:
    """Every within-group pair: metric and human differences and the group (row) of the pair."""

    dx: np.ndarray
    dy: np.ndarray
    row: np.ndarray
    i: np.ndarray
    j: np.ndarray
    n_rows: int


def pairs(x: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None) -> Pairs:
    """All pairs i < j within each group (one group when ``groups`` is None); NaN rows dropped."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    g = np.zeros(x.size, dtype=np.int64) if groups is None else np.asarray(groups)
    ok = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    parts_i, parts_j, parts_r = [], [], []
    r = 0
    for u in np.unique(g[ok]):
        idx = ok[g[ok] == u]
        if idx.size < 2:
            continue
        a, b = np.triu_indices(idx.size, 1)
        parts_i.append(idx[a])
        parts_j.append(idx[b])
        parts_r.append(np.full(a.size, r, dtype=np.int64))
        r += 1
    if not parts_i:
        e = np.zeros(0, dtype=np.int64)
        return Pairs(np.zeros(0), np.zeros(0), e, e, e, 0)
    i, j = np.concatenate(parts_i), np.concatenate(parts_j)
    return Pairs(x[i] - x[j], y[i] - y[j], np.concatenate(parts_r), i, j, r)


def _counts(dx: np.ndarray, dy: np.ndarray, eps: float) -> tuple[float, ...]:
    dec = tie_decisions(dx, eps)  # the one tie band
    xt = dec == 0
    yt = dy == 0
    both = float((xt & yt).sum())
    tx, ty = float((xt & ~yt).sum()), float((yt & ~xt).sum())
    nt = ~xt & ~yt
    con = float((nt & (dec == np.sign(dy))).sum())
    return con, float(nt.sum()) - con, tx, ty, both


def _variant(v: str, c: tuple[float, ...], x: np.ndarray, y: np.ndarray) -> float:
    con, dis, tx, ty, both = c
    tot = con + dis + tx + ty + both
    if tot == 0:
        return math.nan
    if v == "a":
        return (con - dis) / tot
    if v == "23":
        return (con + both - dis - tx - ty) / tot
    if v == "acc23":
        return (con + both) / tot
    if tx + both == tot or ty + both == tot:
        return math.nan
    if v == "b":
        return (con - dis) / math.sqrt(tot - tx - both) / math.sqrt(tot - ty - both)
    m = min(np.unique(x).size, np.unique(y).size)
    return 2 * (con - dis) / (x.size**2 * (m - 1) / m)


def kendall_variant(
    x: np.ndarray,
    y: np.ndarray,
    variant: str = "b",
    *,
    epsilon: float = 0.0,
    groups: np.ndarray | None = None,
) -> float:
    """τ_a, τ_b, τ_c, τ_23 or acc_23 of metric ``x`` against humans ``y`` (mean over groups).

    >>> kendall_variant(np.array([1.0, 2, 3, 4]), np.array([1.0, 3, 2, 4]), "a")
    0.6666666666666666
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown Kendall variant {variant!r} (expected one of {VARIANTS})")
    if epsilon < 0 or (epsilon > 0 and variant == "c"):
        raise ValueError("epsilon must be >= 0, and 0 for tau_c (no tie band is defined for it)")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    g = np.zeros(x.size, dtype=np.int64) if groups is None else np.asarray(groups)
    ok = np.isfinite(x) & np.isfinite(y)
    vals = []
    for u in np.unique(g[ok]):
        sel = ok & (g == u)
        if sel.sum() < 2:
            continue
        p = pairs(x[sel], y[sel])
        v = _variant(variant, _counts(p.dx, p.dy, epsilon), x[sel], y[sel])
        if not math.isnan(v):
            vals.append(v)
    return float(np.mean(vals)) if vals else math.nan


@dataclass
class TieCalibration(Result):
    """The tie band ε* maximising acc_23 and its value; ``thresholds``/``values``: the sweep."""

    epsilon: float
    value: float
    n_pairs: int
    thresholds: np.ndarray = field(repr=False)
    values: np.ndarray = field(repr=False)
    note: str = (
        "epsilon fitted on the same pairs it is scored on (optimistic; Deutsch et al. 2023, §4); "
        "see the cross-validated value"
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "acc23": self.value,
            "n_pairs": self.n_pairs,
            "note": self.note,
        }


def _sweep(p: Pairs) -> tuple[np.ndarray, np.ndarray]:
    """acc_23 (mean over rows) at ε = 0 and at every distinct sorted |Δx|."""
    tot = np.bincount(p.row, minlength=p.n_rows).astype(float)
    w = 1.0 / (tot[p.row] * p.n_rows)
    ad = np.abs(p.dx)
    yt = p.dy == 0
    normal = ((ad == 0) & yt) | ((ad > 0) & (np.sign(p.dx) == np.sign(p.dy)) & ~yt)
    tie = yt  # a metric tie is right exactly when the humans tie
    start = float((normal * w).sum())
    order = np.argsort(ad, kind="mergesort")
    gain = ((tie.astype(float) - normal)[order]) * w[order]
    gain[ad[order] == 0] = 0.0  # pairs already tied at ε = 0
    cum = start + np.cumsum(gain)
    sad = ad[order]
    last = np.r_[sad[1:] != sad[:-1], True]
    th, vals = sad[last], cum[last]
    if th.size == 0 or th[0] != 0.0:
        th, vals = np.r_[0.0, th], np.r_[start, vals]
    return th, vals


def tie_calibration(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None
) -> TieCalibration:
    """ε* = the smallest ε maximising acc_23 over 0 and the sorted |Δx| (Deutsch et al. 2023).

    >>> tc = tie_calibration(np.array([1.0, 1.1, 3.0]), np.array([2.0, 2.0, 5.0]))
    >>> round(tc.epsilon, 6), tc.value
    (0.1, 1.0)
    """
    p = pairs(x, y, groups)
    if p.dx.size == 0:
        return TieCalibration(math.nan, math.nan, 0, np.zeros(0), np.zeros(0))
    th, vals = _sweep(p)
    k = int(np.nanargmax(vals))
    return TieCalibration(float(th[k]), float(vals[k]), int(p.dx.size), th, vals)


def tie_calibration_cv(
    x: np.ndarray,
    y: np.ndarray,
    units: np.ndarray,
    groups: np.ndarray | None = None,
    *,
    k: int = 5,
    rng: np.random.Generator,
) -> tuple[float, list[float]]:
    """Cross-validated acc_23: ε fitted on the pairs of the other folds of ``units`` (items).

    Units are shuffled with ``rng`` into ``k`` folds; a pair belongs to a fold when both its
    responses do (pairs across folds are not scored). Returns (mean acc_23 over folds at the
    ε fitted without them, the ε of each fold).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    uniq, inv = np.unique(np.asarray(units).astype(str), return_inverse=True)
    k = max(2, min(k, uniq.size))
    fold_of = np.empty(uniq.size, dtype=np.int64)
    fold_of[rng.permutation(uniq.size)] = np.arange(uniq.size) % k
    fold = fold_of[inv]
    vals, eps = [], []
    for f in range(k):
        tr, te = fold != f, fold == f
        gt = None if groups is None else np.asarray(groups)[tr]
        e = tie_calibration(x[tr], y[tr], gt).epsilon
        ge = None if groups is None else np.asarray(groups)[te]
        v = kendall_variant(x[te], y[te], "acc23", epsilon=0.0 if math.isnan(e) else e, groups=ge)
        eps.append(e)
        if not math.isnan(v):
            vals.append(v)
    return (float(np.mean(vals)) if vals else math.nan), eps
