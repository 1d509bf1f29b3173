"""Kendall's τ_b of weighted resamples (the bootstrap's count vectors), exactly and in
O(B·n·log K): the Kendall engine of :func:`metajudge.engine.weighted.weighted_statistics`.

τ_b = (C − D)/sqrt((n0 − n1)(n0 − n2)) of the expanded data in which row i appears ``w_i``
times, n0 = N(N − 1)/2 and n1, n2 the pairs tied in x and in y (Σ c(c − 1)/2 over the groups
of equal value, c the group's total weight; copies of one row are tied in both) (Kendall
1945). With Q the weighted discordant pairs, c_k the weights of the y values and X the pairs
tied in x but not in y: C − D = (N² − Σ c_k²)/2 − X − 2Q. Q is counted as merge sort counts
inversions (:class:`KendallPlan`), over the values of the variable with fewer distinct values
(τ_b is symmetric): ⌈log2 K⌉ passes over each block of resamples, 4 for a mean of three 1–5
scores (13 values), 17 for 100,000 distinct values. Every sum is an exact integer, so no
value depends on how the resamples are blocked. ``tests/engine/test_weighted_kendall.py``
checks it against scipy's ``kendalltau`` on the explicitly resampled data.
"""

from __future__ import annotations

import numpy as np

from metajudge.engine.resample import Resamples

#: elements (resamples × rows) of the integer block a pass works on (cache-sized)
BLOCK_ELEMENTS = 1 << 18


class KendallPlan:
    """What τ_b of weighted resamples needs, from one sort of the rows by (y, x).

    A pair with y_i < y_j is discordant when x_i > x_j: Q is the weighted inversions of x in
    that order, counted over the dense ranks of y — at the level of blocks of ``2h`` y values
    each row j of the upper half meets the rows of the lower half with a larger x. ``levels``
    holds per level the order by (block, x) (a stable sort: on equal x the lower-half row
    comes first, so a tie in x is not counted), which of its positions are lower-half rows,
    and where the halves start among the y values. Built once per (x, y), whatever the weights;
    ``order``: the rows in (y, x) order, the column order of the weights :meth:`tau` takes.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if np.unique(y).size > np.unique(x).size:  # y: the variable with fewer values
            x, y = y, x
        self.order = np.lexsort((x, y))
        xs, ys = x[self.order], y[self.order]
        ry = np.unique(ys, return_inverse=True)[1].ravel()
        self.gx = np.unique(xs, return_inverse=True)[1].ravel()
        self.x_ties = bool(self.gx.size) and int(self.gx.max()) + 1 < self.gx.size
        self.y_starts = np.flatnonzero(np.r_[True, ys[1:] != ys[:-1]])
        self.xy_starts = np.flatnonzero(np.r_[True, (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])])
        self.levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        K, h = int(ry.max(initial=0)) + 1, 1
        while h < K:
            perm = np.lexsort((self.gx, ry // (2 * h)))
            lower = ((ry % (2 * h)) < h)[perm]
            # the y values where the halves start: lower0, upper0, lower1, upper1, ...
            self.levels.append((perm, lower, np.arange(0, K, h)))
            h *= 2

    def discordant(self, Wb: np.ndarray, ck: np.ndarray) -> np.ndarray:
        """Weighted discordant pairs of each row of ``Wb`` (whole counts, an integer array in
        :attr:`order`, N² within its dtype; ``ck``: each resample's weight per y value, int64).
        Per level, Σ over upper rows j of w_j·(lower weight of its block after j in (block, x)
        order), the lower weight up to j a running sum over the whole level:
        Σ_b up_b·(lower weight of the blocks up to b) − Σ_j w_j·(running lower weight at j).
        Integer sums: exact, and several times faster than float ones."""
        Q = np.zeros(Wb.shape[0], dtype=np.int64)
        for perm, lower, halves in self.levels:
            Wp = np.take(Wb, perm, axis=1)
            L = Wp * lower.astype(Wb.dtype)
            cum = np.cumsum(L, axis=1, dtype=Wb.dtype)
            Wp -= L  # the upper rows' weights
            Q -= np.einsum("ij,ij->i", Wp, cum)
            hs = np.add.reduceat(ck, halves, axis=1)
            up = hs[:, 1::2]
            Q += (up * np.cumsum(hs[:, 0::2], axis=1)[:, : up.shape[1]]).sum(axis=1)
        return Q

    def tau(self, Wb: np.ndarray) -> np.ndarray:
        """τ_b of each row of ``Wb``: whole counts of the rows in :attr:`order`, any integer
        dtype (taken as int32 while N² fits it, else int64)."""
        N = Wb.sum(axis=1, dtype=np.int64)
        dtype = np.int32 if float(N.max(initial=0)) ** 2 < 2**31 else np.int64
        Wb = Wb.astype(dtype, copy=False)
        ck = np.add.reduceat(Wb, self.y_starts, axis=1, dtype=np.int64)
        if self.x_ties:
            G = int(self.gx.max()) + 1  # weights per x value: one bincount (exact counts)
            flat = (self.gx[None, :] + G * np.arange(Wb.shape[0])[:, None]).ravel()
            cg = np.bincount(flat, weights=Wb.ravel(), minlength=Wb.shape[0] * G)
            cg = cg.reshape(-1, G).astype(np.int64)
            cgk = np.add.reduceat(Wb, self.xy_starts, axis=1, dtype=np.int64)
            X = ((cg * cg).sum(axis=1) - (cgk * cgk).sum(axis=1)) // 2
        else:  # every x distinct: each row its own x group, no pair tied in x alone
            cg, X = Wb.astype(np.int64), 0
        s = (N * N - (ck * ck).sum(axis=1)) // 2 - X - 2 * self.discordant(Wb, ck)
        n0, n1 = N * (N - 1) // 2, (cg * (cg - 1) // 2).sum(axis=1)
        n2 = (ck * (ck - 1) // 2).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            den = np.sqrt((n0 - n1).astype(float) * (n0 - n2).astype(float))
            t = np.where(den > 0, s / den, np.nan)
        return np.clip(t, -1.0, 1.0)


def weighted_kendall(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """τ_b of each weighted resample: the rows of ``W`` (whole counts per row of x, y)."""
    W = np.atleast_2d(np.asarray(W))
    if not np.array_equal(W, np.rint(W)) or (W < 0).any():
        raise ValueError("Kendall's tau_b of weighted resamples needs whole counts as weights")
    plan = KendallPlan(x, y)
    rows = max(1, BLOCK_ELEMENTS // max(W.shape[1], 1))
    parts = [
        plan.tau(np.take(W[b0 : b0 + rows], plan.order, axis=1).astype(np.int64))
        for b0 in range(0, W.shape[0], rows)
    ]
    return np.concatenate(parts) if parts else np.empty(0)


def kendall_resamples(x: np.ndarray, y: np.ndarray, W: Resamples) -> np.ndarray:
    """τ_b of every resample of a lazy :class:`~metajudge.engine.resample.Resamples`, from
    its integer counts a block at a time (no float copy)."""
    plan = KendallPlan(x, y)
    view = W[:, plan.order]
    parts = [plan.tau(b) for _, b in view.count_chunks(BLOCK_ELEMENTS)]
    return np.concatenate(parts) if parts else np.empty(0)
