"""Statistics of weighted resamples: the bootstrap evaluated as matrix products.

A bootstrap resample of items is represented by its *count vector* ``w`` (how many times each
row appears in the resample). Pearson, Spearman (average ranks of the resampled data), Kendall
τ_b and accuracies of the resampled data are exact functions of ``w``, so all ``B`` resamples
are evaluated with matrix products over a ``(B, n)`` weight matrix — no Python loop per
resample — except Spearman's ρ, whose average ranks come from one sort of each variable and
then one compiled pass per resample over its counts (O(n), :mod:`metajudge.engine.rank_pass`);
several y's against the same x (a metric against each annotator) share that pass.
:mod:`metajudge.engine.reference` is the slow, obvious loop that gives the same values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.engine import moments
from metajudge.engine.formulas import accuracy_from_sums, pearson_from_moments
from metajudge.engine.resample import (
    Digests,
    PackedRows,
    Resamples,
    array_digest,
    map_blocks,
    map_chunks,
)
from metajudge.engine.weighted_kendall import kendall_resamples, weighted_kendall

#: the statistics of weighted resamples (``accuracy``: x the rows' credit, y whether each is scored;
#: ``mean``: x per-group values, 0 where undefined, y whether each is defined)
ENGINE_STATISTICS: tuple[str, ...] = ("pearson", "spearman", "kendall", "accuracy", "mean")


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
    if B.shape != A.shape:
        B = np.broadcast_to(B, A.shape)
    return np.einsum("ij,ij->i", A, np.ascontiguousarray(B))


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
    return pearson_from_moments(N, sx, sy, sxx, syy, sxy)


#: items × resamples of a block of the Spearman pass (whole resamples; at least one): 32 MB of
#: one-byte counts, three times (as drawn, turned, gathered in x order: :func:`_in_order`); 32
#: resamples at a million items (:meth:`_RankPlan.block_rows`), as fast per resample as 64
#: (the pass reading its rows in order; measured: ``docs/benchmarks.md``) in half the memory
RANK_BLOCK_ELEMENTS = 1 << 25
#: joint cells × resamples of a block's tables (int64, two of them: 64 MB): a y with as many
#: values as rows takes few resamples a block
CELL_ELEMENTS = 1 << 22
#: most resamples of a block (more add memory, not speed: 128 steps of the inner loops)
RANK_BLOCK_RESAMPLES = 128
#: most distinct values of a y that shares a joint table with other y's
MAX_Y_GROUPS = 64
#: largest total weight N of a resample whose sums :meth:`_RankPlan.sums` takes exactly, in
#: int64 on doubled ranks: Σ w·R² ≤ (N³ − N)/3 < 2⁶³ (ties only lower it; a cross sum is bounded
#: by the same, Cauchy–Schwarz). Heavier resamples (or weights that are not whole counts) take
#: the same sums in floats, rounded.
EXACT_WEIGHT = 1 << 21
#: most joint cells of several few-valued y's in one table
MAX_JOINT_CELLS = 4096


def _joints(
    gids: Sequence[np.ndarray], sizes: Sequence[int], units: Sequence[Sequence[int]] = ()
) -> tuple[np.ndarray, ...]:
    """The joint tables of the y's (groups ``gids``, ``sizes`` groups each): consecutive y's
    with at most :data:`MAX_Y_GROUPS` values share a table of at most :data:`MAX_JOINT_CELLS`
    cells (every combination of their groups, the later y varying fastest); any other y has its
    own. ``units``: sets of y's that must share one table (the places of a stacked y,
    :class:`_Stack`; few-valued, within the cell limit), placed together; every other y is a
    unit of its own. Returns the arrays of :func:`~metajudge.engine.rank_pass.rank_sums`:
    ``cells`` (rows, tables), ``offsets`` and ``ymap``."""
    n = gids[0].size if len(gids) else 0
    in_unit = {y for u in units for y in u}
    order = [list(u) for u in units] + [[y] for y in range(len(gids)) if y not in in_unit]
    tables: list[tuple[list[np.ndarray], list[int], bool]] = []  # (cells, dims, shareable)
    where = {}  # per y: (table, position in its dims)
    for unit in sorted(order, key=min):
        size = math.prod(sizes[y] for y in unit)
        few = all(sizes[y] <= MAX_Y_GROUPS for y in unit)
        if not (
            few and tables and tables[-1][2] and math.prod(tables[-1][1]) * size <= MAX_JOINT_CELLS
        ):
            tables.append(([np.zeros(n, dtype=np.intp)], [], few))
        cells, dims, _ = tables[-1]
        for y in unit:
            cells[0] = cells[0] * sizes[y] + gids[y]
            dims.append(sizes[y])
            where[y] = (len(tables) - 1, len(dims) - 1)
    ymap = [
        (q, math.prod(tables[q][1][pos + 1 :]), tables[q][1][pos])
        for q, pos in (where[y] for y in range(len(gids)))
    ]
    cells = np.stack([c[0] for c, _, _ in tables], axis=1) if tables else np.zeros((n, 0))
    offsets = np.r_[0, np.cumsum([math.prod(d) for _, d, _ in tables])].astype(np.intp)
    ymap_arr = np.array(ymap, dtype=np.intp).reshape(-1, 3)
    return np.ascontiguousarray(cells, dtype=np.intp), offsets, ymap_arr


class _Stack:
    """A y over ``k`` stacked copies of the plan's rows: the pooled rows of a cell, where each
    item's row appears once under each of ``k`` annotators with the same x (:func:`_unstack`).

    Its ranks follow from the plan's joint table of the ``k`` place y's (``slots``): the stacked
    data's x ranks are ``k`` times the plan's (every group of equal x holds ``k`` times the
    weight), and its y's groups are the union of the places' values, so each pooled group's
    total weight and ``Σw·Rx`` are sums of the table's cells (``matrix``: pooled group × cell,
    how many places put the cell in that group). Its six sums are then the same integers the
    stacked rows' own pass gives (:meth:`_RankPlan.sums`), from one pass over the ``n`` rows
    instead of ``k·n``."""

    def __init__(
        self,
        slots: Sequence[int],
        ymap: np.ndarray,
        offsets: np.ndarray,
        uniqs: Sequence[np.ndarray],
    ) -> None:
        self.k = len(slots)
        self.joint = int(ymap[slots[0], 0])
        size = int(offsets[self.joint + 1] - offsets[self.joint])
        pooled = np.unique(np.concatenate([uniqs[j] for j in slots]))
        self.matrix = np.zeros((pooled.size, size), dtype=np.int64)
        c = np.arange(size)
        for j in slots:
            _, stride, groups = ymap[j]
            np.add.at(self.matrix, (np.searchsorted(pooled, uniqs[j])[c // stride % groups], c), 1)

    def sums(
        self, base: np.ndarray, tw: np.ndarray, ts: np.ndarray, offsets: np.ndarray
    ) -> np.ndarray:
        """``(resamples, 6)``: N, Σw·Rx, Σw·Rx², Σw·Ry, Σw·Ry², Σw·Rx·Ry of the stacked rows
        (doubled, centred ranks), from the plan's ``base`` sums (N, Σw·Rx, Σw·Rx²) and tables."""
        a, b = offsets[self.joint], offsets[self.joint + 1]
        M = self.matrix.astype(tw.dtype)
        yw, ys = M @ tw[a:b], M @ ts[a:b]  # (pooled groups, resamples)
        k = self.k
        total = k * base[:, 0]
        ry = 2 * (np.cumsum(yw, axis=0) - yw) + yw - total
        out = np.empty((base.shape[0], 6), dtype=base.dtype)
        out[:, 0] = total
        out[:, 1] = k * k * base[:, 1]
        out[:, 2] = k**3 * base[:, 2]
        out[:, 3] = (yw * ry).sum(axis=0)
        out[:, 4] = (yw * ry * ry).sum(axis=0)
        out[:, 5] = k * (ys * ry).sum(axis=0)
        return out


