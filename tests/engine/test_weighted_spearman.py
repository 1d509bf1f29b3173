"""Spearman's ρ of weighted resamples (engine/weighted.py, the compiled pass of engine/rank_pass.py:
few-valued y's sharing a joint table, several y's sharing one x pass) against the slow
reference loop, and the same bits whatever the tables, the blocking or the threads."""

from __future__ import annotations

import numpy as np
import pytest

from metajudge.engine import weighted
from metajudge.engine.resample import Resamples
from metajudge.engine.weighted import weighted_statistic, weighted_statistics
from tests.stats.reference import bootstrap_ci_reference

N_ITEMS, N_BOOT = 90, 60


def _data(x_kind: str) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Two rows per item; x distinct, with ties, or with few values; four y's: labels in -2..2
    (two annotators), 9 half-step values, all distinct, constant but for one row."""
    rng = np.random.default_rng(11)
    lat = np.repeat(rng.normal(size=N_ITEMS), 2)
    x = lat + rng.normal(scale=0.6, size=lat.size)
    if x_kind == "ties":
        x = np.round(x * 2) / 2
    elif x_kind == "few":
        x = np.clip(np.rint(x), -1, 1)
    labels = [np.clip(np.rint(lat + rng.normal(scale=0.8, size=lat.size)), -2, 2) for _ in "ab"]
    half = (labels[0] + labels[1]) / 2
    distinct = lat + rng.normal(scale=0.3, size=lat.size)
    nearly_constant = np.zeros(lat.size)
    nearly_constant[7] = 1.0
    return x, [*labels, half, distinct, nearly_constant], np.repeat(np.arange(N_ITEMS), 2)


def _lazy(x: np.ndarray, ys: list[np.ndarray], items: np.ndarray) -> list[np.ndarray]:
    R = Resamples.draw(N_ITEMS, N_BOOT, np.random.default_rng(3))[:, items]
    return weighted_statistics([("spearman", x, y) for y in ys], R)


@pytest.mark.parametrize("x_kind", ["distinct", "ties", "few"])
def test_shared_x_pass_equals_the_reference_loop(x_kind: str) -> None:
    x, ys, items = _data(x_kind)
    got = _lazy(x, ys, items)
    for y, v in zip(ys, got, strict=True):
        ref = bootstrap_ci_reference(
            x,
            y,
            statistic="spearman",
            groups=items,
            n_resamples=N_BOOT,
            rng=np.random.default_rng(3),
        ).samples
        np.testing.assert_allclose(v, ref, rtol=0, atol=1e-12)
        alone = _lazy(x, [y], items)[0]  # the same y asked alone: the same bits
        np.testing.assert_array_equal(v, alone)


@pytest.mark.parametrize("x_kind", ["distinct", "ties"])
def test_same_bits_whatever_the_path_or_the_blocks(
    x_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    x, ys, items = _data(x_kind)
    grouped = _lazy(x, ys, items)
    dense_W = Resamples.draw(N_ITEMS, N_BOOT, np.random.default_rng(3))[:, items].dense()
    for y, v in zip(ys, grouped, strict=True):  # a dense matrix: bincount totals, no memo
        np.testing.assert_array_equal(weighted_statistic("spearman", x, y, dense_W), v)
    cases = [
        ("EXACT_WEIGHT", 0),  # every resample in floats, through the gather path
        ("MAX_JOINT_CELLS", 1),  # one bincount per y instead of their joint cells
        ("MAX_Y_GROUPS", 1),  # no y grouped
        ("RANK_BLOCK_ELEMENTS", 1),  # one resample per block
        ("RANK_BLOCK_ELEMENTS", 700),
        ("RANK_BLOCK_ELEMENTS", 1 << 22),  # every resample in one block
        ("RANK_BLOCK_ELEMENTS", 45 * N_ITEMS),  # 45 resamples a block, rounded down to 32
        ("RANK_BLOCK_RESAMPLES", 3),  # blocks of three resamples, the last one shorter
        ("CELL_ELEMENTS", 1),  # as a y with as many values as rows: one resample a block
    ]
    for name, value in cases:
        with monkeypatch.context() as m:
            m.setattr(weighted, name, value)
            for v, w in zip(grouped, _lazy(x, ys, items), strict=True):
                np.testing.assert_array_equal(v, w, err_msg=f"{name}={value}")


def test_only_resamples_heavier_than_the_exact_bound_take_float_sums(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x, ys, _ = _data("ties")
    W = np.random.default_rng(8).integers(0, 4, size=(12, x.size))
    totals = W.sum(axis=1)
    exact = weighted_statistic("spearman", x, ys[0], W)
    with monkeypatch.context() as m:
        m.setattr(weighted, "EXACT_WEIGHT", 0)
        rounded = weighted_statistic("spearman", x, ys[0], W)
    with monkeypatch.context() as m:
        m.setattr(weighted, "EXACT_WEIGHT", int(np.median(totals)))
        mixed = weighted_statistic("spearman", x, ys[0], W)
    heavy = totals > np.median(totals)
    assert 0 < heavy.sum() < heavy.size
    np.testing.assert_array_equal(mixed[heavy], rounded[heavy])
    np.testing.assert_array_equal(mixed[~heavy], exact[~heavy])
    np.testing.assert_allclose(rounded, exact, rtol=0, atol=1e-14)


@pytest.mark.parametrize("packed", [True, False])
def test_heavy_whole_counts_sum_in_floats_as_float_counts_do(
    packed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resample heavier than the exact bound sums its whole counts in floats as they are
    stored (one byte each, no float copy of the block): the same bits as the same counts
    given as floats; one lighter than the bound keeps its exact int64 sums."""
    x, ys, items = _data("ties")
    some = items % 3 != 0  # the rows of two items in three: resamples of unequal weight
    R = Resamples.draw(N_ITEMS, N_BOOT, np.random.default_rng(3))
    plan = weighted._RankPlan(x[some], [y[some] for y in ys[:3]])
    cols = items[some][plan.order]
    block = next(iter(R.store.blocks(N_BOOT, packed=packed)))[1]()
    floats = plan.sums(np.asarray(R.dense()), cols, integer=False)
    exact = plan.sums(block, cols)
    totals = floats[:, 0]
    monkeypatch.setattr(weighted, "EXACT_WEIGHT", int(np.median(totals)))
    mixed = plan.sums(block, cols)
    heavy = totals > np.median(totals)
    assert 0 < heavy.sum() < heavy.size
    np.testing.assert_array_equal(mixed[heavy], floats[heavy])
    np.testing.assert_array_equal(mixed[~heavy], exact[~heavy])
    monkeypatch.setattr(weighted, "EXACT_WEIGHT", 0)
    np.testing.assert_array_equal(plan.sums(block, cols), floats)


