"""Issue 30: hostile bytes in every reader and writer, driven through the commands a user runs.

Each case is the probe's exact input: a 100,000-deep nested JSON in a dataset, a card, a score
file and a result.json; a lone surrogate ``"\\ud800"`` (the JSON escape) in an id; metric names
that are spreadsheet formulas (``=cmd|' /C calc'!A0``, ``@SUM(1+1)``) or HTML with a ``|``;
infinite scores (``inf``, ``-inf``, ``1e309``) in CSV and JSON score tables; a full disk; and a
categorical run folder re-rendered as HTML.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import re
from pathlib import Path

import pytest

from metajudge.cli import main

FIX = Path(__file__).parents[1] / "fixtures" / "byod"
GRADED = FIX / "graded.jsonl"
CATEGORICAL = FIX / "categorical.jsonl"
CAT_SCORES = FIX / "categorical_judge.csv"
HEADER, RECORD = GRADED.read_text(encoding="utf-8").splitlines()[:2]
DEEP = "[" * 100_000 + "]" * 100_000
FORMULAS = ("=cmd|' /C calc'!A0", "@SUM(1+1)")
HTML_NAME = "<img src=x onerror=alert(1)>|x"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    capsys.readouterr()
    try:
        rc: object = main(argv)
    except BaseException as e:  # noqa: BLE001 - the point: nothing may escape main()
        rc = f"raised {type(e).__name__}: {e}"
    return rc, capsys.readouterr().err


def _responses() -> list[tuple[str, str]]:
    out = []
    for line in GRADED.read_text(encoding="utf-8").splitlines()[1:]:
        r = json.loads(line)
        out.append((r["id"], r["system"]))
    return out


# -- nesting depth and lone surrogates (item 4) -------------------------------------------------
def _deep_record() -> str:
    r = json.loads(RECORD)
    r["meta"] = {"x": "@"}
    return json.dumps(r).replace('"@"', DEEP)


def _surrogate_record() -> str:
    r = json.loads(RECORD)
    r["id"] = "@"
    return json.dumps(r).replace('"@"', '"news\\ud800"')


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        pytest.param(lambda: HEADER + "\n" + _deep_record() + "\n", 2, "meta.x", id="deep"),
        pytest.param(lambda: HEADER + "\n" + _surrogate_record() + "\n", 2, "id", id="surrogate"),
        pytest.param(
            lambda: HEADER.replace('"likert"', DEEP) + "\n", 1, "card.kind", id="deep-card"
        ),
    ],
)
@pytest.mark.parametrize("command", ["validate", "meta-eval"])
def test_dataset_nesting_and_surrogates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text, line: int, field: str, command: str
) -> None:
    """Before: RecursionError (exit 1) for the deep ones; the surrogate passed ``data validate``
    and ``meta-eval`` died with UnicodeEncodeError. After: exit 2 naming file, line and field."""
    p = tmp_path / "bad.jsonl"
    p.write_text(text(), encoding="utf-8")
    if command == "validate":
        argv = ["data", "validate", str(p)]
    else:
        argv = ["meta-eval", "--input", str(p), "--metrics", "bleu", "--no-plots"]
        argv += ["--quiet", "--out", str(tmp_path / "out")]
    rc, err = _run(argv, capsys)
    assert rc == 2, (rc, err[-600:])
    assert f"bad.jsonl:{line}: field {field}" in err, err[-600:]
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_deep_score_file_and_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 100,000-deep score file (``.json``) and a 100,000-deep ``result.json``: exit 2."""
    scores = tmp_path / "deep.json"
    scores.write_text(DEEP, encoding="utf-8")
    argv = [
        "meta-eval",
        "--input",
        str(GRADED),
        "--scores",
        str(scores),
        "--no-plots",
        "--paths-only",
    ]
    rc, err = _run([*argv, "--out", str(tmp_path / "o")], capsys)
    assert rc == 2 and "deep.json:1: field [][][][]" in err, (rc, err[-600:])
    run = tmp_path / "run"
    run.mkdir()
    (run / "result.json").write_text('{"dataset": ' + DEEP + "}", encoding="utf-8")
    for fmt in ("md", "html"):
        rc, err = _run(["report", "render", "--format", fmt, str(run)], capsys)
        assert rc == 2 and "result.json:1: field dataset" in err, (fmt, rc, err[-600:])


# -- CSV formula injection, Markdown cells (item 5) ---------------------------------------------
def _formula_scores(tmp_path: Path) -> Path:
    p = tmp_path / "formula.csv"
    names = [*FORMULAS, HTML_NAME]
    with open(p, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "system", *names])
        for k, (item, system) in enumerate(_responses()):
            w.writerow(
                [item, system, *(round(0.1 * ((k * (j + 3)) % 7) - 0.3, 2) for j in range(3))]
            )
    return p


