"""Bootstrap statistics from per-item sums: one pass over the resamples for many statistics.

All rows of an item share that item's resample count (the item bootstrap, Efron 1979), so a
weighted sum over rows, Σ_i W[b, item(i)]·v_i, equals Σ_j W[b, j]·(Σ_{i in item j} v_i): the rows
are summed per item once (``np.bincount``) and every resample's sums are one product of the
``(B, items)`` count matrix with an ``(items, k)`` matrix of per-item sums. Pearson's r needs
the sums of 1, x, y, x², y² and xy; accuracies the sums of 1 and of the correct decisions (or
of the rows kept); when both variables take few distinct values (human labels on a 5-point
scale, tie decisions) the weighted contingency table of their values, from which Spearman's ρ
(average ranks of the expanded data) and Kendall's τ_b follow exactly. Metric columns with many
distinct values need per-resample ranks for ρ and τ: those stay in
:mod:`metajudge.engine.weighted`.

The product runs over fixed tiles of resamples and items (:data:`TILE_ROWS`,
:data:`TILE_ITEMS`) whatever the chunk size or cache setting of the
:class:`~metajudge.engine.resample.Resamples`, so its values are bit-identical across
both; they equal the row-by-row evaluation up to rounding (a different summation order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from metajudge.engine.formulas import accuracy_from_sums, pearson_from_moments
from metajudge.engine.resample import (
    BitRows,
    Digests,
    PackedRows,
    array_digest,
    columns,
    gather,
    map_blocks,
)

#: resamples per product tile (fixed: the values do not depend on the Resamples' chunking)
TILE_ROWS = 64
#: items per product tile: a float tile of 64 × 1024 (512 KB) stays in the core's cache for
#: the product, faster than larger tiles (measured: ``docs/benchmarks.md``); the sums over the
#: tiles then add in another order: values 1e-15 apart from 8192's
TILE_ITEMS = 1024
#: most cells of a contingency table evaluated from per-item sums
MAX_TABLE_CELLS = 64
#: most occupied cells of a joint table: the contingency tables of several requests on the same
#: rows (an inter-human reference's comparisons, each with its Pearson, Spearman and accuracies)
#: read from one gather (:func:`_joint`)
MAX_SHARED_TABLE_CELLS = 1024
#: rows of a contingency table gathered at a time (:meth:`_Table.sums`: 4 MB of one-byte
#: counts a block of 64 resamples)
TABLE_TILE_ROWS = 1 << 16
#: most elements of one pass's matrix of distinct per-item sums (96 MB of float64; a single
#: statistic wider than that gets a pass of its own). At a million items, 12 columns a pass:
#: the cells' 34 columns still take 3 passes, in 36 MB less than at 16; 10 or 8 columns add
#: passes (measured: ``docs/benchmarks.md``)
PASS_ITEM_ELEMENTS = 12_000_000
#: the statistics evaluated here (Spearman and Kendall only from a contingency table)
ITEM_STATISTICS: tuple[str, ...] = ("pearson", "spearman", "kendall", "accuracy")


def kendall_from_table(T: np.ndarray) -> np.ndarray:
    """Kendall τ_b of each weighted contingency table ``T[b, k, g]`` (class k of one variable,
    value g of the other, both in increasing order; entries: total weight of those rows).

    For classes l < k, the pairs between them add Σ_g T[k, g]·(below − above), ``below``
    (``above``) the weight of class l at values under (over) g; with the cumulative sums
    ``C[l, g]`` over the values that is Σ_g T[k, g]·(2·C[l, g] − T[l, g]) − t_k·t_l (t: the
    class totals). Summed over l < k: C − D = Σ_{k,g} T[k, g]·R[k, g] − Σ_{l<k} t_k·t_l with
    ``R[k, g] = Σ_{l<k} (2·C[l, g] − T[l, g])`` (a second cumulative sum, over the classes) and
    Σ_{l<k} t_k·t_l = (N² − Σ t_k²)/2: O(K·G) per table. n0 = N(N − 1)/2, n1 and n2 the pairs
    tied in each variable (Σ c(c − 1)/2 over the margins) — exactly τ_b of the expanded data
    (Kendall 1945). With integer weights every sum is an exact integer (below 2**53), so no
    summation order changes a bit.
    """
    H = np.cumsum(T, axis=2)
    cy = H[:, :, -1].copy()  # the class totals
    H *= 2
    H -= T
    np.cumsum(H, axis=1, out=H)  # R shifted by one class: R[k] = H[k - 1]
    s = np.einsum("bkg,bkg->b", T[:, 1:], H[:, :-1])
    cx = T.sum(axis=1)
    N = cx.sum(axis=1)
    s -= (N * N - (cy * cy).sum(axis=1)) / 2
    n1 = (cx * (cx - 1) / 2).sum(axis=1)
    n2 = (cy * (cy - 1) / 2).sum(axis=1)
    n0 = N * (N - 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt((n0 - n1) * (n0 - n2))
        t = np.where(den > 0, s / den, np.nan)
    return np.clip(t, -1.0, 1.0)


def spearman_from_table(T: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each weighted contingency table ``T[b, i, j]`` (x value i, y value j,
    both increasing): Pearson's r of the average ranks of the expanded data, the ranks of a
    value being ``below + (count + 1)/2`` and centred on their mean (N + 1)/2."""
    cx, cy = T.sum(axis=2), T.sum(axis=1)
    N = cx.sum(axis=1)
    mid = (N + 1.0)[:, None] / 2.0
    rx = np.cumsum(cx, axis=1) - cx + (cx + 1.0) / 2.0 - mid
    ry = np.cumsum(cy, axis=1) - cy + (cy + 1.0) / 2.0 - mid
    sxy = np.einsum("bij,bi,bj->b", T, rx, ry)
    return pearson_from_moments(
        N,
        (cx * rx).sum(axis=1),
        (cy * ry).sum(axis=1),
        (cx * rx * rx).sum(axis=1),
        (cy * ry * ry).sum(axis=1),
        sxy,
    )


