"""``--published FILE``, the columns a protocol fills, and the one number scale (issue 26),
through the commands a user runs on the graded fixture."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from metajudge.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"
#: an authors' metric, one score per response (item, system), as a user brings it
SCORES = """item,system,authors_metric
news1,extractive,0.31
news1,abstractive,0.72
news2,extractive,0.22
news2,abstractive,0.65
news3,extractive,0.40
news3,abstractive,0.70
news4,extractive,0.52
news4,abstractive,0.61
news5,extractive,0.12
news5,abstractive,0.69
news6,extractive,0.45
news6,abstractive,0.58
"""
PUBLISHED = """metric,dimension,statistic,value,source
authors_metric,coherence,pearson,0.612,Authors 2025 Table 2
human,coherence,pearson,0.70,Authors 2025 Table 1
bartscore,coherence,pearson,0.30,Authors 2025 Table 2
"""


def _page_table(html: str) -> dict:
    """The overview table in report.html's embedded JSON (what the page draws)."""
    m = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.DOTALL)
    assert m is not None
    return json.loads(m.group(1))


def _run(tmp_path: Path, *extra: str) -> tuple[int, Path]:
    scores = tmp_path / "authors.csv"
    scores.write_text(SCORES, encoding="utf-8")
    out = tmp_path / "eval"
    args = ["meta-eval", "--input", str(FIXTURE), "--scores", str(scores), "--out", str(out)]
    args += ["--protocol", "pointwise", "--n-boot", "200", "--no-plots", "--no-baselines"]
    return main([*args, *extra]), out


def test_published_file_stands_beside_ours_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    pub = tmp_path / "paper.csv"
    pub.write_text(PUBLISHED, encoding="utf-8")
    rc, out = _run(tmp_path, "--published", str(pub))
    assert rc == 0
    printed = capsys.readouterr().out
    # the row for a metric this run does not have is counted and warned, not dropped in silence
    left = "1 row(s) of " + str(pub) + " match no metric, dimension or statistic of this run"
    assert f"Warning: {left}" in printed and "line 4: bartscore / coherence / pearson" in printed
    assert left in caplog.text  # and logged (stderr)
    md = (out / "table.md").read_text(encoding="utf-8")
    header = next(line for line in md.splitlines() if line.startswith("| Metric"))
    assert header.split(" | ")[1:3] == ["Coherence Pearson", "Coherence Pearson (published)"]
    row = next(line for line in md.splitlines() if line.startswith("| authors_metric"))
    ours = json.loads((out / "result.json").read_text())["cells"][0]["stats"]["pearson"]["value"]
    assert row.startswith(f"| authors_metric | {ours:.4f} [") and "| 0.6120 |" in row
    human = next(line for line in md.splitlines() if line.startswith("| Inter-Human"))
    assert "| 0.7000 |" in human
    assert "Authors 2025 Table 2" in md and left in md
    for text in (printed, md):  # the terminal prints the same table as table.md
        assert f"| authors_metric | {ours:.4f} [" in text and "| 0.6120 |" in text
    rows = list(csv.DictReader(io.StringIO((out / "table.csv").read_text(encoding="utf-8"))))
    assert rows[0]["coherence_pearson_published"] == "0.612000"
    doc = json.loads((out / "table.json").read_text(encoding="utf-8"))
    assert doc["table"]["rows"][0]["cells"][1]["value"] == pytest.approx(0.612)
    mine = [e for e in doc["published"] if e["metric"] == "authors_metric"]
    assert mine and mine[0]["value"] == pytest.approx(0.612)  # the tables' scale, not x100
    assert doc["published_unmatched"].startswith("1 row(s) of")
    page = _page_table((out / "report.html").read_text(encoding="utf-8"))
    t = page["tables"][0]
    i = t["columns"].index("pearson (published)")
    assert t["columns"][i - 1] == "pearson"  # beside ours
    mine = next(r for r in t["rows"] if r[:2] == ["authors_metric", "coherence"])
    assert mine[i] == pytest.approx(0.612) and mine[i - 1]["v"] == pytest.approx(ours, abs=1e-4)
    assert t["refs"][0][i] == pytest.approx(0.70)
    assert any(w.startswith("1 row(s) of") for w in page["warnings"])