def test_csv_cells_neutralised_and_markdown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``=cmd|' /C calc'!A0`` and ``@SUM(1+1)`` were the first cells of table.csv and
    cells.csv; ``|`` and ``<img>`` went raw into table.md. After: a leading ``'``; numbers such
    as -0.25 stay numbers; ``\\|`` and ``&lt;`` in Markdown."""
    out = tmp_path / "out"
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(_formula_scores(tmp_path))]
    rc, err = _run(
        [*argv, "--no-plots", "--paths-only", "--no-baselines", "--out", str(out)], capsys
    )
    assert rc == 0, err[-600:]
    for name in ("table.csv", "cells.csv"):
        rows = list(csv.reader(io.StringIO((out / name).read_text(encoding="utf-8"))))
        firsts = {r[0] for r in rows[1:]}
        assert {"'" + f for f in FORMULAS} <= firsts, (name, firsts)
        cells = [c for r in rows for c in r]
        assert not [c for c in cells if c and c[0] in "=+-@\t\r" and not _is_number(c)], name
        assert not [c for c in cells if c.startswith("'") and _is_number(c[1:])], name
        assert any(_is_number(c) and float(c) < 0 for c in cells) or name == "table.csv"
    md = (out / "table.md").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;\\|x" in md and "<img" not in md


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def test_categorical_csv_neutralised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The categorical table.csv: the metric ``@SUM(1+1)`` (the judge column) gets a leading '."""
    scores = tmp_path / "cat.csv"
    scores.write_text(
        CAT_SCORES.read_text(encoding="utf-8").replace("judge", "@SUM(1+1)", 1), encoding="utf-8"
    )
    out = tmp_path / "cat"
    argv = ["meta-eval", "--input", str(CATEGORICAL), "--scores", str(scores), "--paths-only"]
    rc, err = _run([*argv, "--out", str(out)], capsys)
    assert rc == 0, err[-600:]
    rows = list(csv.reader(io.StringIO((out / "table.csv").read_text(encoding="utf-8"))))
    assert rows[1][0] == "'@SUM(1+1)"


# -- infinite scores (item 9) -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("suffix", "cell", "where"),
    [
        (".csv", "inf", "inf.csv:3: field bleu"),
        (".csv", "-inf", "inf.csv:3: field bleu"),
        (".csv", "1e309", "inf.csv:3: field bleu"),
        (".json", "1e309", "inf.json: field [1].bleu"),
        (".json", "-Infinity", "inf.json: field [1].bleu"),
    ],
)
def test_infinite_scores_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, cell: str, where: str
) -> None:
    """Before: read as missing and imputed with the median (exit 0). After: exit 2, file, line
    (CSV) and field."""
    (a, sa), (b, sb) = _responses()[:2]
    p = tmp_path / f"inf{suffix}"
    if suffix == ".csv":
        p.write_text(f"item,system,bleu\n{a},{sa},0.5\n{b},{sb},{cell}\n", encoding="utf-8")
    else:
        p.write_text(
            f'[{{"item": "{a}", "system": "{sa}", "bleu": 0.5}}, '
            f'{{"item": "{b}", "system": "{sb}", "bleu": {cell}}}]',
            encoding="utf-8",
        )
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(p), "--no-plots", "--paths-only"]
    rc, err = _run([*argv, "--out", str(tmp_path / "o")], capsys)
    assert rc == 2 and where in err and "infinite score" in err, (rc, err[-600:])


# -- a full disk names the path; categorical report.html (item 10) ------------------------------
def test_disk_full_names_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: "a file: No space left on device". After: the path of the file being written, and
    what to do; the old run folder is untouched."""
    import metajudge.io as mio

    out = tmp_path / "cat"
    argv = ["meta-eval", "--input", str(CATEGORICAL), "--scores", str(CAT_SCORES), "--paths-only"]
    assert _run([*argv, "--out", str(out)], capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(mio.os, "fsync", full)
    rc, err = _run([*argv, "--out", str(out)], capsys)
    assert rc == 2, err[-600:]
    assert f"{out / 'result.json'}: No space left on device" in err, err[-600:]
    assert "a file" not in err and "--out" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_categorical_run_writes_report_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: no report.html, and ``report --format html`` said "not a complete result"."""
    out = tmp_path / "cat"
    argv = ["meta-eval", "--input", str(CATEGORICAL), "--scores", str(CAT_SCORES), "--paths-only"]
    assert _run([*argv, "--out", str(out)], capsys)[0] == 0
    assert (out / "report.html").is_file()
    (out / "report.html").unlink()
    rc, err = _run(["report", "render", "--format", "html", str(out)], capsys)
    assert rc == 0, err[-600:]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Confusion matrix: judge / safe" in page and "byod_safety" in page


