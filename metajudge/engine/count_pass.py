"""Counting drawn items, compiled: the count matrix of a block of bootstrap resamples.

A resample of ``n`` items is ``n`` draws of an item index; its count vector says how many
times each item was drawn. :func:`count_rows` counts each row of draws straight into the
caller's matrix (one increment a draw, in a row that stays in cache for small count types), so
the count cache of :mod:`metajudge.engine.resample` is filled without the int64 index offsets
and ``bincount`` temporaries a numpy count needs. Compiled by numba on first use (cached beside
this file, or in numba's user cache, when writable); imported only when resamples are counted,
so ``import metajudge`` does not load numba.
"""

from __future__ import annotations

from numba import njit


@njit(nogil=True, cache=True)
def count_rows(idx, out, limit):  # type: ignore[no-untyped-def]
    """``out[r, k]`` = how many times item ``k`` is drawn in row ``r`` of ``idx`` (draws in
    ``0..out.shape[1]``), for every row. Returns False, with ``out`` then unfinished, as soon as
    a count would exceed ``limit`` (what the caller's type or packing holds); True otherwise."""
    for r in range(idx.shape[0]):
        row = out[r]
        row[:] = 0
        for j in range(idx.shape[1]):
            k = idx[r, j]
            if row[k] >= limit:
                return False
            row[k] += 1
    return True