def test_non_integer_weights_give_each_resample_its_own_value() -> None:
    x, ys, _ = _data("ties")
    rng = np.random.default_rng(4)
    W = rng.random((5, x.size)) * 3  # not counts: float sums
    plan = weighted._RankPlan(x, ys[:1])
    got = weighted._wspearman(plan, W)[0]
    for b in range(W.shape[0]):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(weighted, "MAX_Y_GROUPS", 0)
            alone = weighted._wspearman(weighted._RankPlan(x, ys[:1]), W[b : b + 1])[0]
        np.testing.assert_array_equal(got[b], alone[0])


def test_exact_int64_sums_beyond_two_to_the_eighteen() -> None:
    """A resample heavier than 2¹⁸ (where float sums of half-integer ranks stopped being exact)
    keeps the grouped path and exact int64 sums: ρ as scipy computes it on the expanded data,
    and the float path (EXACT_WEIGHT 0, the gather path) within rounding."""
    from scipy.stats import spearmanr

    n_items = 150_000  # two rows per item: N = 300,000 > 2**18
    rng = np.random.default_rng(2)
    lat = np.repeat(rng.normal(size=n_items), 2)
    x = np.round(lat + rng.normal(size=lat.size), 2)  # ties
    y = np.clip(np.rint(lat + rng.normal(size=lat.size)), -2, 2)
    items = np.repeat(np.arange(n_items), 2)
    R = Resamples.draw(n_items, 3, np.random.default_rng(5))
    W = R[:, items].dense()
    exact = weighted_statistic("spearman", x, y, W)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(weighted, "EXACT_WEIGHT", 0)
        rounded = weighted_statistic("spearman", x, y, W)
    np.testing.assert_allclose(exact, rounded, rtol=0, atol=1e-14)
    for b in range(W.shape[0]):
        k = W[b].astype(int)
        want = spearmanr(np.repeat(x, k), np.repeat(y, k)).statistic
        assert abs(exact[b] - want) < 1e-13


