"""``calibrate estimate --plan``: labels collected by ``calibrate plan``'s active selection are
weighted by 1/probability, through the commands a user runs: plan on a pilot, label the selected
items, estimate with the plan.

The pilot: the 480 labelled base rows of CJE's arena sample (``cje_arena_sample``), 120 of them
keeping their labels, the other 360 hidden; the selected ones get their hidden labels back."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from metajudge.cli import main

PILOT = 120


def _pilot(data_dir: Path, tmp_path: Path) -> tuple[Path, dict[str, float]]:
    src = data_dir / "cje_arena_sample" / "fresh_draws" / "base_responses.jsonl"
    assert src.is_file(), f"{src}: the shipped dataset is missing (METAJUDGE_DATA_DIR)"
    rows = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines()]
    lab = [r for r in rows if r.get("oracle_label") is not None]
    random.Random(0).shuffle(lab)
    hidden = {r["prompt_id"]: r["oracle_label"] for r in lab[PILOT:]}
    d = tmp_path / "pilot"
    d.mkdir()
    _write(d, [dict(r, oracle_label=None) if r["prompt_id"] in hidden else r for r in lab])
    return d, hidden


def _write(d: Path, rows: list[dict]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (d / "base_responses.jsonl").write_text(text, encoding="utf-8")


def _run(capsys, *argv: str) -> dict:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main(["calibrate", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _plan_file(path: Path, rows: list[dict]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.fixture
def labelled(data_dir: Path, tmp_path: Path, capsys) -> tuple[Path, list[dict]]:  # type: ignore[no-untyped-def]
    """The plan's candidates (CSV rows) and a folder with the selected ones labelled."""
    pilot, hidden = _pilot(data_dir, tmp_path)
    folder = tmp_path / "plan"
    argv = ["--budget", "80", "--mix", "0.2", "--out", str(folder)]  # --mix: active as it says
    _run(capsys, "plan", "--input", str(pilot), *argv)
    plan = folder / "selection.csv"
    rows = list(csv.DictReader(plan.open(encoding="utf-8")))
    assert len(rows) == 480 - PILOT
    assert len({r["probability"] for r in rows}) > 1  # active: unequal probabilities
    chosen = {r["cluster"] for r in rows if r["selected"] == "1"}
    new = tmp_path / "labelled"
    new.mkdir()
    recs = [json.loads(x) for x in (pilot / "base_responses.jsonl").read_text().splitlines()]
    _write(
        new,
        [
            dict(r, oracle_label=hidden[r["prompt_id"]]) if r["prompt_id"] in chosen else r
            for r in recs
        ],
    )
    return new, rows


