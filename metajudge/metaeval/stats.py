"""Statistics for meta-evaluation: correlations, pairwise accuracy, CIs and significance tests.

Plain functions over numpy arrays, in the spirit of mt-metrics-eval's ``stats.py``. Every
function documents where its formula comes from. Conventions:

* ``x`` is a metric's (normalised) value per row, ``y`` the human label per row; rows that
  belong to one *item* (e.g. the two annotator rows of one RAGChecker pair) share a ``groups``
  value and are resampled together by the bootstrap.
* An undefined statistic (constant input, too few rows) is ``nan`` here; callers that report
  numbers use :func:`undefined_reason` to say *why* instead of printing a bare NaN.
* Randomness always comes from a ``numpy.random.Generator`` that the caller passes in.

Vectorisation: a bootstrap resample of items is represented by its *count vector* ``w`` (how
many times each row appears in the resample). Pearson, Spearman (average ranks of the resampled
data), Kendall τ_b and accuracies of the resampled data are exact functions of ``w``, so all
``B`` resamples are evaluated with matrix products over a ``(B, n)`` weight matrix — no Python
loop per resample. :func:`bootstrap_ci_reference` is the slow, obvious loop used to check it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Statistic = Literal["pearson", "spearman", "kendall", "acc_ties", "acc_no_ties"]
STATISTICS: tuple[str, ...] = ("pearson", "spearman", "kendall", "acc_ties", "acc_no_ties")
CORRELATIONS: tuple[str, ...] = ("pearson", "spearman", "kendall")

__all__ = [
    "CORRELATIONS",
    "STATISTICS",
    "BootstrapResult",
    "DiffResult",
    "WilliamsResult",
    "bootstrap_ci",
    "bootstrap_ci_reference",
    "bootstrap_indices",
    "bootstrap_weights",
    "fisher_z_ci",
    "grouped_correlation",
    "holm",
    "kendall_tau_b",
    "paired_bootstrap_diff",
    "pairwise_accuracy",
    "pearson",
    "percentile_ci",
    "permutation_test_diff",
    "spearman",
    "statistic",
    "undefined_reason",
    "weighted_statistic",
    "williams_test",
]


# ---------------------------------------------------------------------------------------------
# Point statistics


def _as_xy(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x, dtype=float).ravel()
    ya = np.asarray(y, dtype=float).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same length, got {xa.size} and {ya.size}")
    return xa, ya


def undefined_reason(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, *, min_n: int = 3
) -> str | None:
    """Why a correlation between ``x`` and ``y`` is undefined, or ``None`` when it is defined.

    >>> undefined_reason([1, 1, 1], [1, 2, 3])
    'metric values are constant (all 1) over 3 rows'
    >>> undefined_reason([1, 2], [1, 2])
    'only 2 rows (need at least 3)'
    >>> undefined_reason([1, 2, 3], [3, 1, 2]) is None
    True
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
    return None


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson's r (equal to ``scipy.stats.pearsonr(x, y)[0]``); ``nan`` when undefined.

    >>> round(pearson([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.8
    """
    xa, ya = _as_xy(x, y)
    if xa.size < 2:
        return math.nan
    xc = xa - xa.mean()
    yc = ya - ya.mean()
    den = math.sqrt(float(xc @ xc) * float(yc @ yc))
    if den == 0.0:
        return math.nan
    return float(np.clip((xc @ yc) / den, -1.0, 1.0))


def _rankdata(a: np.ndarray) -> np.ndarray:
    """Average ranks (1-based) along the last axis, ties sharing their mean rank.

    Same as ``scipy.stats.rankdata(a, method="average", axis=-1)``, vectorised over leading axes.
    """
    a = np.asarray(a, dtype=float)
    n = a.shape[-1]
    if n == 0:
        return a.copy()
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


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's ρ: Pearson's r of average ranks (= ``scipy.stats.spearmanr``); ``nan`` when undefined.

    >>> round(spearman([1, 2, 3, 4], [10, 30, 20, 40]), 4)
    0.8
    """
    xa, ya = _as_xy(x, y)
    return pearson(_rankdata(xa), _rankdata(ya))


def _tie_pairs(a: np.ndarray) -> float:
    _, counts = np.unique(a, return_counts=True)
    return float((counts * (counts - 1) / 2).sum())


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's τ_b (Kendall 1945): (C − D) / sqrt((n0 − n1)(n0 − n2)), ties corrected.

    Equal to ``scipy.stats.kendalltau(x, y, variant="b")[0]``. O(n²) memory-light loop over rows
    of the sign matrix in blocks; ``nan`` when undefined.

    >>> round(kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.6667
    """
    xa, ya = _as_xy(x, y)
    n = xa.size
    if n < 2:
        return math.nan
    if n > 3000:  # O(n log n) (Knight 1966) in scipy for large inputs
        from scipy.stats import kendalltau

        if np.ptp(xa) == 0 or np.ptp(ya) == 0:
            return math.nan
        return float(kendalltau(xa, ya, variant="b")[0])
    n0 = n * (n - 1) / 2
    n1 = _tie_pairs(xa)
    n2 = _tie_pairs(ya)
    den = math.sqrt((n0 - n1) * (n0 - n2))
    if den == 0.0:
        return math.nan
    s = 0.0
    block = max(1, 2_000_000 // max(n, 1))
    for i0 in range(0, n, block):
        i1 = min(n, i0 + block)
        sx = np.sign(xa[i0:i1, None] - xa[None, :])
        sy = np.sign(ya[i0:i1, None] - ya[None, :])
        s += float((sx * sy).sum())
    return float(np.clip(s / 2 / den, -1.0, 1.0))


def pairwise_accuracy(
    d: Sequence[float] | np.ndarray,
    h: Sequence[float] | np.ndarray,
    *,
    ties: bool = True,
    epsilon: float | np.ndarray = 0.0,
) -> float:
    """Share of rows where the metric prefers the same side as the human label.

    ``d`` is the metric difference m(b) − m(a) (any normalisation that keeps its sign), ``h`` the
    human label (positive = b better). The metric's decision is ``sign(d)`` with a tie band
    ``|d| <= epsilon`` (Deutsch et al. 2023, "Ties Matter": pairwise accuracy with tie calibration).

    * ``ties=True`` ("with ties", 3-way): every row counts; correct iff decision == sign(h), so a
      metric tie is correct only on a human tie.
    * ``ties=False`` ("without ties"): rows with a human tie are dropped; a metric tie on a
      remaining row counts as wrong (it does not pick the side the human picked).

    ``nan`` when no row is left.

    >>> pairwise_accuracy([0.5, -0.2, 0.0, 0.3], [1, -2, 0, -1])
    0.75
    >>> pairwise_accuracy([0.5, -0.2, 0.0, 0.3], [1, -2, 0, -1], ties=False)
    0.6666666666666666
    """
    da, ha = _as_xy(d, h)
    eps = np.asarray(epsilon, dtype=float)
    dec = np.where(np.abs(da) <= eps, 0.0, np.sign(da))
    hs = np.sign(ha)
    if not ties:
        keep = hs != 0
        dec, hs = dec[keep], hs[keep]
    if dec.size == 0:
        return math.nan
    return float((dec == hs).mean())


def statistic(name: str, x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Dispatch by name: pearson, spearman, kendall, acc_ties, acc_no_ties."""
    if name == "pearson":
        return pearson(x, y)
    if name == "spearman":
        return spearman(x, y)
    if name == "kendall":
        return kendall_tau_b(x, y)
    if name == "acc_ties":
        return pairwise_accuracy(x, y, ties=True)
    if name == "acc_no_ties":
        return pairwise_accuracy(x, y, ties=False)
    raise ValueError(f"unknown statistic {name!r} (expected one of {', '.join(STATISTICS)})")


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


# ---------------------------------------------------------------------------------------------
# Bootstrap machinery: resamples as count vectors


def bootstrap_indices(n_items: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n_items)`` item indices drawn with replacement: one row per resample.

    Drawn in one call, ``rng.integers(0, n_items, size=(n_boot, n_items))``; the slow reference
    loop draws the same numbers row by row.
    """
    if n_items < 1 or n_boot < 1:
        raise ValueError("n_items and n_boot must be positive")
    return rng.integers(0, n_items, size=(n_boot, n_items))


def bootstrap_weights(n_items: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n_items)`` counts: how often each item appears in each resample (sums to n_items)."""
    idx = bootstrap_indices(n_items, n_boot, rng)
    flat = idx + (np.arange(n_boot) * n_items)[:, None]
    return (
        np.bincount(flat.ravel(), minlength=n_boot * n_items).reshape(n_boot, n_items).astype(float)
    )


def _mv(W: np.ndarray, v: np.ndarray) -> np.ndarray:
    """W @ v without BLAS: for these (B, n) x (n,) products a threaded BLAS gemv is slower than
    numpy's own loop (and far slower on a loaded machine)."""
    return np.einsum("ij,j->i", W, v)


def _wpearson(X: np.ndarray, Y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Weighted Pearson per row of W. X, Y: (n,) or (B, n); W: (B, n) counts. Returns (B,).

    Moments are taken about the unweighted mean of each row (any shift gives the same r; this
    one keeps the sums well conditioned).
    """
    N = W.sum(axis=1)
    X = X - X.mean(axis=-1, keepdims=True) if X.size else X
    Y = Y - Y.mean(axis=-1, keepdims=True) if Y.size else Y
    if X.ndim == 1:
        sx, sxx = _mv(W, X), _mv(W, X * X)
        WX = None
    else:
        WX = W * X
        sx = WX.sum(axis=1)
        sxx = np.einsum("ij,ij->i", WX, X)
    if Y.ndim == 1:
        sy, syy = _mv(W, Y), _mv(W, Y * Y)
    else:
        WY = W * Y
        sy = WY.sum(axis=1)
        syy = np.einsum("ij,ij->i", WY, Y)
    if X.ndim == 1 and Y.ndim == 1:
        sxy = _mv(W, X * Y)
    elif WX is not None:
        sxy = np.einsum("ij,ij->i", WX, np.broadcast_to(Y, WX.shape))
    else:
        sxy = np.einsum("ij,ij->i", WY, np.broadcast_to(X, WY.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / N
        vx = sxx - sx * sx / N
        vy = syy - sy * sy / N
        den = np.sqrt(vx * vy)
        # relative tolerance: a variance that is pure rounding error means a constant resample
        tol_x = 1e-12 * np.maximum(sxx, 1e-300)
        tol_y = 1e-12 * np.maximum(syy, 1e-300)
        r = np.where((vx > tol_x) & (vy > tol_y), cov / den, np.nan)
    return np.clip(r, -1.0, 1.0)


def _pearson_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Unweighted Pearson of each row of X (B, n) with Y ((n,) or (B, n))."""
    Xc = X - X.mean(axis=1, keepdims=True)
    Yc = Y - Y.mean(axis=-1, keepdims=True)
    Yb = np.broadcast_to(Yc, Xc.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        sxx = np.einsum("ij,ij->i", Xc, Xc)
        syy = np.einsum("ij,ij->i", Yb, Yb)
        r = np.einsum("ij,ij->i", Xc, Yb) / np.sqrt(sxx * syy)
        r = np.where((sxx > 0) & (syy > 0), r, np.nan)
    return np.clip(r, -1.0, 1.0)


def _wranks(x: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Average ranks of every row in each resample, ``(B, n)``.

    In a resample where row j appears ``w_j`` times, the copies of the rows tied with row i take
    the ranks ``below+1 .. below+tied``, so row i's average rank is ``below + (tied + 1)/2`` with
    ``below`` the total weight of smaller values and ``tied`` the total weight of equal values.
    """
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    new = np.empty(xs.size, dtype=bool)
    new[0] = True
    new[1:] = xs[1:] != xs[:-1]
    starts = np.flatnonzero(new)
    gid_sorted = np.cumsum(new) - 1
    gid = np.empty_like(gid_sorted)
    gid[order] = gid_sorted
    Wg = np.add.reduceat(W[:, order], starts, axis=1)
    below = np.cumsum(Wg, axis=1) - Wg
    rank_g = below + (Wg + 1.0) / 2.0
    return rank_g[:, gid]


def _wkendall(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Kendall τ_b of each weighted resample (rows of W), exactly.

    τ_b = (C − D)/sqrt((n0 − n1)(n0 − n2)) of the expanded data, where
    C − D = ½·Σ_ij w_i w_j sign(x_i − x_j)·sign(y_i − y_j), n0 = N(N − 1)/2 and n1, n2 count the
    pairs tied in x and in y (Σ_g c_g(c_g − 1)/2 over groups of equal value, c_g the group's total
    weight; copies of one row are tied in both). Human labels take few distinct values, so rows
    are binned into a (class of the variable with fewer values) × (value of the other) table T
    per resample and C − D = ½·Σ T[c,g]·V[c,g] with cumulative sums — O(B·K·G). When both
    variables have many distinct values the sign matrix is used in column blocks, O(B·n²).
    """
    n = x.size
    B = W.shape[0]
    N = W.sum(axis=1)
    n0 = N * (N - 1) / 2
    ux, gx = np.unique(x, return_inverse=True)
    uy, gy = np.unique(y, return_inverse=True)
    if uy.size > ux.size:  # τ_b is symmetric: bin by the variable with fewer distinct values
        ux, gx, uy, gy = uy, gy, ux, gx
    K, G = uy.size, ux.size
    s = np.zeros(B)
    n1 = np.zeros(B)
    n2 = np.zeros(B)
    if K <= 64:
        cell = gy * G + gx
        order = np.argsort(cell, kind="mergesort")
        sc = cell[order]
        starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
        cells_present = sc[starts]
        chunk = max(1, min(B, 4_000_000 // max(K * G, 1)))
        for b0 in range(0, B, chunk):
            Wb = W[b0 : b0 + chunk][:, order]
            T = np.zeros((Wb.shape[0], K * G))
            T[:, cells_present] = np.add.reduceat(Wb, starts, axis=1)
            T = T.reshape(Wb.shape[0], K, G)
            cumx = np.cumsum(T, axis=2)
            U = 2 * (cumx - T) - cumx[:, :, -1:] + T  # below_x - above_x per class and x value
            cU = np.cumsum(U, axis=1)
            V = 2 * (cU - U) - cU[:, -1:, :] + U  # sum over lower classes - sum over higher classes
            s[b0 : b0 + chunk] = (T * V).sum(axis=(1, 2))
            cx = T.sum(axis=1)
            cy = T.sum(axis=2)
            n1[b0 : b0 + chunk] = (cx * (cx - 1) / 2).sum(axis=1)
            n2[b0 : b0 + chunk] = (cy * (cy - 1) / 2).sum(axis=1)
    else:
        for grp, out in ((gx, n1), (gy, n2)):
            onehot = np.zeros((n, int(grp.max()) + 1))
            onehot[np.arange(n), grp] = 1.0
            C = np.einsum("ij,jk->ik", W, onehot)
            out[:] = (C * (C - 1) / 2).sum(axis=1)
        block = max(1, min(n, 4_000_000 // max(n, 1)))
        for j0 in range(0, n, block):
            j1 = min(n, j0 + block)
            S = np.sign(x[:, None] - x[None, j0:j1]) * np.sign(y[:, None] - y[None, j0:j1])
            s += ((W @ S) * W[:, j0:j1]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt((n0 - n1) * (n0 - n2))
        t = np.where(den > 0, (s / 2) / den, np.nan)
    return np.clip(t, -1.0, 1.0)


def _wacc(x: np.ndarray, y: np.ndarray, W: np.ndarray, *, ties: bool) -> np.ndarray:
    dec = np.sign(x)
    hs = np.sign(y)
    correct = (dec == hs).astype(float)
    if not ties:
        keep = (hs != 0).astype(float)
        den = _mv(W, keep)
        num = _mv(W, correct * keep)
    else:
        den = W.sum(axis=1)
        num = _mv(W, correct)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def weighted_statistic(name: str, x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The statistic ``name`` of each weighted resample (rows of ``W``: counts per row of x/y).

    Exactly the statistic of the expanded data in which row i is repeated ``W[b, i]`` times.
    For accuracies, ``x`` must already carry the metric decision's sign (tie band applied).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    W = np.atleast_2d(np.asarray(W, dtype=float))
    if name == "pearson":
        return _wpearson(x, y, W)
    if name == "spearman":
        return _wpearson(_wranks(x, W), _wranks(y, W), W)
    if name == "kendall":
        return _wkendall(x, y, W)
    if name == "acc_ties":
        return _wacc(x, y, W, ties=True)
    if name == "acc_no_ties":
        return _wacc(x, y, W, ties=False)
    raise ValueError(f"unknown statistic {name!r} (expected one of {', '.join(STATISTICS)})")


def _row_weights(groups: np.ndarray | None, n_rows: int, W_items: np.ndarray) -> np.ndarray:
    if groups is None:
        return W_items
    return W_items[:, groups]


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


def percentile_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the finite bootstrap samples (Efron & Tibshirani 1993, §13.3)."""
    s = np.asarray(samples, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.quantile(s, [(1 - level) / 2, 1 - (1 - level) / 2])
    return (float(lo), float(hi))


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
    n_boot: int = 1000,
    rng: np.random.Generator,
    level: float = 0.95,
    weights: np.ndarray | None = None,
) -> BootstrapResult:
    """Seeded, vectorised bootstrap CI of a statistic, resampling *items* (Efron 1979).

    ``groups`` gives each row's item; all rows of a drawn item come along (RAGChecker: a pair's
    two annotator rows). Resamples are drawn with :func:`bootstrap_weights` from ``rng`` (or
    passed in as ``weights``, shape (B, n_items), to pair several statistics on the same
    resamples). Percentile interval at ``level``.
    """
    xa, ya = _as_xy(x, y)
    gi, n_items = _group_index(groups, xa.size)
    W_items = weights if weights is not None else bootstrap_weights(n_items, n_boot, rng)
    if W_items.shape[1] != n_items:
        raise ValueError(f"weights have {W_items.shape[1]} columns for {n_items} items")
    W = _row_weights(gi, xa.size, W_items)
    samples = weighted_statistic(statistic, xa, ya, W)
    est = float(weighted_statistic(statistic, xa, ya, np.ones((1, xa.size)))[0])
    lo, hi = percentile_ci(samples, level)
    return BootstrapResult(
        est, lo, hi, level, int(W.shape[0]), int(np.isnan(samples).sum()), samples
    )


def bootstrap_ci_reference(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    statistic: str = "pearson",
    groups: Sequence[object] | np.ndarray | None = None,
    n_boot: int = 1000,
    rng: np.random.Generator,
    level: float = 0.95,
) -> BootstrapResult:
    """The slow, obvious bootstrap: a Python loop that materialises each resample.

    Draws the same item indices as :func:`bootstrap_ci` (row by row from the same generator
    state) and computes the statistic with scipy on the expanded data. Reference for tests and
    for the benchmark's speed ratio; do not use it in reports.
    """
    from scipy import stats as ss

    xa, ya = _as_xy(x, y)
    gi, n_items = _group_index(groups, xa.size)
    rows_of = (
        [np.flatnonzero(gi == g) for g in range(n_items)]
        if gi is not None
        else [np.array([i]) for i in range(xa.size)]
    )
    fns: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
        "pearson": lambda a, b: float(ss.pearsonr(a, b)[0]),
        "spearman": lambda a, b: float(ss.spearmanr(a, b)[0]),
        "kendall": lambda a, b: float(ss.kendalltau(a, b, variant="b")[0]),
        "acc_ties": lambda a, b: pairwise_accuracy(a, b, ties=True),
        "acc_no_ties": lambda a, b: pairwise_accuracy(a, b, ties=False),
    }
    fn = fns[statistic]
    out = np.empty(n_boot)
    import warnings

    for b in range(n_boot):
        idx = rng.integers(0, n_items, size=n_items)
        rows = np.concatenate([rows_of[i] for i in idx])
        xb, yb = xa[rows], ya[rows]
        if statistic in CORRELATIONS and (np.ptp(xb) == 0 or np.ptp(yb) == 0):
            out[b] = math.nan
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[b] = fn(xb, yb)
    est = fn(xa, ya)
    lo, hi = percentile_ci(out, level)
    return BootstrapResult(est, lo, hi, level, n_boot, int(np.isnan(out).sum()), out)


# ---------------------------------------------------------------------------------------------
# Grouped correlation (G-Eval / LFTQA-Eval)


def grouped_correlation(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    groups: Sequence[object] | np.ndarray,
    *,
    statistic: str = "pearson",
) -> tuple[float, np.ndarray, int]:
    """Correlation within each group (e.g. the systems' answers to one input), averaged.

    The "instance-level" / summary-level correlation of G-Eval (Liu et al. 2023) and
    LFTQA-Eval's ``correlation_calculation.py`` (Wang et al. 2024): per group the statistic
    across its rows, then the mean over groups whose value is defined (NaN skipped, as pandas
    does). Returns ``(mean, per_group_values, n_undefined_groups)``.
    """
    xa, ya = _as_xy(x, y)
    gi, G = _group_index(groups, xa.size)
    assert gi is not None
    order = np.argsort(gi, kind="mergesort")
    bounds = np.flatnonzero(np.diff(gi[order])) + 1
    vals = np.empty(G)
    for k, rows in enumerate(np.split(order, bounds)):
        xs, ys = xa[rows], ya[rows]
        if xs.size < 2 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
            vals[k] = math.nan
        else:
            vals[k] = statistic_fn(statistic)(xs, ys)
    ok = np.isfinite(vals)
    mean = float(vals[ok].mean()) if ok.any() else math.nan
    return mean, vals, int((~ok).sum())


def statistic_fn(name: str) -> Callable[[np.ndarray, np.ndarray], float]:
    """The point-statistic function for ``name``."""
    return lambda a, b: statistic(name, a, b)


# ---------------------------------------------------------------------------------------------
# Comparing two metrics


@dataclass
class DiffResult:
    """Difference ``stat(x1, y) − stat(x2, y)`` with a CI (bootstrap) and a two-sided p-value."""

    diff: float
    lo: float
    hi: float
    p_value: float
    n_resamples: int
    method: str


def paired_bootstrap_diff(
    x1: Sequence[float] | np.ndarray,
    x2: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    statistic: str = "pearson",
    groups: Sequence[object] | np.ndarray | None = None,
    n_boot: int = 1000,
    rng: np.random.Generator,
    level: float = 0.95,
    weights: np.ndarray | None = None,
) -> DiffResult:
    """Paired bootstrap of the difference of two metrics' correlation with the same humans.

    Both metrics are evaluated on the same item resamples (Koehn 2004; Deutsch, Dror & Roth
    2021). CI: percentile interval of Δ_b. p-value (two-sided): 2·min(P(Δ_b ≤ 0), P(Δ_b ≥ 0)),
    capped at 1 — the share of resamples on the other side of zero, with add-one smoothing
    ((k + 1)/(B + 1)) so that a finite bootstrap never reports p = 0.
    """
    a1, ya = _as_xy(x1, y)
    a2, _ = _as_xy(x2, y)
    gi, n_items = _group_index(groups, ya.size)
    W_items = weights if weights is not None else bootstrap_weights(n_items, n_boot, rng)
    W = _row_weights(gi, ya.size, W_items)
    d = weighted_statistic(statistic, a1, ya, W) - weighted_statistic(statistic, a2, ya, W)
    obs = statistic_fn(statistic)(a1, ya) - statistic_fn(statistic)(a2, ya)
    lo, hi = percentile_ci(d, level)
    fin = d[np.isfinite(d)]
    if fin.size == 0 or not math.isfinite(obs):
        p = math.nan
    else:
        # add-one smoothing: with B replicates the smallest attainable p is 2/(B+1), never 0
        k = min(int((fin <= 0).sum()), int((fin >= 0).sum()))
        p = float(min(1.0, 2 * (k + 1) / (fin.size + 1)))
    return DiffResult(float(obs), lo, hi, p, int(W.shape[0]), "paired bootstrap")


def _batch_stat(name: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Statistic of each row of X (B, n) against y (n,)."""
    if name == "pearson":
        return _pearson_rows(X, y)
    if name == "spearman":
        return _pearson_rows(_rankdata(X), _rankdata(y))
    if name == "kendall":
        out = np.empty(X.shape[0])
        n = X.shape[1]
        chunk = max(1, 2_000_000 // max(n * n, 1))
        sy = np.sign(y[:, None] - y[None, :])
        n0 = n * (n - 1) / 2
        n2 = _tie_pairs(y)
        for b0 in range(0, X.shape[0], chunk):
            Xb = X[b0 : b0 + chunk]
            sx = np.sign(Xb[:, :, None] - Xb[:, None, :])
            s = (sx * sy[None]).sum(axis=(1, 2)) / 2
            n1 = np.array([_tie_pairs(r) for r in Xb])
            with np.errstate(invalid="ignore", divide="ignore"):
                den = np.sqrt((n0 - n1) * (n0 - n2))
                out[b0 : b0 + chunk] = np.where(den > 0, s / den, np.nan)
        return out
    if name in ("acc_ties", "acc_no_ties"):
        return _wacc_rows(X, y, ties=name == "acc_ties")
    raise ValueError(f"unknown statistic {name!r}")


def _wacc_rows(X: np.ndarray, y: np.ndarray, *, ties: bool) -> np.ndarray:
    correct = np.sign(X) == np.sign(y)[None, :]
    if ties:
        return correct.mean(axis=1)
    keep = np.sign(y) != 0
    if not keep.any():
        return np.full(X.shape[0], np.nan)
    return correct[:, keep].mean(axis=1)


def permutation_test_diff(
    x1: Sequence[float] | np.ndarray,
    x2: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    statistic: str = "pearson",
    groups: Sequence[object] | np.ndarray | None = None,
    n_perm: int = 1000,
    rng: np.random.Generator,
    standardize: bool = True,
) -> DiffResult:
    """Paired permutation test of ``stat(x1, y) − stat(x2, y)`` (mt-metrics-eval's PermutationSigTest).

    Under H0 the two metrics are exchangeable: in each permutation every item's scores from
    metric 1 and metric 2 are swapped with probability ½ (all rows of an item together) and the
    difference recomputed. With ``standardize`` both metrics are first z-scored, so swapping is
    meaningful between metrics on different scales (correlations are invariant to that affine
    map). For Spearman the swap acts on the rank-transformed (then z-scored) scores and the
    permuted statistic is the Pearson r of those with the ranks of ``y`` — the observed value is
    exactly the Spearman difference, and the test needs no re-ranking per permutation.
    p = (1 + #{|Δ_perm| ≥ |Δ_obs|}) / (1 + n_perm) (Phipson & Smyth 2010). No CI
    (``lo``/``hi`` are nan).
    """
    a1, ya = _as_xy(x1, y)
    a2, _ = _as_xy(x2, y)
    stat_perm = statistic
    if statistic == "spearman":
        a1, a2, ya = _rankdata(a1), _rankdata(a2), _rankdata(ya)
        stat_perm = "pearson"
    if standardize and statistic in CORRELATIONS:
        a1 = (a1 - a1.mean()) / (a1.std() or 1.0)
        a2 = (a2 - a2.mean()) / (a2.std() or 1.0)
    gi, n_items = _group_index(groups, ya.size)
    obs = statistic_fn(stat_perm)(a1, ya) - statistic_fn(stat_perm)(a2, ya)
    swap_items = rng.random((n_perm, n_items)) < 0.5
    swap = swap_items[:, gi] if gi is not None else swap_items
    X1 = np.where(swap, a2[None, :], a1[None, :])
    X2 = np.where(swap, a1[None, :], a2[None, :])
    d = _batch_stat(stat_perm, X1, ya) - _batch_stat(stat_perm, X2, ya)
    if not math.isfinite(obs):
        p = math.nan
    else:
        fin = d[np.isfinite(d)]
        p = float((1 + (np.abs(fin) >= abs(obs) - 1e-12).sum()) / (1 + fin.size))
    return DiffResult(float(obs), math.nan, math.nan, p, n_perm, "permutation")


@dataclass
class WilliamsResult:
    """Williams' t for two dependent correlations sharing one variable."""

    t: float
    df: int
    p_two_sided: float
    p_one_sided: float  # H1: r12 > r13


def williams_test(r12: float, r13: float, r23: float, n: int) -> WilliamsResult:
    """Williams (1959) test of H0: ρ12 = ρ13 for correlations sharing variable 1 (the humans).

    r12 = corr(human, metric A), r13 = corr(human, metric B), r23 = corr(metric A, metric B), n
    observations. As used for MT metrics by Graham & Baldwin (2014) and given by Steiger (1980,
    eq. 7)::

        K = 1 − r12² − r13² − r23² + 2·r12·r13·r23
        t = (r12 − r13)·sqrt((n − 1)(1 + r23)) /
            sqrt(2K(n − 1)/(n − 3) + ((r12 + r13)²/4)·(1 − r23)³),   df = n − 3

    Example (Steiger 1980 / ``psych::r.test(103, .4, .5, .1)``): t = −0.89, df = 100.

    >>> res = williams_test(0.4, 0.5, 0.1, 103)
    >>> round(res.t, 2), res.df
    (-0.89, 100)
    """
    from scipy.special import stdtr  # Student t CDF, without importing scipy.stats

    if n <= 3 or not all(math.isfinite(v) for v in (r12, r13, r23)):
        return WilliamsResult(math.nan, max(n - 3, 0), math.nan, math.nan)
    K = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    num = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    den2 = 2 * K * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    if den2 <= 0:
        return WilliamsResult(math.nan, n - 3, math.nan, math.nan)
    t = num / math.sqrt(den2)
    df = n - 3
    p1 = float(stdtr(df, -t))  # P(T > t)
    p2 = float(min(1.0, 2 * stdtr(df, -abs(t))))
    return WilliamsResult(float(t), df, p2, p1)


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values; NaN entries stay NaN and do not count.

    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="mergesort")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out
