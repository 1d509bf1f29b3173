"""The rules every resampling test shares (:mod:`metajudge.stats.resampling_tests`), pinned
through the public tests: the constant-side rule of the Pearson from moment sums, the
permutation p, and the z-scoring before a swap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metajudge import stats as st


def _constant_column(m: int = 27, n: int = 5, value: float = 24.8) -> tuple[np.ndarray, ...]:
    """Two metrics and humans (systems x inputs); every system's human score of input 0 is
    ``value``, whose mean over the m systems is not exactly ``value`` in floating point."""
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(m, n)), rng.normal(size=(m, n))
    Z = rng.normal(size=(m, n)) * 10 + 50
    Z[:, 0] = value
    assert Z[:, 0].mean() != value  # the centred sums of the constant column are not 0
    return X, Y, Z


@pytest.mark.parametrize("level", ["global", "item", "system-grouped", "system"])
def test_identity_resample_reproduces_the_observed_delta(level: str) -> None:
    """The identity permutation (no swap) and the identity bootstrap draw give back Δ: the
    vectorised moment sums and the observed value leave the constant human column out alike
    (undefined), where the absolute variance rule kept its rounding error as a correlation and
    the one-sample Pearson read it as r ~ 1e-17."""
    X, Y, Z = _constant_column()
    m, n = Z.shape
    perm = st.perm_tests(
        {"x": X, "y": Y}, Z, level=level, masks=(np.zeros((1, m)), np.zeros((1, n)))
    )
    res = perm[("x", "y")]
    assert math.isfinite(res.delta)
    assert res.samples[0] == pytest.approx(res.delta, abs=1e-12)
    draws = (np.arange(m)[None, :], np.arange(n)[None, :])
    boot = st.boot_tests({"x": X, "y": Y}, Z, level=level, draws=draws)[("x", "y")]
    assert boot.samples[0] == pytest.approx(boot.delta, abs=1e-12)
    assert boot.delta == pytest.approx(res.delta, abs=1e-12)  # perm z-scores X, Y first


def test_a_constant_side_is_undefined_in_the_one_pearson() -> None:
    _, _, Z = _constant_column()
    x = np.arange(27.0)
    assert math.isnan(st.pearson(x, Z[:, 0]))
    assert math.isnan(
        st.pearson_from_moments(27.0, x.sum(), Z[:, 0].sum(), x @ x, Z[:, 0] @ Z[:, 0], x @ Z[:, 0])
    )


def test_the_one_permutation_p() -> None:
    """Equal metrics: every Δ* is Δ = 0 (up to rounding), so p = 1 in every permutation test;
    an undefined Δ gives NaN, not a p."""
    rng = np.random.default_rng(0)
    y = rng.normal(size=30)
    x = y + rng.normal(size=30)
    g = np.arange(30) // 3
    r = st.permutation_test_diff(
        x, x.copy(), y, groups=g, n_resamples=50, rng=np.random.default_rng(1)
    )
    assert (r.diff, r.p_value) == (0.0, 1.0)
    (shared,) = st.shared_permutation_tests(
        [("pearson", [x, x.copy()], y)],
        [(0, 1)],
        groups=g,
        n_resamples=50,
        rng=np.random.default_rng(1),
    )
    assert shared[0].p_value == 1.0
    X = rng.normal(size=(6, 5))
    assert (
        st.perm_tests(
            {"x": X, "y": X.copy()}, rng.normal(size=(6, 5)), level="item", n_resamples=50, rng=0
        )[("x", "y")].p_value
        == 1.0
    )
    flat = st.permutation_test_diff(x, y, np.ones(30), n_resamples=20, rng=np.random.default_rng(1))
    assert math.isnan(flat.p_value)
    assert st.permutation_p_value(0.5, np.array([0.1, -0.6, np.nan, 0.5 - 1e-13])) == 0.75
    assert math.isnan(st.permutation_p_value(0.5, np.array([np.nan, np.inf])))


def test_z_score_before_a_swap() -> None:
    """Both paired tests z-score each metric first: a metric's scale and shift do not move Δ
    or p; a constant metric is centred (not NaN)."""
    rng = np.random.default_rng(2)
    y = rng.normal(size=40)
    x1, x2 = y + rng.normal(size=40), y + rng.normal(scale=2.0, size=40)
    a = st.permutation_test_diff(x1, x2, y, n_resamples=60, rng=np.random.default_rng(3))
    b = st.permutation_test_diff(
        100 * x1 + 7, x2 / 3, y, n_resamples=60, rng=np.random.default_rng(3)
    )
    assert (b.diff, b.p_value) == pytest.approx((a.diff, a.p_value), abs=1e-12)
    assert st.resampling_tests.z_score(np.array([3.0, 3.0, np.nan])).tolist()[:2] == [0.0, 0.0]


def test_rank_clusters_apply_the_rules() -> None:
    """Through the rank-clusters table (``stats rank-clusters``): the constant human input is
    left out of every metric's item-level correlation (it was read as r ~ 1e-17 and averaged
    in); a metric tested against its copy has every Δ* = Δ = 0, so p = 1 (the one permutation
    p counts ties within 1e-12)."""
    from metajudge.analyses.metric_vs_human.matrices import ScoreMatrices
    from metajudge.analyses.system_ranking import ClusterOptions, rank_table

    X, Y, Z = _constant_column()
    m, n = Z.shape
    mets = {"x": X, "x_copy": X.copy(), "y": Y}
    sm = ScoreMatrices("q", [f"s{i}" for i in range(m)], [f"i{j}" for j in range(n)], Z, mets)
    t = rank_table(sm, "toy", ClusterOptions(level="item", n_resamples=99, seed=1))
    got = {r["metric"]: r["correlation"] for r in t.rows}
    for name, A in mets.items():
        without = st.resampling_tests.level_correlation(A[:, 1:], Z[:, 1:], "item", "pearson")
        assert got[name] == pytest.approx(without, abs=1e-15), name
    (same,) = [p for p in t.pairs if {p["a"], p["b"]} == {"x", "x_copy"}]
    assert (same["delta"], same["p"]) == (0.0, 1.0)
    assert all(0 < p["p"] <= 1 for p in t.pairs)


@pytest.mark.parametrize("level", ["global", "item", "system-grouped", "system"])
def test_one_level_correlation_and_its_resamples(level: str) -> None:
    """The matrices' level correlation is the one level correlation
    (``stats.estimates.level_estimate``) of their cells, missing cells and groups too small for
    it included; the identity permutation and bootstrap draw give back the observed Δ."""
    from metajudge.stats.estimates import level_estimate
    from metajudge.stats.resampling_tests import boot_test, level_correlation, perm_test

    for seed in range(40):
        rng = np.random.default_rng(seed)
        m, n = int(rng.integers(2, 7)), int(rng.integers(2, 8))
        X, Y, Z = (rng.normal(size=(m, n)) for _ in range(3))
        X[rng.random((m, n)) < 0.35] = np.nan
        systems, items = np.indices((m, n))
        cells = (X.ravel(), Z.ravel(), items.ravel(), systems.ravel())
        want = level_estimate("pearson", *cells, n, None, 0.95, level).value
        got = level_correlation(X, Z, level)
        assert got == want or (math.isnan(got) and math.isnan(want)), seed
        p = perm_test(X, Y, Z, level=level, masks=(np.zeros((1, m)), np.zeros((1, n))))
        b = boot_test(X, Y, Z, level=level, draws=(np.arange(m)[None], np.arange(n)[None]))
        for t in (p, b):
            assert t.samples[0] == pytest.approx(t.delta, abs=1e-9, nan_ok=True), seed


def test_rows_a_level_needs() -> None:
    """An input's correlation needs two rows, a pooled one three (global, a system, the
    systems' means): with two systems the item level is defined, the system level is not."""
    X = np.array([[1.0, 2, 3], [2.0, 2, 5]])
    Z = np.array([[1.0, 3, 2], [2.0, 4, 6]])
    rt = st.resampling_tests
    assert rt.level_correlation(X, Z, "item") == 1.0  # column 1: constant metric, left out
    assert math.isnan(rt.level_correlation(X, Z, "system"))
    assert rt.level_correlation(X, Z, "system-grouped") == pytest.approx((0.5 + 0.75**0.5) / 2)
    assert math.isnan(rt.level_correlation(X[:, :2], Z[:, :2], "system-grouped"))
