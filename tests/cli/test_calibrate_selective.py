"""``metajudge calibrate selective``: the user guide's command (docs/calibrating.md) and its
numbers, the released format through --input / --scores as it is, and bad input (exit 2, field
named)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from metajudge.cli import main

ROOT = Path(__file__).resolve().parents[2]
CMD = ["calibrate", "selective"]
TOE = "trust_or_escalate_jung2025"
JUDGES = ["--judge", "mistral-7b-instruct", "--judge", "gpt-3.5-turbo", "--judge", "gpt-4-turbo"]


def _guide_section() -> str:
    text = (ROOT / "docs" / "calibrating.md").read_text(encoding="utf-8")
    return text.split("## Selective judging", 1)[1].split("\n## ", 1)[0]


def _run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_guide_command_and_numbers(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sec = _guide_section()
    cmd = re.search(r"```bash\n(metajudge .+)\n```", sec).group(1)  # type: ignore[union-attr]
    argv = shlex.split(cmd)[1:]
    by = {c["name"]: c for c in _run_json(argv, capsys)["configs"]}
    gpt4, cas = (
        by["gpt-4-turbo alone"],
        by["cascade mistral-7b-instruct -> gpt-3.5-turbo -> gpt-4-turbo"],
    )
    flat = " ".join(sec.split())
    assert (
        f"GPT-4-turbo alone keeps {gpt4['coverage_mean']:.1%} of the test items at {gpt4['agreement_mean']:.3f}"
        in flat
    )
    assert (
        f"(raw agreement {gpt4['raw_agreement_mean']:.3f}; {gpt4['splits_empty']} of 200 splits"
        in flat
    )
    assert (
        f"keeps {cas['coverage_mean']:.1%} at {cas['agreement_mean']:.3f} ({cas['splits_empty']} keep"
        in flat
    )
    assert f"calls {cas['cost_per_1000']:,.0f} judges per 1,000 items" in flat
    assert gpt4["agreement_mean"] >= 0.85 and cas["agreement_mean"] >= 0.85
    by = {c["name"]: c for c in _run_json([*argv, "--thresholds", "distinct"], capsys)["configs"]}
    gpt4, cas = (
        by["gpt-4-turbo alone"],
        by["cascade mistral-7b-instruct -> gpt-3.5-turbo -> gpt-4-turbo"],
    )
    assert (
        f"GPT-4-turbo alone then keeps {gpt4['coverage_mean']:.1%} at {gpt4['agreement_mean']:.3f}"
        in flat
    )
    assert f"the cascade {cas['coverage_mean']:.1%} at {cas['agreement_mean']:.3f}" in flat


def test_markdown_costs_and_out_file(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = [
        *CMD,
        "--dataset",
        TOE,
        *JUDGES,
        "--repeats",
        "5",
        "--out",
        str(out),
        "--cost",
        "mistral-7b-instruct=0.1",
        "--cost",
        "gpt-3.5-turbo=0.5",
        "--cost",
        "gpt-4-turbo=10",
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "| gpt-4-turbo alone |" in text and "cost units" in text and "10,000.0 |" in text
    for name in ("result.json", "selective.md", "coverage_agreement.png", "report.html"):
        assert (out / name).is_file() and str(out / name) in text
    html = (out / "report.html").read_text()
    assert "Configurations (means over the splits)" in html and "data:image/png;base64," in html
    d = json.loads((out / "result.json").read_text())
    # the curve: each judge's most confident shares of all 500 pairs, 5% .. 100%
    top = d["curves"]["gpt-4-turbo"]
    assert [p[0] for p in top][:2] == [0.05, 0.1] and top[-1][:2] == [1.0, 0.784]
    cas = d["configs"][-1]
    assert cas["costs"] == [0.1, 0.5, 10.0] and cas["reference_cost_per_1000"] == 10_000.0
    for o in cas["splits"]:  # each call priced: all to Mistral, the rest on to GPT-3.5, then GPT-4
        left1 = 1 - o["share_by_judge"][0]
        left2 = left1 - o["share_by_judge"][1]
        assert o["cost_per_item"] == pytest.approx(0.1 + 0.5 * left1 + 10 * left2)


def test_released_files_through_input_and_scores_as_they_are(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = data_dir / TOE
    pinned = _run_json(
        [*CMD, "--input", str(src / "gpt-4-turbo.calibration.jsonl"), *JUDGES], capsys
    )
    named = _run_json([*CMD, "--dataset", TOE, *JUDGES], capsys)
    assert pinned["configs"] == named["configs"]
    # files the project has never seen (the last 100 lines dropped, renamed *.test.jsonl)
    paths = {}
    for j in ("mistral-7b-instruct", "gpt-3.5-turbo", "gpt-4-turbo"):
        lines = (src / f"{j}.calibration.jsonl").read_text().splitlines()[:400]
        paths[j] = tmp_path / f"{j}.test.jsonl"
        paths[j].write_text("\n".join(lines) + "\n")
    argv = [
        *CMD,
        "--input",
        str(paths["mistral-7b-instruct"]),
        "--scores",
        "shipped",
        "--scores",
        str(paths["gpt-3.5-turbo"]),
        "--scores",
        str(paths["gpt-4-turbo"]),
        *JUDGES,
    ]
    d = _run_json(argv, capsys)
    assert (d["n_units"], d["n_calibration"]) == (400, 200)
    assert [c["name"] for c in d["configs"]][-1].startswith("cascade mistral-7b-instruct")
    assert main(["data", "validate", str(paths["gpt-4-turbo"])]) == 0
    assert "Trust-or-Escalate released format" in capsys.readouterr().out


def _bad(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_bad_input_names_the_field(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = [*CMD, "--dataset", TOE, "--judge", "gpt-4-turbo"]
    assert "--risk" in _bad([*base, "--risk", "0"], capsys)
    assert "--risk" in _bad([*base, "--risk", "1.2"], capsys)
    assert "delta" in _bad([*base, "--delta", "1"], capsys)
    assert "judge" in _bad([*CMD, "--dataset", TOE, "--judge", "gpt-5"], capsys)
    # a released-format file whose probabilities sum to more than 1
    lines = (data_dir / TOE / "gpt-4-turbo.calibration.jsonl").read_text().splitlines()
    row = json.loads(lines[3])
    row["probs"] = [0.7, 0.6]
    bad = tmp_path / "judge.test.jsonl"
    bad.write_text("\n".join([*lines[:3], json.dumps(row), *lines[4:]]) + "\n")
    err = _bad([*CMD, "--input", str(bad), "--judge", "judge"], capsys)
    assert "judge.test.jsonl:4: field probs" in err and "sum to 1.3" in err
    # canonical data: side probabilities that do not sum to 1
    data, scores = tmp_path / "pairs.jsonl", tmp_path / "scores.jsonl"
    recs = [
        {
            "id": f"p{i}",
            "input": {"question": "q"},
            "a": {"system": "x", "response": "a"},
            "b": {"system": "y", "response": "b"},
            "labels": {"preference": [1]},
        }
        for i in range(80)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in recs))
    rows = [
        {"item": f"p{i}", "side": s, "metric": "j", "score": p}
        for i in range(80)
        for s, p in (("a", 0.2), ("b", 0.8))
    ]
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rows[5]["score"] = 0.3
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    err = _bad([*CMD, "--input", str(data), "--scores", str(scores), "--judge", "j"], capsys)
    assert "field score" in err and "sum to" in err and "'p2'" in err
