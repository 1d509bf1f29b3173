"""The one pass over a block of resamples that Kendall's τ_b of weighted resamples needs, compiled.

The block holds each row's weights in all its resamples side by side (``(rows, R)``, whole
counts), the rows in (x, y) order, and a step updates the R resamples together (the inner loops
run over resamples, in SIMD). A Fenwick tree (Fenwick 1994) over the K dense ranks of y holds,
per resample, the weight of the rows walked so far by y value, so that a row's discordant weight
— the rows of smaller x and larger y — is the weight walked so far less a prefix sum: O(log K)
a row. The rows of a group of equal x are all counted before any is added, so a pair tied in x
is never counted; the same walk sums the squared weights of the x groups, of the (x, y) cells
and of the y values (the tied pairs). Every sum is an int64 (exact: the same value whatever the
blocking). :meth:`metajudge.engine.weighted_kendall.KendallPlan.tau` turns them into τ_b.

Compiled by numba on first use (cached beside this file, or in numba's user cache, when
writable); imported only when a Kendall bootstrap runs, so ``import metajudge`` does not load
numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def kendall_sums(counts, ry, starts, k):  # type: ignore[no-untyped-def]
    """``(5, R)`` int64 sums of each resample (column of ``counts``): the total weight N, the
    weighted discordant pairs Q (x_i < x_j and y_i > y_j), and Σc² over the x groups, over the
    (x, y) cells and over the y values (c: a group's, cell's or value's total weight).

    ``counts``: (rows in (x, y) order, resamples) whole counts; ``ry``: each row's dense y rank
    in ``0..k-1``; ``starts``: where each group of equal x begins, then the row count."""
    n_res = counts.shape[1]
    out = np.zeros((5, n_res), dtype=np.int64)
    tree = np.zeros((k + 1, n_res), dtype=np.int64)
    by_y = np.zeros((k, n_res), dtype=np.int64)
    seen = np.zeros(n_res, dtype=np.int64)  # the weight walked so far (smaller x)
    below = np.empty(n_res, dtype=np.int64)
    group = np.empty(n_res, dtype=np.int64)
    cell = np.empty(n_res, dtype=np.int64)
    for g in range(starts.size - 1):
        for t in range(starts[g], starts[g + 1]):  # count the group's rows ...
            below[:] = 0  # walked weight at y values up to this row's
            i = ry[t] + 1
            while i > 0:
                for r in range(n_res):
                    below[r] += tree[i, r]
                i -= i & -i
            for r in range(n_res):
                out[1, r] += counts[t, r] * (seen[r] - below[r])
        group[:] = 0
        cell[:] = 0
        for t in range(starts[g], starts[g + 1]):  # ... then add them
            if t > starts[g] and ry[t] != ry[t - 1]:  # a new (x, y) cell
                for r in range(n_res):
                    out[3, r] += cell[r] * cell[r]
                cell[:] = 0
            i = ry[t] + 1
            while i <= k:
                for r in range(n_res):
                    tree[i, r] += counts[t, r]
                i += i & -i
            for r in range(n_res):
                w = np.int64(counts[t, r])
                group[r] += w
                cell[r] += w
                by_y[ry[t], r] += w
        for r in range(n_res):
            seen[r] += group[r]
            out[2, r] += group[r] * group[r]
            out[3, r] += cell[r] * cell[r]
    for r in range(n_res):
        out[0, r] = seen[r]
    for j in range(k):
        for r in range(n_res):
            out[4, r] += by_y[j, r] * by_y[j, r]
    return out
