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


def test_shared_columns_summed_once_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    n_items = 200
    items = np.repeat(np.arange(n_items), 2)
    y = np.clip(np.rint(rng.normal(size=items.size)), -2, 2)
    xs = [rng.normal(size=items.size) for _ in range(3)]
    widths: list[int] = []
    real = moments.resample_sums

    def spy(store: object, M: np.ndarray, tables: tuple = ()) -> np.ndarray:
        widths.append(M.shape[1])
        return real(store, M, tables)

    monkeypatch.setattr(moments, "resample_sums", spy)
    R = Resamples.draw(n_items, 50, np.random.default_rng(1))
    together = weighted_statistics([("pearson", x, y) for x in xs], R[:, items])
    # 6 columns per Pearson: 1, x, y, x², y², xy; shared: 1, y, y² -> 3 + 3 per x
    assert widths == [3 + 3 * len(xs)]
    for x, v in zip(xs, together, strict=True):
        alone = weighted_statistics(
            [("pearson", x, y)], Resamples.draw(n_items, 50, np.random.default_rng(1))[:, items]
        )[0]
        np.testing.assert_allclose(v, alone, rtol=0, atol=1e-14)
    assert widths[1:] == [6] * len(xs)


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
    widths: list[int] = []
    real = moments.resample_sums

    def spy(store: object, M: np.ndarray, tables: tuple = ()) -> np.ndarray:
        widths.append(len(tables))
        return real(store, M, tables)

    monkeypatch.setattr(moments, "resample_sums", spy)
    R = Resamples.draw(n_items, B, np.random.default_rng(3))
    reqs = [("spearman", a, b), ("spearman", b.copy(), a.copy()), ("kendall", b, a)]
    got = weighted_statistics([*reqs, ("spearman", a, c)], R[:, items])
    assert widths == [2]  # (a, b) and (a, c): (b, a) read from (a, b)
    for (name, x, y), value in zip(reqs[1:], got[1:3], strict=True):
        alone = weighted_statistics([(name, x, y)], R[:, items])[0]
        assert np.array_equal(value, alone)
    assert np.array_equal(got[3], weighted_statistics([("spearman", a, c)], R[:, items])[0])
