"""Levels of a pointwise correlation: which responses are correlated together, then averaged.

For per-response metric scores x and human scores y (one row per response or per label):

* ``global`` — one correlation over every row (Pearson/Spearman/Kendall pooled; mt-metrics-eval's
  ``average_by="none"``);
* ``item`` (item-grouped) — per input across its systems, averaged over inputs ("summary-level"
  of G-Eval, Liu et al. 2023; LFTQA-Eval's ``correlation_calculation.py``; Deutsch et al. 2022;
  mt-metrics-eval's ``average_by="item"``);
* ``system-grouped`` — per system across its inputs, averaged over systems (mt-metrics-eval's
  ``average_by="sys"``);
* ``system`` (system-level) — one correlation between the systems' mean metric score and mean
  human score (the system-level correlation of MT and summarisation evaluation, Deutsch et al.
  2022). ``system-level`` is an alias; before issue 14 ``system`` named today's
  ``system-grouped``.

Missing cells (:data:`MISSING_CELLS`, stated with every result) follow mt-metrics-eval's
``AverageCorrelation``: a response without a metric or human score is dropped from its group;
a group with fewer than two responses, or whose correlation is undefined (a constant side), is
left out of the average (``replace_nans_with_zeros=False``); the average is the unweighted mean of
the remaining groups (``macro=True``). Where mt-metrics-eval returns 0 when no group is left,
metajudge reports the value as undefined, with the reason.

Every level is bootstrapped over items (inputs) with the shared resample counts ``W``.
The correlation at a level is :func:`metajudge.stats.estimates.level_estimate` (one definition;
the resampling tests' (systems × inputs) matrices read it through
:func:`~metajudge.stats.resampling_tests.level_correlation`); a pooled value (global, one
system's, the systems' means) needs three rows, an input's two.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
from numpy.typing import NDArray

from metajudge import stats as st
from metajudge.stats import estimates as est
from metajudge.stats.estimates import _nanmean_rows, level_estimate

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]
LEVEL_NAMES: dict[str, str] = {
    "global": "global (all responses pooled)",
    "item": "item-grouped (across systems within each input, averaged over inputs)",
    "system-grouped": "system-grouped (across inputs within each system, averaged over systems)",
    "system": "system-level (systems' mean scores, one correlation across systems)",
}
MISSING_CELLS: dict[str, str] = {
    "global": "responses lacking a metric or human score dropped (average_by=none)",
    "item": "per input: responses lacking a score dropped; inputs with < 2 responses or an "
    "undefined correlation left out of the mean (average_by=item, NaNs removed, macro mean)",
    "system-grouped": "per system: responses lacking a score dropped; systems with < 2 responses "
    "or an undefined correlation left out of the mean (average_by=sys, NaNs removed, macro mean)",
    "system": "each system's mean over the responses it has both scores for; systems with "
    "none dropped before the one correlation across systems",
}


def mean_estimate(ests: list[est.Estimate], level: float) -> est.Estimate:
    """The average of several estimates on the same resamples (e.g. over annotators)."""
    ok = [e for e in ests if e.undefined is None]
    if not ok:
        return est.Estimate(math.nan, undefined=ests[0].undefined if ests else "no data")
    smps = [e.samples for e in ok if e.samples is not None]
    smp = _nanmean_rows(np.vstack(smps)) if smps else None
    lo, hi = st.percentile_ci(smp, level) if smp is not None else (math.nan, math.nan)
    value = float(np.mean([e.value for e in ok]))
    out = est.Estimate(value, lo, hi, min(e.n for e in ok), smp)
    units = [e.unit_values for e in ok]
    if all(u is not None for u in units) and len({np.shape(u) for u in units}) == 1:
        out.unit_values = _nanmean_rows(np.vstack(units))  # per group, over the comparisons
    return out


def _comparisons_at(
    stat: str,
    comps: list[st.HumanComparison],
    x_of: Callable[[st.HumanComparison], FArr],
    at: Callable[[str, FArr, st.HumanComparison], est.Estimate],
    level: float,
) -> est.Estimate:
    return mean_estimate([at(stat, x_of(c), c) for c in comps], level)


@overload
def n_distinct(idx: IArr, n: int) -> int: ...
@overload
def n_distinct(idx: IArr, n: int, which: Literal[True]) -> IArr: ...
def n_distinct(idx: IArr, n: int, which: bool = False) -> int | IArr:
    """How many distinct values ``idx`` (in ``0..n-1``) holds, or (``which``) those values,
    sorted — in O(n), where ``np.unique`` sorts."""
    seen = np.zeros(n, dtype=bool)
    seen[idx] = True
    return np.flatnonzero(seen) if which else int(np.count_nonzero(seen))


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
    comps: list[st.HumanComparison] | None = None,
    sorts: dict[int, st.SortOrders] | None = None,
) -> tuple[est.Estimate, est.Estimate | None]:
    """The inter-human reference at ``unit_level``, and ``metric`` beside it (matched).

    For every leave-one-out comparison (:func:`~metajudge.stats.leave_one_out`; two annotators
    give two, 1 vs 2 and 2 vs 1): ``stat``(reference, annotator i) — the mean of
    the other annotators as x (its tie-band decision for accuracies) — and
    ``stat``(metric, annotator i) on the same units at the same level; each averaged over the
    comparisons. The one definition of the inter-human reference in metajudge: the
    meta-evaluation (both protocols) and the backbone swap call it. ``comps``:
    ``leave_one_out(labels)``'s comparisons when the caller has them; ``sorts``: a dict the
    caller keeps between the statistics, each comparison's (reference, annotator) sorted and
    ranked once for all of them.
    """
    if comps is None:
        comps, _ = st.leave_one_out(labels)
    at = _loo_at(items, systems, n_items, W, level, unit_level)
    if sorts is None or stat not in st.CORRELATIONS:
        human = _comparisons_at(stat, comps, lambda c: c.ref, at, level)
    else:
        ests = []
        for k, c in enumerate(comps):
            ests.append(at(stat, c.ref, c, sorts.setdefault(k, st.SortOrders(c.ref, c.single))))
        human = mean_estimate(ests, level)
    matched = None
    if metric is not None:
        matched = _comparisons_at(stat, comps, lambda c: metric[c.rows], at, level)
    return human, matched


def loo_matched(
    stat: str,
    labels: FArr,
    items: IArr,
    systems: IArr,
    n_items: int,
    W: FArr | None,
    level: float,
    unit_level: str,
    metric: FArr,
    sorts: dict[int, st.SortOrders] | None = None,
    comps: list[st.HumanComparison] | None = None,
) -> est.Estimate:
    """:func:`loo_reference`'s second estimate alone (``metric`` matched to the reference),
    without evaluating the reference itself again (the same one beside every metric).

    ``sorts``: a dict the caller keeps between the statistics of one metric; each comparison's
    metric and label rows are sorted once for all of them (Spearman and Kendall: 0.2 s a
    comparison at a million pairs). ``comps``: ``leave_one_out(labels)``'s comparisons when the
    caller has them (one for every metric and statistic: 40 ms a call at a million pairs)."""
    if comps is None:
        comps, _ = st.leave_one_out(labels)
    at = _loo_at(items, systems, n_items, W, level, unit_level)
    if sorts is None or stat not in st.CORRELATIONS:
        return _comparisons_at(stat, comps, lambda c: metric[c.rows], at, level)
    ests = []
    for k, c in enumerate(comps):
        if k not in sorts:
            sorts[k] = st.SortOrders(metric[c.rows], c.single)
        ests.append(at(stat, sorts[k].x, c, sorts[k]))
    return mean_estimate(ests, level)


def _loo_at(
    items: IArr, systems: IArr, n_items: int, W: FArr | None, level: float, unit_level: str
) -> Callable[..., est.Estimate]:
    """The estimate of ``stat``(x, annotator i) on the units of comparison ``c`` (``sorts``:
    the sort orders of x and the annotator's labels, for a correlation)."""

    def at(
        s: str, x: FArr, c: st.HumanComparison, sorts: st.SortOrders | None = None
    ) -> est.Estimate:
        r = c.rows
        xv = _x_for(s, x)
        y = c.single
        it, sy = (items, systems) if r.size == items.size else (items[r], systems[r])  # (every row)
        return level_estimate(s, xv, y, it, sy, n_items, W, level, unit_level, sorts)

    return at


def _x_for(stat: str, x: FArr) -> FArr:
    """x as ``stat`` reads it: the values for correlations, their tie-band decision otherwise."""
    return x if stat in st.CORRELATIONS else st.tie_decisions(x)


def prefetch_pooled(W: object, requests: Sequence[tuple[str, FArr, FArr, IArr]]) -> None:
    """Evaluate the global-level bootstraps of ``requests`` ``(statistic, x, y, row items)``
    together: one pass over the resamples for those that follow from per-item sums
    (:func:`~metajudge.stats.correlate`). The resamples remember the
    values, so the estimates asked for next (:func:`loo_reference`, one statistic at a time)
    find them computed; a no-op unless ``W`` is a
    :class:`~metajudge.engine.Resamples` of the fast engine (the reference engine remembers
    nothing)."""
    from metajudge.engine import Resamples

    if not isinstance(W, Resamples) or W.engine != "fast":
        return
    reqs, views, by_rows = [], [], {}
    for s, x, y, items in requests:
        xo, yo, g, reason = est.pooled_rows(s, _x_for(s, x), y, items)
        if reason is None:
            reqs.append((s, xo, yo))
            views.append(by_rows.setdefault(id(g), (g, W[:, g]))[1])  # one view per row set
    if reqs:
        st.correlate(reqs, views)


@dataclass
class HumanReference:
    """The inter-human reference: its definition, the units it used, an estimate per statistic."""

    method: str | None
    n_units: int
    estimates: dict[str, est.Estimate]


def human_reference(
    labels: FArr,
    items: IArr,
    systems: IArr,
    n_items: int,
    W: FArr | None,
    level: float,
    statistics: Sequence[str],
    *,
    unit_level: str = "global",
    unit_name: str = "pairs",
    no_bootstrap: Collection[str] = (),
    loo: tuple[list[st.HumanComparison], str | None] | None = None,
    sorts: dict[int, st.SortOrders] | None = None,
) -> HumanReference:
    """:func:`loo_reference` for every statistic, with its definition and a reason when undefined.

    ``no_bootstrap``: statistics evaluated without the resamples (their CI then comes from
    :meth:`~metajudge.stats.estimates.Estimate.interval` without samples: the caller's row
    limits, e.g. :meth:`~metajudge.analyses.metric_vs_human.protocol.Protocol.ci_skipped`).
    ``loo``: ``leave_one_out(labels)`` when the caller has it (one for the reference, its
    statistics and the metrics matched to it: 0.14 s a call at a million pairs); ``sorts``:
    filled with each comparison's sort orders (:func:`loo_reference`), for the caller to read
    the annotators' labels sorted and ranked."""
    n_multi = int((np.isfinite(labels).sum(axis=1) >= 2).sum()) if labels.ndim == 2 else 0
    comps, method = st.leave_one_out(labels) if loo is None else loo
    if method is None or n_multi < 3:
        why = (
            f"one label per {unit_name[:-1]} (no second annotator)"
            if method is None or n_multi == 0
            else f"fewer than 3 {unit_name} with two labels"
        )
        return HumanReference(
            None, n_multi, {s: est.Estimate(math.nan, undefined=why) for s in statistics}
        )
    n_units = n_distinct(np.concatenate([c.rows for c in comps]), labels.shape[0])
    boot = [s for s in statistics if s not in no_bootstrap]
    if unit_level == "global":
        rows = [(c, items[c.rows]) for c in comps]
        prefetch_pooled(W, [(s, c.ref, c.single, it) for c, it in rows for s in boot])
    ests = {}
    sorts = {} if sorts is None else sorts
    for s in statistics:
        Ws = W if s in boot else None
        args = (labels, items, systems, n_items, Ws, level, unit_level)
        ests[s] = loo_reference(s, *args, comps=comps, sorts=sorts)[0]
    return HumanReference(method, n_units, ests)
