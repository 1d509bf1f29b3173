"""Estimates with bootstrap intervals: the correlation steps every analysis shares.

* :func:`pooled` — a statistic over all rows; bootstrap over items (all rows of an item move
  together, Efron 1979), the same resample counts for every metric so differences are paired.
* :func:`grouped` — the statistic per item, averaged over items (G-Eval, Liu et al. 2023;
  LFTQA-Eval's ``correlation_calculation.py``); bootstrap over items on the per-item values.
* :func:`level_estimate` — the one correlation at a level (:data:`LEVELS`: global, item,
  system-grouped, system; stated in :mod:`metajudge.analyses.metric_vs_human.levels`), long
  rows or, through :func:`~metajudge.stats.resampling_tests.level_correlation`, a
  (systems × inputs) matrix's cells.

The inter-human reference, estimated the same way, is
:func:`metajudge.analyses.metric_vs_human.levels.human_reference`.

The meta-evaluation (:mod:`metajudge.analyses.metric_vs_human.evaluate`) and the backbone swap
(:mod:`metajudge.analyses.backbone_swap`) both call these, so the same data, statistic and resamples give
the same number and interval in both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from metajudge.stats import bootstrap, correlation, intervals
from metajudge.stats.intervals import percentile_ci

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]
#: the fewest rows a pooled correlation (all rows, one system's, the systems' means) needs
MIN_POOLED_ROWS = 3


@dataclass
class Estimate:
    """A point value, its percentile interval and the per-resample values (None: no bootstrap).

    ``n``: the rows of a pooled value, the groups of a grouped one; ``unit_values``: the
    per-group values a grouped value averages (NaN: undefined group). :meth:`interval` is the
    interval results show (:func:`~metajudge.stats.intervals.choose`).
    """

    value: float
    lo: float = math.nan
    hi: float = math.nan
    n: int = 0
    samples: FArr | None = None
    undefined: str | None = None
    n_groups_undefined: int = 0
    unit_values: FArr | None = None

    def interval(
        self, statistic: str, level: float, *, small_n: int, n: int | None = None
    ) -> intervals.Interval:
        """The interval :func:`~metajudge.stats.intervals.choose` gives this value on ``n``
        independent units (default :attr:`n`)."""
        return intervals.choose(
            statistic,
            self.value,
            self.n if n is None else n,
            self.samples,
            level,
            small_n=small_n,
            unit_values=self.unit_values,
        )

    @property
    def ci(self) -> list[float] | None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            return None
        return [float(self.lo), float(self.hi)]


def _interval(samples: FArr | None, level: float) -> tuple[float, float]:
    if samples is None:
        return (math.nan, math.nan)
    return percentile_ci(samples, level)


def pooled_rows(
    statistic: str, x: FArr, y: FArr, row_items: IArr, *, min_n: int = MIN_POOLED_ROWS
) -> tuple[FArr, FArr, IArr, str | None]:
    """The rows :func:`pooled` evaluates (both values finite), and why it is undefined."""
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.all():  # (no copies when every row is kept: the arrays of one run are shared)
        x, y, row_items = x[ok], y[ok], row_items[ok]
    g = row_items
    reason = (
        correlation.undefined_reason(x, y, min_n=min_n, statistic=statistic)
        if statistic in correlation.CORRELATIONS
        else None
    )
    if reason is None and x.size == 0:
        reason = "no rows"
    return x, y, g, reason


def pooled(
    statistic: str,
    x: FArr,
    y: FArr,
    row_items: IArr,
    W_items: FArr | None,
    level: float,
    *,
    min_n: int = MIN_POOLED_ROWS,
    sorts: correlation.SortOrders | None = None,
) -> Estimate:
    """``statistic(x, y)`` over the rows where both are finite, bootstrap over items
    (``sorts``: the sort orders of x and y, used when every row is kept)."""
    xk, yk, g, reason = pooled_rows(statistic, x, y, row_items, min_n=min_n)
    n = int(xk.size)
    if reason is not None:
        return Estimate(math.nan, n=n, undefined=reason)
    if xk is not x:  # rows dropped: the orders are of other rows
        sorts = None
    if W_items is None:
        return Estimate(correlation.statistic(statistic, xk, yk, sorts), n=n)
    W = W_items[:, g]
    b = bootstrap.bootstrap_ci(xk, yk, statistic=statistic, resamples=W, level=level, sorts=sorts)
    return Estimate(b.estimate, b.lo, b.hi, n, b.samples)


def grouped(
    statistic: str,
    x: FArr,
    y: FArr,
    row_items: IArr,
    n_items: int,
    W_items: FArr | None,
    level: float,
) -> Estimate:
    """Per-item ``statistic`` averaged over the items where it is defined; bootstrap over items."""
    mean, vals, _ = bootstrap.grouped_correlation(
        x, y, row_items, statistic=statistic, n_groups=n_items
    )
    ok = np.isfinite(vals)
    present = np.unique(row_items[np.isfinite(x) & np.isfinite(y)]).size
    if not ok.any():
        why = f"no input has a defined {statistic} correlation (every group constant or < 2 rows)"
        return Estimate(math.nan, n=0, undefined=why, n_groups_undefined=int(present))
    smp = bootstrap.grouped_mean_samples(vals, W_items) if W_items is not None else None
    lo, hi = _interval(smp, level)
    est = Estimate(mean, lo, hi, int(ok.sum()), smp, unit_values=vals)
    est.n_groups_undefined = int(present - ok.sum())
    return est


LEVELS: tuple[str, ...] = ("global", "item", "system-grouped", "system")
LEVEL_ALIASES: dict[str, str] = {"system-level": "system", "item-grouped": "item"}


def canonical_level(name: str) -> str:
    """The level's canonical name (``system-level`` → ``system``, ``item-grouped`` → ``item``)."""
    return LEVEL_ALIASES.get(name, name)


