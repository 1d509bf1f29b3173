"""promptfoo, deepeval and ragas files read as they are (issue 39), on files each framework wrote
itself (``tests/fixtures/frameworks/*/``: the script that made each and the version, see the
README there). No framework is needed here: these readers read JSON and CSV. ``meta-eval
--scores <that file>`` gives the same correlations, CIs and significance as the same scores
written as a plain score CSV (walked out of the file by hand below), and ``data doctor`` names
the format and prints a command that works on it."""

from __future__ import annotations

import csv
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main
from tests.scores.framework_helpers import FIX, LABELS, _run, _same_as_plain

PROMPTFOO = FIX / "promptfoo" / "results.json"
DEEPEVAL = FIX / "deepeval" / "test_run.json"
RAGAS = FIX / "ragas" / "results.csv"

Row = tuple[str, str, str, float | None]


def _key(key: str) -> tuple[str, str]:
    item, _, system = key.partition("::")
    return item, system


def _promptfoo_rows(path: Path) -> list[Row]:
    """Each test's model-graded assertions: (item, system, assertion type, score)."""
    out = []
    for r in json.loads(path.read_text(encoding="utf-8"))["results"]["results"]:
        item, system = _key(r["vars"]["id"])
        for c in r["gradingResult"]["componentResults"]:
            out.append((item, system, c["assertion"]["type"], c["score"]))
    return out


def _deepeval_rows(path: Path) -> list[Row]:
    """Each test case's metrics: (item, system, metric name, score or None)."""
    out = []
    for case in json.loads(path.read_text(encoding="utf-8"))["testCases"]:
        item, system = _key(case["name"])
        for m in case["metricsData"]:
            out.append((item, system, m["name"], m.get("score")))
    return out


def _ragas_rows(path: Path) -> list[Row]:
    """Each row's metric columns (those not of the evaluation dataset); empty cells None."""
    data_cols = {"id", "user_input", "retrieved_contexts", "response", "reference"}
    out = []
    with open(path, encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            item, system = _key(r["id"])
            for col, v in r.items():
                if col not in data_cols:
                    out.append((item, system, col, float(v) if v.strip() else None))
    return out


FILES = {
    "promptfoo": (PROMPTFOO, _promptfoo_rows),
    "deepeval": (DEEPEVAL, _deepeval_rows),
    "ragas": (RAGAS, _ragas_rows),
}


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_same_numbers_as_plain_csv(fmt: str, tmp_path: Path) -> None:
    path, rows = FILES[fmt]
    walked = rows(path)
    assert sum(s is not None for *_, s in walked) >= 12, walked  # the framework really scored
    _same_as_plain(tmp_path, path, walked)


def test_promptfoo_reasons_and_passes_kept(tmp_path: Path) -> None:
    """Each assertion's reason is the explanation shown beside the human label."""
    from tests.scores.test_frameworks import page_explanations

    _run(tmp_path, "pf", str(PROMPTFOO))
    page = (tmp_path / "pf" / "report.html").read_text(encoding="utf-8")
    said = {
        c["reason"]
        for r in json.loads(PROMPTFOO.read_text(encoding="utf-8"))["results"]["results"]
        for c in r["gradingResult"]["componentResults"]
    }
    assert said and said <= set(page_explanations(page))


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_doctor_names_the_format_and_prints_a_command_that_works(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, rows = FILES[fmt]
    assert main(["data", "doctor", str(path), "--input", str(LABELS)]) == 0
    out = capsys.readouterr().out
    assert f"format: {fmt} (" in out, out
    assert "12 of 12 responses scored" in out, out
    cmd = next(line for line in out.splitlines() if line.startswith("command: "))
    argv = shlex.split(cmd.removeprefix("command: "))
    assert argv[:2] == ["metajudge", "meta-eval"]
    argv[argv.index("--out") + 1] = str(tmp_path / "run")
    assert main([*argv[1:], "--no-plots", "--n-boot", "100"]) == 0
    res: dict[str, Any] = json.loads((tmp_path / "run" / "result.json").read_text("utf-8"))
    assert {m for _, _, m, _ in rows(path)} <= {c["metric"] for c in res["cells"]}


def test_deepeval_id_from_the_metadata_key(tmp_path: Path) -> None:
    """deepeval 4 writes a test case's metadata as ``metadata``: ``--id-field id`` reads it there."""
    res = _run(tmp_path, "meta", str(DEEPEVAL), extra=("--id-field", "id"))
    assert res["run"]["reading"]["id_field"] == "id"
    assert {c["metric"] for c in res["cells"]} >= {m for _, _, m, _ in _deepeval_rows(DEEPEVAL)}
