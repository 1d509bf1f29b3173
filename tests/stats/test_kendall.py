"""Kendall variants, acc_23 and tie calibration vs mt-metrics-eval (reference, imported at test time)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from metajudge.stats import kendall as kd

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "mt_metrics_eval"


@pytest.fixture(scope="module")
def mtme():  # type: ignore[no-untyped-def]
    for root in (REF, Path("/work/shared/reference/mt_metrics_eval")):
        if root.is_dir():
            sys.path.insert(0, str(root))
            break
    else:
        pytest.skip(reason="mt-metrics-eval reference not available")
    from mt_metrics_eval import stats  # type: ignore[import-not-found]

    return stats


def _data(seed: int, n_sys: int = 6, n_items: int = 15) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    gold = rng.integers(1, 6, size=(n_sys, n_items)).astype(float)  # Likert: many ties
    metric = np.round(gold + rng.normal(0, 1.2, size=gold.shape), 1)
    return gold, metric


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("variant", ["b", "c", "23", "acc23"])
def test_kendall_variants_equal_mt_metrics_eval(mtme, seed: int, variant: str) -> None:  # type: ignore[no-untyped-def]
    gold, metric = _data(seed)
    g, m = gold.ravel(), metric.ravel()
    ref = mtme.KendallVariants(g, m, variant=variant)[0]
    assert kd.kendall_variant(m, g, variant) == pytest.approx(ref, abs=1e-9)
    if variant != "c":
        ref_e = mtme.KendallVariants(g, m, variant=variant, epsilon=0.35)[0]
        assert kd.kendall_variant(m, g, variant, epsilon=0.35) == pytest.approx(ref_e, abs=1e-9)


@pytest.mark.parametrize("by", ["none", "item", "sys"])
def test_average_by_equals_mt_metrics_eval(mtme, by: str) -> None:  # type: ignore[no-untyped-def]
    gold, metric = _data(3)
    n_sys, n_items = gold.shape
    sys_ids = np.repeat(np.arange(n_sys), n_items)
    item_ids = np.tile(np.arange(n_items), n_sys)
    groups = {"none": None, "item": item_ids, "sys": sys_ids}[by]
    for variant in ("b", "acc23"):
        ac = mtme.AverageCorrelation(mtme.KendallVariants, n_sys, average_by=by, variant=variant)
        ref = ac(list(gold.ravel()), list(metric.ravel()))[0]
        got = kd.kendall_variant(metric.ravel(), gold.ravel(), variant, groups=groups)
        assert got == pytest.approx(ref, abs=1e-9)


def test_tau_a_by_definition() -> None:
    x, y = np.array([1.0, 2, 2, 4, 3]), np.array([1.0, 1, 2, 3, 4])
    con = dis = 0
    for i in range(5):
        for j in range(i + 1, 5):
            s = np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
            con += s > 0
            dis += s < 0
    assert kd.kendall_variant(x, y, "a") == pytest.approx((con - dis) / 10, abs=1e-12)


@pytest.mark.parametrize("by", ["none", "item", "sys"])
def test_tie_calibration_equals_mt_metrics_eval(mtme, by: str) -> None:  # type: ignore[no-untyped-def]
    gold, metric = _data(4)
    n_sys, n_items = gold.shape
    groups = {
        "none": None,
        "item": np.tile(np.arange(n_items), n_sys),
        "sys": np.repeat(np.arange(n_sys), n_items),
    }[by]
    tau, eps, _ = mtme.KendallWithTiesOpt(
        list(gold.ravel()), list(metric.ravel()), "acc23", n_sys, by, sample_rate=1.0
    )
    tc = kd.tie_calibration(metric.ravel(), gold.ravel(), groups)
    assert tc.value == pytest.approx(tau, abs=1e-9)
    assert tc.epsilon == pytest.approx(eps, abs=1e-9)
    assert "same pairs" in tc.note
    # the calibrated value is acc_23 at that epsilon
    again = kd.kendall_variant(
        metric.ravel(), gold.ravel(), "acc23", epsilon=tc.epsilon, groups=groups
    )
    assert again == pytest.approx(tc.value, abs=1e-9)


def test_tie_calibration_cv_is_not_above_the_fitted_value() -> None:
    gold, metric = _data(5, n_sys=5, n_items=40)
    items = np.tile(np.arange(40), 5)
    tc = kd.tie_calibration(metric.ravel(), gold.ravel(), items)
    cv, eps = kd.tie_calibration_cv(
        metric.ravel(), gold.ravel(), items, items, k=5, rng=np.random.default_rng(0)
    )
    assert len(eps) == 5 and 0 <= cv <= 1
    assert cv <= tc.value + 0.05


@pytest.mark.parametrize(("by", "level"), [("none", "global"), ("item", "item"),
                                           ("sys", "system-grouped")])  # fmt: skip
@pytest.mark.parametrize("stat", ["pearson", "spearman", "kendall"])
def test_levels_equal_mt_metrics_eval_average_by(mtme, by: str, level: str, stat: str) -> None:  # type: ignore[no-untyped-def]
    """metajudge's levels (stats.estimates.level_estimate) vs AverageCorrelation, missing gold cells too."""
    import scipy.stats

    from metajudge.stats.estimates import level_estimate

    gold, metric = _data(6, n_sys=5, n_items=12)
    gold = gold + np.random.default_rng(1).normal(0, 0.01, gold.shape)  # few ties
    g = gold.ravel().astype(object)
    g[[3, 17, 18, 40]] = None  # missing human scores
    n_sys, n_items = gold.shape
    fn = {"pearson": scipy.stats.pearsonr, "spearman": scipy.stats.spearmanr,
          "kendall": scipy.stats.kendalltau}[stat]  # fmt: skip
    ref = mtme.AverageCorrelation(fn, n_sys, average_by=by)(list(g), list(metric.ravel()))[0]
    y = np.array([np.nan if v is None else v for v in g], dtype=float)
    x = metric.ravel().astype(float)
    ok = np.isfinite(y)
    items = np.tile(np.arange(n_items), n_sys)[ok]
    systems = np.repeat(np.arange(n_sys), n_items)[ok]
    got = level_estimate(stat, x[ok], y[ok], items, systems, n_items, None, 0.95, level)
    assert got.value == pytest.approx(ref, abs=1e-9)
