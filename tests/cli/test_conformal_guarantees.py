"""``calibrate conformal`` at small calibration sizes and what its guarantees cover (issue 41,
items 1, 3, 8, 10), on the released GPT-4o-mini SummEval files of Sheng et al. 2025 through the
command a user runs. The reduced version of ``benchmarks/bench_conformal_coverage.py`` is here:
split-conformal coverage at 20 calibration rows."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from metajudge.cli import main

ROOT = Path(__file__).resolve().parents[2]
CMD = ["calibrate", "conformal"]
BINS = ["[1, 2)", "[2, 3)", "[3, 4)", "[4, 5]"]
THIRDS = [(3 + k) / 3 for k in range(13)]  # every mean of 3 expert ratings on 1..5


def _sheng(data_dir: Path, dim: str) -> Path:
    return data_dir / "conformal_judge_sheng2025" / "summeval" / f"4omini_{dim}.csv"


def _first_rows(data_dir: Path, tmp_path: Path, n: int) -> str:
    """The issue's reproduction: the first ``n`` rows of the 4omini coherence file."""
    lines = _sheng(data_dir, "coherence").read_text().splitlines()[: n + 1]
    path = tmp_path / f"c{n}.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _run(capsys, argv: list[str]) -> tuple[dict, str]:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


def test_too_few_calibration_rows_give_the_whole_scale_with_a_warning(
    data_dir: Path, tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    """5 calibration rows at alpha 0.1: the exact quantile is infinite (9 rows needed); the
    interval is the whole card scale [1, 5] (it was the calibration rows' [min, max]: coverage
    0.808), and the output says so."""
    r, err = _run(
        capsys, [*CMD, "--ratings", _first_rows(data_dir, tmp_path, 10), "--method", "split"]
    )
    (m,) = r["methods"]
    assert (m["coverage"], m["width"], m["whole_scale"]) == (1.0, 4.0, 1.0)
    assert "warning: too few calibration rows for alpha 0.1" in err and "at least 9 rows" in err
    assert r["warnings"] and "whole scale [1, 5]" in r["warnings"][0]
    # 20 rows (10 calibrate): the quantile is finite, no warning
    r, err = _run(
        capsys, [*CMD, "--ratings", _first_rows(data_dir, tmp_path, 20), "--method", "split"]
    )
    assert r["methods"][0]["whole_scale"] == 0.0 and not r["warnings"] and "warning" not in err


def test_default_methods_on_ten_rows_do_not_crash(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The default methods (auto included) on 10 rows: isotonic-binned's conformal part and
    auto's halvings hold 0-3 rows (an IndexError from np.quantile before)."""
    r, err = _run(
        capsys, [*CMD, "--ratings", _first_rows(data_dir, tmp_path, 10), "--repeats", "10"]
    )
    names = [m["method"] for m in r["methods"]]
    assert names == [
        "split",
        "binned",
        "dist-quantile",
        "isotonic-split",
        "isotonic-binned",
        "auto",
    ]
    assert all(m["coverage"] == 1.0 and m["width"] == 4.0 for m in r["methods"])
    assert sum(r["chosen"].values()) == 10 and "Traceback" not in err
    # 6 rows: 3 calibrate, too few to halve for auto (it uses split)
    six = _first_rows(data_dir, tmp_path, 6)
    r, _ = _run(capsys, [*CMD, "--ratings", six, "--method", "auto", "--repeats", "10"])
    assert r["chosen"] == {"split": 10}


def test_intervals_snap_to_the_full_label_grid(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The boundary adjustment snaps onto every third from 1 to 5, seen in calibration or not;
    snapping to the calibration rows' scores lost coverage (split at 20 rows: 0.863)."""
    f = str(_sheng(data_dir, "coherence"))
    argv = [*CMD, "--ratings", f, "--fraction", "0.0125", "--method", "split", "--repeats", "1"]
    r, _ = _run(capsys, [*argv, "--out", str(tmp_path / "iv")])
    assert r["grid"] == pytest.approx(THIRDS)
    rows = list(csv.DictReader((tmp_path / "iv" / "intervals.csv").open()))
    assert len(rows) == 1580
    ends = {round(float(x[k]), 6) for x in rows for k in ("lo", "hi")}
    assert ends <= {round(g, 6) for g in THIRDS}


@pytest.mark.parametrize("dim", ["coherence", "consistency"])
def test_split_covers_at_twenty_calibration_rows(data_dir: Path, capsys, dim: str) -> None:  # type: ignore[no-untyped-def]
    """The reduced coverage simulation: 100 seeded splits with 20 calibration rows of 1,600
    (the rest measure); every method's mean coverage >= 1 - alpha - 0.01 (before: split 0.863
    on coherence, 0.852 on consistency at alpha 0.1)."""
    argv = [*CMD, "--ratings", str(_sheng(data_dir, dim)), "--fraction", "0.0125"]
    for m in ("split", "dist-quantile", "isotonic-split"):
        argv += ["--method", m]
    r, _ = _run(capsys, [*argv, "--repeats", "100", "--seed", "20"])
    for m in r["methods"]:
        assert m["coverage"] >= 0.9 - 0.01, (dim, m["method"], m["coverage"])
        assert m["whole_scale"] == 0.0


def test_coverage_per_human_bin_beside_every_method(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Per human-score bin, the coverage beside each method: in the JSON (equal to the items'
    own count on one split), the Markdown, the run folder's files and report.html, with what
    each method's guarantee covers."""
    out = tmp_path / "run"
    f = str(_sheng(data_dir, "consistency"))
    argv = [
        *CMD,
        "--ratings",
        f,
        "--method",
        "split",
        "--method",
        "isotonic-split",
        "--repeats",
        "1",
    ]
    r, _ = _run(capsys, [*argv, "--out", str(out)])
    items = list(csv.DictReader((out / "intervals.csv").open()))
    for m in r["methods"]:
        assert [b["bin"] for b in m["by_human"]] == BINS and m["guarantee"].startswith("marginal")
        mine = [x for x in items if x["method"] == m["method"]]
        for b in m["by_human"]:
            got = [x["covered"] == "True" for x in mine if x["human_bin"] == b["bin"]]
            assert b["n"] == len(got) and b["coverage"] == pytest.approx(np.mean(got))
    iso = next(m for m in r["methods"] if m["method"] == "isotonic-split")
    assert iso["by_human"][0]["coverage"] < 0.6 and iso["coverage"] > 0.89  # marginal only
    md = (out / "conformal.md").read_text()
    assert "| Method | Coverage | Mean width | Cov. human [1, 2)" in md
    assert "none is conditional on the human score" in md
    page = (out / "report.html").read_text()
    data = json.loads(re.search(r'id="data">(.*?)</script>', page, re.DOTALL).group(1))  # type: ignore[union-attr]
    table = next(t for t in data["tables"] if t["title"].startswith("Coverage per human-score"))
    assert table["columns"][1:5] == [f"human {b}" for b in BINS]
    assert table["rows"][1][1] == round(iso["by_human"][0]["coverage"], 4)
    capsys.readouterr()
    assert main([*argv]) == 0
    assert "Cov. human [4, 5]" in capsys.readouterr().out  # the terminal table


def test_cqr_is_named_for_what_it_is(data_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """'cqr' conformalises the judge's own distribution quantiles: the method is dist-quantile;
    the old name (removed in 0.3.0) is refused, and CHANGELOG.md lists it."""
    f = str(_sheng(data_dir, "fluency"))
    argv = [*CMD, "--ratings", f, "--repeats", "2", "--method"]
    new, err = _run(capsys, [*argv, "dist-quantile"])
    assert err == ""
    assert new["methods"][0]["method"] == "dist-quantile"
    assert main([*argv, "cqr"]) == 2
    assert "invalid choice: 'cqr'" in capsys.readouterr().err
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "| `--method cqr` | `--method dist-quantile` | calibrate conformal " in changelog


def test_help_says_aps_is_randomised_and_may_be_empty(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([*CMD, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "non-randomised" not in text and "never empty" not in text
    assert (
        "aps (adaptive prediction sets, randomised with seeded uniforms; a set may be empty" in text
    )
    assert "cqr" not in text and "no quantile regression is fitted" in text
