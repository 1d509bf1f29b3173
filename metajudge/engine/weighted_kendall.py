"""Kendall's τ_b of weighted resamples (the bootstrap's count vectors), exactly and in
O(B·n·log K): the Kendall engine of :func:`metajudge.engine.weighted.weighted_statistics`.

τ_b = (C − D)/sqrt((n0 − n1)(n0 − n2)) of the expanded data in which row i appears ``w_i``
times, n0 = N(N − 1)/2 and n1, n2 the pairs tied in x and in y (Σ c(c − 1)/2 over the groups
of equal value, c the group's total weight; copies of one row are tied in both) (Kendall
1945). With Q the weighted discordant pairs, c_k the weights of the y values and X the pairs
tied in x but not in y: C − D = (N² − Σ c_k²)/2 − X − 2Q. Q and the tied pairs are counted
in one compiled walk of each resample's rows in (x, y) order
(:mod:`metajudge.engine.kendall_pass`: a Fenwick tree over the K values of the variable with
fewer distinct values, τ_b being symmetric; ⌈log2 K⌉ steps a row, 3 for a 1–5 label). Every
sum is an exact integer, so no value depends on how the resamples are blocked.
``tests/engine/test_weighted_kendall.py`` checks it against scipy's ``kendalltau`` on the
explicitly resampled data.
"""

from __future__ import annotations

import numpy as np

from metajudge.engine.resample import Resamples

#: elements (resamples × rows) of the integer block a pass works on (16 to 32 MB: dozens of
#: resamples side by side at 100,000 rows, for the compiled pass's SIMD loops)
BLOCK_ELEMENTS = 1 << 22


class KendallPlan:
    """What τ_b of weighted resamples needs, from one sort of the rows by (x, y).

    ``order``: the rows in (x, y) order, the column order of the weights :meth:`tau` takes;
    ``ry``: their dense y ranks (``k`` values), ``x_starts``: where each group of equal x starts
    among them, then the row count. Built once per (x, y), whatever the weights.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if np.unique(y).size > np.unique(x).size:  # y: the variable with fewer values
            x, y = y, x
        self.order = np.lexsort((y, x))
        xs, ys = x[self.order], y[self.order]
        self.ry = np.unique(ys, return_inverse=True)[1].ravel()
        self.k = int(self.ry.max(initial=0)) + 1
        ends = np.r_[True, xs[1:] != xs[:-1], True] if xs.size else np.ones(1, dtype=bool)
        self.x_starts = np.flatnonzero(ends)

    def tau(self, Wb: np.ndarray) -> np.ndarray:
        """τ_b of each row of ``Wb``: whole counts of the rows in :attr:`order`, any integer
        dtype (:func:`~metajudge.engine.kendall_pass.kendall_sums` of the counts turned: the
        rows' weights in all resamples side by side)."""
        from metajudge.engine.kendall_pass import kendall_sums

        turned = np.ascontiguousarray(Wb.T)
        N, Q, x2, xy2, y2 = kendall_sums(turned, self.ry, self.x_starts, self.k)
        X = (x2 - xy2) // 2  # pairs tied in x but not in y
        s = (N * N - y2) // 2 - X - 2 * Q
        n0, n1, n2 = N * (N - 1) // 2, (x2 - N) // 2, (y2 - N) // 2
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