class _RankPlan:
    """What Spearman's ρ of weighted resamples needs, from one sort of each variable.

    Rows are put in x order once; a resample's weights in that order give x's average ranks by
    one running sum over x's groups of equal values, held doubled and centred,
    ``R = 2·rank − (N + 1)``: integers, so with whole counts every sum of ρ is an exact int64
    while the resample's total weight N is at most :data:`EXACT_WEIGHT` (the same value in any
    summation order or blocking). Several y's on the same x and rows (a metric against each
    annotator) share that pass; each y needs per resample only its groups' total weights and
    their sums of weight × x rank, scattered into a joint table with other few-valued y's (two
    annotators' labels in −2..2: 25 cells). Every resample is O(n): no sort per resample; the
    pass is compiled (:func:`metajudge.engine.rank_pass.rank_sums`).
    """

    def __init__(
        self, x: np.ndarray, ys: Sequence[np.ndarray], stacks: Sequence[Sequence[int]] = ()
    ) -> None:
        """``stacks``: per stacked y (:class:`_Stack`), the indices in ``ys`` of its places."""
        self.order = np.argsort(x, kind="mergesort")
        xs = x[self.order]
        self.last = np.ones(xs.size, dtype=np.uint8)
        self.last[:-1] = xs[1:] != xs[:-1]
        gids, uniqs = [], []
        for y in ys:
            yo = y[self.order]
            uniq = np.unique(yo)  # its inverse by a search in the few values: a third of
            gids.append(np.searchsorted(uniq, yo))  # return_inverse's time on a million labels
            uniqs.append(uniq)
        self.n_ys = len(uniqs)
        sizes = [u.size for u in uniqs]
        self.cells, self.offsets, self.ymap = _joints(gids, sizes, stacks)
        self.stacks = [_Stack(st, self.ymap, self.offsets, uniqs) for st in stacks]
        #: the most copies of a row a stacked y has (its total weight: this times the plan's)
        self.copies = max((st.k for st in self.stacks), default=1)

    @property
    def width(self) -> int:
        """Columns of :meth:`sums`: N, Σw·Rx, Σw·Rx², three per y, six per stacked y."""
        return 3 + 3 * self.n_ys + 6 * len(self.stacks)

    @property
    def n_cells(self) -> int:
        """Cells of the y's joint tables (each resample of a block holds one of each)."""
        return int(self.offsets[-1])

    def block_rows(self, columns: int) -> int:
        """Resamples of a block of weights over ``columns`` columns (:data:`RANK_BLOCK_ELEMENTS`,
        :data:`CELL_ELEMENTS`, :data:`RANK_BLOCK_RESAMPLES`; at least one), a multiple of 32
        above 32: a gathered row of one-byte counts is then whole 32-byte pieces, which numpy's
        ``take`` copies with a fixed-size copy, where a row of any other size is a ``memmove``
        each (twice as slow; measured: ``docs/benchmarks.md``)."""
        by_cells = CELL_ELEMENTS // max(self.n_cells, 1)
        by_columns = RANK_BLOCK_ELEMENTS // max(columns, 1)
        rows = max(1, min(RANK_BLOCK_RESAMPLES, by_columns, by_cells))
        return rows - rows % 32 if rows > 32 else rows

    def sums(
        self, block: np.ndarray | PackedRows, cols: np.ndarray, *, integer: bool = True
    ) -> np.ndarray:
        """``(rows of block, width)`` float sums of :func:`rank_pass.rank_sums` for each row
        of ``block`` (weights; ``cols``: the column of each row of the data, in x order), then
        each stacked y's (:meth:`_Stack.sums`); ``integer``: the weights are whole counts (the
        exact int64 sums need it).

        Whole counts are gathered once, as they are stored: a resample whose total weight is
        at most :data:`EXACT_WEIGHT` takes the int64 sums, a heavier one the same sums in
        floats, from the same counts (each count turned into a float as it is read: the
        values of float counts, without a float copy of the block, eight bytes a count: 256 MB
        a thread at a million pairs, where every resample of three annotators' pooled rows is
        heavier than the bound)."""
        if not integer:
            return self._sums(_in_order(block, cols, float))
        counts = _in_order(block, cols, np.int64 if block.dtype.kind == "f" else None)
        heavy = counts.sum(axis=0, dtype=np.int64) * self.copies > EXACT_WEIGHT
        out = np.empty((counts.shape[1], self.width))
        for part, dtype in ((~heavy, np.int64), (heavy, float)):
            if part.all():  # (as the int64 sums / 2 and / 4 would: the same floats)
                out[:] = self._sums(counts, dtype)
            elif part.any():
                out[part] = self._sums(np.ascontiguousarray(counts[:, part]), dtype)
        return out

    def _sums(self, counts: np.ndarray, dtype: type = float) -> np.ndarray:
        """:meth:`sums` of ``counts`` (the data's rows in x order × resamples) in ``dtype``."""
        from metajudge.engine.rank_pass import rank_sums

        R = counts.shape[1]
        base = np.empty((R, 3 + 3 * self.n_ys), dtype=dtype)
        tw = np.zeros((self.n_cells, R), dtype=dtype)
        ts = np.zeros((self.n_cells, R), dtype=dtype)
        rank_sums(counts, self.last, self.cells, self.offsets, self.ymap, base, tw, ts)
        return np.concatenate(
            [base, *(st.sums(base, tw, ts, self.offsets) for st in self.stacks)], axis=1
        )

    def rho(self, sums: np.ndarray) -> list[np.ndarray]:
        """ρ for every y, then every stacked y, from the rows of :meth:`sums` (ranks: R / 2)."""
        N, sx, sxx = sums[:, 0], sums[:, 1] / 2, sums[:, 2] / 4
        out = []
        for k in range(self.n_ys):
            sy, syy, sxy = sums[:, 3 + 3 * k] / 2, sums[:, 4 + 3 * k] / 4, sums[:, 5 + 3 * k] / 4
            out.append(pearson_from_moments(N, sx, sy, sxx, syy, sxy))
        for at in range(3 + 3 * self.n_ys, self.width, 6):
            Ns, sxs, sxxs = sums[:, at], sums[:, at + 1] / 2, sums[:, at + 2] / 4
            sy, syy, sxy = sums[:, at + 3] / 2, sums[:, at + 4] / 4, sums[:, at + 5] / 4
            out.append(pearson_from_moments(Ns, sxs, sy, sxxs, syy, sxy))
        return out


