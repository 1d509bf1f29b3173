"""Issue 44, items 11-15: hostile numbers in the files and options a user gives, through the
commands a user runs. Each is exit 2 naming file, line and field (or the option), or a clear
result; never a traceback.

- item 11: a 5000-digit integer (past Python's int-str conversion limit) in a label, a score
  file, a card and an Alt-Test file;
- item 12: NaN inside a score row's ``details`` through ``meta-eval --scores``;
- item 13: ``data agreement --splits 5`` on two annotators who always disagree;
- item 14: ``decide alt-test`` on NaN / Infinity / 1e309 labels;
- item 15: ``--repeats`` bounded like ``--n-boot`` (calibrate conformal, fit and selective).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from metajudge.cli import main

FIX = Path(__file__).parents[1] / "fixtures" / "byod"
GRADED = FIX / "graded.jsonl"
ALT = FIX / "alt_test"
HEADER, RECORD = GRADED.read_text(encoding="utf-8").splitlines()[:2]
HUGE = "7" * 5000  # Python refuses int("7" * 5000): ValueError past 4300 digits


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    capsys.readouterr()
    try:
        rc: object = main(argv)
    except BaseException as e:  # noqa: BLE001 - the point: nothing may escape main()
        rc = f"raised {type(e).__name__}: {e}"
    return rc, capsys.readouterr().err


def _responses() -> list[tuple[str, str]]:
    return [
        (r["id"], r["system"])
        for r in map(json.loads, GRADED.read_text(encoding="utf-8").splitlines()[1:])
    ]


# -- item 11: a 5000-digit integer ----------------------------------------------------------------
def _label_file(tmp_path: Path) -> Path:
    r = json.loads(RECORD)
    r["scores"]["coherence"] = ["@", *r["scores"]["coherence"][1:]]
    p = tmp_path / "labels.jsonl"
    p.write_text(HEADER + "\n" + json.dumps(r).replace('"@"', HUGE) + "\n", encoding="utf-8")
    return p


def _card_file(tmp_path: Path) -> Path:
    p = tmp_path / "card.jsonl"
    head = HEADER.replace('"max": 5', f'"max": {HUGE}')
    assert head != HEADER
    p.write_text(head + "\n" + RECORD + "\n", encoding="utf-8")
    return p


def _score_file(tmp_path: Path) -> Path:
    (a, sa), (b, sb) = _responses()[:2]
    p = tmp_path / "huge.jsonl"
    rows = [
        {"item": a, "system": sa, "metric": "bleu", "score": 0.5},
        {"item": b, "system": sb, "metric": "bleu", "score": "@"},
    ]
    p.write_text("\n".join(json.dumps(r) for r in rows).replace('"@"', HUGE) + "\n")
    return p


@pytest.mark.parametrize(
    ("make", "where"),
    [
        (_label_file, "labels.jsonl:2: field scores.coherence[]"),
        (_card_file, "card.jsonl:1: field card.scale.max"),
        (_score_file, "huge.jsonl:2: field score"),
    ],
    ids=["label", "card", "score"],
)
def test_a_5000_digit_integer_is_exit_2_naming_the_field(
    make, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``ValueError: Exceeds the limit (4300 digits) for integer string conversion``,
    a traceback and exit 1. After: exit 2 naming file, line and field."""
    p = make(tmp_path)
    if p.name == "huge.jsonl":
        argv = ["meta-eval", "--input", str(GRADED), "--scores", str(p)]
    else:
        argv = ["meta-eval", "--input", str(p), "--metrics", "bleu"]
    out = tmp_path / "out"
    rc, err = _run([*argv, "--no-plots", "--quiet", "--out", str(out)], capsys)
    assert rc == 2 and where in err, (rc, err[-600:])
    assert "digits" in err and "Traceback" not in err and not out.exists()
    if p.name != "huge.jsonl":
        rc, err = _run(["data", "validate", str(p)], capsys)
        assert rc == 2 and where in err, (rc, err[-600:])


def _alt_dir(tmp_path: Path, value: str) -> Path:
    d = tmp_path / "alt"
    shutil.copytree(ALT, d)
    h = d / "human_annotations.json"
    text = h.read_text(encoding="utf-8").replace('"item3": "y"', f'"item3": {value}')
    h.write_text(re.sub(r'"[xy]"', "1", text), encoding="utf-8")
    llm = d / "llm_annotations.json"
    llm.write_text(re.sub(r'"[xy]"', "2", llm.read_text(encoding="utf-8")), encoding="utf-8")
    return d


