"""Chunked bootstrap resamples (issue 17): bit-identical whatever the chunk size."""

from __future__ import annotations

import numpy as np
import pytest

from metajudge import engine
from metajudge import stats as st
from metajudge.engine.resample import (
    PackedRows,
    Resamples,
    SpilledRows,
    pack_counts,
    unpack_counts,
)
from metajudge.engine.weighted import ENGINE_STATISTICS, weighted_statistic


def _data(n: int = 60, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(-2, 3, n).astype(float)
    x = y + rng.normal(0, 1.5, n)
    groups = np.repeat(np.arange(n // 2), 2)
    return x, y, groups


def test_chunks_bit_identical_whatever_the_chunk_size() -> None:
    """Bit-identical across chunk sizes and cache settings; equal to the dense row-by-row
    evaluation up to rounding (per-item sums add the rows in another order)."""
    n_items, B = 30, 50
    dense = st.bootstrap_weights(n_items, B, np.random.default_rng(7))
    x, y, groups = _data()
    for s in ENGINE_STATISTICS:
        ref = weighted_statistic(s, x, y, dense[:, groups])
        first = None
        for cache in (0, 1 << 30):
            for rows in (1, 7, B):
                R = Resamples.draw(
                    n_items,
                    B,
                    np.random.default_rng(7),
                    cache_bytes=cache,
                    chunk_elements=rows * 60,
                )
                assert np.array_equal(R.dense(), dense)
                got = weighted_statistic(s, x, y, R[:, groups])
                np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12, err_msg=s)
                first = got if first is None else first
                assert np.array_equal(got, first, equal_nan=True), (s, cache, rows)


def test_item_sums_exact_for_few_valued_pairs() -> None:
    """Spearman and Kendall of two few-valued variables from the weighted contingency table
    (per-item sums) equal the rank path on the dense rows."""
    rng = np.random.default_rng(11)
    n_items, B = 40, 30
    groups = np.repeat(np.arange(n_items), 2)
    x = rng.integers(-2, 3, groups.size).astype(float)
    y = np.clip(x + rng.integers(-1, 2, groups.size), -2, 2)
    dense = st.bootstrap_weights(n_items, B, np.random.default_rng(2))
    R = Resamples.draw(n_items, B, np.random.default_rng(2))
    for s in ENGINE_STATISTICS:
        ref = weighted_statistic(s, x, y, dense[:, groups])
        got = weighted_statistic(s, x, y, R[:, groups])
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12, err_msg=s)
    # asked again: the remembered value, not a new pass
    assert len(R.store.memo) == len(ENGINE_STATISTICS)
    weighted_statistic("spearman", x, y, R[:, groups])
    assert len(R.store.memo) == len(ENGINE_STATISTICS)


def test_grouped_mean_and_iteration_match_the_dense_matrix() -> None:
    n_items, B = 30, 40
    dense = st.bootstrap_weights(n_items, B, np.random.default_rng(1))
    R = Resamples.draw(n_items, B, np.random.default_rng(1), chunk_elements=7 * n_items)
    vals = np.random.default_rng(2).normal(size=n_items)
    vals[3] = np.nan
    assert np.array_equal(st.grouped_mean_samples(vals, R), st.grouped_mean_samples(vals, dense))
    sel = np.array([0, 0, 5, 29])
    rows = list(R[:, sel])
    assert len(rows) == B and np.array_equal(np.array(rows), dense[:, sel])
    assert R[:, sel][:, [1, 2]].shape == (B, 2)


def test_consume_leaves_the_generator_where_the_one_call_draw_does() -> None:
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    st.bootstrap_weights(17, 23, a)
    Resamples.draw(17, 23, b, chunk_elements=3 * 17)
    assert a.random() == b.random()


def test_permutation_test_is_unchanged_by_blocks() -> None:
    x, y, groups = _data(80)
    x2 = y + np.random.default_rng(9).normal(0, 2.0, y.size)
    r = st.permutation_test_diff(
        x, x2, y, groups=groups, n_resamples=200, rng=np.random.default_rng(4)
    )
    swap_items = np.random.default_rng(4).random((200, 40)) < 0.5
    swap = swap_items[:, groups]
    a1, a2 = (x - x.mean()) / x.std(), (x2 - x2.mean()) / x2.std()
    X1, X2 = np.where(swap, a2, a1), np.where(swap, a1, a2)
    d = np.array([st.pearson(p, y) - st.pearson(q, y) for p, q in zip(X1, X2, strict=True)])
    p = (1 + (np.abs(d) >= abs(r.diff) - 1e-12).sum()) / 201
    assert r.p_value == pytest.approx(p, abs=1e-12)


@pytest.mark.parametrize("n_items", [1, 2, 31, 1001])
def test_count_cache_packs_two_counts_a_byte(n_items: int) -> None:
    """The cache holds two counts a byte (half of ceil(n/2) columns per resample) and hands out
    the very counts of the one-call draw, odd item counts included, column views too."""
    B = 40
    dense = st.bootstrap_weights(n_items, B, np.random.default_rng(5))
    R = Resamples.draw(n_items, B, np.random.default_rng(5))
    assert np.array_equal(R.dense(), dense)
    packed = bool(dense.max() <= 15)
    assert R.store.packed is packed
    assert R.store.counts.shape == (B, (n_items + 1) // 2 if packed else n_items)
    assert np.array_equal(R[:, np.arange(n_items)[::-1]].dense(), dense[:, ::-1])
    if packed:  # any range of columns unpacked alone, on either side of the middle byte
        for j0 in range(n_items):
            for j1 in range(j0 + 1, min(n_items, j0 + 40) + 1):
                got = unpack_counts(R.store.counts, n_items, j0, j1)
                assert np.array_equal(got, dense[:, j0:j1]), (j0, j1)


@pytest.mark.parametrize("n_items", [31, 1001])
def test_a_count_cache_over_the_spill_size_is_read_from_a_file(n_items: int) -> None:
    """Past ``spill_bytes`` the cache is a temporary file (:class:`SpilledRows`): the same
    counts, block by block and in column views, and the same statistics as in memory."""
    B = 150
    dense = st.bootstrap_weights(n_items, B, np.random.default_rng(5))
    R = Resamples.draw(n_items, B, np.random.default_rng(5))
    R.store.spill_bytes = 100
    assert np.array_equal(R.dense(), dense)
    assert isinstance(R.store.counts, SpilledRows)
    assert np.array_equal(R[:, np.arange(n_items)[::-1]].dense(), dense[:, ::-1])
    x = np.random.default_rng(1).normal(size=n_items)
    y = x + np.random.default_rng(2).normal(size=n_items)
    kept = Resamples.draw(n_items, B, np.random.default_rng(5))
    assert not isinstance(kept.store.counts, SpilledRows)
    for name in ("pearson", "spearman", "kendall"):
        got = engine.statistics([(name, x, y)], R)[0]
        assert np.array_equal(got, engine.statistics([(name, x, y)], kept)[0]), name
    with pytest.raises(TypeError, match="slice of whole rows"):
        R.store.counts[3]


def test_a_count_cache_without_a_file_stays_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no temporary file can be made (a full disk, no temporary folder) the cache is kept
    in memory, with the same counts."""
    import tempfile

    def no_file(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_file)
    dense = st.bootstrap_weights(101, 20, np.random.default_rng(5))
    R = Resamples.draw(101, 20, np.random.default_rng(5))
    R.store.spill_bytes = 0
    assert np.array_equal(R.dense(), dense)
    assert isinstance(R.store.counts, np.ndarray)


@pytest.mark.parametrize("rows", [1, 7, 8, 33])
def test_packed_rows_turned_at_any_columns_are_the_counts_turned(rows: int) -> None:
    """:meth:`PackedRows.turned_at` (64-bit words of a turned block, padded to 8 resamples)
    gives each column's counts in every resample, in the order asked, repeats included."""
    n_items = 1001
    dense = np.random.default_rng(9).integers(0, 16, (rows, n_items), dtype=np.uint8)
    packed = pack_counts(dense)
    assert packed.shape == (rows, (n_items + 1) // 2)
    idx = np.random.default_rng(2).integers(0, n_items, 3000)
    got = PackedRows(packed, n_items).turned_at(idx)
    assert got.flags.c_contiguous and got.dtype == np.uint8
    assert np.array_equal(got, dense[:, idx].T)


@pytest.mark.parametrize("tile", [7, 8192])
def test_per_item_sums_read_the_packed_cache_in_place(
    monkeypatch: pytest.MonkeyPatch, tile: int
) -> None:
    """The passes of per-item sums read the packed cache a tile of columns at a time
    (:class:`PackedRows`): the same bits as on redrawn counts, with tiles that straddle the
    middle of the packed bytes (7 columns of 1001) and one tile of all."""
    from metajudge.engine import moments

    monkeypatch.setattr(moments, "TILE_ITEMS", tile)
    n_items, B = 1001, 70
    M = np.random.default_rng(3).normal(size=(n_items, 5))
    got = []
    for cache in (0, 1 << 30):
        R = Resamples.draw(n_items, B, np.random.default_rng(8), cache_bytes=cache)
        got.append(moments.resample_sums(R.store, M))
    assert R.store.packed
    assert np.array_equal(got[0], got[1])
    dense = st.bootstrap_weights(n_items, B, np.random.default_rng(8))
    np.testing.assert_allclose(got[1], dense @ M, rtol=1e-12, atol=1e-9)


def test_threads_do_not_change_a_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The passes over the resamples (per-item sums, Spearman's ranks) share their blocks among
    threads (:func:`map_blocks`): every statistic the same bits on one thread and on four,
    with many blocks in flight (blocks of one resample), on cached and redrawn counts."""
    import functools

    from metajudge.engine import moments, resample, weighted

    n_items, B = 400, 90
    rng = np.random.default_rng(11)
    y = rng.integers(-2, 3, 2 * n_items).astype(float)
    x = y + rng.normal(0, 1.5, 2 * n_items)
    groups = np.repeat(np.arange(n_items), 2)
    reqs = [(s, x, y) for s in ENGINE_STATISTICS]
    got = {}
    monkeypatch.setattr(moments, "TILE_ROWS", 1)
    monkeypatch.setattr(weighted, "RANK_BLOCK_ELEMENTS", 1)
    for threads in (1, 4):
        mapper = functools.partial(resample.map_blocks, threads=threads)
        monkeypatch.setattr(moments, "map_blocks", mapper)
        monkeypatch.setattr(weighted, "map_blocks", mapper)
        for cache in (0, 1 << 30):
            R = Resamples.draw(n_items, B, np.random.default_rng(7), cache_bytes=cache)
            got[threads, cache] = weighted.weighted_statistics(reqs, R[:, groups])
    ref = got[1, 0]
    for vals in got.values():
        for a, b in zip(ref, vals, strict=True):
            assert np.array_equal(a, b, equal_nan=True)


def test_the_count_cache_drawn_on_threads_is_the_one_call_draw(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cache's counts are counted and packed on threads, a few resamples at a time (here 3
    per block, 30 blocks): the same counts as the one-call draw."""
    from metajudge.engine import resample

    monkeypatch.setattr(resample, "FILL_ELEMENTS", 3 * 40)
    for n_items in (40, 41):  # (an odd count: the last packed byte holds one count)
        dense = st.bootstrap_weights(n_items, 90, np.random.default_rng(4))
        R = Resamples.draw(n_items, 90, np.random.default_rng(4), cache_bytes=1 << 30)
        R.store._fill()
        assert R.store.counts is not None
        assert np.array_equal(R.dense(), dense)


def test_an_error_in_a_thread_is_raised_by_the_pass() -> None:
    from metajudge.engine.resample import map_blocks, ready

    def fn(b0: int, block: np.ndarray) -> None:
        if b0 == 3:
            raise ValueError("block 3")

    with pytest.raises(ValueError, match="block 3"):
        map_blocks(fn, ((b, ready(np.zeros(2))) for b in range(10)), threads=2)


def test_a_prefilled_cache_is_the_one_call_draw_and_its_error_raises_at_the_first_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """:meth:`Resamples.prefill` fills the count cache in a thread of its own: the first pass
    waits for it and reads the counts of the one-call draw (a second prefill, or one where the
    counts do not fit the cache, starts nothing); an error of the fill raises at that pass."""
    from metajudge.engine import count_pass

    dense = st.bootstrap_weights(41, 90, np.random.default_rng(4))
    R = Resamples.draw(41, 90, np.random.default_rng(4), cache_bytes=1 << 30)
    R.prefill()
    filling = R.store.filling
    assert filling is not None
    R.prefill()
    assert R.store.filling is filling
    assert np.array_equal(R.dense(), dense) and R.store.counts is not None
    assert R.store.filling is None and filling.done()
    small = Resamples.draw(41, 90, np.random.default_rng(4), cache_bytes=100)
    small.prefill()
    assert small.store.filling is None and np.array_equal(small.dense(), dense)

    def broken(*args: object) -> bool:
        raise RuntimeError("count pass failed")

    monkeypatch.setattr(count_pass, "count_rows", broken)
    R = Resamples.draw(41, 90, np.random.default_rng(4), cache_bytes=1 << 30)
    R.prefill()
    with pytest.raises(RuntimeError, match="count pass failed"):
        R.dense()


def test_same_arrays_hash_each_array_once_and_forget_the_dead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While :meth:`Resamples.same_arrays` is open, statistics asked one at a time on the same
    arrays hash each array once (outside it, once a call); its digests are weak: an array no
    longer alive is forgotten, and a new one is hashed, whatever its address."""
    from metajudge.engine import resample
    from metajudge.engine.weighted import weighted_statistics

    hashed: list[int] = []
    real = resample.array_digest

    def spy(a: np.ndarray) -> str:
        hashed.append(a.size)
        return real(a)

    monkeypatch.setattr(resample, "array_digest", spy)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=300), rng.normal(size=300)
    R = Resamples.draw(300, 20, np.random.default_rng(1))
    view = R[:, np.arange(300)]
    with R.same_arrays():
        first = weighted_statistics([("pearson", x, y)], view)[0]
        hashed.clear()
        again = [weighted_statistics([(s, x, y)], view)[0] for s in ("pearson", "pearson")]
        assert hashed == []  # (x, y and the view's columns: known)
        assert all(np.array_equal(first, a) for a in again)
        z = x.copy()
        del x
        z[0] += 1.0  # a new array: its own digest, its own value
        assert not np.array_equal(weighted_statistics([("pearson", z, y)], view)[0], first)
        assert R.store.digests is not None and len(hashed) == 1
    assert R.store.digests is None
    hashed.clear()
    weighted_statistics([("pearson", z, y)], view)
    assert len(hashed) == 3
