"""Calibration in ``report.html``: ``calibrate fit --out`` (the reliability diagram),
``calibrate conformal --out`` (each test item's interval or prediction set in the disagreement
browser) and ``calibrate selective --out`` (the coverage-vs-agreement curve), on the real
released data (Sheng et al. 2025 SummEval CSV, trust_or_escalate_jung2025)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from metajudge.cli import main

TOE = "trust_or_escalate_jung2025"


def _sheng(data_dir: Path, dim: str = "fluency") -> str:
    return str(data_dir / "conformal_judge_sheng2025" / "summeval" / f"4omini_{dim}.csv")


def _page(path: Path) -> tuple[str, dict]:
    text = path.read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.DOTALL)
    assert m is not None
    return text, json.loads(m.group(1))


def _run(capsys, argv: list[str]) -> dict:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_fit_report_has_the_reliability_diagram(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "fit"
    argv = ["calibrate", "fit", "--ratings", _sheng(data_dir), "--method", "temperature"]
    r = _run(capsys, [*argv, "--repeats", "2", "--out", str(out)])
    names = {p.name for p in out.iterdir()}
    assert {"result.json", "fit.md", "calibrator.json", "reliability.png", "report.html"} <= names
    text, d = _page(out / "report.html")
    assert text.count('<img alt="reliability.png"') == 1 and text.count("<img ") == 1
    assert d["kind"] == "calibrate-fit" and len(d["tables"]) == 2
    measures, bins = d["tables"]
    assert [row[0] for row in measures["rows"]] == ["MAE", "RMSE", "BRIER", "ECE"]
    assert measures["rows"][2][1] == round(r["before"]["brier"], 4)
    assert len(bins["rows"]) == len(r["reliability"]["before"]) == 10
    assert bins["rows"][0][2] == round(r["reliability"]["before"][0]["pred"], 4)
    assert json.loads((out / "calibrator.json").read_text()) == r["calibrator"]


def test_conformal_report_browses_interval_widths(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "conf"
    argv = [
        "calibrate",
        "conformal",
        "--ratings",
        _sheng(data_dir, "consistency"),
        "--repeats",
        "1",
    ]
    r = _run(capsys, [*argv, "--method", "split", "--method", "isotonic-split", "--out", str(out)])
    text, d = _page(out / "report.html")
    assert 'data-tab="browser"' in text
    assert [v["name"] for v in d["views"]] == ["split", "isotonic-split"]
    assert len(d["items"]) == 800  # the test half, each row once
    for v, m in zip(d["views"], r["methods"], strict=True):
        assert v["kind"] == "interval" and not v["set"] and len(v["rows"]) == 800
        widths = [row["g"] for row in v["rows"]]
        assert widths == sorted(widths, reverse=True)  # widest first
        assert np.mean(widths) == pytest.approx(m["width"], abs=1e-4)  # one split: its mean
        assert np.mean([row["w"] for row in v["rows"]]) == pytest.approx(1 - m["coverage"])
    assert (out / "intervals.csv").read_text().count("\n") == 1 + 1600


def test_conformal_report_browses_prediction_sets(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "sets"
    argv = ["calibrate", "conformal", "--dataset", TOE, "--scores", "shipped:gpt-4-turbo"]
    r = _run(capsys, [*argv, "--repeats", "1", "--out", str(out)])
    text, d = _page(out / "report.html")
    assert 'data-tab="browser"' in text
    assert [v["name"] for v in d["views"]] == ["lac", "aps"]
    assert len(d["items"]) == 250 and len(d["resp"]) == 500  # the pairs, with their responses
    for v, m in zip(d["views"], r["methods"], strict=True):
        assert v["set"] and len(v["rows"]) == 250
        assert np.mean([row["g"] for row in v["rows"]]) == pytest.approx(m["size"])
        assert np.mean([1 - row["w"] for row in v["rows"]]) == pytest.approx(m["coverage"])
        assert {row["n"] for row in v["rows"]} <= {"a", "b", "a|b", "(empty)"}
        assert all(row["r"] for row in v["rows"])  # each row opens its two responses
    rows = d["tables"][0]["rows"]
    assert [row[0] for row in rows] == ["lac", "aps"] and rows[0][1] == round(
        r["methods"][0]["coverage"], 4
    )


def test_selective_report_has_the_coverage_agreement_curve(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "sel"
    argv = ["calibrate", "selective", "--dataset", TOE, "--judge", "gpt-3.5-turbo"]
    r = _run(capsys, [*argv, "--judge", "gpt-4-turbo", "--out", str(out)])
    text, d = _page(out / "report.html")
    assert text.count('<img alt="coverage_agreement.png"') == 1 and text.count("<img ") == 1
    configs, curve = d["tables"]
    assert len(configs["rows"]) == len(r["configs"]) == 3  # two judges alone and the cascade
    assert len(curve["rows"]) == 20 and curve["columns"] == [
        "coverage",
        "gpt-3.5-turbo",
        "gpt-4-turbo",
    ]
