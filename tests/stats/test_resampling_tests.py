"""Perm/Boot-{Sys,Inp,Both} vs nlpstats (Deutsch's reference) on the same arrays and draws."""

from __future__ import annotations

import numpy as np
import pytest

from metajudge.stats import resampling_tests as rt

nlp = pytest.importorskip("nlpstats.correlations")

LEVELS = {"global": "global", "item": "input", "system": "system"}


def _mats(seed: int, m: int = 7, n: int = 20) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(m, n)) + rng.normal(size=(m, 1))
    X = Z + rng.normal(0, 1.0, size=(m, n))
    Y = 3 * Z + rng.normal(0, 4.0, size=(m, n)) + 10
    return X, Y, Z


@pytest.mark.parametrize("level", ["global", "item", "system"])
def test_level_correlations_equal_nlpstats(level: str) -> None:
    X, _, Z = _mats(0)
    for stat in ("pearson", "spearman", "kendall"):
        ref = nlp.correlate(X, Z, LEVELS[level], stat)
        assert rt.level_correlation(X, Z, level, stat) == pytest.approx(ref, abs=1e-9)


def _replay_perm(seed: int, k: int, m: int, n: int, method: str) -> tuple[np.ndarray, ...]:
    """nlpstats' draws for `permute(X, Y, method)`: rand(m, 1) > .5 then rand(1, n) > .5."""
    np.random.seed(seed)
    S, T = np.zeros((k, m)), np.zeros((k, n))
    for b in range(k):
        if method in ("systems", "both"):
            S[b] = np.random.rand(m) > 0.5
        if method in ("inputs", "both"):
            T[b] = np.random.rand(n) > 0.5
    return S, T


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
@pytest.mark.parametrize("level", ["global", "item", "system"])
def test_perm_tests_equal_nlpstats_seed_for_seed(method: str, level: str) -> None:
    X, Y, Z = _mats(1)
    k = 50  # sample-for-sample equality (a mechanism): 50 permutations show it as well as 200
    np.random.seed(7)
    ref = nlp.permutation_test(X, Y, Z, LEVELS[level], "pearson", method, n_resamples=k)
    masks = _replay_perm(7, k, *X.shape, method)
    got = rt.perm_test(X, Y, Z, level=level, method=method, masks=masks)
    assert np.allclose(got.samples, ref.samples, atol=1e-9, rtol=0)
    hits = ref.pvalue * k  # nlpstats: #{|Δ*| >= |Δ|}/k; metajudge adds one
    assert got.p_value == pytest.approx((hits + 1) / (k + 1), abs=1e-9)
    spear = rt.perm_test(X, Y, Z, level=level, method=method, masks=masks, stat="spearman")
    np.random.seed(7)
    ref_s = nlp.permutation_test(X, Y, Z, LEVELS[level], "spearman", method, n_resamples=k)
    assert np.allclose(spear.samples, ref_s.samples, atol=1e-9, rtol=0)


def _replay_boot(seed: int, k: int, m: int, n: int, method: str) -> tuple[np.ndarray, ...]:
    """nlpstats' draws for `resample(..., method)`: choice(m, m) then choice(n, n)."""
    np.random.seed(seed)
    R, C = np.tile(np.arange(m), (k, 1)), np.tile(np.arange(n), (k, 1))
    for b in range(k):
        if method in ("systems", "both"):
            R[b] = np.random.choice(m, m, replace=True)
        if method in ("inputs", "both"):
            C[b] = np.random.choice(n, n, replace=True)
    return R, C


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
@pytest.mark.parametrize("level", ["global", "item", "system"])
def test_boot_resamples_equal_nlpstats_seed_for_seed(method: str, level: str) -> None:
    X, Y, Z = _mats(2)
    k = 100
    draws = _replay_boot(3, k, *X.shape, method)
    got = rt.boot_test(X, Y, Z, level=level, method=method, draws=draws)
    np.random.seed(3)
    ref = []
    for _ in range(k):
        Xs, Ys, Zs = nlp.resample((X, Y, Z), method)
        ref.append(nlp.correlate(Xs, Zs, LEVELS[level], "pearson")
                   - nlp.correlate(Ys, Zs, LEVELS[level], "pearson"))  # fmt: skip
    assert np.allclose(got.samples, ref, atol=1e-9, rtol=0, equal_nan=True)
    assert 0 < got.p_value <= 1 and got.n_resamples == k


def test_system_grouped_is_the_transposed_item_level() -> None:
    X, Y, Z = _mats(4)
    a = rt.perm_test(X, Y, Z, level="system-grouped", method="both", rng=1, n_resamples=50)
    b = rt.perm_test(X.T, Y.T, Z.T, level="item", method="both", rng=1, n_resamples=50)
    assert a.delta == pytest.approx(b.delta, abs=1e-12)
    g = rt.perm_test(X, Y, Z, level="system-grouped", method="both", rng=1, n_resamples=50,
                     stat="spearman")  # fmt: skip
    assert np.isfinite(g.samples).all()


def test_missing_cells_follow_nlpstats() -> None:
    X, Y, Z = _mats(5)
    for A in (X, Y, Z):
        A[0, :3] = np.nan
        A[2, 5] = np.nan
    masks = _replay_perm(11, 60, *X.shape, "both")
    for level in ("global", "item", "system"):
        np.random.seed(11)
        ref = nlp.permutation_test(X, Y, Z, LEVELS[level], "pearson", "both", n_resamples=60)
        got = rt.perm_test(X, Y, Z, level=level, method="both", masks=masks)
        assert np.allclose(got.samples, ref.samples, atol=1e-9, rtol=0)


def test_seed_and_resamples_are_recorded() -> None:
    X, Y, Z = _mats(6)
    t = rt.perm_test(X, Y, Z, level="global", rng=5, n_resamples=99)
    j = t.to_dict()
    assert j["seed"] == 5 and j["n_resamples"] == 99 and "nlpstats" in str(j["rule"])
    assert t.p_value == rt.perm_test(X, Y, Z, level="global", rng=5, n_resamples=99).p_value
