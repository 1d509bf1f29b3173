"""Point statistics: correlations, the statistic dispatch by name (on the data, :func:`statistic`;
on every resample, :func:`correlate`, through the engine) and Fisher-z intervals.

Pairwise accuracy is :func:`metajudge.stats.decisions.pairwise_accuracy` (``acc_ties`` =
policy ``three_way``, ``acc_no_ties`` = ``exclude_human_ties``).

Conventions (shared by the whole :mod:`metajudge.stats` package): ``x`` is a metric's
(normalised) value per row, ``y`` the human label per row; an undefined statistic (constant
input, too few rows) is ``nan`` here and :func:`undefined_reason` says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Literal

import numpy as np

from metajudge import engine as _engine
from metajudge.engine import Resamples, pearson_from_sums
from metajudge.stats.decisions import pair_credit, pairwise_accuracy

Statistic = Literal["pearson", "spearman", "kendall", "acc_ties", "acc_no_ties"]
STATISTICS: tuple[str, ...] = ("pearson", "spearman", "kendall", "acc_ties", "acc_no_ties")
CORRELATIONS: tuple[str, ...] = ("pearson", "spearman", "kendall")


def _as_xy(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    # (a vector is itself, not a new view: an array's digest is then found once, by identity)
    xa, ya = (a if a.ndim == 1 else a.ravel() for a in (xa, ya))
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same length, got {xa.size} and {ya.size}")
    return xa, ya


#: The largest magnitude Pearson's r is computed on: its sums of squares (of up to 10^8 rows,
#: and in the bootstrap's moment sums) stay inside float64 below it; a larger value (a score of
#: 1.7e308) is a reason, not an overflow warning and a silent NaN. Rank statistics need no bound.
PEARSON_MAX_ABS = 1e150


def undefined_reason(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    min_n: int = 3,
    statistic: str | None = None,
) -> str | None:
    """Why a correlation (``statistic``; None: any) between ``x`` and ``y`` is undefined, or
    ``None`` when it is defined.

    >>> undefined_reason([1, 1, 1], [1, 2, 3])
    'metric values are constant (all 1) over 3 rows'
    >>> undefined_reason([1, 2], [1, 2])
    'only 2 rows (need at least 3)'
    >>> undefined_reason([1, 2, 3], [3, 1, 2]) is None
    True
    >>> undefined_reason([1, 2, 1.7e308], [3, 1, 2], statistic="pearson")
    "metric values as large as 1.7e+308: Pearson's sums of squares overflow a float (at most 1e+150; rescale the column)"
    """
    xa, ya = _as_xy(x, y)
    if xa.size < min_n:
        return f"only {xa.size} rows (need at least {min_n})"
    if np.isnan(xa).any() or np.isnan(ya).any():
        return "missing values (NaN) in the inputs"
    if np.ptp(xa) == 0:
        return f"metric values are constant (all {xa[0]:g}) over {xa.size} rows"
    if np.ptp(ya) == 0:
        return f"human labels are constant (all {ya[0]:g}) over {ya.size} rows"
    if statistic in (None, "pearson"):
        for side, v in (("metric values", xa), ("human labels", ya)):
            big = float(np.max(np.abs(v)))
            if big > PEARSON_MAX_ABS:
                return (
                    f"{side} as large as {big:.3g}: Pearson's sums of squares overflow a float "
                    f"(at most {PEARSON_MAX_ABS:.0e}; rescale the column)"
                )
    return None


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson's r (equal to ``scipy.stats.pearsonr(x, y)[0]``); ``nan`` when undefined.

    Symmetric in ``x`` and ``y``; the centred sums of one sample, then
    :func:`pearson_from_sums`.

    >>> round(pearson([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.8
    """
    xa, ya = _as_xy(x, y)
    if xa.size < 2 or np.ptp(xa) == 0 or np.ptp(ya) == 0:  # a constant side (as
        return math.nan  # undefined_reason): its centred sums may be rounding error, not 0
    xc = xa - xa.mean()
    yc = ya - ya.mean()
    sxx, syy = float(xc @ xc), float(yc @ yc)
    if sxx * syy == 0.0:
        return math.nan
    return float(pearson_from_sums(xc @ yc, sxx, syy, True))


def pearson_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """:func:`pearson` of each row of ``X`` (B, n) with ``Y`` ((n,) or (B, n)), vectorised
    (row sums by ``einsum``: each row's value depends on that row alone)."""
    Xc = X - X.mean(axis=1, keepdims=True)
    Yc = Y - Y.mean(axis=-1, keepdims=True)
    Yb = np.ascontiguousarray(np.broadcast_to(Yc, Xc.shape))
    Xc = np.ascontiguousarray(Xc)
    sxx = np.einsum("ij,ij->i", Xc, Xc)
    syy = np.einsum("ij,ij->i", Yb, Yb)
    return pearson_from_sums(np.einsum("ij,ij->i", Xc, Yb), sxx, syy)


