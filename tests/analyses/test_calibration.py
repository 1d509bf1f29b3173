"""The calibration maps and protocols of :mod:`metajudge.analyses.calibration` (the commands are
tested in tests/cli/test_calibrate.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from metajudge.analyses.calibration import maps
from metajudge.analyses.calibration.fit import calibrate_fit
from metajudge.analyses.calibration.sources import table_from_csv
from metajudge.analyses.calibration.table import RatingTable


def _table(data_dir: Path, dim: str = "consistency") -> RatingTable:
    return table_from_csv(data_dir / "conformal_judge_sheng2025" / "summeval" / f"4omini_{dim}.csv")


def test_linear_and_ordinal_lower_the_held_out_error(data_dir: Path) -> None:
    t = _table(data_dir)
    for method in ("linear", "ordinal"):
        r = calibrate_fit(t, method, repeats=2)
        assert r.after["mae"] < 0.5 * r.before["mae"], (method, r.before, r.after)


def test_temperature_lowers_brier_and_ece(data_dir: Path) -> None:
    r = calibrate_fit(_table(data_dir), "temperature", repeats=3)
    assert r.after["brier"] < r.before["brier"] and r.after["ece"] < 0.5 * r.before["ece"]


def test_cross_fitting_covers_every_row_once(data_dir: Path) -> None:
    r = calibrate_fit(_table(data_dir), "isotonic", folds=5)
    assert r.protocol["kind"] == "cross-fit" and abs(r.after["mae"] - 0.33) < 0.02


def test_platt_recovers_a_known_miscalibration() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(0.02, 0.98, 4000)
    truth = 1 / (1 + np.exp(-2.0 * np.log(p / (1 - p))))  # the true probability: logit doubled
    y = (rng.uniform(size=p.size) < truth).astype(float)
    params = maps.fit_map("platt", p, y)
    assert abs(params["a"] - 2.0) < 0.2 and abs(params["b"]) < 0.15
    t = RatingTable(
        pred=p,
        human=y,
        ids=tuple(map(str, range(p.size))),
        judge="j",
        signature="j",
        scale=(0.0, 1.0),
        source="synthetic",
    )
    r = calibrate_fit(t, "platt", repeats=2)
    assert r.after["ece"] < r.before["ece"] and r.after["brier"] < r.before["brier"]


def test_isotonic_file_map_equals_sklearn(data_dir: Path) -> None:
    from sklearn.isotonic import IsotonicRegression

    t = _table(data_dir, "fluency")
    params = maps.fit_map("isotonic", t.pred, t.human)
    iso = IsotonicRegression(out_of_bounds="clip").fit(t.pred, t.human)
    x = np.linspace(0.5, 5.5, 101)
    assert np.allclose(maps.apply_map("isotonic", params, x), iso.predict(x))
