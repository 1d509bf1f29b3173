"""One pass of per-item sums (engine/moments.py): a column shared by several requests (the count
column of every Pearson, the y columns of metrics against the same labels) is summed once, and
every value is the one each request gets alone, to rounding: a BLAS product's summation order
may depend on how many columns it has (OpenBLAS's AVX-512 kernels: 1e-16 apart)."""

from __future__ import annotations

import numpy as np
import pytest

from metajudge.engine import moments
from metajudge.engine.resample import Resamples
from metajudge.engine.weighted import weighted_statistics


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """``(columns, contingency tables)`` of every pass of per-item sums made from now on."""
    passes: list[tuple[int, int]] = []
    real = moments.resample_sums

    def spy(store: object, M: np.ndarray, tables: tuple = ()) -> np.ndarray:
        passes.append((M.shape[1], len(tables)))
        return real(store, M, tables)

    monkeypatch.setattr(moments, "resample_sums", spy)
    return passes


def test_shared_columns_summed_once_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    n_items = 200
    items = np.repeat(np.arange(n_items), 2)
    y = np.clip(np.rint(rng.normal(size=items.size)), -2, 2)
    xs = [rng.normal(size=items.size) for _ in range(3)]
    widths = _passes(monkeypatch)
    R = Resamples.draw(n_items, 50, np.random.default_rng(1))
    together = weighted_statistics([("pearson", x, y) for x in xs], R[:, items])
    # 6 columns per Pearson: 1, x, y, x², y², xy; shared: 1, y, y² -> 3 + 3 per x
    assert [w for w, _ in widths] == [3 + 3 * len(xs)]
    for x, v in zip(xs, together, strict=True):
        alone = weighted_statistics(
            [("pearson", x, y)], Resamples.draw(n_items, 50, np.random.default_rng(1))[:, items]
        )[0]
        np.testing.assert_allclose(v, alone, rtol=0, atol=1e-14)
    assert [w for w, _ in widths[1:]] == [6] * len(xs)


@pytest.mark.parametrize("tile", [5, 1 << 16])
@pytest.mark.parametrize("cache", [0, 1 << 30])
def test_tables_grouped_by_cell_are_the_weighted_tables(
    monkeypatch: pytest.MonkeyPatch, tile: int, cache: int
) -> None:
    """A contingency table's resamples summed cell by cell from its rows' items (tiles of 5
    rows: runs of a cell cut by tiles; the packed cache and redrawn counts) are exactly the
    tables of the dense count matrix, so Spearman's and Kendall's values are the same bits;
    a cell without rows stays 0; Pearson in the same pass reads its columns beside them."""
    monkeypatch.setattr(moments, "TABLE_TILE_ROWS", tile)
    rng = np.random.default_rng(4)
    n_items, B = 301, 40
    items = np.repeat(np.arange(n_items), 3)[:-1]  # 3 rows an item, the last 2
    x = rng.integers(-2, 3, items.size).astype(float)
    y = np.clip(x + rng.integers(-1, 2, items.size), -2, 1)
    y[x == 2] = -2  # a cell (2, -1) without rows
    R = Resamples.draw(n_items, B, np.random.default_rng(6), cache_bytes=cache)
    reqs = [("spearman", x, y), ("kendall", x, y), ("pearson", x, y)]
    got = weighted_statistics(reqs, R[:, items])
    dense = Resamples.draw(n_items, B, np.random.default_rng(6)).dense()[:, items]
    ux, gx = np.unique(x, return_inverse=True)
    uy, gy = np.unique(y, return_inverse=True)
    T = np.zeros((B, ux.size * uy.size))
    for cell in range(T.shape[1]):
        T[:, cell] = dense[:, gx * uy.size + gy == cell].sum(axis=1)
    T = T.reshape(B, ux.size, uy.size)
    assert (T == 0).all(axis=0).any()  # the empty cell
    assert np.array_equal(got[0], moments.spearman_from_table(T))
    assert np.array_equal(got[1], moments.kendall_from_table(T))
    alone = weighted_statistics([reqs[2]], R[:, items])[0]
    np.testing.assert_allclose(got[2], alone, rtol=0, atol=1e-14)