def _rankdata(a: np.ndarray) -> np.ndarray:
    """Average ranks (1-based) along the last axis, ties sharing their mean rank.

    Same as ``scipy.stats.rankdata(a, method="average", axis=-1)``, vectorised over leading axes.
    """
    a = np.asarray(a, dtype=float)
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    if a.ndim == 1:
        return _rank_vector(a)
    order = np.argsort(a, axis=-1)  # stability is not needed: tied values share their mean rank
    sa = np.take_along_axis(a, order, axis=-1)
    idx = np.broadcast_to(np.arange(n), a.shape)
    first = np.ones(a.shape, dtype=bool)
    first[..., 1:] = sa[..., 1:] != sa[..., :-1]
    last = np.ones(a.shape, dtype=bool)
    last[..., :-1] = first[..., 1:]
    start = np.maximum.accumulate(np.where(first, idx, 0), axis=-1)
    end = np.flip(
        np.minimum.accumulate(np.flip(np.where(last, idx, n - 1), axis=-1), axis=-1), axis=-1
    )
    avg = (start + end) / 2.0 + 1.0
    ranks = np.empty_like(avg)
    np.put_along_axis(ranks, order, avg, axis=-1)
    return ranks


def _rank_vector(a: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """:func:`_rankdata` of a non-empty vector: each run of ties found once (its first and last
    position in sorted order), the same ``(start + end) / 2 + 1``, so the same ranks as the
    matrix form, faster than its running maxima and minima over every position (measured:
    ``docs/benchmarks.md``). ``order``: ``a``'s sort order when the caller has it (any order
    among ties gives the same ranks)."""
    n = a.size
    order = np.argsort(a) if order is None else order
    sa = a[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.not_equal(sa[1:], sa[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:] - 1
    ends[-1] = n - 1
    avg = (starts + ends) / 2.0 + 1.0
    ranks = np.empty(n)
    ranks[order] = np.repeat(avg, np.diff(starts, append=n))
    return ranks


class SortOrders:
    """The sort orders of one ``x`` and ``y`` (any order among ties) and their average ranks,
    each found when first asked and then kept: Spearman's ρ and Kendall's τ_b of the same rows
    sort each side once (:func:`statistic`'s ``sorts``; measured: ``docs/benchmarks.md``). ``by_x``, ``by_y``: an
    order the caller already has (one sort of a metric's pairs serves all its rows,
    :func:`rows_order`)."""

    def __init__(
        self,
        x: Sequence[float] | np.ndarray,
        y: Sequence[float] | np.ndarray,
        *,
        by_x: np.ndarray | None = None,
        by_y: np.ndarray | None = None,
    ) -> None:
        self.x, self.y = _as_xy(x, y)
        self._shared: dict[str, SortOrders] = {}  # (:meth:`sharing`)
        if by_x is not None:
            self.__dict__["by_x"] = by_x  # (what the cached property would find and keep)
        if by_y is not None:
            self.__dict__["by_y"] = by_y

    @cached_property
    def by_x(self) -> np.ndarray:
        src = self._shared.get("x")
        return src.by_x if src is not None else np.argsort(self.x)

    @cached_property
    def by_y(self) -> np.ndarray:
        src = self._shared.get("y")
        return src.by_y if src is not None else np.argsort(self.y)

    @cached_property
    def ranks_x(self) -> np.ndarray:
        """x's average ranks (:func:`spearman`), from its order."""
        src = self._shared.get("x")
        return src.ranks_x if src is not None else _rank_vector(self.x, self.by_x)

    @cached_property
    def ranks_y(self) -> np.ndarray:
        src = self._shared.get("y")
        return src.ranks_y if src is not None else _rank_vector(self.y, self.by_y)

    def sharing(self, other: SortOrders, side: Literal["x", "y"]) -> SortOrders:
        """These orders, taking x's (``side``) or y's order and ranks from ``other``, found
        there once: the same values on the same rows (one annotator's labels against every
        metric, a metric against every annotator: each sorted and ranked once)."""
        self._shared[side] = other
        return self


def rows_order(unit_order: np.ndarray, units: np.ndarray) -> np.ndarray:
    """The sort order of rows by their unit's value, from ``unit_order`` (the sort order of the
    units' values) and ``units`` (each row's unit, non-decreasing, as a cell's label rows and a
    comparison's pairs are): each unit's rows in turn, in unit order. A sort order of the rows'
    values (any order among ties), in O(rows) where a sort of them is O(rows log rows).

    >>> rows_order(np.array([2, 0, 1]), np.array([0, 0, 2]))
    array([2, 0, 1])
    """
    count = np.bincount(units, minlength=unit_order.size)
    first = np.cumsum(count) - count  # each unit's first row
    c, f = count[unit_order], first[unit_order]
    at = np.cumsum(c) - c  # where each unit's rows start in the order
    return np.repeat(f - at, c) + np.arange(units.size)


def spearman(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    sorts: SortOrders | None = None,
) -> float:
    """Spearman's ρ: Pearson's r of average ranks (= ``scipy.stats.spearmanr``); ``nan`` when
    undefined. ``sorts``: the sort orders of these very ``x`` and ``y``.

    >>> round(spearman([1, 2, 3, 4], [10, 30, 20, 40]), 4)
    0.8
    """
    xa, ya = _as_xy(x, y)
    if sorts is None or xa.size == 0:
        return pearson(_rankdata(xa), _rankdata(ya))
    return pearson(sorts.ranks_x, sorts.ranks_y)


def _tie_pairs(a: np.ndarray) -> float:
    _, counts = np.unique(a, return_counts=True)
    return float((counts * (counts - 1) / 2).sum())


def _dense(a: np.ndarray) -> np.ndarray:
    """Dense ranks 1..K of a sorted array."""
    return np.r_[True, a[1:] != a[:-1]].cumsum(dtype=np.intp)


def _tie_count(ranks: np.ndarray) -> int:
    cnt = np.bincount(ranks).astype(np.int64, copy=False)
    cnt = cnt[cnt > 1]
    return int((cnt * (cnt - 1) // 2).sum())


#: at most this many distinct ranks: :func:`_inversions` counts per value, not by merge sort
FEW_RANKS = 64


def _inversions_few(y: np.ndarray, span: int) -> int:
    """:func:`_inversions` of ranks in ``0..span-1``: for each value k, the elements greater
    than k before each element equal to k (one running count per value; exact integers).

    >>> _inversions_few(np.array([2, 0, 1, 0]), 3)
    4
    """
    total = 0
    for k in range(span - 1):
        greater_so_far = np.cumsum(y > k)
        total += int(greater_so_far[y == k].sum())
    return total


def _inversions_of_runs(runs: list[np.ndarray]) -> int:
    """:func:`_inversions` of the concatenation of sorted ``runs``: for every earlier run, its
    elements greater than each element of a later one (``searchsorted``; exact integers).

    >>> _inversions_of_runs([np.array([1, 3, 5]), np.array([0, 2, 4])])
    6
    """
    total = 0
    for b in range(1, len(runs)):
        for a in range(b):
            not_greater = np.searchsorted(runs[a], runs[b], side="right")
            total += int(runs[a].size * runs[b].size - not_greater.sum())
    return total


def _inversions(y: np.ndarray) -> int:
    """#{i < j : y[i] > y[j]} of non-negative integer ranks ``y``: a bottom-up merge sort whose
    every level counts, for each element of a right block, the elements of its left block
    greater than it (one ``searchsorted`` over all blocks, keyed by block) — exact integers,
    O(n log² n), no Python loop over elements; ranks with at most :data:`FEW_RANKS` values
    (human labels) are counted by :func:`_inversions_few` instead, O(n · values), and a
    sequence of at most that many sorted runs by :func:`_inversions_of_runs`."""
    n = y.size
    span = int(y.max()) + 1 if n else 1
    if span <= FEW_RANKS:
        return _inversions_few(y, span)
    starts = np.flatnonzero(y[1:] < y[:-1]) + 1
    if starts.size < FEW_RANKS:  # a few sorted runs (y sorted within each of x's few values)
        return _inversions_of_runs(np.split(y, starts))
    idx = np.arange(n)
    cur = y.astype(np.int64)
    total = 0
    w = 1
    while w < n:
        blk = idx // (2 * w)
        right = (idx // w) % 2 == 1
        key = blk * span + cur
        lkeys = key[~right]
        le = np.searchsorted(lkeys, key[right], side="right")
        lstart = np.searchsorted(lkeys, blk[right] * span, side="left")
        lend = np.searchsorted(lkeys, (blk[right] + 1) * span, side="left")
        total += int((lend - lstart).sum() - (le - lstart).sum())
        cur = np.sort(key) - blk * span
        w *= 2
    return total


def kendall_tau_b(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    sorts: SortOrders | None = None,
) -> float:
    """Kendall's τ_b (Kendall 1945): (C − D) / sqrt((n0 − n1)(n0 − n2)), ties corrected.

    Knight's (1966) O(n log n) algorithm, step for step as ``scipy.stats.kendalltau(x, y,
    variant="b")`` implements it (sort by y then stably by x, count the exchanges of a merge
    sort of y; the same integer counts and the same float operations, so the same bits) without
    importing ``scipy.stats`` (slow to import); ``nan`` when undefined. ``sorts``: the sort orders of
    these very ``x`` and ``y``.

    >>> round(kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.6667
    """
    xa, ya = _as_xy(x, y)
    if xa.size < 2 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return math.nan
    if np.isnan(xa).any() or np.isnan(ya).any():
        return math.nan
    xa, yr = _by_x_then_y(xa, ya, sorts)
    xr = _dense(xa)
    dis = _inversions(yr)
    obs = np.r_[True, (xr[1:] != xr[:-1]) | (yr[1:] != yr[:-1]), True]
    cnt = np.diff(np.nonzero(obs)[0]).astype(np.int64, copy=False)
    ntie = int((cnt * (cnt - 1) // 2).sum())
    xtie = _tie_count(xr)
    ytie = _tie_count(yr)
    tot = (xa.size * (xa.size - 1)) // 2
    if xtie == tot or ytie == tot:
        return math.nan
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau = np.minimum(1.0, max(-1.0, tau))
    return float(np.clip(tau, -1.0, 1.0))


def _by_x_then_y(
    xa: np.ndarray, ya: np.ndarray, sorts: SortOrders | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """x sorted, and y's dense ranks in that order with the ties of x ordered by y: the
    sequence whose merge-sort exchanges Knight's algorithm counts (scipy gets it by sorting y,
    then x stably). Here by unstable sorts, faster than stable ones: y's ranks from one sort
    of y; then one sort of x, which is the order when x has no ties; with ties, a stable sort
    of the joint ranks (x rank, y rank) in that order, which are out of order only within x's
    ties, so a short one (measured: ``docs/benchmarks.md``). The same sequence, so the same
    counts."""
    n = xa.size
    by_y = np.argsort(ya) if sorts is None else sorts.by_y
    yr = np.empty(n, dtype=np.intp)
    yr[by_y] = _dense(ya[by_y])
    by_x = np.argsort(xa) if sorts is None else sorts.by_x
    xs = xa[by_x]
    if (xs[1:] == xs[:-1]).any():
        key = _dense(xs) * (int(yr.max()) + 1) + yr[by_x]  # sorted but within x's ties
        by_x = by_x[np.argsort(key, kind="stable")]  # so a stable sort is a short one
        xs = xa[by_x]
    return xs, yr[by_x]


ACCURACIES: dict[str, str] = {"acc_ties": "three_way", "acc_no_ties": "exclude_human_ties"}


def accuracy_rows(name: str, human: np.ndarray, judge: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the credit and whether the row is scored, of the accuracy ``name``
    (``acc_ties``/``acc_no_ties``): :func:`~metajudge.stats.decisions.pair_credit` under the
    statistic's tie policy, as one-byte 0/1 (neither policy gives half credit; every sum of
    them is a sum of the same whole numbers). A byte, not a float, a row: the cells'
    accuracies held about 366 MB of float rows through the first pass at a million realistic
    pairs (traced at 200,000, scaled; ``docs/benchmarks.md``). The one accuracy definition
    the resampled and permuted accuracies sum (:func:`metajudge.engine.accuracy_from_sums`)."""
    credit, keep, _ = pair_credit(human, judge, policy=ACCURACIES[name])  # type: ignore[arg-type]
    return ((credit == 1) & keep).view(np.uint8), keep.view(np.uint8)


def statistic(
    name: str,
    judge: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    sorts: SortOrders | None = None,
) -> float:
    """Dispatch by name: pearson, spearman, kendall, acc_ties, acc_no_ties (``sorts``: the
    sort orders of these very ``judge`` and ``human``, for Spearman and Kendall).

    The metric first, ``(name, judge, human)``, as in every :func:`correlate` request: the
    order of the correlation engine. For the symmetric statistics (Pearson, Spearman, Kendall
    τ_b) the order does not matter for the value, but Kendall's last bits follow it, so the
    engine keeps one order; the accuracies read ``judge`` as the judge's differences and
    ``human`` as the labels (:func:`~metajudge.stats.decisions.pairwise_accuracy`)."""
    if name == "pearson":
        return pearson(judge, human)
    if name == "spearman":
        return spearman(judge, human, sorts)
    if name == "kendall":
        return kendall_tau_b(judge, human, sorts)
    if name in ACCURACIES:
        return pairwise_accuracy(human, judge, ACCURACIES[name])  # type: ignore[arg-type]
    raise ValueError(f"unknown statistic {name!r} (expected one of {', '.join(STATISTICS)})")


def correlate(
    requests: Sequence[tuple[str, np.ndarray, np.ndarray]],
    resamples: np.ndarray | Resamples | Sequence[Resamples],
    *,
    engine: str | None = None,
) -> list[np.ndarray]:
    """Each statistic ``(name, judge, human)`` of :func:`statistic` on every resample
    (nlpstats' ``correlate`` of each resample): the values of the expanded data in which row i
    appears ``W[b, i]`` times. The one resampled-statistic entry, beside the point value's
    dispatch, so a statistic's value and its resamples leave this module for the same engine
    formulas. A request takes the metric first, as :func:`statistic` does (the order does not
    matter for a symmetric correlation's value; the engine keeps one).

    ``resamples``: the row weights of :func:`~metajudge.stats.bootstrap.resample`, a lazy
    :class:`~metajudge.engine.Resamples` (a block of resamples at a time), or one column view
    of the same Resamples per request. The engine is :func:`metajudge.engine.statistics`
    (``engine``: ``fast``, matrix products, statistics that follow from per-item sums in one
    pass, values remembered with the resamples; or ``reference``, one resample at a time with
    scipy: the same values; ``None``: the engine the resamples were drawn for), the formulas :func:`~metajudge.engine.pearson_from_sums` and the
    accuracy's (:func:`accuracy_rows`, whose rows the engine sums). For accuracies ``judge``
    carries the metric decision's sign (tie band applied).
    """
    kept: dict[tuple[str, int], np.ndarray] = {}
    reqs = [_engine_request(*r, kept=kept) for r in requests]
    return _engine.statistics(reqs, resamples, engine=engine)


def _engine_request(
    name: str,
    judge: np.ndarray,
    human: np.ndarray,
    kept: dict[tuple[str, int], np.ndarray] | None = None,
) -> tuple[str, np.ndarray, np.ndarray]:
    """A request as the engine takes it: an accuracy as its rows' credit and scored flags.
    ``kept``: the scored flags made so far, by accuracy and labels (the flags follow from the
    labels alone: one array for every metric against the same labels, 24 MB each at a million
    pairs of three annotators)."""
    if name in ACCURACIES:
        credit, scored = accuracy_rows(name, human=np.asarray(human), judge=np.asarray(judge))
        if kept is not None:
            scored = kept.setdefault((name, id(human)), scored)
        return ("accuracy", credit, scored)
    return (name, judge, human)


# ---------------------------------------------------------------------------------------------
# Fisher z


def fisher_z_ci(
    r: float,
    n: int,
    *,
    level: float = 0.95,
    method: Literal["pearson", "spearman", "kendall"] = "pearson",
) -> tuple[float, float]:
    """Confidence interval for a correlation by Fisher's z-transform (Fisher 1921).

    z = atanh(r), CI = tanh(z ± z_{1−α/2}·se) with se = 1/sqrt(n − 3) for Pearson; for Spearman
    Fieller, Hartley & Pearson (1957) give se = sqrt(1.06/(n − 3)) and for Kendall's τ
    se = sqrt(0.437/(n − 4)). ``(nan, nan)`` if r is undefined or n is too small.

    >>> lo, hi = fisher_z_ci(0.5, 103)
    >>> round(lo, 4), round(hi, 4)
    (0.3393, 0.6323)
    """
    from statistics import NormalDist

    if not math.isfinite(r) or n <= (4 if method == "kendall" else 3):
        return (math.nan, math.nan)
    if method == "pearson":
        se = 1.0 / math.sqrt(n - 3)
    elif method == "spearman":
        se = math.sqrt(1.06 / (n - 3))
    elif method == "kendall":
        se = math.sqrt(0.437 / (n - 4))
    else:
        raise ValueError(f"unknown method {method!r}")
    rr = min(max(r, -0.9999999999), 0.9999999999)
    z = math.atanh(rr)
    q = NormalDist().inv_cdf(0.5 + level / 2)
    return (math.tanh(z - q * se), math.tanh(z + q * se))


def statistic_fn(name: str) -> Callable[[np.ndarray, np.ndarray], float]:
    """The point-statistic function for ``name``: ``fn(judge, human)``, as :func:`statistic`."""
    return lambda a, b: statistic(name, a, b)
