"""Kendall's tau_b of weighted resamples (issue 43): scipy's ``kendalltau`` on the explicitly
resampled data (each row repeated its count), whatever the ties, the number of distinct values
on either side, the dtype of the counts or the blocking of the resamples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from metajudge.engine import weighted_kendall as wk
from metajudge.engine.resample import Resamples
from metajudge.engine.weighted import weighted_statistic
from metajudge.stats.bootstrap import bootstrap_ci


def _scipy(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    out = []
    for w in W.astype(int):
        xr, yr = np.repeat(x, w), np.repeat(y, w)
        with np.errstate(all="ignore"):
            v = kendalltau(xr, yr).statistic if xr.size > 1 else np.nan
        out.append(v)
    return np.array(out, dtype=float)


def _data(rng: np.random.Generator, n: int, x_vals: int | None, y_vals: int | None):  # type: ignore[no-untyped-def]
    x, y = rng.normal(size=n), rng.normal(size=n)
    if x_vals:
        x = rng.integers(0, x_vals, n).astype(float)
    if y_vals:
        y = rng.integers(0, y_vals, n).astype(float) / 3.0  # e.g. a mean of three 1-5 scores
    return x, y


@pytest.mark.parametrize(
    ("n", "x_vals", "y_vals"),
    [
        (2, None, None),
        (9, None, None),  # both continuous: log2(n) merge levels
        (60, None, 13),  # a continuous metric against a 13-valued human score
        (60, 13, None),  # the same, sides swapped
        (80, 4, 5),  # ties on both sides
        (50, 1, None),  # a constant metric: undefined
        (120, 70, 90),  # many values with ties on both sides (more than 64)
        (1500, None, 5),  # a metric against one annotator's five labels (the ceiling's)
    ],
)
def test_weighted_kendall_is_scipy_on_the_resampled_data(
    n: int, x_vals: int | None, y_vals: int | None
) -> None:
    rng = np.random.default_rng(n + (x_vals or 0))
    x, y = _data(rng, n, x_vals, y_vals)
    W = rng.multinomial(n, np.ones(n) / n, size=30).astype(float)
    W[0] = 0.0
    W[0, :2] = [3, 1]  # two rows only
    got = wk.weighted_kendall(x, y, W)
    want = _scipy(x, y, W)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=1e-12)


def test_lazy_resamples_integer_path_gives_the_dense_values_bit_for_bit() -> None:
    # the Resamples path (integer counts, any block size) and the dense float path agree exactly
    rng = np.random.default_rng(5)
    x, y = _data(rng, 300, None, 13)
    R = Resamples.draw(300, 200, np.random.default_rng(0), chunk_elements=300 * 7)
    dense = weighted_statistic("kendall", x, y, R.dense())
    lazy = weighted_statistic("kendall", x, y, R)
    assert np.array_equal(dense, lazy)
    old = wk.BLOCK_ELEMENTS
    try:
        wk.BLOCK_ELEMENTS = 300 * 3
        assert np.array_equal(wk.weighted_kendall(x, y, R.dense()), dense)
    finally:
        wk.BLOCK_ELEMENTS = old
    np.testing.assert_allclose(dense[:20], _scipy(x, y, R.dense()[:20]), rtol=0, atol=1e-12)


def test_bootstrap_ci_of_kendall_uses_the_engine_and_refuses_fractional_weights() -> None:
    rng = np.random.default_rng(9)
    x, y = _data(rng, 40, None, 5)
    res = bootstrap_ci(x, y, statistic="kendall", n_resamples=50, rng=np.random.default_rng(1))
    W = Resamples.draw(40, 50, np.random.default_rng(1)).dense()
    np.testing.assert_allclose(res.samples, _scipy(x, y, W), rtol=0, atol=1e-12)
    assert res.lo < res.estimate < res.hi
    with pytest.raises(ValueError, match="whole counts"):
        wk.weighted_kendall(x, y, np.full((1, 40), 0.5))
