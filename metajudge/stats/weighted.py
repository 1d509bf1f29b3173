"""Statistics of weighted resamples: the bootstrap evaluated as matrix products.

A bootstrap resample of items is represented by its *count vector* ``w`` (how many times each
row appears in the resample). Pearson, Spearman (average ranks of the resampled data), Kendall
τ_b and accuracies of the resampled data are exact functions of ``w``, so all ``B`` resamples
are evaluated with matrix products over a ``(B, n)`` weight matrix — no Python loop per
resample — except Spearman's ρ, whose average ranks come from one sort of each variable and
then one cumulative sum per resample, over cache-sized blocks of resamples (O(n) each); a y
with few values (labels) adds one ``bincount`` of its groups, and several y's against the same
x (a metric against each annotator) share one pass.
:func:`metajudge.stats.bootstrap.bootstrap_ci_reference` is the slow, obvious loop used to
check it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from metajudge.stats import moments
from metajudge.stats.correlation import (
    STATISTICS,
    accuracy_from_sums,
    accuracy_rows,
    pearson_from_moments,
)
from metajudge.stats.resample import Resamples, map_blocks, map_chunks
from metajudge.stats.weighted_kendall import kendall_resamples, weighted_kendall


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


#: elements of the block a Spearman resample pass works on (whole resamples; at least one)
RANK_BLOCK_ELEMENTS = 1 << 17
#: most distinct values of a y whose per-resample group sums are taken by bincount (no gather)
MAX_Y_GROUPS = 64
#: largest total weight N of a resample whose sums :meth:`_RankPlan.rho` takes exactly, in
#: int64 on doubled ranks: Σ w·R² ≤ (N³ − N)/3 < 2⁶³ (ties only lower it; a cross sum is bounded
#: by the same, Cauchy–Schwarz), and a bincount's float per-group Σ w·R ≤ N² < 2⁵³. Heavier
#: resamples (or weights that are not whole counts) take the same sums in floats, rounded.
EXACT_WEIGHT = 1 << 21
#: most joint cells of several few-valued y's summed by one bincount
MAX_JOINT_CELLS = 4096


class _YSide:
    """One y of a :class:`_RankPlan`: its groups of equal values, in increasing order.

    ``perm``/``starts``/``gid``: y order, the starts of its groups there, the group of each row
    (rows in x order); ``size``: how many groups.
    """

    def __init__(self, ys: np.ndarray) -> None:
        uniq, inv = np.unique(ys, return_inverse=True)
        self.gid = inv.ravel()
        self.size = int(uniq.size)
        self._ys = ys

    @functools.cached_property
    def perm(self) -> np.ndarray:
        return np.argsort(self._ys, kind="mergesort")

    @functools.cached_property
    def starts(self) -> np.ndarray | None:
        if self.size == self._ys.size:
            return None
        return np.flatnonzero(np.r_[1, np.diff(self.gid[self.perm])])


def _joints(sides: Sequence[_YSide]) -> list[tuple[np.ndarray, tuple[int, ...], list[int]]]:
    """The y's with at most :data:`MAX_Y_GROUPS` values, in runs whose joint cells (every
    combination of their groups) number at most :data:`MAX_JOINT_CELLS`: per run the joint
    cell of each row, the run's group counts and which y's it holds."""
    out: list[tuple[np.ndarray, tuple[int, ...], list[int]]] = []
    for k, side in enumerate(sides):
        if side.size > MAX_Y_GROUPS:
            continue
        if out and math.prod(out[-1][1]) * side.size <= MAX_JOINT_CELLS:
            cells, dims, members = out[-1]
            out[-1] = (cells * side.size + side.gid, (*dims, side.size), [*members, k])
        else:
            out.append((side.gid.astype(np.intp), (side.size,), [k]))
    return out


class _RankPlan:
    """What Spearman's ρ of weighted resamples needs, from one sort of each variable.

    Rows are put in x order once; a resample's weights in that order give x's average ranks by
    one cumulative sum (over x's groups of equal values, :func:`_group_ranks`), held doubled and
    centred, ``R = 2·rank − (N + 1)``: integers, so with whole counts every sum of ρ is an exact
    int64 while the resample's total weight N is at most :data:`EXACT_WEIGHT` (the same value in
    any summation order or blocking). Several y's on the same x and rows (a metric against each
    annotator) share that work. A y with few distinct values (labels) needs per resample only
    its groups' total weights and their sums of weight × x rank: both by one ``bincount`` over
    the joint cells of such y's (two annotators' labels in −2..2: 25 cells); other y's gather
    the weights into y order. Every resample is O(n): no sort per resample or per block.
    """

    def __init__(self, x: np.ndarray, ys: Sequence[np.ndarray]) -> None:
        self.order = np.argsort(x, kind="mergesort")
        self.x_starts, self.x_sizes = _groups(x[self.order])
        self.ys = [_YSide(y[self.order]) for y in ys]
        self.joints = _joints(self.ys)

    def rho(
        self, Wb: np.ndarray, *, integer: bool = True, totals: Sequence[np.ndarray | None] = ()
    ) -> list[np.ndarray]:
        """ρ of each row of ``Wb`` (weights of the rows in x order, row-major) for every y.
        ``integer``: the weights are whole counts (the exact int64 sums need it);
        ``totals``: per joint of :attr:`joints`, these resamples' total weight per cell when
        known (:func:`_joint_totals`)."""
        N = Wb.sum(axis=1, dtype=np.int64 if Wb.dtype.kind in "ui" else None)
        exact = integer and N.max(initial=0) <= EXACT_WEIGHT
        Ws = Wb.astype(np.int64 if exact else np.float64)
        Nd = N.astype(Ws.dtype)[:, None]
        Wx, Rx = _group_ranks(Ws, self.x_starts, Nd)
        wrx = Wx * Rx
        sx, sxx = wrx.sum(axis=1), _rowdot(wrx, Rx)
        wr_rows = wrx if self.x_sizes is None else Ws * np.repeat(Rx, self.x_sizes, axis=1)
        grouped = self._grouped(Ws, wr_rows, totals) if exact else {}
        out = []
        for k, side in enumerate(self.ys):
            if k in grouped:
                Wy, S = grouped[k]
                Ry = 2 * np.cumsum(Wy, axis=1) - Wy - Nd
                sxy = _rowdot(S, Ry)
            else:
                Wy, Ry = _group_ranks(Ws[:, side.perm], side.starts, Nd)
                sxy = _rowdot(wr_rows, Ry[:, side.gid])
            wry = Wy * Ry
            sums = (sx / 2, wry.sum(axis=1) / 2, sxx / 4, _rowdot(wry, Ry) / 4, sxy / 4)
            out.append(pearson_from_moments(N.astype(float), *sums))  # (ranks: R / 2)
        return out

    def _grouped(
        self, Ws: np.ndarray, wr: np.ndarray, totals: Sequence[np.ndarray | None]
    ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Per few-valued y: each resample's total weight and Σ weight × x rank per y group."""
        out = {}
        for j, (cells, dims, members) in enumerate(self.joints):
            c = math.prod(dims)
            tw = totals[j] if j < len(totals) else None
            if tw is None:
                tw = _bincount_rows(cells, Ws, c)
            ts = _bincount_rows(cells, wr, c)
            # (whole numbers below 2⁵³, exact in float: as int64, the same values)
            tw = tw.astype(np.int64).reshape(-1, *dims)
            ts = ts.astype(np.int64).reshape(-1, *dims)
            for pos, k in enumerate(members):
                other = tuple(a for a in range(1, len(dims) + 1) if a != pos + 1)
                out[k] = (tw.sum(axis=other), ts.sum(axis=other))
        return out


