"""Soft pairwise accuracy vs mt-metrics-eval's pce.py (reference, imported at test time)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from metajudge.stats import spa

REF = Path("/work/shared/reference/mt_metrics_eval")
LOCAL = Path(__file__).resolve().parents[3] / "shared" / "reference" / "mt_metrics_eval"


@pytest.fixture(scope="module")
def pce():  # type: ignore[no-untyped-def]
    root = LOCAL if LOCAL.is_dir() else REF
    if not root.is_dir():
        pytest.skip(reason="mt-metrics-eval reference not available")
    sys.path.insert(0, str(root))
    from mt_metrics_eval import pce as mod  # type: ignore[import-not-found]

    return mod


def _flips_like_reference(seed: int, k: int, n: int) -> np.ndarray:
    """The reference's ±1 draws (default_rng(seed).random(float32), rounded): replayed."""
    u = np.random.default_rng(seed).random(size=(k, n), dtype=np.float32)
    return np.rint(u) * 2.0 - 1.0


def test_p_values_and_spa_equal_mt_metrics_eval(pce) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    human = rng.integers(0, 100, size=(6, 40)).astype(float)  # integers: float32-exact sums
    metric = human + rng.integers(-30, 30, size=human.shape)
    ph = pce.compute_pairwise_p_values(human, num_permutations=500, seed=4)
    pm = pce.compute_pairwise_p_values(metric, num_permutations=500, seed=4)
    flips = _flips_like_reference(4, 500, 40)
    got_h = spa.pairwise_p_values(human, flips)
    iu = np.triu_indices(6, 1)
    assert np.allclose(got_h[iu], ph[iu], atol=1e-9, rtol=0)
    ref = pce.compute_one_minus_pce(ph, pm)
    assert spa.one_minus_pce(ph, pm) == pytest.approx(ref, abs=1e-9)
    res = spa.soft_pairwise_accuracy(human, metric, flips=flips)
    assert res.value == pytest.approx(ref, abs=1e-9)


def test_missing_segments_are_dropped_and_counted() -> None:
    rng = np.random.default_rng(1)
    h = rng.normal(size=(4, 30))
    m = h + rng.normal(0, 0.5, size=h.shape)
    m[2, 3] = np.nan
    r = spa.soft_pairwise_accuracy(h, m, n_resamples=100, rng=3)
    assert r.segments_dropped == 1 and r.n_segments == 29 and 0 <= r.value <= 1
    assert r.to_dict()["seed"] == 3
