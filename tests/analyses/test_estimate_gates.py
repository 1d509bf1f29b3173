"""``calibrate estimate``'s honesty on few labels (issue 63), on small synthetic rows: CIs clipped to
the label scale and said so, a borrowed system's level not claimed (one named in the singular),
refused systems named beside their differences, and the selection gate on labels chosen by
outcome."""

from __future__ import annotations

import numpy as np
import pytest

from metajudge.analyses.calibration.crossfit import crossfit_rows
from metajudge.analyses.calibration.estimate import (
    Settings,
    calibrated_estimates,
    estimate_systems,
    selection_gate,
)


def _rows(labelled, n: int = 120, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    out = []
    for s, shift in (("A", 0.0), ("B", 1.2), ("C", 0.6)):
        judge = np.clip(rng.normal(3.5 + shift, 0.8, n), 1, 5)
        label = np.clip(judge + rng.normal(0, 0.7, n), 1, 5)
        for i in range(n):
            keep = labelled(s, i, label[i])
            out.append(
                (s, f"d{i}", f"d{i}::{s}", float(judge[i]), float(label[i]) if keep else None)
            )
    return crossfit_rows(out, scale=(1.0, 5.0), source="synthetic")


def test_clipped_borrowed_and_marked() -> None:
    # A: 8 labels; B (near the top of the scale): 2, a CI past both ends; C: none
    rows = _rows(lambda s, i, y: (s == "A" and i % 15 == 0) or (s == "B" and i in (0, 1)))
    res = calibrated_estimates(rows)
    by = {s["system"]: s for s in res.systems}
    assert all(1.0 <= s["lo"] <= s["hi"] <= 5.0 for s in res.systems)
    assert by["B"]["lo"] == 1.0 and by["B"]["hi"] == 5.0  # clipped at both ends
    assert any("clipped to the label scale [1, 5]" in n for n in res.notes)
    assert all(-4.0 <= d["lo"] <= d["hi"] <= 4.0 for d in res.differences)
    assert by["C"]["route"] == "borrowed"
    assert by["C"]["level_claim"] == "refused: no labels of its own: label ≥ 5 of its items"
    assert any("C has no labels of its own; its estimate uses" in n for n in res.notes)
    marked = {(d["a"], d["b"]): d["level_refused"] for d in res.differences}
    assert "C" in marked[("A", "C")] and "C" in marked[("B", "C")]


def test_the_gate_flags_labels_chosen_by_outcome() -> None:
    rng = np.random.default_rng(1)
    random = _rows(lambda s, i, y: rng.random() < 0.2)
    assert not selection_gate(random)["flagged"]
    chosen = _rows(lambda s, i, y: rng.random() < (0.4 if y > 4 else 0.05))
    g = selection_gate(chosen)
    assert (
        g["flagged"] and g["labelled_mean"] > g["all_mean"] and "chosen by outcome" in g["warning"]
    )


def test_a_floored_variance_takes_the_welch_df_of_its_own_and_pooled_parts() -> None:
    """A: 5 labels of its own (5 clusters), its residuals' own variance below the pooled floor:
    the sampling variance is the floor F, its df Welch–Satterthwaite's of the own part o (its
    mean squared residual over its 5 labels, df 5: a mean of squares about 0) and F − o (df: all
    labelled clusters − 1), F² / (o²/5 + (F − o)²/(G − 1))."""
    rows = _rows(lambda s, i, y: (s == "A" and i < 5) or (s != "A" and i % 4 == 0))
    cf, systems, fits = estimate_systems(rows, Settings())
    a = fits["A"][1]
    by = {s["system"]: s for s in systems}
    assert a.own_df == 5.0 and 0 < a.own_var < a.var_floor  # floored, an own part below it
    assert by["A"]["se_sampling"] == pytest.approx(a.var_floor**0.5)
    f, o, g = a.var_floor, a.own_var, cf.n_clusters
    assert g == 33  # the labelled documents: d0–d4 and every fourth
    assert a.df_sampling == pytest.approx(f**2 / (o**2 / 5 + (f - o) ** 2 / (g - 1)))
    assert 5 < a.df_sampling < g - 1
