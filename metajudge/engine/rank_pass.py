"""The one pass over a block of resamples that Spearman's ρ of weighted resamples needs, compiled.

The block holds each row's weights in all its resamples side by side (``(rows, R)``), the rows in x
order (gathered so by the caller: a step reads the next line, never a random one), and a step
updates the R resamples together (the inner loops run over resamples, in SIMD): x's doubled,
centred average ranks from one walk over the rows (x's groups of equal values end where ``last`` is
set; a row with an x of its own is done in one loop), and each y's group totals and sums of weight
× x rank scattered into the cells of its *joint* table (several few-valued y's share one table of
every combination of their values), then every y's ranks from one walk over its groups. Six sums
per y follow (:func:`rank_sums`); ρ is their Pearson
(:meth:`metajudge.engine.weighted._RankPlan.rho`). O(n + cells) per resample, no sort; each
resample's sums run over the rows in the same order whatever R, so its values do not depend on the
blocking.

Compiled by numba on first use (cached beside this file, or in numba's user cache, when
writable); imported only when a Spearman bootstrap runs, so ``import metajudge`` does not load
numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def _x_pass(counts, last, cells, offsets, total, tw, ts, sx, sxx):  # type: ignore[no-untyped-def]
    """x's ranks of every resample, ``Σw·Rx`` and ``Σw·Rx²`` into ``sx``/``sxx``, and each joint
    cell's total weight and ``Σw·Rx`` into ``tw``/``ts`` (cells × resamples)."""
    n_res = counts.shape[1]
    n_joints = offsets.size - 1
    below = np.zeros(n_res, dtype=sx.dtype)
    wg = np.zeros(n_res, dtype=sx.dtype)
    r = np.zeros(n_res, dtype=sx.dtype)
    first = 0
    for j in range(counts.shape[0]):
        w = counts[j]
        if first == j and last[j] != 0 and n_joints == 1:  # a row with an x of its own: one loop
            twc = tw[offsets[0] + cells[j, 0]]
            tsc = ts[offsets[0] + cells[j, 0]]
            for b in range(n_res):
                rb = 2 * below[b] + w[b] - total[b]
                below[b] += w[b]
                sx[b] += w[b] * rb
                sxx[b] += w[b] * rb * rb
                twc[b] += w[b]
                tsc[b] += w[b] * rb
            first = j + 1
            continue
        for b in range(n_res):
            wg[b] += w[b]
        if last[j] == 0:
            continue
        for b in range(n_res):
            r[b] = 2 * below[b] + wg[b] - total[b]
            below[b] += wg[b]
            sx[b] += wg[b] * r[b]
            sxx[b] += wg[b] * r[b] * r[b]
            wg[b] = 0
        for i in range(first, j + 1):
            w = counts[i]
            for q in range(n_joints):
                twc = tw[offsets[q] + cells[i, q]]
                tsc = ts[offsets[q] + cells[i, q]]
                for b in range(n_res):
                    twc[b] += w[b]
                    tsc[b] += w[b] * r[b]
        first = j + 1


@njit(nogil=True, cache=True)
def _y_sums(tw, ts, first, size, stride, groups, total, out, at):  # type: ignore[no-untyped-def]
    """One y (its group of joint cell ``c``: ``c // stride % groups``; the joint's cells from
    ``first``, ``size`` of them): its ranks from its groups' totals, and ``Σw·Ry``,
    ``Σw·Ry²``, ``Σw·Rx·Ry`` of every resample into ``out[:, at:at + 3]``."""
    n_res = tw.shape[1]
    yw = np.zeros((groups, n_res), dtype=tw.dtype)
    ys = np.zeros((groups, n_res), dtype=tw.dtype)
    for c in range(size):
        g = c // stride % groups
        for b in range(n_res):
            yw[g, b] += tw[first + c, b]
            ys[g, b] += ts[first + c, b]
    cum = np.zeros(n_res, dtype=tw.dtype)
    for b in range(n_res):
        out[b, at] = 0
        out[b, at + 1] = 0
        out[b, at + 2] = 0
    for g in range(groups):
        for b in range(n_res):
            wy = yw[g, b]
            ry = 2 * cum[b] + wy - total[b]
            cum[b] += wy
            out[b, at] += wy * ry
            out[b, at + 1] += wy * ry * ry
            out[b, at + 2] += ys[g, b] * ry


@njit(nogil=True, cache=True)
def rank_sums(counts, last, cells, offsets, ymap, out, tw, ts):  # type: ignore[no-untyped-def]
    """Fill ``out[b] = (N, Σw·Rx, Σw·Rx², then per y: Σw·Ry, Σw·Ry², Σw·Rx·Ry)`` for each
    resample ``b`` (column of ``counts``, whose rows are the weights of the data's rows in x
    order), ranks doubled and centred (``R = 2·rank − (N + 1)``), in ``out``'s type (int64:
    exact while N ≤ ``EXACT_WEIGHT``; float64 otherwise).

    ``last``: 1 where a row ends its group of equal x; ``cells``: (rows, joints) the joint cell
    of each row; ``offsets``: where each joint's cells start in one flat table (its last entry:
    the table's size); ``ymap``: per y ``(joint, stride, groups)``; ``tw``, ``ts``: the joint
    tables (cells × resamples, zeros in ``out``'s type), left holding each cell's total weight
    and ``Σw·Rx`` (what a y pooled from several of them needs,
    :class:`metajudge.engine.weighted._Stack`)."""
    n_res = counts.shape[1]
    dt = out.dtype
    total = np.zeros(n_res, dtype=dt)
    for j in range(counts.shape[0]):
        w = counts[j]
        for b in range(n_res):
            total[b] += w[b]
    sx = np.zeros(n_res, dtype=dt)
    sxx = np.zeros(n_res, dtype=dt)
    _x_pass(counts, last, cells, offsets, total, tw, ts, sx, sxx)
    for b in range(n_res):
        out[b, 0] = total[b]
        out[b, 1] = sx[b]
        out[b, 2] = sxx[b]
    for y in range(ymap.shape[0]):
        q = ymap[y, 0]
        size = offsets[q + 1] - offsets[q]
        _y_sums(tw, ts, offsets[q], size, ymap[y, 1], ymap[y, 2], total, out, 3 + 3 * y)
