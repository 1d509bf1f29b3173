"""One pass of per-item sums (stats/moments.py): a column shared by several requests (the count
column of every Pearson, the y columns of metrics against the same labels) is summed once, and
every value is the one each request gets alone, to rounding: a BLAS product's summation order
may depend on how many columns it has (OpenBLAS's AVX-512 kernels: 1e-16 apart)."""

from __future__ import annotations

import numpy as np
import pytest

from metajudge.stats import moments
from metajudge.stats.resample import Resamples
from metajudge.stats.weighted import weighted_statistics


def test_shared_columns_summed_once_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    n_items = 200
    items = np.repeat(np.arange(n_items), 2)
    y = np.clip(np.rint(rng.normal(size=items.size)), -2, 2)
    xs = [rng.normal(size=items.size) for _ in range(3)]
    widths: list[int] = []
    real = moments.resample_sums

    def spy(store: object, M: np.ndarray) -> np.ndarray:
        widths.append(M.shape[1])
        return real(store, M)

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
