"""Issue 44 item 2: a resumed score file is reused only for the inputs it was computed from.

Before, the score signature recorded neither ``--reference-field`` nor the texts: rerunning
``metajudge metrics run … -o scores.jsonl`` after changing which field holds the reference, or
after correcting one reference, said "12 cached, 0 to compute" and left the file byte-identical;
``meta-eval`` served its ``OUT/scores.jsonl`` the same way. Now every computed row carries an
``inputs`` digest (the texts its metric reads and the fields they came from,
:func:`metajudge.scores.scoring.inputs_digest`), and exactly the rows whose inputs changed are
scored again.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main

GRADED = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"
LOGGED = re.compile(r"bleu: (\d+) cached, (\d+) to compute")


def _write(path: Path, edit: Any = None) -> Path:
    """graded.jsonl with ``meta.ref2`` (the reference and a sentence more) in each record;
    ``edit(record)`` changes records in place."""
    header, *lines = GRADED.read_text(encoding="utf-8").splitlines()
    out = [header]
    for line in lines:
        r = json.loads(line)
        r["meta"] = {"ref2": r["input"]["reference"] + " The council met on Monday."}
        if edit is not None:
            edit(r)
        out.append(json.dumps(r))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _run(argv: list[str], caplog: pytest.LogCaptureFixture) -> tuple[int, int]:
    """``(cached, computed)`` of bleu in a ``-v`` run (the log line of a resumed run)."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="metajudge.scores.scoring"):
        assert main(["-v", *argv]) == 0
    found = [LOGGED.search(r.getMessage()) for r in caplog.records]
    hits = [m for m in found if m]
    assert len(hits) == 1, [r.getMessage() for r in caplog.records]
    return int(hits[0].group(1)), int(hits[0].group(2))


def _rows(p: Path) -> dict[str, dict[str, Any]]:
    return {json.loads(x)["key"]: json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()}


def _first(r: dict[str, Any]) -> None:
    if r["id"] == "news1" and r["system"] == "extractive":
        r["meta"]["ref2"] = "A corrected reference about something else entirely."
        r["input"]["reference"] = "A corrected reference about something else entirely."


def test_metrics_run_rescores_changed_field_and_text(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = _write(tmp_path / "data.jsonl")
    scores = tmp_path / "scores.jsonl"
    run = ["metrics", "run", "--input", str(data), "-o", str(scores), "--metrics", "bleu"]
    assert main([*run, "--quiet"]) == 0
    first = scores.read_bytes()
    assert _run(run, caplog) == (12, 0) and scores.read_bytes() == first  # nothing changed
    assert _run([*run, "--reference-field", "meta.ref2"], caplog) == (0, 12)  # another field
    by_field = _rows(scores)
    assert scores.read_bytes() != first
    assert _run([*run, "--reference-field", "meta.ref2"], caplog) == (12, 0)
    _write(data, _first)  # one reference corrected
    assert _run([*run, "--reference-field", "meta.ref2"], caplog) == (11, 1)
    after = _rows(scores)
    changed = {k for k in after if after[k]["score"] != by_field[k]["score"]}
    assert changed == {"news1::extractive"}
    assert {k for k in after if after[k]["inputs"] != by_field[k]["inputs"]} == changed


def test_meta_eval_cache_rescores_a_corrected_reference(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = _write(tmp_path / "data.jsonl")
    out = tmp_path / "run"
    argv = ["meta-eval", "--input", str(data), "--metrics", "bleu", "--no-plots", "--n-boot", "20"]
    argv += ["--paths-only", "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    before = _rows(out / "scores.jsonl")
    _write(data, _first)
    assert _run(argv, caplog) == (11, 1)
    after = _rows(out / "scores.jsonl")
    assert {k for k in after if after[k]["score"] != before[k]["score"]} == {"news1::extractive"}