def _by_system(
    stat: str, x: FArr, y: FArr, items: IArr, systems: IArr, W: FArr | None, level: float
) -> Estimate:
    vals, smps = [], []
    per_system = []
    for s in np.unique(systems):
        sel = systems == s
        e = pooled(stat, x[sel], y[sel], items[sel], W, level)
        per_system.append(e.value if e.undefined is None else math.nan)
        if e.undefined is None:
            vals.append(e.value)
            if e.samples is not None:
                smps.append(e.samples)
    if not vals:
        return Estimate(math.nan, undefined=f"no system has a defined {stat} correlation")
    smp = _nanmean_rows(np.vstack(smps)) if smps else None
    lo, hi = percentile_ci(smp, level) if smp is not None else (math.nan, math.nan)
    unit_values = np.array(per_system, dtype=float)
    return Estimate(float(np.mean(vals)), lo, hi, len(vals), smp, unit_values=unit_values)


def _means(v: FArr, w: FArr, systems: IArr, n_sys: int) -> FArr:
    den = np.bincount(systems, weights=w, minlength=n_sys)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(systems, weights=w * v, minlength=n_sys) / den


def _system_level(
    stat: str, x: FArr, y: FArr, items: IArr, systems: IArr, W: FArr | None, level: float
) -> Estimate:
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, items, systems = x[ok], y[ok], items[ok], systems[ok]
    n_sys = int(systems.max()) + 1 if systems.size else 0
    ones = np.ones(x.size)
    mx, my = _means(x, ones, systems, n_sys), _means(y, ones, systems, n_sys)
    keep = np.isfinite(mx) & np.isfinite(my)
    reason = correlation.undefined_reason(mx[keep], my[keep], min_n=MIN_POOLED_ROWS, statistic=stat)
    if reason is not None:
        return Estimate(math.nan, n=int(keep.sum()), undefined=f"system means: {reason}")
    smp = None if W is None else _system_samples(stat, x, y, items, systems, W, n_sys)
    lo, hi = percentile_ci(smp, level) if smp is not None else (math.nan, math.nan)
    return Estimate(correlation.statistic(stat, mx[keep], my[keep]), lo, hi, int(keep.sum()), smp)


#: above this many systems a resample's system-level value is computed one resample at a time
#: (the vectorised Kendall compares every pair of systems: B x n² / 2 signs)
VECTOR_MAX_SYSTEMS = 200