def pearson_from_table(T: np.ndarray, xc: np.ndarray, yc: np.ndarray) -> np.ndarray:
    """Pearson's r of each weighted contingency table ``T[b, i, j]`` whose x takes the
    values ``xc[i]`` and y ``yc[j]`` (centred as the columns of :func:`plan` are): the same six
    sums, by class."""
    cx, cy = T.sum(axis=2), T.sum(axis=1)
    sxy = np.einsum("bij,j->bi", T, yc) @ xc
    return pearson_from_moments(
        cx.sum(axis=1), cx @ xc, cy @ yc, cx @ (xc * xc), cy @ (yc * yc), sxy
    )


@dataclass(frozen=True)
class _Plan:
    """One statistic's per-row columns (or contingency cells) and their shape."""

    name: str
    #: the per-row columns summed per item, each made when summed (one row column at a time:
    #: not the six of a Pearson's rows at once, 96 MB on two million rows)
    columns: tuple[Callable[[], np.ndarray], ...] | None = None
    cells: np.ndarray | None = None  # (rows,): the table cell of each row
    shape: tuple[int, int] = (0, 0)  # the table's (values of x, values of y)
    width_: int = 0  # the width, once the columns are summed per item and dropped
    #: a table's values of x and of y (its classes, increasing)
    values: tuple[np.ndarray, np.ndarray] | None = None
    #: the rows' means of x and y, where Pearson is read from the table (:func:`plan`'s
    #: ``table``): its values centred on them, as its columns are
    means: tuple[float, float] | None = None

    @property
    def width(self) -> int:
        if self.columns is not None:
            return len(self.columns)
        return self.width_ or self.shape[0] * self.shape[1]

    def kept(self) -> _Plan:
        """What a pass keeps of the plan to finish its statistic: no per-row arrays."""
        return replace(self, columns=None, cells=None, width_=self.width)

    def items(self, row_items: np.ndarray, n_items: int) -> np.ndarray:
        """``(n_items, width)``: the columns summed per item (a table's cells: :class:`_Table`),
        in column order (each column contiguous)."""
        assert self.columns is not None
        out = np.empty((n_items, self.width), order="F")
        for j, c in enumerate(self.columns):
            out[:, j] = np.bincount(row_items, weights=c(), minlength=n_items)
        return out


