"""Levels of a pointwise correlation: which responses are correlated together, then averaged.

For per-response metric scores x and human scores y (one row per response or per label):

* ``global`` — one correlation over every row (Pearson/Spearman/Kendall pooled);
* ``item`` — per input across its systems, averaged over inputs ("summary-level" of G-Eval, Liu
  et al. 2023; LFTQA-Eval's ``correlation_calculation.py``; Deutsch et al. 2022);
* ``system`` — per system across its inputs, averaged over systems;
* ``system-level`` — one correlation between the systems' mean metric score and mean human
  score (the system-level correlation of MT and summarisation evaluation, Deutsch et al. 2022).

Every level is bootstrapped over items (inputs) with the shared resample counts ``W``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from metajudge.metaeval import estimates as est
from metajudge.metaeval import stats as st

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]
LEVELS: tuple[str, ...] = ("global", "item", "system", "system-level")


def _by_system(
    stat: str, x: FArr, y: FArr, items: IArr, systems: IArr, W: FArr | None, level: float
) -> est.Estimate:
    vals, smps = [], []
    for s in np.unique(systems):
        sel = systems == s
        e = est.pooled(stat, x[sel], y[sel], items[sel], W, level)
        if e.undefined is None:
            vals.append(e.value)
            if e.samples is not None:
                smps.append(e.samples)
    if not vals:
        return est.Estimate(math.nan, undefined=f"no system has a defined {stat} correlation")
    smp = np.nanmean(np.vstack(smps), axis=0) if smps else None
    lo, hi = st.percentile_ci(smp, level) if smp is not None else (math.nan, math.nan)
    return est.Estimate(float(np.mean(vals)), lo, hi, len(vals), smp)


def _means(v: FArr, w: FArr, systems: IArr, n_sys: int) -> FArr:
    den = np.bincount(systems, weights=w, minlength=n_sys)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(systems, weights=w * v, minlength=n_sys) / den


def _system_level(
    stat: str, x: FArr, y: FArr, items: IArr, systems: IArr, W: FArr | None, level: float
) -> est.Estimate:
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, items, systems = x[ok], y[ok], items[ok], systems[ok]
    n_sys = int(systems.max()) + 1 if systems.size else 0
    ones = np.ones(x.size)
    mx, my = _means(x, ones, systems, n_sys), _means(y, ones, systems, n_sys)
    keep = np.isfinite(mx) & np.isfinite(my)
    reason = st.undefined_reason(mx[keep], my[keep])
    if reason is not None:
        return est.Estimate(math.nan, n=int(keep.sum()), undefined=f"system means: {reason}")
    smp = None
    if W is not None:
        smp = np.full(W.shape[0], np.nan)
        for b, wrow in enumerate(W[:, items]):
            bx, by = _means(x, wrow, systems, n_sys), _means(y, wrow, systems, n_sys)
            k = np.isfinite(bx) & np.isfinite(by)
            if st.undefined_reason(bx[k], by[k]) is None:
                smp[b] = st.statistic(stat, bx[k], by[k])
    lo, hi = st.percentile_ci(smp, level) if smp is not None else (math.nan, math.nan)
    return est.Estimate(st.statistic(stat, mx[keep], my[keep]), lo, hi, int(keep.sum()), smp)


def level_estimate(
    stat: str,
    x: FArr,
    y: FArr,
    items: IArr,
    systems: IArr,
    n_items: int,
    W: FArr | None,
    level: float,
    unit_level: str,
) -> est.Estimate:
    """The correlation ``stat`` of x and y at ``unit_level`` with its bootstrap interval."""
    if unit_level == "global":
        return est.pooled(stat, x, y, items, W, level)
    if unit_level == "item":
        return est.grouped(stat, x, y, items, n_items, W, level)
    if unit_level == "system":
        return _by_system(stat, x, y, items, systems, W, level)
    if unit_level == "system-level":
        return _system_level(stat, x, y, items, systems, W, level)
    raise ValueError(f"unknown level {unit_level!r} (expected one of {', '.join(LEVELS)})")


def mean_estimate(ests: list[est.Estimate], level: float) -> est.Estimate:
    """The average of several estimates on the same resamples (e.g. over annotators)."""
    ok = [e for e in ests if e.undefined is None]
    if not ok:
        return est.Estimate(math.nan, undefined=ests[0].undefined if ests else "no data")
    smps = [e.samples for e in ok if e.samples is not None]
    smp = np.nanmean(np.vstack(smps), axis=0) if smps else None
    lo, hi = st.percentile_ci(smp, level) if smp is not None else (math.nan, math.nan)
    return est.Estimate(float(np.mean([e.value for e in ok])), lo, hi, min(e.n for e in ok), smp)


def loo_reference(
    stat: str,
    labels: FArr,
    items: IArr,
    systems: IArr,
    n_items: int,
    W: FArr | None,
    level: float,
    unit_level: str,
    metric: FArr | None = None,
) -> tuple[est.Estimate, est.Estimate | None]:
    """Leave-one-annotator-out reference at ``unit_level``, and ``metric`` beside it (matched).

    For every annotator i (:func:`~metajudge.metaeval.stats.leave_one_out`, every annotator):
    ``stat``(mean of the others, annotator i) and ``stat``(metric, annotator i) on the same
    units at the same level; both averaged over annotators.
    """
    comps, _ = st.leave_one_out(labels, every_annotator=True)

    def at(x: FArr, c: st.HumanComparison) -> est.Estimate:
        r = c.rows
        return level_estimate(
            stat, x, c.single, items[r], systems[r], n_items, W, level, unit_level
        )

    human = mean_estimate([at(c.ref, c) for c in comps], level)
    matched = None
    if metric is not None:
        matched = mean_estimate([at(metric[c.rows], c) for c in comps], level)
    return human, matched
