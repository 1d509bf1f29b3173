"""The bootstrap, in nlpstats' shape: :func:`bootstrap_ci` is :func:`resample` (items drawn with
replacement, Efron 1979; all rows of an item move together),
:func:`~metajudge.stats.correlation.correlate` (the statistic of every resample) and the
percentile interval (:func:`~metajudge.stats.intervals.percentile_ci`).

One implementation of each step, used by every analysis (meta-evaluation, backbone swap,
comparisons): ``correlate``, the entry every product path calls for resampled statistics,
lives beside the point statistic's dispatch (:mod:`.correlation`) and hands them to the
resampling engine (:func:`metajudge.engine.statistics`: the fast engine, or the reference loop
with ``engine="reference"``); the per-group values of a grouped correlation are indexed by
group id, so a resample's grouped mean is one matrix product; the two-sided bootstrap p-value
has one add-one smoothing rule. The slow, obvious loop of a whole bootstrap CI that checks it
is ``tests/stats/reference.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from metajudge import engine as _engine
from metajudge.engine import Resamples, draw_counts, draw_indices
from metajudge.limits import check_allocation
from metajudge.stats.correlation import SortOrders, _as_xy, correlate, statistic_fn
from metajudge.stats.correlation import statistic as point_statistic
from metajudge.stats.intervals import percentile_ci


def bootstrap_indices(n_items: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, n_items)`` item indices drawn with replacement: one row per resample.

    Drawn in one call, ``rng.integers(0, n_items, size=(n_resamples, n_items))``; the slow reference
    loop draws the same numbers row by row.
    """
    if n_items < 1 or n_resamples < 1:
        raise ValueError("n_items and n_resamples must be positive")
    # every analysis draws its resamples here: refuse before allocating the draw's peak
    # (indices, flat indices, counts, float weights: four n_resamples x n_items arrays)
    check_allocation(n_resamples, n_items, 4)
    return draw_indices(rng, n_items, n_resamples)