# -- CR / LF in names (issue 44 item 17), Alt-Test names in Markdown (item 18) ------------------
CR_NAME = "bleu\r=cmd|' /C calc'!A0"


def _rows_of(p: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(p.read_text(encoding="utf-8"), newline="")))


def _no_formula_row(rows: list[list[str]], name: str) -> None:
    """No row a CSV reader yields starts with a formula (a raw CR would start one)."""
    firsts = [r[0] for r in rows if r]
    assert not [c for c in firsts if c[:1] in ("=", "@", "+") or c.startswith("-c")], (name, firsts)
    assert all(len(r) == len(rows[0]) for r in rows), (name, [len(r) for r in rows])


def test_carriage_return_in_names_neutralised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a CR inside a metric name (table.csv, cells.csv) or an item / system name
    (calibrate conformal's intervals.csv) went out raw, and Python's csv reader yielded a new row
    starting ``=cmd|…``. After: written ``\\r``, every row whole."""
    scores = tmp_path / "cr.csv"
    with open(scores, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "system", CR_NAME])
        for k, (item, system) in enumerate(_responses()):
            w.writerow([item, system, round(0.1 * (k % 5), 2)])
    out = tmp_path / "out"
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(scores), "--no-plots"]
    rc, err = _run([*argv, "--paths-only", "--no-baselines", "--out", str(out)], capsys)
    assert rc == 0, err[-600:]
    for name in ("table.csv", "cells.csv"):
        rows = _rows_of(out / name)
        _no_formula_row(rows, name)
        assert "bleu\\r=cmd|' /C calc'!A0" in {r[0] for r in rows[1:]}, name
    data = tmp_path / "cr.jsonl"
    header, *lines = GRADED.read_text(encoding="utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    for r in recs:
        r["id"] += "\r=cmd|' /C calc'!A0"
        r["system"] += "\n@SUM(1+1)"
    data.write_text("\n".join([header, *map(json.dumps, recs)]) + "\n", encoding="utf-8")
    sc = tmp_path / "s.jsonl"
    assert (
        _run(["metrics", "run", "--input", str(data), "-o", str(sc), "--metrics", "bleu"], capsys)[
            0
        ]
        == 0
    )
    conf = tmp_path / "conf"
    argv = ["calibrate", "conformal", "--input", str(data), "--scores", f"{sc}:bleu"]
    rc, err = _run(
        [*argv, "--dimension", "coherence", "--repeats", "1", "--out", str(conf)], capsys
    )
    assert rc == 0, err[-600:]
    rows = _rows_of(conf / "intervals.csv")
    _no_formula_row(rows, "intervals.csv")
    assert len(rows) > 6  # the test half of the 12 responses under each method
    assert rows[1][0].startswith("news") and "\\r=cmd" in rows[1][0] and "\\n@SUM" in rows[1][0]


def test_alt_test_names_escaped_in_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: an annotator or LLM named ``<img src=x onerror=alert(1)>|x`` went raw into
    alt_test.md and broke its tables. After: ``\\|`` and ``&lt;`` as in every Markdown report."""
    src = FIX / "alt_test"
    folder = tmp_path / "alt"
    folder.mkdir()
    humans = json.loads((src / "human_annotations.json").read_text(encoding="utf-8"))
    llms = json.loads((src / "llm_annotations.json").read_text(encoding="utf-8"))
    first = min(humans)
    humans[HTML_NAME] = humans.pop(first)
    llm = min(llms)
    llms["gpt|<b>x</b>"] = llms.pop(llm)
    (folder / "human_annotations.json").write_text(json.dumps(humans), encoding="utf-8")
    (folder / "llm_annotations.json").write_text(json.dumps(llms), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["decide", "alt-test", "--input", str(folder), "--min-items", "1"]
    rc, err = _run([*argv, "--out", str(out)], capsys)
    assert rc in (0, 1), err[-600:]
    md = (out / "alt_test.md").read_text(encoding="utf-8")
    assert "<img" not in md and "<b>" not in md
    assert "&lt;img src=x onerror=alert(1)&gt;\\|x" in md and "gpt\\|&lt;b&gt;x&lt;/b&gt;" in md
    tables = [x for x in md.splitlines() if x.startswith("| ")]
    assert len(tables) >= 4  # the LLM table and one per-annotator table, header and rows
    for line in tables:  # no name splits a row: 5 or 7 cells, as the headers
        assert len(re.split(r"(?<!\\)\|", line)) - 2 in (5, 7), line