def _pooled(k: int, x_kind: str) -> tuple[np.ndarray, ...]:
    """A cell's pooled rows: each item's row once per annotator (``k`` of them) with the item's
    x, labels in -2..2; also x per item and the labels per annotator (the matched requests)."""
    rng = np.random.default_rng(5)
    lat = rng.normal(size=N_ITEMS)
    x = lat + rng.normal(scale=0.6, size=N_ITEMS)
    if x_kind == "ties":  # (too many values for a contingency table, engine/moments.py)
        x = np.round(x * 10) / 10
    labels = np.clip(np.rint(lat[:, None] + rng.normal(scale=0.8, size=(N_ITEMS, k))), -2, 2)
    return np.repeat(x, k), labels.ravel(), np.repeat(np.arange(N_ITEMS), k), x, labels


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("x_kind", ["distinct", "ties"])
def test_pooled_rows_from_one_pass_over_the_items(
    k: int, x_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell's pooled ρ from the joint table of the per-annotator labels over the items (a
    stacked y) is the same bits as the pass over the pooled rows, and its pass gives the metric
    against each annotator too (asked for together, or next)."""
    xp, yp, items, x, labels = _pooled(k, x_kind)
    R = Resamples.draw(N_ITEMS, N_BOOT, np.random.default_rng(3))
    direct = weighted._wspearman(weighted._RankPlan(xp, [yp]), R[:, items])[0]
    ref = bootstrap_ci_reference(
        xp, yp, statistic="spearman", groups=items, n_resamples=N_BOOT, rng=np.random.default_rng(3)
    ).samples
    np.testing.assert_allclose(direct, ref, rtol=0, atol=1e-12)
    passes = []
    real = weighted._wspearman
    monkeypatch.setattr(weighted, "_wspearman", lambda p, W: passes.append(p) or real(p, W))
    matched = [("spearman", x, labels[:, j].copy()) for j in range(k)]
    got = weighted_statistics([*matched, ("spearman", xp, yp)], [R] * k + [R[:, items]])
    assert [(p.order.size, p.n_ys, len(p.stacks)) for p in passes] == [(N_ITEMS, k, 1)]
    np.testing.assert_array_equal(got[-1], direct)
    for (_, _, y), v in zip(matched, got, strict=False):
        np.testing.assert_array_equal(v, real(weighted._RankPlan(x, [y]), R)[0])
    R2 = Resamples.draw(N_ITEMS, N_BOOT, np.random.default_rng(3))
    pooled_first = weighted_statistics([("spearman", xp, yp)], R2[:, items])[0]
    then = weighted_statistics(matched, R2)
    assert len(passes) == 2  # (the pooled request's; the matched ones read its values)
    np.testing.assert_array_equal(pooled_first, direct)
    for a, b in zip(then, got, strict=False):
        np.testing.assert_array_equal(a, b)


def test_pooled_rows_that_do_not_stack_take_their_own_pass() -> None:
    """Rows whose x differs within an item's run, or a y with more values than a joint table
    takes, are not stacked; their values are those of the pass over the rows."""
    xp, yp, items, _, _ = _pooled(2, "distinct")
    R = Resamples.draw(N_ITEMS, N_BOOT, np.random.default_rng(3))
    many = yp + np.arange(yp.size) * 1e-3  # every row its own value
    shifted = xp + np.tile([0.0, 1e-9], N_ITEMS)
    assert weighted._unstack(xp, yp, R[:, items]) is not None
    for x, y in ((xp, many), (shifted, yp)):
        assert weighted._unstack(x, y, R[:, items]) is None
        direct = weighted._wspearman(weighted._RankPlan(x, [y]), R[:, items])[0]
        np.testing.assert_array_equal(weighted_statistic("spearman", x, y, R[:, items]), direct)


def test_stacked_resamples_heavier_than_the_exact_bound_take_float_sums(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bound applies to the stacked rows' weight (k times the items'): beyond it the same
    sums in floats, equal to rounding."""
    xp, yp, items, _, _ = _pooled(2, "ties")
    R = Resamples.draw(N_ITEMS, N_BOOT, np.random.default_rng(3))
    exact = weighted_statistic("spearman", xp, yp, R[:, items])
    monkeypatch.setattr(weighted, "EXACT_WEIGHT", 2 * N_ITEMS - 1)  # the items' N fits, 2N not
    R2 = Resamples.draw(N_ITEMS, N_BOOT, np.random.default_rng(3))
    floats = weighted_statistic("spearman", xp, yp, R2[:, items])
    np.testing.assert_allclose(floats, exact, rtol=0, atol=1e-12)


def test_a_block_above_32_resamples_is_a_multiple_of_32() -> None:
    """A gathered row of one-byte counts is whole 32-byte pieces (numpy's fixed-size copy):
    a million items take 32 resamples a block where the element budget allows 33; budgets of
    32 resamples and fewer are kept as they are; at most :data:`RANK_BLOCK_RESAMPLES`."""
    x = np.arange(10.0)
    plan = weighted._RankPlan(x, [x % 3])
    assert plan.block_rows(1_000_000) == 32 == plan.block_rows(weighted.RANK_BLOCK_ELEMENTS // 63)
    assert plan.block_rows(weighted.RANK_BLOCK_ELEMENTS // 31) == 31
    assert plan.block_rows(weighted.RANK_BLOCK_ELEMENTS // 70) == 64
    assert plan.block_rows(200_000) == weighted.RANK_BLOCK_RESAMPLES == 128
    assert plan.block_rows(1 << 40) == 1
