"""Statistics of weighted resamples: the bootstrap evaluated as matrix products.

A bootstrap resample of items is represented by its *count vector* ``w`` (how many times each
row appears in the resample). Pearson, Spearman (average ranks of the resampled data), Kendall
τ_b and accuracies of the resampled data are exact functions of ``w``, so all ``B`` resamples
are evaluated with matrix products over a ``(B, n)`` weight matrix — no Python loop per
resample — except Spearman's ρ, whose average ranks come from one sort of each variable and
then one cumulative sum per resample, over cache-sized blocks of resamples (O(n) each).
:func:`metajudge.stats.bootstrap.bootstrap_ci_reference` is the slow, obvious loop used to
check it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metajudge.stats import moments
from metajudge.stats.correlation import STATISTICS
from metajudge.stats.resample import Resamples, map_chunks


def _mv(W: np.ndarray, v: np.ndarray) -> np.ndarray:
    """W @ v without BLAS, on a row-major W: einsum's sum of each row then runs over that row
    alone, so a block of resamples gives bit-for-bit the values of the whole matrix (a BLAS gemv,
    or einsum on a column-major W, sums in an order that depends on the other rows)."""
    return np.einsum("ij,j->i", W, v)


def _rowdot(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Row-wise dot products, as reproducibly as :func:`_mv` (row-major A; B broadcast)."""
    A = np.ascontiguousarray(A)
    if B.ndim == 1:
        return _mv(A, B)
    return np.einsum("ij,ij->i", A, np.ascontiguousarray(np.broadcast_to(B, A.shape)))


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
        sxx = _rowdot(WX, X)
    if Y.ndim == 1:
        sy, syy = _mv(W, Y), _mv(W, Y * Y)
    else:
        WY = W * Y
        sy = WY.sum(axis=1)
        syy = _rowdot(WY, Y)
    if X.ndim == 1 and Y.ndim == 1:
        sxy = _mv(W, X * Y)
    elif WX is not None:
        sxy = _rowdot(WX, Y)
    else:
        sxy = _rowdot(WY, X)
    return moments.r_from_moments(N, sx, sy, sxx, syy, sxy)