def test_the_plan_weights_each_new_label_by_one_over_its_probability(  # type: ignore[no-untyped-def]
    labelled: tuple[Path, list[dict]], tmp_path: Path, capsys
) -> None:
    folder, rows = labelled
    picked = sum(r["selected"] == "1" for r in rows)

    def value(plan_rows: list[dict], name: str) -> tuple[dict, dict]:
        plan = _plan_file(tmp_path / name, plan_rows)
        res = _run(capsys, "estimate", "--input", str(folder), "--plan", str(plan))
        return res["systems"][0], res

    as_planned, res = value(rows, "as_planned.csv")
    whole = _run(capsys, "estimate", "--input", str(folder), "--plan", str(tmp_path / "plan"))
    assert whole["systems"][0] == as_planned  # the plan's run folder reads as its selection.csv
    assert as_planned["route"] == "ipw" and as_planned["labelled"] == PILOT + picked
    assert res["plan"]["selected_labelled"] == picked and res["plan"]["candidates"] == 360
    assert any("weighted by 1/probability" in n for n in res["notes"])
    # θ = mean f(S) + c, c the residuals' mean weighted by 1/q, q = p₀ + (1 − p₀)π (p₀ the
    # share labelled before the plan): a uniform plan weighs every label alike, so it gives
    # the plain estimate exactly; no row selected leaves the pilot's residuals alone
    mean = sum(float(r["probability"]) for r in rows) / len(rows)
    flat, _ = value([dict(r, probability=mean) for r in rows], "flat.csv")
    plain = _run(capsys, "estimate", "--input", str(folder))["systems"][0]
    assert plain["route"] == "augmented"
    assert flat["value"] == pytest.approx(plain["value"], abs=1e-12)
    assert abs(as_planned["value"] - plain["value"]) > 1e-5  # the active π weigh unequally
    none, res0 = value([dict(r, selected=0) for r in rows], "none.csv")
    assert res0["plan"]["labelled_not_selected"] == picked
    assert abs(as_planned["value"] - none["value"]) > 1e-4
    assert as_planned["lo"] >= 0 and as_planned["hi"] <= 1  # clipped to the label scale
    # the run folder's report.html says what the plan held
    page = tmp_path / "run"
    argv = ["calibrate", "estimate", "--input", str(folder), "--out", str(page)]
    assert main([*argv, "--plan", str(tmp_path / "as_planned.csv")]) == 0
    text = (page / "report.html").read_text(encoding="utf-8")
    assert "Label plan read back" in text and "base (plan-weighted)" in text  # the forest SVG
    # without the plan the same labels are taken as a uniform sample (the value: above)
    capsys.readouterr()
    assert main(["calibrate", "estimate", "--input", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "weighted by the plan" not in out
    assert "Selection gate: passed" in out


def test_the_weighted_estimate_by_hand() -> None:
    """The --plan estimate is mean f(S) + Σ w (Y − f_oof(S)) / Σ w over the used labels, w = 1/q
    (q = p₀ + (1 − p₀)π; the pilot rows take the π of the candidate nearest in judge score)."""
    import numpy as np

    from metajudge.analyses.calibration.crossfit import crossfit_rows, fit_crossfit
    from metajudge.analyses.calibration.estimate import Settings, estimate_systems

    rng = np.random.default_rng(3)
    n = 400
    judge = rng.uniform(0, 1, n)
    label = np.clip(judge + rng.normal(0, 0.1 + 0.3 * judge, n), 0, 1)
    pilot = np.arange(n) < 40
    pi = np.where(pilot, np.nan, 0.05 + 0.3 * judge)
    drawn = ~pilot & (rng.random(n) < np.nan_to_num(pi))
    raw = [
        ("s", f"c{i}", f"i{i}", float(judge[i]), float(label[i]) if pilot[i] or drawn[i] else None)
        for i in range(n)
    ]
    rows = crossfit_rows(raw, scale=(0.0, 1.0), source="x")
    from dataclasses import replace

    rows = replace(rows, pi=pi, drawn=drawn)
    _, (est,), _ = estimate_systems(rows, Settings(folds=10))
    cf = fit_crossfit(rows, folds=10)
    used = pilot | drawn
    cand_j, cand_pi = judge[~pilot], pi[~pilot]
    near = np.array([cand_pi[np.argmin(np.abs(cand_j - x))] for x in judge[pilot]])
    q = np.where(pilot, 0.0, pi)
    q[pilot] = near
    q = 0.1 + 0.9 * q
    w = 1 / q[used]
    res = label[used] - cf.out_of_fold(judge[used], rows.cluster[used])
    want = cf.predict(judge).mean() + np.sum(w * res) / np.sum(w)
    assert est["route"] == "ipw" and est["value"] == pytest.approx(want, abs=1e-12)


def test_a_plan_that_does_not_fit_the_data_exits_2(  # type: ignore[no-untyped-def]
    labelled: tuple[Path, list[dict]], tmp_path: Path, capsys
) -> None:
    folder, rows = labelled
    argv = ["calibrate", "estimate", "--input", str(folder), "--plan"]
    bad = _plan_file(tmp_path / "other.csv", [*rows, dict(rows[0], item="nowhere#0")])
    capsys.readouterr()
    assert main([*argv, str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:{len(rows) + 2}" in err and "base:nowhere#0 is not a row" in err
    zero = _plan_file(tmp_path / "zero.csv", [dict(rows[0], probability=0), *rows[1:]])
    assert main([*argv, str(zero)]) == 2
    assert "probability 0 outside (0, 1]" in capsys.readouterr().err
    j = next(j for j, r in enumerate(rows) if r["selected"] == "0")  # still unlabelled
    short = _plan_file(tmp_path / "short.csv", rows[:j] + rows[j + 1 :])
    assert main([*argv, str(short)]) == 2
    assert "1 unlabelled row(s) are not in the plan" in capsys.readouterr().err