def _in_order(
    block: np.ndarray | PackedRows, cols: np.ndarray, dtype: type | None = None
) -> np.ndarray:
    """The weights in ``block`` (resamples × columns) as one row per data row, in the order
    ``cols`` (the x order), resamples side by side: turned, then gathered row by row, so that
    the rank pass reads its rows one after another, faster than a pass reading each row where
    it lies (a gather overlaps its reads; the pass cannot; measured: ``docs/benchmarks.md``).
    Packed counts are turned and gathered packed, then unpacked (no unpacked block)."""
    if isinstance(block, PackedRows):
        counts = block.turned_at(cols)
        return counts if dtype is None else counts.astype(dtype)
    turned = np.ascontiguousarray(block.T, dtype=dtype)
    return np.take(turned, cols, axis=0)


def _wspearman(plan: _RankPlan, W: np.ndarray | Resamples) -> list[np.ndarray]:
    """ρ of every resample (rows of ``W``) for each y of ``plan``, a block of resamples at a
    time (each resample's value depends on its own row alone: the same bits whatever the
    blocking; the blocks of lazy resamples, their item counts, shared among threads,
    :func:`~metajudge.engine.resample.map_blocks`)."""
    if isinstance(W, Resamples):
        cols = plan.order if W.cols is None else W.cols[plan.order]
        out = np.empty((W.shape[0], plan.width))

        def one(b0: int, counts: np.ndarray | PackedRows) -> None:
            out[b0 : b0 + counts.shape[0]] = plan.sums(counts, cols)

        map_blocks(one, W.store.blocks(plan.block_rows(W.store.n_items), packed=True))
    else:
        integer = bool(np.all(W >= 0) and np.array_equal(W, np.floor(W)))
        rows = plan.block_rows(W.shape[1])
        parts = [
            plan.sums(W[b0 : b0 + rows], plan.order, integer=integer)
            for b0 in range(0, W.shape[0], rows)
        ]
        out = np.concatenate(parts) if parts else np.empty((0, plan.width))
    return plan.rho(out)


