"""issue 64: the system-level resamples computed at once equal the one-resample-at-a-time loop
(Pearson to rounding, Spearman and Kendall bit for bit), a resample that leaves a system out
included."""

from __future__ import annotations

import numpy as np
import pytest

from metajudge.stats import correlation
from metajudge.stats import estimates as est


def _loop(stat, x, y, items, systems, W, n_sys):  # type: ignore[no-untyped-def]
    out = np.full(W.shape[0], np.nan)
    for b, wrow in enumerate(W[:, items]):
        bx, by = est._means(x, wrow, systems, n_sys), est._means(y, wrow, systems, n_sys)
        k = np.isfinite(bx) & np.isfinite(by)
        if correlation.undefined_reason(bx[k], by[k], min_n=est.MIN_POOLED_ROWS) is None:
            out[b] = correlation.statistic(stat, bx[k], by[k])
    return out


@pytest.mark.parametrize("stat", ["pearson", "spearman", "kendall"])
def test_vectorised_system_resamples_equal_the_loop(stat: str) -> None:
    rng = np.random.default_rng(1)
    n_sys, n_items = 14, 60
    items = np.repeat(np.arange(n_items), n_sys)
    systems = np.tile(np.arange(n_sys), n_items)
    y = np.round(rng.normal(size=items.size) + 0.2 * systems)  # integer labels: tied means
    x = y + rng.normal(size=items.size)
    keep = ~((systems == 13) & (items < 55))  # system 13 only on the last 5 inputs
    x, y, items, systems = x[keep], y[keep], items[keep], systems[keep]
    W = rng.multinomial(n_items, np.ones(n_items) / n_items, size=300).astype(float)
    got = est._system_samples(stat, x, y, items, systems, W, n_sys)
    want = _loop(stat, x, y, items, systems, W, n_sys)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    if stat == "pearson":
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    else:
        assert np.array_equal(got, want, equal_nan=True)
    missing = (W[:, 55:] == 0).all(axis=1)
    assert missing.any() and np.isfinite(got[missing]).all()  # 13 systems there, not none