@dataclass(frozen=True)
class _Table:
    """A contingency table's rows in the order of their cells: a resample's table is, cell by
    cell, the sum of the counts of its rows' items (integers: exactly the per-item product's
    values), gathered a tile of rows at a time: no ``(items, cells)`` matrix of per-item sums
    (200 MB for a 5 × 5 table at a million items) and one gather a row, not a product a cell."""

    items: np.ndarray  # the rows' items, cell after cell
    starts: np.ndarray  # where each cell's rows begin (cells without rows left out)
    cells: np.ndarray  # the cell of each run of rows
    width: int  # the table's cells

    @classmethod
    def of(cls, p: _Plan, row_items: np.ndarray) -> _Table:
        assert p.cells is not None
        order = np.argsort(p.cells, kind="stable")
        ordered = p.cells[order]
        starts = np.flatnonzero(np.diff(ordered, prepend=-1))
        return cls(row_items[order], starts, ordered[starts], p.width)

    def sums(self, block: np.ndarray | PackedRows) -> np.ndarray:
        """``(rows, width)``: the table of each resample of a block of item counts."""
        out = np.zeros((block.shape[0], self.width))
        n = self.items.size
        for t0 in range(0, n, TABLE_TILE_ROWS):
            t1 = min(n, t0 + TABLE_TILE_ROWS)
            k0 = int(np.searchsorted(self.starts, t0, side="right")) - 1
            k1 = int(np.searchsorted(self.starts, t1, side="left"))
            at = np.maximum(self.starts[k0:k1], t0) - t0  # runs in this tile, from its start
            g = gather(block, self.items[t0:t1])
            # one-byte counts sum in int32 (255 x TABLE_TILE_ROWS at most a run; faster than
            # float64), wider redrawn counts in int64: exact integers either way
            wide = np.int32 if g.dtype == np.uint8 else np.int64
            out[:, self.cells[k0:k1]] += np.add.reduceat(g, at, axis=1, dtype=wide)
        return out


def plan(name: str, x: np.ndarray, y: np.ndarray, *, table: bool = False) -> _Plan | None:
    """How to evaluate ``name`` on rows ``x``, ``y`` from per-item sums; None when it needs
    ranks per resample (Spearman, Kendall with many distinct values). ``table``: Pearson and
    accuracy from the contingency table too where x and y take few (finite) values, else from
    their columns (on rows whose table a rank statistic gathers anyway, :func:`evaluate`)."""
    if name in ("spearman", "kendall") or (table and name in ("pearson", "accuracy")):
        t = _table_plan(name, x, y)
        if t is not None or name in ("spearman", "kendall"):
            return t
    if name == "pearson":
        xc = x - x.mean() if x.size else x
        yc = y - y.mean() if y.size else y
        made = (
            lambda: np.ones(x.size),
            lambda: xc,
            lambda: yc,
            lambda: xc * xc,
            lambda: yc * yc,
            lambda: xc * yc,
        )
        return _Plan(name, made)
    if name == "accuracy":  # x: the rows' credit, y: whether each is scored
        return _Plan(name, (lambda: y, lambda: x))
    return None


def _table_plan(name: str, x: np.ndarray, y: np.ndarray) -> _Plan | None:
    """:func:`plan` of ``name`` on the contingency table of x and y; None where they take too
    many values (or, but for the rank statistics, values that are not finite)."""
    if not x.size or max(_some_values(x), _some_values(y)) > MAX_TABLE_CELLS:
        return None
    # the values hashed, each row's class by a search in the few values (half the time of
    # unique's return_inverse, a sort, on a million rows)
    ux, uy = np.unique(x), np.unique(y)
    if ux.size * uy.size > MAX_TABLE_CELLS:
        return None
    cells = np.searchsorted(ux, x) * uy.size + np.searchsorted(uy, y)
    return _named(_Plan(name, cells=cells, shape=(ux.size, uy.size), values=(ux, uy)), x, y)


def _named(p: _Plan, x: np.ndarray, y: np.ndarray) -> _Plan | None:
    """The table plan ``p`` of x and y for its statistic: Pearson's with the rows' means; None
    for Pearson or an accuracy on values that are not finite."""
    if p.name not in ("pearson", "accuracy"):
        return p
    assert p.values is not None
    if not (np.isfinite(p.values[0]).all() and np.isfinite(p.values[1]).all()):
        return None
    return replace(p, means=(float(x.mean()), float(y.mean()))) if p.name == "pearson" else p