def _wacc(credit: np.ndarray, kept: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The accuracy of each weighted resample: Σw·credit / Σw·kept (the rows of
    :func:`metajudge.stats.accuracy_rows`, the one definition)."""
    den = W.sum(axis=1) if kept.all() else _mv(W, kept)  # (all kept: Σw, as always)
    return accuracy_from_sums(_mv(W, credit), den)


def weighted_statistic(
    name: str, x: np.ndarray, y: np.ndarray, W: np.ndarray | Resamples
) -> np.ndarray:
    """The statistic ``name`` of each weighted resample (rows of ``W``: counts per row of x/y).

    Exactly the statistic of the expanded data in which row i is repeated ``W[b, i]`` times.
    For ``accuracy``, ``x`` is each row's credit and ``y`` whether it is scored.

    >>> x, y = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])
    >>> W = np.array([[1, 1, 1, 1], [2, 0, 1, 1]])  # the second: rows 1, 1, 3, 4
    >>> weighted_statistic("pearson", x, y, W).round(4).tolist()
    [0.8, 0.9428]

    ``W`` may be a lazy :class:`~metajudge.engine.resample.Resamples`: the statistic is
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
    :class:`~metajudge.engine.resample.Resamples` per request. Statistics that follow
    from per-item sums (:mod:`metajudge.engine.moments`) are evaluated together in one
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
    reqs = [_request(n, x, y) for n, x, y in requests]
    store = views[0].store
    digest = store.digests or Digests()  # (the memo keys of one call hash each array once)
    keys = [v.memo_key(n, x, y, digest=digest) for (n, x, y), v in zip(reqs, views, strict=True)]
    first = {k: i for i, k in reversed(list(enumerate(keys)))}
    todo = [i for k, i in first.items() if k not in store.memo]
    asked, on, at = [reqs[i] for i in todo], [views[i] for i in todo], [keys[i] for i in todo]
    stacks = _pearson_places(asked, on, at, digest)  # (their places appended)
    fast = moments.evaluate(asked, [v.row_items() for v in on], store, stacks, digest)
    for key, v in zip(at[len(todo) :], fast[len(todo) :], strict=True):
        store.memo[key] = v  # (the places of a pooled Pearson)
    ranks: dict[tuple[str, ...], _RankGroup] = {}  # Spearman by (x, rows): one pass per x
    for i, v in zip(todo, fast, strict=False):
        n, x, y = reqs[i]
        if v is None and n == "spearman":
            _rank_group(ranks, keys[i], x, y, views[i], digest)
        elif v is None and n == "kendall":
            v = kendall_resamples(x, y, views[i])
        elif v is None:
            v = map_chunks(lambda Wb, n=n, x=x, y=y: _weighted(n, x, y, Wb), views[i])
        if v is not None:
            store.memo[keys[i]] = v
    for g in ranks.values():
        store.memo.update(g.values())
    return [store.memo[k].copy() for k in keys]


