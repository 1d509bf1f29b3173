"""Partial labels in the canonical format (issue 40): a record without human labels (``scores``
absent or ``{}``) is valid; ``data validate`` counts labelled and unlabelled records per system;
``meta-eval`` and ``calibrate fit`` use the labelled subset and say how many they left out;
``calibrate estimate`` reads the file with a judge score file that covers every record."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from metajudge.cli import main

ROOT = Path(__file__).resolve().parents[2]
PARTIAL = ROOT / "tests" / "fixtures" / "byod" / "partial.jsonl"
JUDGE = ROOT / "tests" / "fixtures" / "byod" / "partial_judge.csv"


def test_validate_counts_labelled_per_system(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["data", "validate", str(PARTIAL)]) == 0
    out = capsys.readouterr().out
    assert "12 likert records" in out and "labelled records: 8 of 12" in out
    assert "abstractive: 4 labelled, 2 unlabelled" in out
    assert "extractive: 4 labelled, 2 unlabelled" in out


def test_null_scores_stay_an_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    lines = PARTIAL.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[1]) | {"scores": None}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(rec)]) + "\n", encoding="utf-8")
    assert main(["data", "validate", str(bad)]) == 2
    assert "bad.jsonl:2: field scores: expected an object, got null" in capsys.readouterr().err


def test_meta_eval_uses_the_labelled_subset(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["meta-eval", "--input", str(PARTIAL), "--scores", str(JUDGE), "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "eval"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "8 responses, 6 items" in out
    assert "the labelled subset: 4 records without human labels left out" in out


def test_calibrate_fit_uses_the_labelled_subset(capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["calibrate", "fit", "--input", str(PARTIAL), "--scores", str(JUDGE)]
    assert main([*argv, "--dimension", "coherence", "--repeats", "5", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 8
    assert main([*argv, "--dimension", "coherence", "--repeats", "5"]) == 0
    assert "Left out: no human score: 4." in capsys.readouterr().out


def _arena_canonical(arena: Path, out: Path) -> tuple[Path, Path]:
    """The arena sample's fresh draws as a canonical file (labels only where base has them) and
    a judge score file: the same data the folder holds."""
    card = {
        "card": {
            "name": "cje_arena_canonical",
            "kind": "likert",
            "dimensions": ["quality"],
            "scale": {"min": 0, "max": 1},
            "annotators": 1,
        }
    }
    lines, judge = [json.dumps(card)], [("item", "system", "judge")]
    for f in sorted((arena / "fresh_draws").glob("*_responses.jsonl")):
        system = f.name.removesuffix("_responses.jsonl")
        for row in map(json.loads, f.read_text(encoding="utf-8").splitlines()):
            rec = {
                "id": row["prompt_id"],
                "input": {"question": row["prompt"]},
                "system": system,
                "response": row["response"],
            }
            if row.get("oracle_label") is not None:
                rec["scores"] = {"quality": [row["oracle_label"]]}
            lines.append(json.dumps(rec))
            judge.append((row["prompt_id"], system, row["judge_score"]))
    data, scores = out / "arena.jsonl", out / "judge.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with scores.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(judge)
    return data, scores


def test_estimate_reads_a_canonical_partial_label_file(
    data_dir: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    arena = data_dir / "cje_arena_sample"
    assert arena.is_dir(), f"{arena}: the shipped dataset is missing (METAJUDGE_DATA_DIR)"
    data, scores = _arena_canonical(arena, tmp_path)
    assert main(["data", "validate", str(data)]) == 0
    out = capsys.readouterr().out
    assert "labelled records: 480 of 4000" in out and "clone: 0 labelled, 1000 unlabelled" in out
    assert (
        main(
            [
                "calibrate",
                "estimate",
                "--input",
                str(data),
                "--scores",
                str(scores),
                "--format",
                "json",
            ]
        )
        == 0
    )
    canonical = json.loads(capsys.readouterr().out)
    assert (
        main(["calibrate", "estimate", "--input", str(arena / "fresh_draws"), "--format", "json"])
        == 0
    )
    folder = json.loads(capsys.readouterr().out)
    for a, b in zip(canonical["systems"], folder["systems"], strict=True):
        assert a["system"] == b["system"] and a["route"] == b["route"]
        assert (a["value"], a["lo"], a["hi"]) == pytest.approx((b["value"], b["lo"], b["hi"]))


def test_estimate_and_plan_on_the_partial_fixture(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    src = ["--input", str(PARTIAL), "--scores", str(JUDGE), "--dimension", "coherence"]
    assert main(["calibrate", "estimate", *src, "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert [(s["labelled"], s["rows"]) for s in res["systems"]] == [(4, 6), (4, 6)]
    out = tmp_path / "next" / "selection.csv"
    assert main(["calibrate", "plan", *src, "--budget", "2", "--out", str(out.parent)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1 + 4  # the 4 unlabelled rows
