"""``calibrate selective`` at the edges (issue 41 items 2, 6, 7; issue 44 item 16): what the
"test agreement" share is and the guarantee's own quantity beside it, valid inputs with a rare
human class, calibration sizes that can never pass, and probabilities out of [0, 1] or summing
to less than 1. Each test runs the command a user runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

CMD = ["calibrate", "selective"]
TOE = "trust_or_escalate_jung2025"


def _pairs(tmp: Path, n: int, b_wins: int) -> tuple[Path, Path]:
    """``n`` pairs, the first ``b_wins`` preferred b by the human, the rest a; a judge right on
    all but every 10th pair, with confidence 0.95 when right and 0.6 when wrong."""
    data, scores = tmp / "pairs.jsonl", tmp / "scores.jsonl"
    recs, rows = [], []
    for i in range(n):
        human = 1 if i < b_wins else -1
        recs.append(
            {
                "id": f"p{i}",
                "input": {"question": f"q{i}"},
                "a": {"system": "x", "response": "a"},
                "b": {"system": "y", "response": "b"},
                "labels": {"preference": [human]},
            }
        )
        right = i % 10 != 9
        conf = 0.95 if right else 0.6
        pb = conf if (human == 1) == right else 1 - conf
        rows += [
            {"item": f"p{i}", "side": "a", "metric": "j", "score": round(1 - pb, 6)},
            {"item": f"p{i}", "side": "b", "metric": "j", "score": round(pb, 6)},
        ]
    data.write_text("".join(json.dumps(r) + "\n" for r in recs))
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data, scores


def test_a_rare_human_class_is_valid_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """8 of 500 humans prefer b: calibration splits of 100 often hold a only; the binomial bound
    needs no second class (the old code exited 2 and leaked ``np.str_('a')``)."""
    data, scores = _pairs(tmp_path, 500, 8)
    argv = [*CMD, "--input", str(data), "--scores", str(scores), "--judge", "j"]
    assert main([*argv, "--calibration", "100", "--repeats", "50", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "np.str_" not in out + err and "one human class" not in err
    (c,) = json.loads(out)["configs"]
    assert c["splits_empty"] == 0 and c["agreement_mean"] > 0.85


def test_calibration_too_small_to_pass_is_said(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*CMD, "--dataset", TOE, "--judge", "gpt-4-turbo", "--repeats", "3"]
    assert main([*argv, "--calibration", "20"]) == 0
    out, err = capsys.readouterr()
    said = "20 calibration items can never pass"
    assert said in err and said in out and "--calibration 30 or more" in err
    # delta small enough that the exact bound, not the 30-item floor, decides
    assert main([*argv, "--calibration", "40", "--risk", "0.05", "--delta", "0.05"]) == 0
    err = capsys.readouterr().err
    assert "40 calibration items can never pass" in err and "only from 59 items" in err
    assert main([*argv, "--calibration", "30"]) == 0
    assert "can never pass" not in capsys.readouterr().err


def test_test_share_is_named_and_the_population_quantity_shown(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gpt-4-turbo, 50 splits: the realised test-set share 0.82 counts its 39 splits; the
    guarantee's own quantity (population violations, the dataset as the population) is
    beside it and within delta."""
    argv = [*CMD, "--dataset", TOE, "--judge", "gpt-4-turbo", "--repeats", "50", "--seed", "0"]
    assert main(argv) == 0
    md = capsys.readouterr().out
    assert "| 0.82 (32 of 39) |" in md
    assert "it is not the guarantee's probability" in md
    assert "| 0.100 (38 of 50 keep any) |" in md
    assert main([*argv, "--format", "json"]) == 0
    (c,) = json.loads(capsys.readouterr().out)["configs"]
    assert c["population_violation_share"] <= 0.1 and c["population_draws_kept"] == 38


def _released(data_dir: Path, tmp: Path, line: int, probs: list[float]) -> Path:
    lines = (data_dir / TOE / "gpt-4-turbo.calibration.jsonl").read_text().splitlines()
    row = json.loads(lines[line - 1])
    row["probs"] = probs
    lines[line - 1] = json.dumps(row)
    p = tmp / "judge.test.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_probabilities_outside_0_1_are_named_for_it(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """[1.5, -0.5] sums to 1: the fault is the values (the old message: "sum to 1, not 1")."""
    bad = _released(data_dir, tmp_path, 4, [1.5, -0.5])
    assert main([*CMD, "--input", str(bad), "--judge", "judge"]) == 2
    err = capsys.readouterr().err
    assert "judge.test.jsonl:4: field probs: probability 1.5 outside [0, 1]" in err
    assert "sum to" not in err
    # a judge column of a score file: side a 1.5, side b -0.5
    data, scores = _pairs(tmp_path, 60, 30)
    rows = [json.loads(x) for x in scores.read_text().splitlines()]
    rows[2]["score"], rows[3]["score"] = 1.5, -0.5
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main([*CMD, "--input", str(data), "--scores", str(scores), "--judge", "j"]) == 2
    err = capsys.readouterr().err
    assert "field score: judge 'j', item 'p1': probability 1.5 outside [0, 1]" in err, err
    assert "sum to" not in err


def test_probabilities_summing_below_1_are_counted_and_said(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The released format renormalises a pair that sums to less than 1 (the rest of the mass on
    other tokens): [0.3, 0.1] becomes 0.75 / 0.25, and the output says how many and how low."""
    p = _released(data_dir, tmp_path, 4, [0.3, 0.1])
    assert main([*CMD, "--input", str(p), "--judge", "judge", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert "judge: 2 of 500 units' probabilities summed to less than 1 (lowest 0.4;" in out
    assert "renormalised to sum to 1" in out