def _pearson_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Unweighted Pearson of each row of X (B, n) with Y ((n,) or (B, n))."""
    Xc = X - X.mean(axis=1, keepdims=True)
    Yc = Y - Y.mean(axis=-1, keepdims=True)
    Yb = np.broadcast_to(Yc, Xc.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        sxx = _rowdot(Xc, Xc)
        syy = _rowdot(Yb, Yb)
        r = _rowdot(Xc, Yb) / np.sqrt(sxx * syy)
        r = np.where((sxx > 0) & (syy > 0), r, np.nan)
    return np.clip(r, -1.0, 1.0)


#: float elements of the block a Spearman resample pass works on (1 MB: it stays in cache)
RANK_BLOCK_ELEMENTS = 1 << 17


class _RankPlan:
    """What Spearman's ρ of weighted resamples needs, from one sort of each variable.

    Rows are put in x order once; a resample's weights in that order give x's average ranks by
    one cumulative sum (over x's groups of equal values, :func:`_group_ranks`), y's after one
    gather into y order. Every resample is then O(n): no sort per resample or per block.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.order = np.argsort(x, kind="mergesort")
        xs, ys = x[self.order], y[self.order]
        self.x_starts, self.x_sizes = _groups(xs)
        self.y_perm = np.argsort(ys, kind="mergesort")
        self.y_starts, _ = _groups(ys[self.y_perm])
        gid = np.zeros(ys.size, dtype=np.intp)
        if self.y_starts is None:
            gid[self.y_perm] = np.arange(ys.size)
        else:
            new = np.zeros(ys.size, dtype=np.intp)
            new[self.y_starts[1:]] = 1
            gid[self.y_perm] = np.cumsum(new)
        self.y_gid = gid  # y's group (in y order) of each row in x order

    def rho(self, Ws: np.ndarray) -> np.ndarray:
        """ρ of each row of ``Ws`` (weights of the rows in x order, row-major)."""
        N = Ws.sum(axis=1)
        half = 0.5 * N[:, None]
        Wx, rx = _group_ranks(Ws, self.x_starts, half)
        Wy, ry = _group_ranks(Ws[:, self.y_perm], self.y_starts, half)
        rx_rows = rx if self.x_sizes is None else np.repeat(rx, self.x_sizes, axis=1)
        sxy = _rowdot(Ws * rx_rows, ry[:, self.y_gid])
        wrx, wry = Wx * rx, Wy * ry
        return moments.r_from_moments(
            N, wrx.sum(axis=1), wry.sum(axis=1), _rowdot(wrx, rx), _rowdot(wry, ry), sxy
        )


def _groups(sorted_values: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Starts and sizes of the runs of equal values; ``(None, None)`` when all are distinct."""
    if sorted_values.size == 0:
        return None, None
    new = np.empty(sorted_values.size, dtype=bool)
    new[0] = True
    new[1:] = sorted_values[1:] != sorted_values[:-1]
    if new.all():
        return None, None
    starts = np.flatnonzero(new)
    return starts, np.diff(np.r_[starts, sorted_values.size])


def _group_ranks(
    Ws: np.ndarray, starts: np.ndarray | None, half: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per group of equal values (rows sorted by value): its total weight ``c`` and its average
    rank in the expanded data, ``below + (c + 1)/2``, centred on the mean rank ``(N + 1)/2`` —
    half-integers, so the sums of :meth:`_RankPlan.rho` are exact while they fit a float."""
    Wg = Ws if starts is None else np.add.reduceat(Ws, starts, axis=1)
    return Wg, np.cumsum(Wg, axis=1) - 0.5 * Wg - half


def _wspearman(plan: _RankPlan, W: np.ndarray | Resamples) -> np.ndarray:
    """ρ of every resample (rows of ``W``), a cache-sized block of resamples at a time (each
    resample's value depends on its own row alone: the same bits whatever the blocking)."""
    if isinstance(W, Resamples):
        view = W[:, plan.order]
        return np.concatenate([plan.rho(b) for _, b in view.chunks(RANK_BLOCK_ELEMENTS)])
    rows = max(1, RANK_BLOCK_ELEMENTS // max(W.shape[1], 1))
    out = [
        plan.rho(np.ascontiguousarray(W[b0 : b0 + rows][:, plan.order]))
        for b0 in range(0, W.shape[0], rows)
    ]
    return np.concatenate(out) if out else np.empty(0)


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
    ux, gx = np.unique(x, return_inverse=True)
    uy, gy = np.unique(y, return_inverse=True)
    if uy.size > ux.size:  # τ_b is symmetric: bin by the variable with fewer distinct values
        ux, gx, uy, gy = uy, gy, ux, gx
    K, G = uy.size, ux.size
    if K > 64:
        return _wkendall_pairs(x, y, gx, gy, W)
    B = W.shape[0]
    out = np.empty(B)
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
        out[b0 : b0 + chunk] = moments.kendall_from_table(T.reshape(Wb.shape[0], K, G))
    return out


def _wkendall_pairs(
    x: np.ndarray, y: np.ndarray, gx: np.ndarray, gy: np.ndarray, W: np.ndarray
) -> np.ndarray:
    """:func:`_wkendall` when both variables have many distinct values: the sign matrix in
    column blocks, O(B·n²)."""
    n = x.size
    B = W.shape[0]
    N = W.sum(axis=1)
    n0 = N * (N - 1) / 2
    s = np.zeros(B)
    n1 = np.zeros(B)
    n2 = np.zeros(B)
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


def weighted_statistic(
    name: str, x: np.ndarray, y: np.ndarray, W: np.ndarray | Resamples
) -> np.ndarray:
    """The statistic ``name`` of each weighted resample (rows of ``W``: counts per row of x/y).

    Exactly the statistic of the expanded data in which row i is repeated ``W[b, i]`` times.
    For accuracies, ``x`` must already carry the metric decision's sign (tie band applied).

    >>> x, y = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])
    >>> W = np.array([[1, 1, 1, 1], [2, 0, 1, 1]])  # the second: rows 1, 1, 3, 4
    >>> weighted_statistic("pearson", x, y, W).round(4).tolist()
    [0.8, 0.9428]

    ``W`` may be a lazy :class:`~metajudge.stats.resample.Resamples`: the statistic is
    then evaluated a block of resamples at a time (each resample's value does not depend on
    the others, so the result is the same array).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if isinstance(W, Resamples):
        return weighted_statistics([(name, x, y)], W)[0]
    # row-major: each row's sums then run over that row alone (pairwise summation), so a block of
    # resamples gives the same bits as the whole matrix, whatever the caller's memory layout
    return _weighted(name, x, y, np.ascontiguousarray(np.atleast_2d(W), dtype=float))


def weighted_statistics(
    requests: Sequence[tuple[str, np.ndarray, np.ndarray]],
    W: np.ndarray | Resamples | Sequence[Resamples],
) -> list[np.ndarray]:
    """:func:`weighted_statistic` of every request ``(name, x, y)`` on the same resamples.

    ``W``: the weights of every request, or one column view of the same
    :class:`~metajudge.stats.resample.Resamples` per request. Statistics that follow
    from per-item sums (:mod:`metajudge.stats.moments`) are evaluated together in one
    pass over the resamples; the others a block of resamples at a time. Each value is
    remembered with the resamples (keyed by statistic and the digests of x, y and the rows'
    items), so a statistic asked for again on the same data — the inter-human reference beside
    every metric, a comparison on a cell's rows — is not recomputed.
    """
    if isinstance(W, np.ndarray):
        return [weighted_statistic(n, x, y, W) for n, x, y in requests]
    views = [W] * len(requests) if isinstance(W, Resamples) else list(W)
    if not views:
        return []
    reqs = [(n, np.asarray(x, dtype=float), np.asarray(y, dtype=float)) for n, x, y in requests]
    store = views[0].store
    keys = [v.memo_key(n, x, y) for (n, x, y), v in zip(reqs, views, strict=True)]
    first = {k: i for i, k in reversed(list(enumerate(keys)))}
    todo = [i for k, i in first.items() if k not in store.memo]
    fast = moments.evaluate([reqs[i] for i in todo], [views[i].row_items() for i in todo], store)
    for i, v in zip(todo, fast, strict=True):
        if v is None:
            n, x, y = reqs[i]
            if n == "spearman":
                v = _wspearman(_RankPlan(x, y), views[i])
            else:
                v = map_chunks(lambda Wb, n=n, x=x, y=y: _weighted(n, x, y, Wb), views[i])
        store.memo[keys[i]] = v
    return [store.memo[k].copy() for k in keys]


def _weighted(name: str, x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    if name == "pearson":
        return _wpearson(x, y, W)
    if name == "spearman":
        return _wspearman(_RankPlan(x, y), W)
    if name == "kendall":
        return _wkendall(x, y, W)
    if name == "acc_ties":
        return _wacc(x, y, W, ties=True)
    if name == "acc_no_ties":
        return _wacc(x, y, W, ties=False)
    raise ValueError(f"unknown statistic {name!r} (expected one of {', '.join(STATISTICS)})")
