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
    _run(capsys, "plan", "--input", str(pilot), "--budget", "80", "--out", str(folder))
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
    # θ = mean of (Y before the plan, f(S) on candidates) + (1/N) Σ_selected (Y − f)/π: halving
    # every π doubles the correction; no row selected leaves none (the calibration is unchanged)
    halved, _ = value([dict(r, probability=float(r["probability"]) / 2) for r in rows], "h.csv")
    none, res0 = value([dict(r, selected=0) for r in rows], "none.csv")
    assert res0["plan"]["labelled_not_selected"] == picked
    corr = as_planned["value"] - none["value"]
    assert abs(corr) > 1e-4
    assert halved["value"] - as_planned["value"] == pytest.approx(corr, abs=1e-12)
    # the run folder's report.html says what the plan held
    page = tmp_path / "run"
    argv = ["calibrate", "estimate", "--input", str(folder), "--out", str(page)]
    assert main([*argv, "--plan", str(tmp_path / "as_planned.csv")]) == 0
    text = (page / "report.html").read_text(encoding="utf-8")
    assert "Label plan read back" in text and "base (plan-weighted)" not in text  # JS draws it
    # without the plan the same labels are taken as a uniform sample: another estimate
    capsys.readouterr()
    assert main(["calibrate", "estimate", "--input", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "weighted by the plan" not in out and f"{as_planned['value']:.4f}" not in out


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