def _bincount_rows(cells: np.ndarray, V: np.ndarray, c: int) -> np.ndarray:
    """``(rows, c)``: per row of ``V``, the sums of its values by cell (one ``bincount``)."""
    R = V.shape[0]
    if R == 1:
        return np.bincount(cells, weights=V[0], minlength=c)[None, :]
    flat = (cells[None, :] + (c * np.arange(R))[:, None]).ravel()
    return np.bincount(flat, weights=V.ravel(), minlength=R * c).reshape(R, c)


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
    Ws: np.ndarray, starts: np.ndarray | None, N: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per group of equal values (rows sorted by value): its total weight ``c`` and its doubled,
    centred average rank in the expanded data, ``2·(below + (c + 1)/2) − (N + 1) =
    2·(below + c) − c − N`` (``N``: each row's total weight; ``Ws``'s dtype throughout)."""
    Wg = Ws if starts is None else np.add.reduceat(Ws, starts, axis=1)
    R = np.cumsum(Wg, axis=1)
    R *= 2
    R -= Wg
    R -= N
    return Wg, R


def _wspearman(plan: _RankPlan, W: np.ndarray | Resamples) -> list[np.ndarray]:
    """ρ of every resample (rows of ``W``) for each y of ``plan``, a block of resamples at a
    time (each resample's value depends on its own row alone: the same bits whatever the
    blocking; the blocks of lazy resamples shared among threads,
    :func:`~metajudge.stats.resample.map_blocks`)."""
    if isinstance(W, Resamples):
        view = W[:, plan.order]
        totals = [_joint_totals(view, cells, math.prod(dims)) for cells, dims, _ in plan.joints]
        done: dict[int, list[np.ndarray]] = {}

        def one(b0: int, b: np.ndarray) -> None:
            done[b0] = plan.rho(
                b, totals=[t if t is None else t[b0 : b0 + b.shape[0]] for t in totals]
            )

        map_blocks(one, view.count_chunks(RANK_BLOCK_ELEMENTS))
        parts = [done[b0] for b0 in sorted(done)]
    else:
        integer = bool(np.all(W >= 0) and np.array_equal(W, np.floor(W)))
        rows = max(1, RANK_BLOCK_ELEMENTS // max(W.shape[1], 1))
        parts = [
            plan.rho(np.take(W[b0 : b0 + rows], plan.order, axis=1), integer=integer)
            for b0 in range(0, W.shape[0], rows)
        ]
    if not parts:
        return [np.empty(0) for _ in plan.ys]
    return [np.concatenate([p[k] for p in parts]) for k in range(len(plan.ys))]


def _joint_totals(view: Resamples, cells: np.ndarray, c: int) -> np.ndarray | None:
    """``(B, c)``: each resample's total weight in each joint y cell (``cells``: the cell of
    each row of ``view``), from one pass of per-item sums (exact integers,
    :func:`~metajudge.stats.moments.resample_sums`), remembered with the resamples: the same
    rows and y's under another x (every metric against the same annotators) find them
    computed. None when the per-item matrix would exceed :data:`moments.MAX_ITEM_ELEMENTS`."""
    n_items = view.store.n_items
    if n_items * c > moments.MAX_ITEM_ELEMENTS:
        return None
    flat = np.sort(view.row_items() * c + cells)  # (item, cell) of every row: what M holds
    key = view.content_key("joint y totals", flat)
    if key not in view.store.memo:
        M = np.bincount(flat, minlength=n_items * c).reshape(n_items, c).astype(float)
        view.store.memo[key] = moments.resample_sums(view.store, M)
    return view.store.memo[key]


def _wacc(name: str, x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The accuracy ``name`` of each weighted resample: the weighted sums of
    :func:`~metajudge.stats.correlation.accuracy_rows` (the one definition)."""
    credit, kept = accuracy_rows(name, human=y, judge=x)
    den = W.sum(axis=1) if kept.all() else _mv(W, kept)  # (all kept: Σw, as always)
    return accuracy_from_sums(_mv(W, credit), den)


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
    ranks: dict[tuple[str, str], list[int]] = {}  # Spearman by (x, rows): one pass per x
    for i, v in zip(todo, fast, strict=True):
        n, x, y = reqs[i]
        if v is None and n == "spearman":
            ranks.setdefault((keys[i][1], keys[i][3]), []).append(i)
        elif v is None and n == "kendall":
            v = kendall_resamples(x, y, views[i])
        elif v is None:
            v = map_chunks(lambda Wb, n=n, x=x, y=y: _weighted(n, x, y, Wb), views[i])
        if v is not None:
            store.memo[keys[i]] = v
    for idx in ranks.values():
        plan = _RankPlan(reqs[idx[0]][1], [reqs[i][2] for i in idx])
        for i, v in zip(idx, _wspearman(plan, views[idx[0]]), strict=True):
            store.memo[keys[i]] = v
    return [store.memo[k].copy() for k in keys]


def _weighted(name: str, x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    if name == "pearson":
        return _wpearson(x, y, W)
    if name == "spearman":
        return _wspearman(_RankPlan(x, [y]), W)[0]
    if name == "kendall":
        return weighted_kendall(x, y, W)
    if name in ("acc_ties", "acc_no_ties"):
        return _wacc(name, x, y, W)
    raise ValueError(f"unknown statistic {name!r} (expected one of {', '.join(STATISTICS)})")
