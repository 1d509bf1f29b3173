"""Estimates with bootstrap intervals: the correlation steps every analysis shares.

* :func:`pooled` — a statistic over all rows; bootstrap over items (all rows of an item move
  together, Efron 1979), the same resample counts for every metric so differences are paired.
* :func:`grouped` — the statistic per item, averaged over items (G-Eval, Liu et al. 2023;
  LFTQA-Eval's ``correlation_calculation.py``); bootstrap over items on the per-item values.
* :func:`human_reference` — the inter-human reference of a label matrix on the same unit:
  :func:`~metajudge.metaeval.stats.leave_one_out` comparisons, each estimated like a metric,
  averaged.

The meta-evaluation (:mod:`metajudge.metaeval.protocol`) and the backbone swap
(:mod:`metajudge.metaeval.swap`) both call these, so the same data, statistic and resamples give
the same number and interval in both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from metajudge.metaeval import stats as st

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]


@dataclass
class Estimate:
    """A point value, its percentile interval and the per-resample values (None: no bootstrap)."""

    value: float
    lo: float = math.nan
    hi: float = math.nan
    n: int = 0
    samples: FArr | None = None
    undefined: str | None = None
    n_groups_undefined: int = 0

    @property
    def ci(self) -> list[float] | None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            return None
        return [float(self.lo), float(self.hi)]


def _interval(samples: FArr | None, level: float) -> tuple[float, float]:
    if samples is None:
        return (math.nan, math.nan)
    return st.percentile_ci(samples, level)


def pooled(
    statistic: str,
    x: FArr,
    y: FArr,
    row_items: IArr,
    W_items: FArr | None,
    level: float,
    *,
    min_n: int = 3,
) -> Estimate:
    """``statistic(x, y)`` over the rows where both are finite, bootstrap over items."""
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, g = x[ok], y[ok], row_items[ok]
    n = int(ok.sum())
    reason = st.undefined_reason(x, y, min_n=min_n) if statistic in st.CORRELATIONS else None
    if reason is None and n == 0:
        reason = "no rows"
    if reason is not None:
        return Estimate(math.nan, n=n, undefined=reason)
    smp = st.weighted_statistic(statistic, x, y, W_items[:, g]) if W_items is not None else None
    lo, hi = _interval(smp, level)
    return Estimate(st.statistic(statistic, x, y), lo, hi, n, smp)


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
    vals = st.per_group_values(x, y, row_items, n_items, statistic=statistic)
    ok = np.isfinite(vals)
    present = np.unique(row_items[np.isfinite(x) & np.isfinite(y)]).size
    if not ok.any():
        why = f"no input has a defined {statistic} correlation (every group constant or < 2 rows)"
        return Estimate(math.nan, n=0, undefined=why, n_groups_undefined=int(present))
    smp = st.grouped_mean_samples(vals, W_items) if W_items is not None else None
    lo, hi = _interval(smp, level)
    est = Estimate(float(vals[ok].mean()), lo, hi, int(ok.sum()), smp)
    est.n_groups_undefined = int(present - ok.sum())
    return est


@dataclass
class HumanReference:
    """The inter-human reference: its definition, the units it used, an estimate per statistic."""

    method: str | None
    n_units: int
    estimates: dict[str, Estimate]


def _reference_one(
    statistic: str,
    comps: Sequence[st.HumanComparison],
    unit_items: IArr,
    n_items: int,
    W_items: FArr | None,
    level: float,
    grouped_unit: bool,
) -> Estimate:
    ests = []
    for c in comps:
        x = c.ref if statistic in st.CORRELATIONS else st.tie_decisions(c.ref)
        if grouped_unit:
            e = grouped(statistic, x, c.single, unit_items[c.rows], n_items, W_items, level)
        else:
            e = pooled(statistic, x, c.single, unit_items[c.rows], W_items, level, min_n=3)
            if statistic not in st.CORRELATIONS and c.rows.size == 0:
                e.undefined = "no pairs"
        ests.append(e)
    ok = [e for e in ests if e.undefined is None]
    if not ok:
        return Estimate(math.nan, undefined=ests[0].undefined if ests else "no pairs")
    smps = [e.samples for e in ok if e.samples is not None]
    smp = np.mean(np.vstack(smps), axis=0) if smps else None
    lo, hi = _interval(smp, level)
    return Estimate(float(np.mean([e.value for e in ok])), lo, hi, min(e.n for e in ok), smp)


def human_reference(
    labels: FArr,
    unit_items: IArr,
    n_items: int,
    W_items: FArr | None,
    level: float,
    statistics: Sequence[str],
    *,
    grouped_unit: bool = False,
    unit_name: str = "pairs",
) -> HumanReference:
    """Inter-human agreement on the units of ``labels`` (units × annotators), same resamples.

    Each :func:`~metajudge.metaeval.stats.leave_one_out` comparison is estimated like a metric
    (reference = x, single annotator = y; accuracies take the reference's sign), then averaged.
    """
    n_lab = np.isfinite(labels).sum(axis=1) if labels.ndim == 2 else np.zeros(0)
    n_multi = int((n_lab >= 2).sum())
    comps, method = st.leave_one_out(labels)
    if method is None or n_multi < 3:
        why = (
            f"one label per {unit_name[:-1]} (no second annotator)"
            if method is None or n_multi == 0
            else f"fewer than 3 {unit_name} with two labels"
        )
        return HumanReference(
            None, n_multi, {s: Estimate(math.nan, undefined=why) for s in statistics}
        )
    n_units = int(np.unique(np.concatenate([c.rows for c in comps])).size)
    est = {
        s: _reference_one(s, comps, unit_items, n_items, W_items, level, grouped_unit)
        for s in statistics
    }
    return HumanReference(method, n_units, est)