def _system_samples(
    stat: str, x: FArr, y: FArr, items: IArr, systems: IArr, W: FArr, n_sys: int
) -> FArr:
    """The system-level value of every resample: the systems' weighted means of all resamples
    at once (two matrix products), then the statistic row by row, vectorised for Pearson,
    Spearman and Kendall's τ_b (:func:`_rows_statistic`); a resample that leaves a system out,
    and any other statistic, one at a time as :func:`~metajudge.stats.correlation.statistic`."""
    n_items = W.shape[1]
    cell = items * n_sys + systems  # the rows of one (item, system), summed once
    sums = [
        np.bincount(cell, weights=v, minlength=n_items * n_sys).reshape(n_items, n_sys)
        for v in (np.ones(x.size), x, y)
    ]
    bx, by = np.empty((W.shape[0], n_sys)), np.empty((W.shape[0], n_sys))
    chunks = W.chunks() if hasattr(W, "chunks") else [(0, np.asarray(W, dtype=float))]
    for b0, block in chunks:  # (resamples, items) weights
        den = block @ sums[0]
        with np.errstate(invalid="ignore", divide="ignore"):
            bx[b0 : b0 + len(block)] = (block @ sums[1]) / den
            by[b0 : b0 + len(block)] = (block @ sums[2]) / den
    smp = np.full(W.shape[0], np.nan)
    full = np.isfinite(bx).all(axis=1) & np.isfinite(by).all(axis=1)
    if stat in ("pearson", "spearman", "kendall") and n_sys <= VECTOR_MAX_SYSTEMS:
        if n_sys >= MIN_POOLED_ROWS:
            smp[full] = _rows_statistic(stat, bx[full], by[full])
        rest = np.flatnonzero(~full)
    else:
        rest = np.arange(W.shape[0])
    for b in rest:
        k = np.isfinite(bx[b]) & np.isfinite(by[b])
        if correlation.undefined_reason(bx[b, k], by[b, k], min_n=MIN_POOLED_ROWS) is None:
            smp[b] = correlation.statistic(stat, bx[b, k], by[b, k])
    return smp


def _rows_statistic(stat: str, X: FArr, Y: FArr) -> FArr:
    """``stat`` of each row of ``X`` with the same row of ``Y`` (NaN where a row is constant,
    as :func:`~metajudge.stats.correlation.undefined_reason`): Pearson of the values or of the
    average ranks; Kendall's τ_b from the signs of every pair of columns, (C − D) / sqrt((n0 −
    n1)(n0 − n2)) with the same integer counts as
    :func:`~metajudge.stats.correlation.kendall_tau_b`."""
    out = np.full(X.shape[0], np.nan)
    ok = (np.ptp(X, axis=1) > 0) & (np.ptp(Y, axis=1) > 0)
    X, Y = X[ok], Y[ok]
    if stat == "kendall":
        i, j = np.triu_indices(X.shape[1], k=1)
        sx, sy = np.sign(X[:, i] - X[:, j]), np.sign(Y[:, i] - Y[:, j])
        cmd = (sx * sy).sum(axis=1)
        nx, ny = np.count_nonzero(sx, axis=1), np.count_nonzero(sy, axis=1)
        out[ok] = np.clip(cmd / np.sqrt(nx) / np.sqrt(ny), -1.0, 1.0)
        return out
    if stat == "spearman":
        X, Y = correlation._rankdata(X), correlation._rankdata(Y)
    out[ok] = correlation.pearson_rows(X, Y)
    return out


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
    sorts: correlation.SortOrders | None = None,
) -> Estimate:
    """The correlation ``stat`` of x and y at ``unit_level`` with its bootstrap interval
    (``sorts``: the sort orders of x and y, read at the global level)."""
    if unit_level == "global":
        return pooled(stat, x, y, items, W, level, sorts=sorts)
    if unit_level == "item":
        return grouped(stat, x, y, items, n_items, W, level)
    unit_level = canonical_level(unit_level)
    if unit_level == "system-grouped":
        return _by_system(stat, x, y, items, systems, W, level)
    if unit_level == "system":
        return _system_level(stat, x, y, items, systems, W, level)
    raise ValueError(f"unknown level {unit_level!r} (expected one of {', '.join(LEVELS)})")


def _nanmean_rows(m: np.ndarray) -> np.ndarray:
    """Column means over the defined values; NaN (no warning) where a resample is undefined for
    every annotator — :func:`~metajudge.stats.bootstrap.percentile_ci` then leaves it out
    and refuses an interval from a minority of defined resamples."""
    ok = np.isfinite(m)
    n = ok.sum(axis=0)
    total = np.where(ok, m, 0.0).sum(axis=0)
    return np.divide(total, n, out=np.full(m.shape[1], np.nan), where=n > 0)