def test_a_pointwise_run_shows_only_the_columns_it_fills(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out = _run(tmp_path)
    assert rc == 0
    capsys.readouterr()
    md = (out / "table.md").read_text(encoding="utf-8")
    assert "Acc (ties)" not in md and "Acc (no ties)" not in md and "Kendall τb" in md
    assert "normalisation" not in md  # a pointwise run normalises no differences
    # why the accuracy columns are absent is said once, in the intro (issue 42)
    assert md.count("no pairwise-accuracy columns") == 1
    header = (out / "table.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "normalize" not in header
    # the long machine-readable file keeps its fixed schema under every protocol (documented)
    long = (out / "cells.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert "n_pairs" in long and "normalize" in long
    t = _page_table((out / "report.html").read_text(encoding="utf-8"))["tables"][0]
    # no accuracy, no n pairs, no empty published column: only what this run fills
    assert t["columns"] == ["metric", "dimension", "pearson", "spearman", "kendall", "n rows"]
    assert t["nd"] == 4 and "×100" not in t["title"]
    assert t["rows"][0][5] == 36  # 12 responses x 3 annotators (per_annotator rows)


def test_percent_is_one_choice_for_terminal_files_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out = _run(tmp_path, "--percent")
    assert rc == 0
    printed = capsys.readouterr().out
    ours = json.loads((out / "result.json").read_text())["cells"][0]["stats"]["pearson"]["value"]
    md = (out / "table.md").read_text(encoding="utf-8")
    for text in (printed, md):
        assert f"| authors_metric | {ours * 100:.2f} [" in text
    assert "×100" in md
    t = _page_table((out / "report.html").read_text(encoding="utf-8"))["tables"][0]
    assert t["nd"] == 2 and t["rows"][0][2]["v"] == pytest.approx(ours * 100, abs=1e-2)
    # report --no-percent takes the run back to [-1, 1], the page with it
    assert main(["report", "render", str(out), "--no-percent", "--no-plots"]) == 0
    assert f"| authors_metric | {ours:.4f} [" in capsys.readouterr().out
    assert main(["report", "render", str(out), "--format", "html"]) == 0
    t = _page_table((out / "report.html").read_text(encoding="utf-8"))["tables"][0]
    assert t["nd"] == 4 and t["rows"][0][2]["v"] == pytest.approx(ours, abs=1e-4)


def test_report_attaches_a_published_jsonl_at_scale_100(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out = _run(tmp_path)
    assert rc == 0
    pub = tmp_path / "paper.jsonl"
    rec = {"metric": "authors_metric", "dimension": "relevance", "statistic": "spearman"}
    pub.write_text(json.dumps({**rec, "value": 48.5, "scale": 100}) + "\n", encoding="utf-8")
    assert main(["report", "render", str(out), "--published", str(pub), "--no-plots"]) == 0
    capsys.readouterr()
    md = (out / "table.md").read_text(encoding="utf-8")
    assert "Relevance Spearman (published)" in md and "| 0.4850 |" in md
    assert "paper.jsonl" in md  # no source column: the file names it
    assert main(["report", "render", str(out), "--format", "html"]) == 0
    t = _page_table((out / "report.html").read_text(encoding="utf-8"))["tables"][0]
    i = t["columns"].index("spearman (published)")
    mine = next(r for r in t["rows"] if r[:2] == ["authors_metric", "relevance"])
    assert mine[i] == pytest.approx(0.485)


@pytest.mark.parametrize(
    ("line", "field", "why"),
    [
        ("authors_metric,coherence,pearsn,0.6,X", "statistic", "unknown statistic 'pearsn'"),
        ("authors_metric,coherence,pearson,n/a,X", "value", "non-numeric value 'n/a'"),
        ("authors_metric,coherence,pearson,61.2,X", "value", "outside [-1, 1]"),
        (",coherence,pearson,0.6,X", "metric", "missing or empty"),
    ],
)
def test_a_bad_published_file_stops_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, field: str, why: str
) -> None:
    pub = tmp_path / "paper.csv"
    pub.write_text(PUBLISHED.splitlines()[0] + "\n" + line + "\n", encoding="utf-8")
    rc, out = _run(tmp_path, "--published", str(pub))
    assert rc == 2
    err = capsys.readouterr().err
    assert f"{pub}:2: field {field}: " in err and why in err
    assert not out.exists()  # nothing computed, nothing half-written