def test_a_turned_table_is_read_from_the_table_it_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two annotators' inter-human reference asks for the table of (x, y) and of (y, x) on the
    same rows: the second is the first turned, read from its sums (one table gathered, not two),
    and its Spearman and Kendall are the same bits as its own table's; (x, y') on other labels
    is a table of its own."""
    rng = np.random.default_rng(8)
    n_items, B = 250, 30
    items = np.repeat(np.arange(n_items), 2)
    a = rng.integers(-2, 3, items.size).astype(float)
    b = np.clip(a + rng.integers(-1, 2, items.size), -2, 1)  # 5 values against 4
    c = rng.integers(0, 3, items.size).astype(float)
    passes = _passes(monkeypatch)
    reqs = [("spearman", a, b), ("spearman", b.copy(), a.copy()), ("kendall", b, a)]
    for joint, tables in ((0, 2), (moments.MAX_SHARED_TABLE_CELLS, 1)):
        monkeypatch.setattr(moments, "MAX_SHARED_TABLE_CELLS", joint)  # 0: no joint table
        R = Resamples.draw(n_items, B, np.random.default_rng(3))
        passes.clear()
        got = weighted_statistics([*reqs, ("spearman", a, c)], R[:, items])
        # (a, b) and (a, c): (b, a) read from (a, b); or all three from one joint table
        assert [t for _, t in passes] == [tables]
        for (name, x, y), value in zip(reqs[1:], got[1:3], strict=True):
            alone = weighted_statistics([(name, x, y)], R[:, items])[0]
            assert np.array_equal(value, alone)
        assert np.array_equal(got[3], weighted_statistics([("spearman", a, c)], R[:, items])[0])


def test_an_inter_human_reference_reads_one_joint_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three annotators' comparisons (each against the others' mean) on the same rows: their
    Pearson, Spearman and accuracies come from one joint table, gathered once with no per-item
    columns; each value is the one the request gets alone (Pearson from its columns, to
    rounding; the rest the same bits)."""
    from metajudge import stats as st

    rng = np.random.default_rng(5)
    n_items = 300
    items = np.repeat(np.arange(n_items), 2)
    L = np.clip(np.rint(rng.normal(size=(items.size, 3)) + rng.normal(size=(items.size, 1))), -2, 2)
    comps, _ = st.leave_one_out(L)
    reqs = []
    for c in comps:
        reqs += [("pearson", c.ref, c.single), ("spearman", c.ref, c.single)]
        reqs += [("acc_ties", st.tie_decisions(c.ref), c.single)]
        reqs += [("acc_no_ties", st.tie_decisions(c.ref), c.single)]
    calls = _passes(monkeypatch)
    got = st.correlate(reqs, Resamples.draw(n_items, 40, np.random.default_rng(2))[:, items])
    assert calls == [(0, 1)]
    for r, value in zip(reqs, got, strict=True):
        alone = st.correlate([r], Resamples.draw(n_items, 40, np.random.default_rng(2))[:, items])
        if r[0] == "pearson":
            assert calls[-1] == (6, 0)  # alone: from its columns
            np.testing.assert_allclose(value, alone[0], rtol=0, atol=1e-14)
        else:
            assert np.array_equal(value, alone[0], equal_nan=True)


def test_a_pooled_pearson_is_read_from_its_places(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cell's pooled rows (each item's x once per annotator): its Pearson is read from the
    sums of each annotator's place (x against that annotator alone, on the items once), to
    rounding the value of the same rows out of runs (its own columns); each place's value is
    then known (no pass), the one it gets alone to rounding."""
    rng = np.random.default_rng(11)
    n_items, k = 250, 3
    x = rng.normal(size=n_items) + 5.0
    L = np.clip(np.rint(rng.normal(size=(n_items, k)) + x[:, None] - 5), -2, 2)
    items = np.repeat(np.arange(n_items), k)
    xs, ys = np.repeat(x, k), L.ravel()
    perm = rng.permutation(items.size)  # the same rows, not in runs

    def fresh() -> Resamples:
        return Resamples.draw(n_items, 40, np.random.default_rng(4))

    R = fresh()
    pooled = weighted_statistics([("pearson", xs, ys)], R[:, items])[0]
    apart = weighted_statistics([("pearson", xs[perm], ys[perm])], fresh()[:, items[perm]])[0]
    np.testing.assert_allclose(pooled, apart, rtol=0, atol=1e-14)
    calls = _passes(monkeypatch)
    for j in range(k):
        known = weighted_statistics([("pearson", x, L[:, j].copy())], R[:, np.arange(n_items)])
        assert calls == []
        alone = weighted_statistics(
            [("pearson", x, L[:, j].copy())], fresh()[:, np.arange(n_items)]
        )
        np.testing.assert_allclose(known[0], alone[0], rtol=0, atol=1e-14)
        calls.clear()


def test_the_places_y_part_is_summed_once_for_every_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several metrics' pooled rows against the same three annotators, 12 columns a pass: the
    annotators' part (the count, y and y² of each: 7 columns) is summed once, each metric's part
    (x, x², x·y of each annotator: 5) beside it; the values are each metric's alone."""
    rng = np.random.default_rng(2)
    n_items, k = 200, 3
    L = np.clip(np.rint(rng.normal(size=(n_items, k))), -2, 2)
    xs = [rng.normal(size=n_items) for _ in range(4)]
    items = np.repeat(np.arange(n_items), k)
    ys = L.ravel()
    widths = _passes(monkeypatch)
    monkeypatch.setattr(moments, "PASS_ITEM_ELEMENTS", 12 * n_items)
    R = Resamples.draw(n_items, 30, np.random.default_rng(6))
    view = R[:, items]
    got = weighted_statistics([("pearson", np.repeat(x, k), ys) for x in xs], view)
    assert [w for w, _ in widths] == [12, 10, 5]
    for x, value in zip(xs, got, strict=True):
        R2 = Resamples.draw(n_items, 30, np.random.default_rng(6))
        alone = weighted_statistics([("pearson", np.repeat(x, k), ys)], R2[:, items])[0]
        np.testing.assert_allclose(value, alone, rtol=0, atol=1e-14)
