"""Statistics of the meta-evaluation engine against scipy, a slow loop and worked examples."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as ss

from metajudge import stats as st
from metajudge.engine.weighted import weighted_statistic, weighted_statistics
from metajudge.stats.correlation import _rankdata
from tests.stats.reference import bootstrap_ci_reference


def _data(seed: int, n: int = 120, ties: bool = True) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = x + rng.normal(scale=1.0, size=n)
    if ties:
        x = np.round(x * 2) / 2
        y = np.clip(np.round(y), -2, 2)
    return x, y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", [True, False])
def test_correlations_match_scipy(seed: int, ties: bool) -> None:
    x, y = _data(seed, ties=ties)
    assert st.pearson(x, y) == pytest.approx(ss.pearsonr(x, y)[0], abs=1e-12)
    assert st.spearman(x, y) == pytest.approx(ss.spearmanr(x, y)[0], abs=1e-12)
    assert st.kendall_tau_b(x, y) == pytest.approx(ss.kendalltau(x, y, variant="b")[0], abs=1e-12)


def test_kendall_large_n_uses_fast_path_and_matches_scipy() -> None:
    x, y = _data(5, n=3500)
    assert st.kendall_tau_b(x, y) == pytest.approx(ss.kendalltau(x, y)[0], abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 33, 281, 1000])
def test_kendall_tau_b_is_bit_identical_to_scipy(n: int) -> None:
    """kendall_tau_b counts with numpy (no scipy.stats import) and gives scipy's exact bits,
    with ties in one, both or neither variable."""
    rng = np.random.default_rng(n)
    for t in range(12):
        x = rng.integers(0, 2 + t % 5, n).astype(float) if t % 2 else rng.normal(size=n)
        y = rng.integers(1, 6, n).astype(float) if t % 3 else rng.normal(size=n).round(1)
        got = st.kendall_tau_b(x, y)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            assert math.isnan(got)
            continue
        want = float(np.clip(ss.kendalltau(x, y, variant="b")[0], -1.0, 1.0))
        assert got == want, (n, t)


def test_kendall_tau_b_keeps_scipys_bits_on_pooled_rows_and_signed_zeros() -> None:
    """The orders Knight's algorithm counts, taken by unstable sorts: x without ties (one row
    per pair), x with each value twice (two annotators' rows of a pair) and -0.0 beside 0.0."""
    rng = np.random.default_rng(11)
    x = rng.normal(size=20_000)
    y = rng.integers(-2, 3, x.size).astype(float)
    signed = np.where(rng.random(x.size) < 0.3, -0.0, 0.0) + rng.integers(0, 3, x.size)
    for a in (x, np.repeat(x[: x.size // 2], 2), signed):
        want = float(np.clip(ss.kendalltau(a, y, variant="b")[0], -1.0, 1.0))
        assert st.kendall_tau_b(a, y) == want
        assert st.kendall_tau_b(y, a) == float(np.clip(ss.kendalltau(y, a)[0], -1.0, 1.0))


def test_sorted_once_spearman_and_kendall_keep_their_bits() -> None:
    """:class:`SortOrders` sorts x and y once for Spearman and Kendall: the same values as each
    statistic sorting for itself and as scipy (no ties, pooled ties, -0.0 beside 0.0), and
    :func:`~metajudge.stats.estimates.pooled` leaves the orders aside when it drops rows."""
    from metajudge.stats import estimates as est

    rng = np.random.default_rng(12)
    x = rng.normal(size=20_000)
    y = rng.integers(-2, 3, x.size).astype(float)
    signed = np.where(rng.random(x.size) < 0.3, -0.0, 0.0) + rng.integers(0, 3, x.size)
    for a in (x, np.repeat(x[: x.size // 2], 2), signed):
        sorts = st.SortOrders(a, y)
        assert st.statistic("spearman", a, y, sorts) == st.spearman(a, y)
        assert st.spearman(a, y) == pytest.approx(float(ss.spearmanr(a, y)[0]), abs=1e-15)
        assert st.statistic("kendall", a, y, sorts) == st.kendall_tau_b(a, y)
        assert "by_x" in vars(sorts) and "by_y" in vars(sorts)  # (kept once found)
    gaps = x.copy()
    gaps[::5] = np.nan
    items = np.arange(x.size)
    for s in ("spearman", "kendall"):
        stale = st.SortOrders(np.nan_to_num(gaps), y)  # orders of other rows
        got = est.pooled(s, gaps, y, items, None, 0.95, sorts=stale)
        assert got.value == est.pooled(s, gaps, y, items, None, 0.95).value
        assert got.value == st.statistic(s, x[np.isfinite(gaps)], y[np.isfinite(gaps)])


def test_orders_shared_between_metrics_and_annotators_keep_the_bits() -> None:
    """:meth:`SortOrders.sharing`: a metric against several annotators and several metrics
    against one annotator take x's (y's) order and ranks from the first, found there once (the
    same arrays), and every Spearman and Kendall keeps the bits of its own sorts."""
    rng = np.random.default_rng(3)
    xs = [rng.normal(size=5000), rng.integers(0, 9, 5000).astype(float)]
    ys = [rng.integers(-2, 3, 5000).astype(float) for _ in range(3)]
    first: dict[int, st.SortOrders] = {}
    for x in xs:
        by_x: st.SortOrders | None = None
        for k, y in enumerate(ys):
            sorts = st.SortOrders(x, y)
            if by_x is not None:
                sorts.sharing(by_x, "x")
            if k in first:
                sorts.sharing(first[k], "y")
            by_x = by_x or sorts
            first.setdefault(k, sorts)
            for s in ("spearman", "kendall"):
                assert st.statistic(s, x, y, sorts) == st.statistic(s, x, y)
            assert sorts.ranks_x is by_x.ranks_x and sorts.ranks_y is first[k].ranks_y
            assert sorts.by_y is first[k].by_y


def test_rows_ordered_from_their_units_keep_the_bits() -> None:
    """:func:`~metajudge.stats.rows_order`: rows (1 or 2 a unit, some units without a row or
    NaN) ordered by one sort of their units' values are a sort order of the rows' values, and
    Spearman and Kendall through it keep the bits of each sorting for itself (discrete values
    with many ties, continuous values)."""
    rng = np.random.default_rng(5)
    n = 30_000
    for values in (rng.normal(size=n), rng.integers(0, 7, n).astype(float)):
        values[rng.random(n) < 0.05] = np.nan
        per_unit = rng.integers(0, 3, n)  # 0, 1 or 2 rows a unit
        units = np.repeat(np.arange(n), per_unit)
        units = units[np.isfinite(values[units])]
        x = values[units]
        y = rng.integers(-2, 3, x.size).astype(float)
        order = st.rows_order(np.argsort(values), units)
        assert np.array_equal(np.sort(order), np.arange(x.size))  # every row once
        assert np.array_equal(x[order], np.sort(x))
        sorts = st.SortOrders(x, y, by_x=order)
        assert st.statistic("spearman", x, y, sorts) == st.spearman(x, y)
        assert st.statistic("kendall", x, y, sorts) == st.kendall_tau_b(x, y)


def test_discordant_count_per_value_equals_the_merge_sort(monkeypatch: pytest.MonkeyPatch) -> None:
    """Few-valued ranks (labels) are counted per value, others by the merge sort: the same
    integers (2,000 rows of 5 values and of 64; 0 and 1 rows), and τ_b keeps scipy's bits
    on 200,000 rows of a metric against 5-valued labels."""
    from metajudge.stats import correlation as corr

    rng = np.random.default_rng(7)
    for values, n in ((5, 2000), (64, 2000), (3, 1), (2, 0)):
        y = rng.integers(0, values, n)
        few = corr._inversions(y)
        monkeypatch.setattr(corr, "FEW_RANKS", 0)
        assert corr._inversions(y) == few, (values, n)
        monkeypatch.setattr(corr, "FEW_RANKS", 64)
    y = rng.integers(0, 4, 300)
    brute = sum(int((y[:i] > y[i]).sum()) for i in range(y.size))
    assert corr._inversions(y) == brute > 0
    runs = np.concatenate([np.sort(rng.permutation(5000)[:900]) for _ in range(4)])
    monkeypatch.setattr(corr, "FEW_RANKS", 64)
    by_runs = corr._inversions(runs)  # 4 sorted runs of 900 ranks below 5000
    monkeypatch.setattr(corr, "FEW_RANKS", 0)
    assert corr._inversions(runs) == by_runs
    x, y = rng.normal(size=200_000), rng.integers(-2, 3, 200_000).astype(float)
    assert st.kendall_tau_b(x, y) == float(ss.kendalltau(x, y, variant="b")[0])
    assert st.kendall_tau_b(y, x) == float(ss.kendalltau(y, x, variant="b")[0])


def test_kendall_tau_b_counts_discordant_pairs() -> None:
    """[3, 1, 2] against [1, 2, 3]: C = 1, D = 2, no ties, τ_b = -1/3; NaN input gives NaN."""
    assert st.kendall_tau_b([1, 2, 3], [3, 1, 2]) == pytest.approx(-1 / 3, abs=1e-15)
    assert math.isnan(st.kendall_tau_b([1, 2, float("nan")], [3, 1, 2]))


def test_rankdata_matches_scipy_on_matrices() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 6, size=(9, 50)).astype(float)
    np.testing.assert_array_equal(_rankdata(a), ss.rankdata(a, axis=-1))


@pytest.mark.parametrize(
    "v",
    [
        [5.0],
        [2.0, 2.0, 2.0],
        [3.0, 1.0, 2.0, 1.0, 3.0, 3.0],
        np.random.default_rng(4).integers(-2, 3, size=1001).astype(float),
        np.round(np.random.default_rng(5).normal(size=2000), 1),
        np.random.default_rng(6).normal(size=3000),
    ],
)
def test_rankdata_of_a_vector_is_the_matrix_row_and_scipy(v: Any) -> None:
    """The vector form (one run of ties at a time) gives the matrix form's ranks, bit for bit."""
    a = np.asarray(v, dtype=float)
    np.testing.assert_array_equal(_rankdata(a), _rankdata(np.stack([a, a]))[1])
    np.testing.assert_array_equal(_rankdata(a), ss.rankdata(a))


def test_undefined_reasons() -> None:
    assert "constant" in st.undefined_reason([2, 2, 2, 2], [1, 2, 3, 4])
    assert "human labels are constant" in st.undefined_reason([1, 2, 3], [0, 0, 0])
    assert "only 2 rows" in st.undefined_reason([1, 2], [2, 1])
    assert st.undefined_reason([1, 2, 3], [1, 3, 2]) is None
    assert math.isnan(st.pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(st.spearman([1, 1, 1], [1, 2, 3]))
    assert math.isnan(st.kendall_tau_b([1, 1, 1], [1, 2, 3]))


def test_pairwise_accuracy_with_and_without_ties() -> None:
    d = [0.5, -0.2, 0.0, 0.3, 0.04]
    h = [1, -2, 0, -1, 0]
    # decisions: 1, -1, 0, 1, 1 -> correct, correct, correct (tie), wrong, wrong
    assert st.pairwise_accuracy(human=h, judge=d) == pytest.approx(3 / 5)
    # human ties dropped: rows 0, 1, 3 -> 2/3
    assert st.pairwise_accuracy(human=h, judge=d, ties=False) == pytest.approx(2 / 3)
    # tie band 0.05 turns row 4 into a (correct) tie
    assert st.pairwise_accuracy(human=h, judge=d, epsilon=0.05) == pytest.approx(4 / 5)
    # a metric tie on a strict human preference is wrong without ties
    assert st.pairwise_accuracy(human=[1, 1], judge=[0.0, 1.0], ties=False) == pytest.approx(0.5)
    assert math.isnan(st.pairwise_accuracy(human=[0], judge=[1.0], ties=False))


@pytest.mark.parametrize("statistic", st.STATISTICS)
def test_vectorised_bootstrap_equals_slow_loop(statistic: str) -> None:
    x, y = _data(7, n=160)
    if statistic.startswith("acc"):
        x = np.sign(x)
    groups = np.repeat(np.arange(80), 2)  # two annotator rows per item
    fast = st.bootstrap_ci(
        x, y, statistic=statistic, groups=groups, n_resamples=300, rng=np.random.default_rng(11)
    )
    slow = bootstrap_ci_reference(
        x, y, statistic=statistic, groups=groups, n_resamples=300, rng=np.random.default_rng(11)
    )
    np.testing.assert_allclose(fast.samples, slow.samples, rtol=0, atol=1e-12, equal_nan=True)
    assert fast.estimate == pytest.approx(slow.estimate, abs=1e-12)
    assert (fast.lo, fast.hi) == pytest.approx((slow.lo, slow.hi), abs=1e-12)
    assert fast.lo <= fast.estimate <= fast.hi


def test_weighted_kendall_dense_path_equals_loop() -> None:
    # both variables continuous: more than 64 distinct values each -> sign-matrix path
    rng = np.random.default_rng(4)
    x = rng.normal(size=150)
    y = x + rng.normal(size=150)
    fast = st.bootstrap_ci(x, y, statistic="kendall", n_resamples=40, rng=np.random.default_rng(2))
    slow = bootstrap_ci_reference(
        x, y, statistic="kendall", n_resamples=40, rng=np.random.default_rng(2)
    )
    np.testing.assert_allclose(fast.samples, slow.samples, atol=1e-12)


@pytest.mark.parametrize("x_ties", [False, True])
def test_weighted_spearman_equals_loop_on_metric_vs_labels(x_ties: bool) -> None:
    # the matched reference's case: a metric with distinct values (or ties) against labels in
    # -2..2, two annotator rows per item; ranks of every resample from one sort (O(n) each)
    rng = np.random.default_rng(8)
    lat = rng.normal(size=120)
    x = np.repeat(lat + rng.normal(scale=0.5, size=120), 2)
    x = np.round(x * 2) / 2 if x_ties else x
    y = np.clip(np.rint(np.repeat(lat, 2) + rng.normal(scale=0.8, size=240)), -2, 2)
    groups = np.repeat(np.arange(120), 2)
    kw = {"statistic": "spearman", "groups": groups, "n_resamples": 200}
    fast = st.bootstrap_ci(x, y, rng=np.random.default_rng(3), **kw)
    slow = bootstrap_ci_reference(x, y, rng=np.random.default_rng(3), **kw)
    np.testing.assert_allclose(fast.samples, slow.samples, rtol=0, atol=1e-12)


def test_weighted_spearman_same_bits_whatever_the_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    from metajudge.engine import weighted
    from metajudge.engine.resample import Resamples

    rng = np.random.default_rng(5)
    x = rng.normal(size=300)
    y = np.clip(np.rint(x + rng.normal(size=300)), -2, 2)
    items = np.repeat(np.arange(150), 2)
    R = Resamples.draw(150, 64, np.random.default_rng(1))
    dense = weighted_statistic("spearman", x, y, R[:, items].dense())
    for block in (1, 700, 1 << 20):
        monkeypatch.setattr(weighted, "RANK_BLOCK_ELEMENTS", block)
        lazy = weighted_statistics(
            [("spearman", x, y)], Resamples.draw(150, 64, np.random.default_rng(1))[:, items]
        )[0]
        np.testing.assert_array_equal(lazy, dense)


def test_bootstrap_resamples_items_together() -> None:
    W = st.bootstrap_weights(50, 20, np.random.default_rng(0))
    assert W.shape == (20, 50)
    np.testing.assert_array_equal(W.sum(axis=1), 50)
    # the same generator state gives the same resamples (seeded, passed in)
    np.testing.assert_array_equal(W, st.bootstrap_weights(50, 20, np.random.default_rng(0)))
    # rows of a drawn item come along: a statistic over duplicated rows equals the item-level one
    x, y = _data(1, n=40, ties=False)
    a = st.bootstrap_ci(
        np.repeat(x, 2),
        np.repeat(y, 2),
        groups=np.repeat(np.arange(40), 2),
        n_resamples=50,
        rng=np.random.default_rng(9),
    )
    b = st.bootstrap_ci(x, y, n_resamples=50, rng=np.random.default_rng(9))
    np.testing.assert_allclose(a.samples, b.samples, atol=1e-12)


def test_fisher_z_ci() -> None:
    lo, hi = st.fisher_z_ci(0.5, 103)
    z = math.atanh(0.5)
    assert lo == pytest.approx(math.tanh(z - 1.959963984540054 / 10), abs=1e-9)
    assert hi == pytest.approx(math.tanh(z + 1.959963984540054 / 10), abs=1e-9)
    slo, shi = st.fisher_z_ci(0.5, 103, method="spearman")
    assert slo < lo and shi > hi  # Fieller's larger standard error
    assert all(math.isnan(v) for v in st.fisher_z_ci(float("nan"), 50))


def test_williams_worked_example() -> None:
    # Steiger (1980) example as run by psych::r.test(n = 103, r12 = .4, r13 = .5, r23 = .1):
    # "t value -0.89 with probability < 0.37"
    res = st.williams_test(0.4, 0.5, 0.1, 103)
    assert res.df == 100
    assert res.t == pytest.approx(-0.89, abs=0.005)
    assert res.p_two_sided == pytest.approx(0.37, abs=0.01)
    # hand computation of the formula
    K = 1 - 0.16 - 0.25 - 0.01 + 2 * 0.4 * 0.5 * 0.1
    t = (0.4 - 0.5) * math.sqrt(102 * 1.1) / math.sqrt(2 * K * 102 / 100 + (0.9**2 / 4) * 0.9**3)
    assert res.t == pytest.approx(t, abs=1e-12)
    assert res.p_two_sided == pytest.approx(2 * ss.t.sf(abs(t), 100), abs=1e-12)
    swapped = st.williams_test(0.5, 0.4, 0.1, 103)
    assert swapped.t == pytest.approx(-res.t)
    assert swapped.p_two_sided == pytest.approx(res.p_two_sided)


def test_holm() -> None:
    p = [0.01, 0.04, 0.03, 0.005, float("nan")]
    adj = st.holm(p)
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4) -> 0.02, 0.03, 0.06, 0.06 (monotone)
    assert adj[3] == pytest.approx(0.02)
    assert adj[0] == pytest.approx(0.03)
    assert adj[2] == pytest.approx(0.06)
    assert adj[1] == pytest.approx(0.06)
    assert math.isnan(adj[4])
    assert st.holm([0.9, 0.8]).tolist() == [1.0, 1.0]


def test_benjamini_yekutieli_step_up() -> None:
    """m = 5 (one NaN, not counted: m = 4), H_4 = 25/12, thresholds k * 0.05 / (4 * 25/12) =
    0.006, 0.012, 0.018, 0.024. Step-up: the largest k with p_(k) <= threshold_k is 3 (0.017),
    so 0.0125 is rejected although it is above the second threshold."""
    p = [0.017, 0.0125, float("nan"), 0.003, 0.5]
    assert st.benjamini_yekutieli(p, 0.05).tolist() == [True, True, False, True, False]
    # m = 2, H_2 = 1.5: thresholds 0.0167, 0.0333
    assert st.benjamini_yekutieli([0.02, 0.03], 0.05).tolist() == [True, True]
    assert st.benjamini_yekutieli([0.02, 0.04], 0.05).tolist() == [False, False]
    assert st.benjamini_yekutieli([], 0.05).tolist() == []


def test_t_test_less_matches_scipy() -> None:
    from scipy.stats import ttest_1samp

    rng = np.random.default_rng(4)
    for mu in (0.0, 0.2, -0.1):
        x = rng.normal(0.05, 0.3, size=25)
        t, p = st.t_test_less(x, mu)
        ref = ttest_1samp(x, mu, alternative="less")
        assert t == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
    assert st.t_test_less([0.0, 0.0, 0.0], 0.2) == (-math.inf, 0.0)
    assert st.t_test_less([0.5, 0.5], 0.2) == (math.inf, 1.0)
    assert all(math.isnan(v) for v in st.t_test_less([0.2, 0.2], 0.2))


def test_permutation_and_paired_bootstrap() -> None:
    rng = np.random.default_rng(0)
    n = 200
    y = rng.normal(size=n)
    good = y + rng.normal(scale=0.5, size=n)
    bad = y + rng.normal(scale=3.0, size=n)
    for s in ("pearson", "spearman"):
        perm = st.permutation_test_diff(
            good, bad, y, statistic=s, n_resamples=500, rng=np.random.default_rng(1)
        )
        assert perm.diff == pytest.approx(
            st.statistic(s, good, y) - st.statistic(s, bad, y), abs=1e-12
        )
        assert perm.p_value < 0.01
        same = st.permutation_test_diff(
            good, good, y, statistic=s, n_resamples=200, rng=np.random.default_rng(1)
        )
        assert same.p_value == 1.0
        boot = st.paired_bootstrap_diff(
            good, bad, y, statistic=s, n_resamples=500, rng=np.random.default_rng(1)
        )
        assert boot.diff == pytest.approx(perm.diff, abs=1e-12)
        assert boot.lo > 0 and boot.p_value < 0.01
        given = (st.statistic(s, good, y), st.statistic(s, bad, y))  # the cells' point values
        told = st.paired_bootstrap_diff(
            good, bad, y, statistic=s, n_resamples=500, rng=np.random.default_rng(1), observed=given
        )
        assert told == boot  # the same result, bit for bit, without sorting again
    again = st.permutation_test_diff(good, bad, y, n_resamples=300, rng=np.random.default_rng(5))
    assert (
        again.p_value
        == st.permutation_test_diff(
            good, bad, y, n_resamples=300, rng=np.random.default_rng(5)
        ).p_value
    )


def test_grouped_correlation_matches_loop() -> None:
    rng = np.random.default_rng(2)
    g = np.repeat(np.arange(12), 6)
    x = rng.normal(size=g.size)
    y = x + rng.normal(size=g.size)
    y[g == 3] = 1.0  # constant group: skipped like pandas' NaN
    mean, vals, n_undef = st.grouped_correlation(x, y, g, statistic="pearson")
    ref = [ss.pearsonr(x[g == k], y[g == k])[0] for k in range(12) if k != 3]
    assert n_undef == 1
    assert mean == pytest.approx(np.mean(ref), abs=1e-12)
    assert math.isnan(vals[3])


def test_kendall_from_table_is_tau_b_of_the_expanded_data() -> None:
    # the weighted contingency tables of the bootstrap (class x value, integer weights): τ_b
    # of the data in which each cell is repeated its weight times, as scipy computes it
    from scipy.stats import kendalltau

    from metajudge.engine.moments import kendall_from_table

    rng = np.random.default_rng(12)
    for K, G in ((1, 5), (2, 1), (3, 7), (5, 40), (9, 3)):
        T = rng.integers(0, 4, size=(30, K, G)) * (rng.random((30, K, G)) < 0.6)
        T[0] = 0  # an empty resample: undefined
        got = kendall_from_table(T.astype(float))
        for b in range(T.shape[0]):
            k, g = np.nonzero(T[b])
            reps = T[b][k, g]
            want = kendalltau(np.repeat(k, reps), np.repeat(g, reps)).statistic
            if np.isnan(want):
                assert np.isnan(got[b]), (K, G, b)
            else:
                assert got[b] == pytest.approx(want, abs=1e-12), (K, G, b)
    assert np.isnan(kendall_from_table(np.zeros((1, 3, 4))))[0]


def test_correlate_accuracies_on_the_same_labels_each_keep_their_own_scored_rows() -> None:
    # the scored flags are made once per accuracy and labels (shared by the metrics): each
    # accuracy still gets its own policy's flags, and every value is the one it gets alone
    rng = np.random.default_rng(3)
    y = rng.integers(-1, 2, 120).astype(float)
    y[::17] = np.nan
    xs = [rng.normal(size=120), np.round(rng.normal(size=120))]
    W = st.bootstrap_weights(120, 40, np.random.default_rng(0))
    reqs = [(s, x, y) for x in xs for s in ("acc_ties", "acc_no_ties")]
    together = st.correlate(reqs, W)
    for r, got in zip(reqs, together, strict=True):
        assert np.array_equal(got, st.correlate([r], W)[0], equal_nan=True)
    assert not np.array_equal(together[0], together[1], equal_nan=True)
