"""The user guide's "Your own data" page (docs/own-data.md), walked end to end with CLI commands
only.

The commands are read from the page's fenced ``bash`` blocks (so the page and test cannot drift)
and run, with ``python -m metajudge``, on each of the three shipped fixtures in a scratch folder:
the first block (validate -> agreement -> metrics run -> meta-eval -> report render) on the graded
Likert and the pairwise file, the second (validate -> agreement -> meta-eval of a judge's labels ->
report render) on the categorical file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "own-data.md"
FIXTURE = "tests/fixtures/byod/graded.jsonl"
CATEGORICAL = "tests/fixtures/byod/categorical.jsonl"
FIXTURES = ("graded", "categorical", "pairwise")


def _section() -> str:
    return PAGE.read_text(encoding="utf-8")


def _block(lang: str, index: int = 0) -> list[str]:
    blocks = re.findall(rf"```{lang}\n(.*?)```", _section(), flags=re.DOTALL)
    assert len(blocks) > index, f"no {lang} block #{index + 1} in the section"
    return [ln for ln in blocks[index].splitlines() if ln.strip() and not ln.startswith("#")]


def _steps(fixture: str = "graded") -> list[str]:
    """The commands for ``fixture``: block 1 (graded; pairwise by substitution), block 2
    (categorical)."""
    path = CATEGORICAL if fixture == "categorical" else FIXTURE
    cmds = _block("bash", 1 if fixture == "categorical" else 0)
    assert all(c.startswith("metajudge ") for c in cmds)
    assert all(path in c or c.startswith("metajudge report render") for c in cmds)
    if fixture == "pairwise":
        cmds = [c.replace(FIXTURE, "tests/fixtures/byod/pairwise.jsonl") for c in cmds]
        cmds = [c.replace("runs/byod/", "runs/byod-pairwise/") for c in cmds]
    elif fixture == "graded":
        cmds = [c.replace("runs/byod/", "runs/byod-graded/") for c in cmds]
    return cmds


def _step_name(cmd: str) -> str:
    words = cmd.split()
    return words[1] if words[1] == "meta-eval" else " ".join(words[1:3])


@pytest.mark.parametrize("fixture", FIXTURES)
def test_own_data_walkthrough(tmp_path: Path, fixture: str) -> None:
    """The page's lines for one fixture, in order, in one folder. One test runs them all:
    each step reads what the one before wrote, so they must not be split across xdist workers
    (``make test`` runs the fast tier with ``-n 2``)."""
    shutil.copytree(ROOT / "tests" / "fixtures" / "byod", tmp_path / "tests" / "fixtures" / "byod")
    for cmd in _steps(fixture):
        _run_step(tmp_path, fixture, cmd)


def _run_step(workdir: Path, fixture: str, cmd: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    argv = [sys.executable, "-m", "metajudge", *shlex.split(cmd)[1:]]
    p = subprocess.run(
        argv, check=False, cwd=workdir, env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, f"{cmd}\n{p.stdout}\n{p.stderr}"
    name = _step_name(cmd)
    if name == "data validate":
        assert p.stdout.startswith("OK ") and "error" not in p.stderr
    elif name == "data agreement":
        assert "Krippendorff α" in p.stdout
        if fixture == "categorical":
            assert "nominal" in p.stdout
    elif name == "metrics run":
        assert (workdir / f"runs/byod-{fixture}/scores.jsonl").is_file()
    elif name == "meta-eval":
        res = json.loads((workdir / f"runs/byod-{fixture}/eval/result.json").read_text())
        if fixture == "categorical":
            assert res["kind"] == "categorical" and "Cohen κ" in p.stdout
            assert res["rows"][0]["accuracy"] == 0.75
    elif name == "report render":
        assert "table.md" in p.stdout or "report.html" in p.stdout, cmd


def test_own_data_record_examples_match_the_schemas() -> None:
    """The example lines of the page are valid records of the kinds the text says."""
    from metajudge.data.validation import schema_errors

    lines = [json.loads(x) for x in _block("json")]
    for obj, kind in zip(lines, ("likert", "categorical", "pairwise"), strict=True):
        assert schema_errors(obj, f"record.{kind}", path=None, line=None) == [], kind


def test_own_data_names_every_kind_and_card_field() -> None:
    sec = _section()
    from metajudge.data.validation import schema

    card = schema("card")
    for k in card["properties"]["kind"]["enum"]:
        assert k == "benchmark" or f"`{k}`" in sec
    for f in card["required"]:
        assert f"| `{f}` | required" in sec