def halves(perm: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` entries of the permutation ``perm`` and the rest, each in ascending order
    (``np.sort`` of each, read off a mask of the first: no sort).

    >>> [h.tolist() for h in halves(np.array([3, 0, 4, 1, 2]), 2)]
    [[0, 3], [1, 2, 4]]
    """
    first = np.zeros(len(perm), dtype=bool)
    first[perm[:k]] = True
    return np.flatnonzero(first), np.flatnonzero(~first)


def bootstrap_weights(n_items: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, n_items)`` counts: how often each item appears in each resample (sums to n_items).

    The whole float matrix; :meth:`Resamples.draw` gives the same values a block at a time.
    """
    if n_items < 1 or n_resamples < 1:
        raise ValueError("n_items and n_resamples must be positive")
    check_allocation(n_resamples, n_items, 2)  # the whole matrix: counts, then float weights
    return draw_counts(rng, n_items, n_resamples).astype(float)


def _row_weights(groups: np.ndarray | None, n_rows: int, W_items: np.ndarray) -> np.ndarray:
    if groups is None:
        return W_items
    return W_items[:, groups]


def resample(
    groups: Sequence[object] | np.ndarray | None,
    n_rows: int,
    *,
    n_resamples: int,
    rng: np.random.Generator,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """``(B, n_rows)`` weights of the grouped item bootstrap: items (``groups``; ``None``: each
    row its own item) drawn with :func:`bootstrap_weights`, or ``weights`` of shape
    ``(B, n_items)`` passed in to pair several statistics on the same resamples; every row takes
    its item's count."""
    gi, n_items = _group_index(groups, n_rows)
    W_items = weights if weights is not None else bootstrap_weights(n_items, n_resamples, rng)
    if W_items.shape[1] != n_items:
        raise ValueError(f"weights have {W_items.shape[1]} columns for {n_items} items")
    return _row_weights(gi, n_rows, W_items)


def _group_index(
    groups: Sequence[object] | np.ndarray | None, n: int
) -> tuple[np.ndarray | None, int]:
    """Map group labels to 0..G-1 (first-seen order). ``None``: every row is its own item."""
    if groups is None:
        return None, n
    g = np.asarray(groups)
    if g.shape[0] != n:
        raise ValueError(f"groups has {g.shape[0]} entries for {n} rows")
    if np.issubdtype(g.dtype, np.integer) and g.size and g.min() >= 0:
        uniq, first, inv = np.unique(g, return_index=True, return_inverse=True)
    else:
        uniq, first, inv = np.unique(g.astype(str), return_index=True, return_inverse=True)
    # relabel in first-seen order so the item order does not depend on how labels sort
    order = np.argsort(first, kind="mergesort")
    relabel = np.empty_like(order)
    relabel[order] = np.arange(order.size)
    return relabel[inv], int(uniq.size)


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray,
    rng: np.random.Generator,
    *,
    n_resamples: int = 1000,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile CI of the mean of ``values`` over resampled items (Efron 1979).

    The resamples are :func:`bootstrap_indices` ``(n_resamples, n)`` from ``rng``; ``(nan, nan)`` for
    no values (nothing is drawn).

    >>> bootstrap_mean_ci([0.0, 1.0, 1.0, 0.0], np.random.default_rng(0), n_resamples=200)
    (0.0, 1.0)
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan)
    idx = bootstrap_indices(x.size, n_resamples, rng)
    return percentile_ci(x[idx].mean(axis=1), level)


def bootstrap_p_value(deltas: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "difference = 0" from resampled differences Δ_b.

    p = min(1, 2·(min(k_≤, k_≥) + 1)/(B + 1)) with k_≤ = #{Δ_b ≤ 0}, k_≥ = #{Δ_b ≥ 0} over the B
    defined resamples: the share of resamples on the far side of zero (Koehn 2004; Efron &
    Tibshirani 1993, §16.4) with add-one smoothing (Davison & Hinkley 1997, eq. 4.11), so a
    finite bootstrap never reports p = 0 (the smallest value is 2/(B + 1)). The one rule for
    every bootstrap p-value metajudge reports. NaN when no resample is defined.

    >>> bootstrap_p_value(np.array([0.1, 0.2, 0.3]))
    0.5
    >>> bootstrap_p_value(np.array([-0.1, 0.2, 0.3, 0.0]))
    1.0
    """
    d = np.asarray(deltas, dtype=float)
    fin = d[np.isfinite(d)]
    if fin.size == 0:
        return math.nan
    k = min(int((fin <= 0).sum()), int((fin >= 0).sum()))
    return float(min(1.0, 2.0 * (k + 1) / (fin.size + 1)))


@dataclass
class BootstrapResult:
    """A point estimate, its percentile CI and the per-resample values (nan = undefined resample)."""

    estimate: float
    lo: float
    hi: float
    level: float
    n_boot: int
    n_undefined: int
    samples: np.ndarray = field(repr=False)


def bootstrap_ci(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    statistic: str = "pearson",
    groups: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = 1000,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
    weights: np.ndarray | None = None,
    resamples: np.ndarray | Resamples | None = None,
    sorts: SortOrders | None = None,
) -> BootstrapResult:
    """THE bootstrap CI of a statistic, resampling *items* (Efron 1979): :func:`resample`, then
    :func:`correlate`, then the percentile interval (nlpstats' ``bootstrap``).

    ``groups`` gives each row's item; all rows of a drawn item come along (RAGChecker: a pair's
    two annotator rows). Resamples are drawn with :func:`bootstrap_weights` from ``rng`` (or
    passed in as ``weights``, shape (B, n_items), to pair several statistics on the same
    resamples, or as ``resamples``: the row weights themselves). Percentile interval at
    ``level``; the estimate is the point statistic (:func:`~metajudge.stats.correlation.statistic`;
    ``sorts``: the sort orders of these x and y, for Spearman and Kendall).
    """
    xa, ya = _as_xy(x, y)
    W = resamples
    if W is None:
        if rng is None and weights is None:
            raise ValueError("bootstrap_ci needs rng, weights or resamples")
        W = resample(groups, xa.size, n_resamples=n_resamples, rng=rng, weights=weights)  # type: ignore[arg-type]
    samples = correlate([(statistic, xa, ya)], W)[0]
    lo, hi = percentile_ci(samples, level)
    est = point_statistic(statistic, xa, ya, sorts)
    return BootstrapResult(
        est, lo, hi, level, int(W.shape[0]), int(np.isnan(samples).sum()), samples
    )


# ---------------------------------------------------------------------------------------------
# Grouped correlation (G-Eval / LFTQA-Eval)


def grouped_correlation(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    groups: Sequence[object] | np.ndarray,
    *,
    statistic: str = "pearson",
    n_groups: int | None = None,
) -> tuple[float, np.ndarray, int]:
    """Correlation within each group (e.g. the systems' answers to one input), averaged.

    The "instance-level" / summary-level correlation of G-Eval (Liu et al. 2023) and
    LFTQA-Eval's ``correlation_calculation.py`` (Wang et al. 2024): per group the statistic
    across its rows, then the mean over groups whose value is defined (NaN skipped, as pandas
    does). Returns ``(mean, per_group_values, n_undefined_groups)``. ``n_groups``: ``groups``
    are already integer ids ``0..n_groups-1`` (the items of shared resamples), kept as they are.
    """
    xa, ya = _as_xy(x, y)
    if n_groups is None:
        gi, G = _group_index(groups, xa.size)
    else:
        gi, G = np.asarray(groups, dtype=np.int64), n_groups
    assert gi is not None
    vals = per_group_values(xa, ya, gi, G, statistic=statistic)
    ok = np.isfinite(vals)
    mean = float(vals[ok].mean()) if ok.any() else math.nan
    return mean, vals, int((~ok).sum())


def per_group_values(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, n_groups: int, *, statistic: str = "pearson"
) -> np.ndarray:
    """The statistic within each group, at the group's index ``0..n_groups-1`` (NaN: undefined).

    ``groups`` holds integer group ids; rows with a non-finite x or y are left out. Values are
    those of :func:`grouped_correlation`; indexing them by group id lets the shared bootstrap
    counts of the groups weight them directly (:func:`grouped_mean_samples`).
    """
    out = np.full(n_groups, np.nan)
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    g = np.asarray(groups, dtype=np.int64)
    ok = np.isfinite(xa) & np.isfinite(ya)
    if not ok.any():
        return out
    xa, ya, g = xa[ok], ya[ok], g[ok]
    order = np.argsort(g, kind="mergesort")
    bounds = np.flatnonzero(np.diff(g[order])) + 1
    fn = statistic_fn(statistic)
    for rows in np.split(order, bounds):
        xs, ys = xa[rows], ya[rows]
        if xs.size >= 2 and np.ptp(xs) > 0 and np.ptp(ys) > 0:
            out[g[rows[0]]] = fn(xs, ys)
    return out


def grouped_mean_samples(per_group: np.ndarray, W_groups: np.ndarray | Resamples) -> np.ndarray:
    """Bootstrap replicates of the mean of the defined per-group values, one per row of W.

    Replicate b is Σ_g W[b, g]·v_g / Σ_g W[b, g]·1[v_g defined]: the mean over the groups drawn
    in resample b (with their multiplicity), undefined groups skipped as in the point value.
    The engine's ``mean`` (:func:`metajudge.engine.statistics`, by the engine ``W_groups`` were
    drawn for).
    """
    ok = np.isfinite(per_group)
    v0 = np.where(ok, per_group, 0.0)
    return _engine.statistics([("mean", v0, ok.astype(float))], W_groups)[0]
