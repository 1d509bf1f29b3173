"""Agreement statistics against their reference implementations (sklearn, krippendorff)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from metajudge.stats.agreement import (
    cohen_kappa,
    decision_disagreement,
    flip_rate,
    krippendorff_alpha,
)
from metajudge.stats.decisions import tie_decisions


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(weights: str | None) -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(-1, 2, 400)
    b = np.clip(a + rng.integers(-1, 2, 400) * (rng.random(400) < 0.4), -1, 1)
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(
        cohen_kappa_score(a, b, weights=weights), abs=1e-12
    )


def test_cohen_kappa_edge_cases() -> None:
    assert cohen_kappa([1, 0, -1], [1, 0, -1]) == pytest.approx(1.0)
    assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))  # one category: undefined, not 1
    assert cohen_kappa([1, np.nan, 0, -1], [1, 0, 0, -1]) == pytest.approx(1.0)  # NaN pair dropped
    with pytest.raises(ValueError, match="not in"):
        cohen_kappa([2, 0], [0, 0], labels=(-1, 0, 1))


@pytest.mark.parametrize("level", ["interval", "ordinal", "nominal"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_closed_form_matches_package_on_binned_data(level: str, seed: int) -> None:
    """The closed form is checked against the krippendorff package where the package can run."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=300)
    data = np.vstack(
        [
            np.clip(np.round(truth * 1.2 + rng.normal(scale=s, size=300) + 3), 1, 5)
            for s in (0.5, 0.8, 1.2)
        ]
    )
    data[rng.random(data.shape) < 0.1] = np.nan
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level=level) == pytest.approx(ref, abs=1e-10)


def test_alpha_interval_on_continuous_scores_is_fast_and_bounded() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=20000)
    data = np.vstack(
        [x + rng.normal(scale=0.3, size=x.size), x + rng.normal(scale=0.3, size=x.size)]
    )
    a = krippendorff_alpha(
        data, level="interval"
    )  # 40,000 distinct values: the package would need the V×V matrix
    assert 0.85 < a < 0.95
    assert krippendorff_alpha(np.vstack([x, x]), level="ordinal") == pytest.approx(1.0)


def test_alpha_ignores_unpairable_units_and_rejects_bad_shape() -> None:
    data = np.array([[1, 2, 3, np.nan], [1, 2, 3, 5.0]])
    assert krippendorff_alpha(data) == pytest.approx(krippendorff_alpha(data[:, :3]))
    with pytest.raises(ValueError, match="2-D"):
        krippendorff_alpha([1, 2, 3])
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(data, level="ratio")  # type: ignore[arg-type]


def test_decisions_flip_and_disagreement() -> None:
    d = tie_decisions([0.5, -0.5, 0.01, np.nan], 0.05)
    assert d[:3].tolist() == [1.0, -1.0, 0.0] and np.isnan(d[3])
    rate, n = flip_rate([1, 1, -1, 0, 1], [1, -1, 1, 1, 0])
    assert (rate, n) == (pytest.approx(2 / 3), 3)
    dis, n2 = decision_disagreement([1, 1, -1, 0, 1], [1, -1, 1, 1, 0])
    assert (dis, n2) == (pytest.approx(0.8), 5)