@dataclass
class _RankGroup:
    """The Spearman requests on one x over the same rows, for one pass (:func:`_wspearman`):
    each distinct y once, and the stacked y's (:func:`_unstack`) by their places among the y's
    and the memo key of the request each answers. A place's y is known by its digest until
    the group is evaluated, then taken from the stacked y (not every cell's places at once:
    16 MB a cell at a million pairs)."""

    x: np.ndarray
    view: Resamples
    digest: Digests
    ys: list[np.ndarray | tuple[np.ndarray, int, int]] = field(default_factory=list)
    y_digests: list[str] = field(default_factory=list)
    stacks: list[list[int]] = field(default_factory=list)
    stack_keys: list[tuple[str, ...]] = field(default_factory=list)
    _at: dict[str, int] = field(default_factory=dict)

    def y(self, y: np.ndarray) -> int:
        """The index of ``y`` among the group's y's (added where it is new)."""
        return self._add(self.digest(y), y)

    def place(self, y: np.ndarray, k: int, j: int) -> int:
        """:meth:`y` of place ``j`` of the runs of ``k`` rows of the stacked ``y``."""
        return self._add(array_digest(_place(y, k, j)), (y, k, j))

    def _add(self, key: str, y: np.ndarray | tuple[np.ndarray, int, int]) -> int:
        if key not in self._at:
            self._at[key] = len(self.ys)
            self.ys.append(y)
            self.y_digests.append(key)
        return self._at[key]

    def values(self) -> dict[tuple[str, ...], np.ndarray]:
        """ρ of every resample from one pass, by memo key: each stacked request's, and each
        y's on the group's x and rows (a stacked y's places too: the metric against each
        annotator alone, asked for next, is then known)."""
        ys = [_place(*y) if isinstance(y, tuple) else y for y in self.ys]
        values = _wspearman(_RankPlan(self.x, ys, self.stacks), self.view)
        del ys
        name, dx, rows = self.view.memo_key("spearman", self.x, digest=self.digest)
        keys = [(name, dx, dy, rows) for dy in self.y_digests]
        out = dict(zip(keys, values, strict=False))
        out.update(zip(self.stack_keys, values[len(self.ys) :], strict=True))
        return out


def _place(y: np.ndarray, k: int, j: int) -> np.ndarray:
    """Place ``j`` of each run of ``k`` rows of ``y``."""
    return np.ascontiguousarray(y.reshape(-1, k)[:, j])


def _rank_group(
    groups: dict[tuple[str, ...], _RankGroup],
    key: tuple[str, ...],
    x: np.ndarray,
    y: np.ndarray,
    view: Resamples,
    digest: Digests,
) -> None:
    """Put the Spearman request of memo key ``key`` into its group of ``groups`` (by the
    digests of x and rows): a stacked request into the group of its x and rows once
    (:func:`_unstack`)."""
    unstacked = _unstack(x, y, view)
    if unstacked is not None:
        x, k, view = unstacked
    key_x = view.memo_key("spearman", x, digest=digest)[1:]
    g = groups.setdefault(key_x, _RankGroup(x, view, digest))
    if unstacked is None:
        g.y(y)
    else:
        g.stacks.append([g.place(y, k, j) for j in range(k)])
        g.stack_keys.append(key)


