"""The exact binomial bound and fixed-sequence testing against an independent implementation
(the paper's: scipy's binomial CDF solved by brentq, a 5,000-point threshold grid)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom

from metajudge.stats.selective import binomial_upper_bound, fixed_sequence_threshold


@pytest.mark.parametrize(("k", "n"), [(0, 30), (3, 50), (10, 100), (29, 30), (40, 250)])
def test_bound_solves_the_binomial_cdf(k: int, n: int) -> None:
    r = brentq(lambda r: binom.cdf(k, n, r) - 0.1, 0, 0.9999)
    assert binomial_upper_bound(k, n, 0.1) == pytest.approx(r, abs=1e-9)
    assert binomial_upper_bound(n, n, 0.1) == 1.0


def _scan(conf: np.ndarray, ok: np.ndarray, lams: list[float], delta: float, alpha: float):
    """Fixed-sequence testing over ``lams`` (descending), the bound from scipy's binomial CDF."""
    best = None
    for lam in lams:
        keep = conf >= lam
        k, n = int((~ok[keep]).sum()), int(keep.sum())
        if brentq(lambda r, k=k, n=n: binom.cdf(k, n, r) - delta, 0, 0.99999) > alpha:
            break
        best = lam
    return best


@pytest.mark.parametrize("seed", range(6))
def test_same_threshold_as_a_plain_scan_and_the_grid(seed: int) -> None:
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, 250).round(3)  # ties in confidence too
    ok = rng.uniform(size=250) < conf  # more confident -> more often right
    got = fixed_sequence_threshold(ok, conf, 0.15, 0.1)
    distinct = [v for v in sorted(set(conf.tolist()), reverse=True) if (conf >= v).sum() >= 30]
    want = _scan(conf, ok, distinct, 0.1, 0.15)
    assert got.threshold == want
    assert got.n_candidates == len(distinct)
    if want is not None:
        assert got.n_kept == int((conf >= want).sum()) >= 30
        assert got.upper_bound is not None and got.upper_bound <= 0.15
    # the paper's 5,000-point grid tests a subset of these item sets: it keeps at least as many
    grid = [g for g in np.linspace(0, 1, 5000)[::-1] if (conf >= g).sum() >= 30]
    g = _scan(conf, ok, grid, 0.1, 0.15)
    assert (g is None and want is None) or (conf >= (g if g is not None else 2)).sum() >= got.n_kept
    # grid=5000: the paper's scan exactly (without its fallback to the top candidate)
    assert fixed_sequence_threshold(ok, conf, 0.15, 0.1, grid=5000).threshold == g


def test_stops_at_the_first_failure_and_needs_30_items() -> None:
    # 40 confident items all right, then 60 less confident all wrong
    conf = np.r_[np.linspace(0.99, 0.9, 40), np.linspace(0.89, 0.5, 60)]
    ok = np.r_[np.ones(40, bool), np.zeros(60, bool)]
    t = fixed_sequence_threshold(ok, conf, alpha=0.15, delta=0.1)
    # with 0 errors, n >= 30 passes (bound 1 - 0.1**(1/n) <= 0.074); adding wrong items fails
    # once k errors of n push the bound above 0.15
    n_expected = max(
        n
        for n in range(30, 101)
        if all(binomial_upper_bound(int((~ok[:m]).sum()), m, 0.1) <= 0.15 for m in range(30, n + 1))
    )
    assert t.n_kept == n_expected and t.threshold == pytest.approx(conf[n_expected - 1])
    assert t.n_candidates == 71  # 100 distinct values, 30..100 items at or above
    # fewer than 30 items: no candidate, nothing kept
    few = fixed_sequence_threshold(ok[:29], conf[:29], 0.15, 0.1)
    assert few.threshold is None and few.n_candidates == 0
    # the top candidate already fails: nothing kept (the paper's code would keep the top 30)
    bad = fixed_sequence_threshold(~ok, conf, 0.15, 0.1)
    assert bad.threshold is None and bad.n_tested == 1


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("grid", [None, 7, 5000])
def test_candidates_are_each_item_sets_lowest_point(seed: int, grid: int | None) -> None:
    """The candidates (arrays) are, highest first, one per item set of at least ``min_n``
    items: the lowest candidate point (distinct confidence or grid point) that gives it."""
    from metajudge.stats.selective import _candidates

    rng = np.random.default_rng(seed)
    conf = rng.uniform(size=int(rng.integers(1, 300)))
    if seed % 2:
        conf = conf.round(2)  # ties
    desc = np.sort(conf)[::-1]
    points = sorted(set(conf.tolist())) if grid is None else np.linspace(0, 1, grid).tolist()
    for min_n in (1, 5, 30):
        lowest: dict[int, float] = {}
        for v in points:  # ascending: the first point that gives a set is its lowest
            n = int((conf >= v).sum())
            if n >= min_n:
                lowest.setdefault(n, v)
        want = sorted(((v, n) for n, v in lowest.items()), reverse=True)
        values, sizes = _candidates(desc, min_n, grid)
        assert list(zip(values.tolist(), sizes.tolist(), strict=True)) == want