def _some_values(v: np.ndarray) -> int:
    """How many distinct values about 4,096 evenly spaced entries of ``v`` take: at most as
    many as ``v`` takes (a metric column of a million rows is known not to fit a table without
    sorting it whole)."""
    return int(np.unique(v[:: max(1, v.size // 4096)]).size)


def finish(p: _Plan, S: np.ndarray) -> np.ndarray:
    """The statistic of every resample from its resampled column sums ``S`` (B, width), or
    from its contingency table's (Pearson and accuracies too where the plan has ``values``)."""
    if p.name == "sums":  # (the parts of a pooled Pearson, :func:`_stack_parts`)
        return S
    if p.values is None and p.name == "pearson":
        return pearson_from_moments(*S.T)
    if p.values is None and p.name == "accuracy":
        return accuracy_from_sums(S[:, 1], S[:, 0])
    T = S.reshape(S.shape[0], *p.shape)
    if p.name == "pearson":
        (ux, uy), (mx, my) = p.values, p.means  # type: ignore[misc]
        return pearson_from_table(T, ux - mx, uy - my)
    if p.name == "accuracy":  # x: the credit, y: whether scored (sums of whole counts: exact)
        credit, scored = p.values  # type: ignore[misc]
        return accuracy_from_sums(T.sum(axis=2) @ credit, T.sum(axis=1) @ scored)
    return spearman_from_table(T) if p.name == "spearman" else kendall_from_table(T)


def tile_product(block: np.ndarray | PackedRows | BitRows, M: np.ndarray) -> np.ndarray:
    """``block @ M`` for a small-integer ``(rows, items)`` block, summed over fixed tiles of
    :data:`TILE_ITEMS` items (converted to float, or unpacked, a tile at a time). Call it on
    one BLAS thread with blocks of the same number of rows for values that do not depend on
    the blocking."""
    acc = np.zeros((block.shape[0], M.shape[1]))
    for j0 in range(0, block.shape[1], TILE_ITEMS):
        tile = columns(block, j0, j0 + TILE_ITEMS)
        acc += tile.astype(float) @ M[j0 : j0 + TILE_ITEMS]
    return acc


def one_blas_thread() -> Any:
    """A context with BLAS on one thread: the products here are small, and several BLAS
    threads run them many times slower on a busy machine (and their order must not vary)."""
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    return threadpool_limits(limits=1, user_api="blas")


def resample_sums(store: object, M: np.ndarray, tables: Sequence[_Table] = ()) -> np.ndarray:
    """``(B, k)``: each resample's counts (rows of the item count matrix) times ``M``, then
    each table of ``tables`` (:meth:`_Table.sums`), in one pass over the counts.

    ``store``: the :class:`~metajudge.engine.resample.Resamples`' shared store. The
    product runs over fixed tiles (:data:`TILE_ROWS` resamples × :data:`TILE_ITEMS` items) on
    one BLAS thread, so the values do not depend on the chunk size or the cache (they may, by
    rounding, on the BLAS kernel: the machine's and the width of ``M``'s);
    the blocks of resamples are shared among
    :data:`~metajudge.engine.resample.BLOCK_THREADS` threads (each block's product
    is the same on any of them, so the values do not depend on the threads either).
    """
    at = np.cumsum([M.shape[1], *(t.width for t in tables)])
    out = np.empty((store.n_boot, int(at[-1])))  # type: ignore[attr-defined]

    def one(b0: int, counts: np.ndarray | PackedRows) -> None:
        b1 = b0 + counts.shape[0]
        if M.shape[1]:
            out[b0:b1, : at[0]] = tile_product(counts, M)
        for t, j0, j1 in zip(tables, at[:-1], at[1:], strict=True):
            out[b0:b1, j0:j1] = t.sums(counts)

    with one_blas_thread():
        map_blocks(one, store.blocks(TILE_ROWS, packed=True))  # type: ignore[attr-defined]
    return out


def evaluate(
    requests: Sequence[tuple[str, np.ndarray, np.ndarray]],
    row_items: Sequence[np.ndarray],
    store: object,
    stacks: Mapping[int, Sequence[int]] | None = None,
    digest: Digests | None = None,
) -> list[np.ndarray | None]:
    """Each request ``(name, x, y)`` on rows of items ``row_items[i]``, all in as few passes
    over the resamples as :data:`PASS_ITEM_ELEMENTS` allows (counted in distinct per-item
    columns, :class:`_Pass`; a request wider than that alone takes a pass of its own at once,
    the open pass staying open); None where a request needs per-resample ranks (see
    :func:`plan`). For ``accuracy`` x is the rows' credit, y whether each is scored. The per-row columns are
    summed per item at once, and each request's per-item sums are merged into its pass's at
    once; a contingency table's rows are grouped by cell (:class:`_Table`: no per-item
    columns, so it joins the open pass whatever its width). Spearman and Kendall on the same
    rows read one table; several tables on the same rows one joint table
    (:func:`_joint_tables`), in the first pass. ``stacks``: Pearson requests on the pooled rows
    of places, each with the requests of its places (x against each place's y), all read from
    the columns of :func:`_stack_parts` (:func:`_pooled_pearson`). ``digest``: the caller's
    :class:`~metajudge.engine.resample.Digests`."""
    n_items = store.n_items  # type: ignore[attr-defined]
    stacks = stacks or {}
    parts, part_of = _stack_parts(requests, row_items, stacks)
    out: list[np.ndarray | None] = [None] * (len(requests) + len(parts))
    width = max(1, PASS_ITEM_ELEMENTS // max(n_items, 1))
    one = _Pass(width)
    places = {j for js in stacks.values() for j in js}
    made = _joint_tables(requests, row_items, digest or Digests())
    joint = {i: v for i, v in made.items() if i not in places}
    for i, (table, p, to_cells) in joint.items():
        one.add_joint(i, p, table, to_cells)
    tables: dict[tuple[int, int, int], list[int]] = {}  # the requests of each table
    for i, (name, x, y) in enumerate(requests):
        if name in ("spearman", "kendall"):
            tables.setdefault((id(x), id(y), id(row_items[i])), []).append(i)
    shared: set[int] = {*joint, *stacks, *places}  # requests that read others' sums
    work: list[tuple[int, _Plan | None, np.ndarray]] = []  # (request, plan, rows' items)
    for i, (name, x, y) in enumerate(requests):
        p = None if i in shared else plan(name, x, y)
        if p is None or p.cells is None:
            work.append((i, p, row_items[i]))
            continue
        key = (array_digest(x), array_digest(y), array_digest(row_items[i]))
        if not one.add_known(i, p, key):
            one.add_table(i, p, _Table.of(p, row_items[i]), key)
        for j in tables[(id(x), id(y), id(row_items[i]))][1:]:
            one.share(j, _Plan(requests[j][0], shape=p.shape))
            shared.add(j)
    work += [(len(requests) + t, p, rows) for t, (p, rows) in enumerate(parts)]
    for i, p, rows in work:
        if p is None:
            continue
        m = p.items(rows, n_items)
        into = _Pass(width) if m.shape[1] > width else one
        if into is one and not one.fits(m):
            one.finish(store, out)
        into.add(i, _Plan(p.name, shape=p.shape, width_=p.width), m)
        del m  # (its columns are the pass's now)
        if into is not one:
            into.finish(store, out)
    one.finish(store, out)
    for i, js in stacks.items():
        X, Y = (out[len(requests) + t] for t in part_of[i])
        assert X is not None and Y is not None
        sums = [  # each place's six sums, as its own columns give them (:func:`plan`)
            np.stack([Y[:, 0], X[:, 0], Y[:, 1 + 2 * j], X[:, 1], Y[:, 2 + 2 * j], X[:, 2 + j]], 1)
            for j in range(len(js))
        ]
        for j, S in zip(js, sums, strict=True):
            out[j] = pearson_from_moments(*S.T)
        out[i] = _pooled_pearson(sums, [requests[j][2].mean() for j in js])
    return out[: len(requests)]


def _y_columns(n: int, ys: list[tuple[np.ndarray, float]]) -> tuple[Callable[[], np.ndarray], ...]:
    """The y part of :func:`_stack_parts`: the rows' count, then y and y² of each place (y
    centred on ``my``, as :func:`plan`'s columns are), each made when summed."""
    out: list[Callable[[], np.ndarray]] = [partial(np.ones, n)]
    for y, my in ys:
        out += [partial(np.subtract, y, my), partial(_square, y, my)]
    return tuple(out)


def _square(y: np.ndarray, my: float) -> np.ndarray:
    yc = y - my
    return yc * yc


def _x_column(x: np.ndarray, mx: float, y: tuple[np.ndarray, float] | None, k: int) -> np.ndarray:
    """Column ``k`` of the x part of :func:`_stack_parts`: x, x², or x·y (centred)."""
    xc = x - mx
    if k == 0:
        return xc
    if k == 1:
        return xc * xc
    assert y is not None
    return xc * (y[0] - y[1])


def _stack_parts(
    requests: Sequence[tuple[str, np.ndarray, np.ndarray]],
    row_items: Sequence[np.ndarray],
    stacks: Mapping[int, Sequence[int]],
) -> tuple[list[tuple[_Plan, np.ndarray]], dict[int, tuple[int, int]]]:
    """The columns of the pooled Pearsons of :func:`evaluate`'s ``stacks`` and of their places
    (each place x against its y, :func:`plan`'s six columns): per stack, x's part (x, x² and x·y
    of each place), and the places' y part (the rows' count, y and y² of each place), one for
    every stack on the same rows and y's (the metrics against the same annotators; its sums
    kept from pass to pass): 5 columns a metric with three annotators, not 6 a place. Their
    plans (``sums``: the columns' resampled sums) with their rows' items, and by stack the
    parts (x's, y's) it reads."""
    parts: list[tuple[_Plan, np.ndarray]] = []
    part_of: dict[int, tuple[int, int]] = {}
    y_parts: dict[tuple[int, ...], int] = {}
    for i, js in stacks.items():
        x, rows = requests[js[0]][1], row_items[js[0]]
        ys = [(y, float(y.mean())) for y in (requests[j][2] for j in js)]
        key = (id(rows), *(id(y) for y, _ in ys))
        if key not in y_parts:
            y_parts[key] = len(parts)
            parts.append((_Plan("sums", _y_columns(x.size, ys)), rows))
        mx = float(x.mean())
        x_cols = [
            partial(_x_column, x, mx, ys[k - 2] if k > 1 else None, k) for k in range(len(ys) + 2)
        ]
        part_of[i] = (len(parts), y_parts[key])
        parts.append((_Plan("sums", tuple(x_cols)), rows))
    return parts, part_of


def _pooled_pearson(sums: Sequence[np.ndarray], y_means: Sequence[float]) -> np.ndarray:
    """Pearson's r of the pooled rows of several places (x the same in each, against each
    place's y) from each place's six sums (:func:`plan`'s columns: x centred on its mean, each
    y on its own, ``y_means``), the y's moved to a common centre (their means' mean)."""
    centre = float(np.mean(y_means))
    pooled = np.zeros((sums[0].shape[0], 6))
    for S, m in zip(sums, y_means, strict=True):
        n, sx, sy, sxx, syy, sxy = S.T
        d = m - centre
        pooled += np.stack([n, sx, sy + d * n, sxx, syy + 2 * d * sy + d * d * n, sxy + d * sx], 1)
    return pearson_from_moments(*pooled.T)


def _joint_tables(
    requests: Sequence[tuple[str, np.ndarray, np.ndarray]],
    row_items: Sequence[np.ndarray],
    digest: Digests,
) -> dict[int, tuple[_Table, _Plan, np.ndarray]]:
    """The requests read from a joint table, each with that table, its plan and the cell of its
    own table of each joint cell: on rows (the same items) where a rank statistic's
    contingency table is gathered, every request whose x and y take few values (Pearson and
    accuracies too, :func:`plan`'s ``table``), where they make two tables or more with at most
    :data:`MAX_SHARED_TABLE_CELLS` occupied cells together (the comparisons of an inter-human
    reference: each annotator's labels against the others' mean). The table of every
    combination of their cells is gathered once; each request's table is the sums of its
    cells' (whole counts: exactly the table of its own gather)."""
    if not any(name in ("spearman", "kendall") for name, _, _ in requests):
        return {}
    groups: dict[str, list[int]] = {}
    for i, (name, _, _) in enumerate(requests):
        if name in ITEM_STATISTICS:
            groups.setdefault(digest(row_items[i]), []).append(i)
    out: dict[int, tuple[_Table, _Plan, np.ndarray]] = {}
    for members in groups.values():
        tabled = _tabled(requests, members)
        distinct = {id(p.cells): p for _, p in tabled}
        if len(distinct) < 2:
            continue
        made = _joint([p.cells for p in distinct.values()], [p.width for p in distinct.values()])  # type: ignore[misc]
        if made is None:
            continue
        cells, maps = made
        table = _Table.of(
            _Plan("joint", cells=cells, shape=(maps[0].size, 1)), row_items[members[0]]
        )
        to_cells = dict(zip(distinct, maps, strict=True))
        for i, p in tabled:
            out[i] = (table, p, to_cells[id(p.cells)])
    return out


def _tabled(
    requests: Sequence[tuple[str, np.ndarray, np.ndarray]], members: Sequence[int]
) -> list[tuple[int, _Plan]]:
    """The table plans of the requests ``members`` (on the same rows): none unless a rank
    statistic's is a table; then every request's whose x and y take few values (one plan per x
    and y, named for each statistic)."""
    ranked = [i for i in members if requests[i][0] in ("spearman", "kendall")]
    others = [i for i in members if requests[i][0] not in ("spearman", "kendall")]
    base: dict[tuple[int, int], _Plan | None] = {}  # one table plan per x and y
    out: list[tuple[int, _Plan]] = []
    for phase in (ranked, others):
        if phase is not ranked and not out:
            break
        for i in phase:
            name, x, y = requests[i]
            key = (id(x), id(y))
            if key not in base:
                base[key] = plan(name, x, y, table=True)
            b = base[key]
            p = None if b is None or b.cells is None else _named(replace(b, name=name), x, y)
            if p is not None:
                out.append((i, p))
    return out


def _joint(
    cells: Sequence[np.ndarray], sizes: Sequence[int]
) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """The joint cell of each row of several tables' ``cells`` (``sizes`` cells each),
    numbered over the occupied combinations, and per table the cell of each joint cell; None
    where more than :data:`MAX_SHARED_TABLE_CELLS` combinations occur."""
    key = np.zeros(cells[0].size, dtype=np.int64)
    span = 1
    for c, size in zip(cells, sizes, strict=True):
        if span * size >= 1 << 40:  # renumbered over the occupied combinations so far
            found, key = np.unique(key, return_inverse=True)
            span = found.size
            if span > MAX_SHARED_TABLE_CELLS:
                return None
        key = key * size + c
        span *= size
    found, first, joint = np.unique(key, return_index=True, return_inverse=True)
    if found.size > MAX_SHARED_TABLE_CELLS:
        return None
    return joint.ravel(), [c[first] for c in cells]


class _Pass:
    """The requests of one pass over the resamples and their per-item sums, each distinct
    column once (the rows' count column of every Pearson, the y columns of every metric against
    the same labels: equal values, checked whole), at most ``width`` of them but for a single
    request wider than that; and the contingency tables read in the same pass
    (:class:`_Table`). An entry without columns of its own (a table shared with an earlier
    entry) reads that entry's."""

    def __init__(self, width: int) -> None:
        self.width = width
        self._empty()

    def _empty(self) -> None:
        self.columns: list[np.ndarray] = []
        self.tables: list[_Table] = []
        self.entries: list[tuple[int, _Plan, int]] = []  # (request, plan, entry of its columns)
        self.index: dict[int, np.ndarray] = {}  # entry -> its columns among the distinct ones
        self.of_table: dict[int, int] = {}  # entry -> its table
        self.table_keys: dict[tuple[str, ...], int] = {}  # (x, y, rows digests) -> its entry
        self.turned: set[int] = set()  # entries that read their table transposed
        self._seen: dict[tuple[float, bytes], list[int]] = {}
        self._last = -1  # the entry added last with columns of its own
        self.joints: dict[int, int] = {}  # a joint table (by id) -> its table
        self.to_cells: dict[int, np.ndarray] = {}  # entry -> its cell of each joint cell

    @staticmethod
    def _key(c: np.ndarray) -> tuple[float, bytes]:
        return (float(c.sum()), c[:: max(1, c.size // 64)].tobytes())

    def _find(self, c: np.ndarray) -> int | None:
        same = [t for t in self._seen.get(self._key(c), ()) if np.array_equal(c, self.columns[t])]
        return same[0] if same else None

    def fits(self, m: np.ndarray) -> bool:
        """Whether the per-item sums ``m`` (items × width) fit beside the pass's columns."""
        new = sum(self._find(m[:, j]) is None for j in range(m.shape[1]))
        return not self.columns or len(self.columns) + new <= self.width

    def add(self, request: int, p: _Plan, m: np.ndarray) -> None:
        """Request ``request`` (plan ``p``) with its per-item sums ``m``."""
        idx = np.empty(m.shape[1], dtype=np.intp)
        for j in range(m.shape[1]):
            t = self._find(m[:, j])
            if t is None:
                t = len(self.columns)
                self.columns.append(m[:, j].copy())  # (m itself is dropped once added)
                self._seen.setdefault(self._key(self.columns[t]), []).append(t)
            idx[j] = t
        self._last = len(self.entries)
        self.index[self._last] = idx
        self.entries.append((request, p, self._last))

    def add_table(self, request: int, p: _Plan, table: _Table, key: tuple[str, ...]) -> None:
        """Request ``request`` (plan ``p``) on the contingency table ``table`` of the rows
        ``key`` names (the digests of x, y and the rows' items)."""
        self._last = len(self.entries)
        self.of_table[self._last] = len(self.tables)
        self.table_keys[key] = self._last
        self.tables.append(table)
        self.entries.append((request, _Plan(p.name, shape=p.shape), self._last))

    def add_known(self, request: int, p: _Plan, key: tuple[str, ...]) -> bool:
        """Request ``request`` on a table already in the pass, read from its sums, not gathered
        again: the same rows ``key`` names (equal arrays), or their transpose (x and y swapped:
        with two annotators the inter-human reference's 2 vs 1 is 1 vs 2 turned). False when
        the pass has neither."""
        turned = key not in self.table_keys
        src = self.table_keys.get((key[1], key[0], key[2]) if turned else key)
        if src is None:
            return False
        self._last = len(self.entries)
        self.of_table[self._last] = self.of_table[src]
        if turned:  # (a key in table_keys is a table's own, never a turned entry's)
            self.turned.add(self._last)
        self.entries.append((request, _Plan(p.name, shape=p.shape), self._last))
        return True

    def add_joint(self, request: int, p: _Plan, table: _Table, to_cells: np.ndarray) -> None:
        """Request ``request`` (plan ``p``) on the joint table ``table`` (gathered once a pass;
        :func:`_joint_tables`), its own table's cells the sums of the joint cells ``to_cells``
        maps to each."""
        if id(table) not in self.joints:
            self.joints[id(table)] = len(self.tables)
            self.tables.append(table)
        entry = len(self.entries)
        self.of_table[entry] = self.joints[id(table)]
        self.to_cells[entry] = to_cells
        self.entries.append((request, p.kept(), entry))

    def share(self, request: int, p: _Plan) -> None:
        """Request ``request`` (plan ``p``) on the columns of the request added last."""
        self.entries.append((request, p, self._last))

    def finish(self, store: object, out: list[np.ndarray | None]) -> None:
        """One pass over the resamples for the distinct columns and the tables; every entry's
        statistic into ``out``; the pass emptied (each column dropped as it is copied into the
        pass's matrix)."""
        if not self.entries:
            return
        n_items = store.n_items  # type: ignore[attr-defined]
        M = np.empty((n_items, len(self.columns)), order="F")  # (filled a column at a time)
        for t in range(len(self.columns)):
            M[:, t] = self.columns[t]
            self.columns[t] = np.empty(0)  # (dropped: the columns and M are never held whole)
        S = resample_sums(store, M, self.tables)
        del M
        at = np.cumsum([len(self.columns), *(t.width for t in self.tables)])
        for i, p, src in self.entries:
            t = self.of_table.get(src)
            cols = self.index[src] if t is None else slice(at[t], at[t + 1])
            sums = S[:, cols]
            if src in self.to_cells:  # (sums of whole counts: exact in any order)
                one_hot = np.zeros((sums.shape[1], p.width))
                one_hot[np.arange(sums.shape[1]), self.to_cells[src]] = 1.0
                sums = sums @ one_hot
            if src in self.turned:  # (the source table is shape[1] x shape[0])
                a, b = p.shape
                sums = sums.reshape(-1, b, a).transpose(0, 2, 1).reshape(-1, a * b)
            out[i] = finish(p, sums)
        self._empty()


def resampled_row_sums(W: Any, row_items: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``(B, k)``: Σ_rows W[b, item(row)]·V[row, :] — each resample's weighted sums of the
    columns of ``V`` (rows × k), every row weighted by its item's count.

    ``W``: the item count matrix, dense ``(B, n_items)`` or a
    :class:`~metajudge.engine.resample.Resamples` over the items (then a block of
    resamples at a time: memory O(rows)). The rows are summed per item first.
    """
    V = np.asarray(V, dtype=float).reshape(len(row_items), -1)
    n_items = W.shape[1]
    M = np.empty((n_items, V.shape[1]))
    for j in range(V.shape[1]):
        M[:, j] = np.bincount(row_items, weights=V[:, j], minlength=n_items)
    if isinstance(W, np.ndarray):
        return W @ M
    return resample_sums(W.store, M)