def _unstack(
    x: np.ndarray, y: np.ndarray, view: Resamples
) -> tuple[np.ndarray, int, Resamples] | None:
    """A request whose rows come in runs of ``k >= 2`` rows of one item with one x (:func:`_runs`)
    as x and the items once per run and ``k`` (the y of each place in the runs: :class:`_Stack`);
    None for any other, or where the places' y's would not share one joint table (more than
    :data:`MAX_Y_GROUPS` values each, :data:`MAX_JOINT_CELLS` together)."""
    runs = _runs(x, view)
    if runs is None:
        return None
    k = runs[1]
    sizes = [np.unique(y.reshape(-1, k)[:, j]).size for j in range(k)]
    if max(sizes) > MAX_Y_GROUPS or math.prod(sizes) > MAX_JOINT_CELLS:
        return None
    return runs


def _runs(x: np.ndarray, view: Resamples) -> tuple[np.ndarray, int, Resamples] | None:
    """Rows in runs of ``k >= 2`` rows of one item with one x — a cell's pooled rows, an item's
    metric value once per annotator — as x and the items once per run (a view of the same
    resamples), and ``k``; None for any other rows."""
    cols = view.cols
    if cols is None or cols.size < 4:
        return None
    k = int(np.argmax((cols != cols[0]) | (x != x[0])))
    if k < 2 or cols.size % k:
        return None
    c2, x2 = cols.reshape(-1, k), x.reshape(-1, k)
    if not ((c2 == c2[:, :1]).all() and (x2 == x2[:, :1]).all()):
        return None
    base = Resamples(view.store, np.ascontiguousarray(c2[:, 0]), view.chunk_elements)
    return np.ascontiguousarray(x2[:, 0]), k, base


def _pearson_places(
    reqs: list[tuple[str, np.ndarray, np.ndarray]],
    views: list[Resamples],
    keys: list[tuple[str, ...]],
    digest: Digests,
) -> dict[int, list[int]]:
    """The places of each Pearson request on rows in runs (:func:`_runs`: a cell's pooled rows,
    each pair once per annotator), by request: x against each place's y alone, on the items
    once, appended to ``reqs`` (with their views and memo keys) where not asked already. The
    pooled Pearson is read from its places' sums (:func:`~metajudge.engine.moments.evaluate`'s
    ``stacks``), and each place's value, asked for next (a metric against each annotator,
    matched to the inter-human reference), is then known."""
    stacks: dict[int, list[int]] = {}
    at = {key: i for i, key in enumerate(keys)}
    places: dict[tuple[int, int, int], np.ndarray] = {}  # (the same y: the same place arrays)
    bases: dict[tuple[int, int], Resamples] = {}  # (the same rows: the same view of the items)
    for i in range(len(reqs)):
        name, x, y = reqs[i]
        runs = _runs(x, views[i]) if name == "pearson" else None
        if runs is None:
            continue
        x0, k, base = runs
        base = bases.setdefault((id(views[i].cols), k), base)
        stacks[i] = []
        for j in range(k):
            yj = places.setdefault((id(y), k, j), _place(y, k, j))
            key = base.memo_key(name, x0, yj, digest=digest)
            if key not in at:
                at[key] = len(reqs)
                reqs.append((name, x0, yj))
                views.append(base)
                keys.append(key)
            stacks[i].append(at[key])
    return stacks


def _request(name: str, x: Any, y: Any) -> tuple[str, np.ndarray, np.ndarray]:
    """A request's rows as arrays: floats, but an accuracy's rows as given (one-byte credit
    and scored flags, :func:`metajudge.stats.accuracy_rows`: a float copy of each would be 8
    bytes a row, held through the pass)."""
    if name == "accuracy":
        return name, np.asarray(x), np.asarray(y)
    return name, np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def _weighted(name: str, x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    if name == "pearson":
        return _wpearson(x, y, W)
    if name == "spearman":
        return _wspearman(_RankPlan(x, [y]), W)[0]
    if name == "kendall":
        return weighted_kendall(x, y, W)
    if name in ("accuracy", "mean"):  # a mean: a block at a time, not in the moments pass
        return _wacc(x, y, W)
    raise ValueError(f"unknown statistic {name!r} (expected one of {', '.join(ENGINE_STATISTICS)})")