@pytest.mark.parametrize("value", [HUGE, "NaN", "Infinity", "-Infinity", "1e309"])
def test_alt_test_refuses_a_label_that_is_no_finite_number(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Items 11 and 14. Before: a traceback (5000 digits), or NaN / Infinity / 1e309 accepted
    and "1 of 1 LLMs pass" printed. After: exit 2 naming file, line and field."""
    d = _alt_dir(tmp_path, value)
    rc, err = _run(["decide", "alt-test", "--input", str(d)], capsys)
    assert rc == 2, (rc, err[-600:])
    assert "human_annotations.json:5: field A.item3" in err, err[-600:]
    assert "Traceback" not in err and "pass" not in err


def test_alt_test_still_reads_finite_ratings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = _alt_dir(tmp_path, "3")
    argv = ["decide", "alt-test", "--input", str(d), "--min-items", "5", "--format", "json"]
    rc, err = _run(argv, capsys)
    assert rc == 0, err[-600:]


# -- item 12: NaN in a score row's details ----------------------------------------------------------
def test_nan_in_details_does_not_break_report_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``ValueError: Out of range float values are not JSON compliant`` while writing
    report.html (exit 1). After: exit 0; the page's data has ``null`` there."""
    p = tmp_path / "s.jsonl"
    rows = [
        {
            "item": item,
            "system": system,
            "metric": "m",
            "score": 0.1 * (k % 7),
            "details": {"probs": {"4": float("nan") if k == 0 else 0.5}, "mass": float("inf")},
        }
        for k, (item, system) in enumerate(_responses())
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(p), "--no-plots"]
    rc, err = _run([*argv, "--quiet", "--no-baselines", "--out", str(out)], capsys)
    assert rc == 0 and "Traceback" not in err, (rc, err[-600:])
    page = (out / "report.html").read_text(encoding="utf-8")
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.DOTALL)
    assert m is not None and "NaN" not in m.group(1) and "Infinity" not in m.group(1)
    json.loads(m.group(1))


# -- item 13: split-half on two anti-correlated annotators ----------------------------------------
def test_agreement_of_two_annotators_who_always_disagree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``ZeroDivisionError`` in Spearman-Brown, 2r / (1 + r) at r = -1. After: exit 0,
    split-half n/a (undefined at r = -1) and the mean r, -1, in the JSON."""
    card = json.loads(HEADER)
    card["card"]["annotators"] = 2
    dims = card["card"]["dimensions"]
    lines = [json.dumps(card)]
    for k, line in enumerate(GRADED.read_text(encoding="utf-8").splitlines()[1:]):
        r = json.loads(line)
        a = 1 + k % 5
        r["scores"] = {d: [a, 6 - a] for d in dims}  # rater 2 = 6 - rater 1: r = -1
        lines.append(json.dumps(r))
    p = tmp_path / "anti.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc, err = _run(["data", "agreement", "--input", str(p), "--splits", "5"], capsys)
    assert rc == 0 and "Traceback" not in err, (rc, err[-600:])
    capsys.readouterr()
    assert main(["data", "agreement", "--input", str(p), "--splits", "5", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["dimensions"]
    assert len(rows) == 2
    assert all(r["split_half"] is None and r["split_half_r"] == pytest.approx(-1) for r in rows)
    assert any(
        "split-half n/a: the halves are perfectly anti-correlated" in n for n in doc["notes"]
    )


# -- item 15: --repeats is bounded ------------------------------------------------------------------
@pytest.mark.parametrize("verb", ["conformal", "fit", "selective"])
def test_repeats_is_bounded_like_n_boot(
    verb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``--repeats 1000000000`` was accepted and the process grew to 4-6.7 GB in
    20-40 s. After: exit 2 at once, naming the option and its range."""
    source = "--input" if verb == "selective" else "--ratings"
    argv = ["calibrate", verb, source, str(tmp_path / "none.csv"), "--repeats", "1000000000"]
    rc, err = _run(argv, capsys)
    assert rc == 2 and "--repeats" in err and "100000" in err.replace(",", ""), (rc, err[-600:])


def test_the_splits_refuse_what_memory_cannot_hold() -> None:
    """The library function behind ``--repeats`` checks the memory its splits need first
    (run in a child capped at 2 GiB of address space and 60 s, so that the old code, which
    drew the splits until memory ran out, fails this test instead of the machine)."""
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from metajudge.analyses.calibration.table import splits\n"
        "from metajudge.errors import InputError\n"
        "try:\n    splits(1_000_000, seed=0, repeats=100_000)\n"
        "except InputError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0 and "--repeats" in out.stdout, out.stderr[-600:]
    assert "resamples x 1000000 rows" in out.stdout
