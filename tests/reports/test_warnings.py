"""Identical warnings are collapsed into one line with a count (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"


def test_a_pointwise_report_warns_once_and_names_its_protocol(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = tmp_path / "scores.jsonl"
    assert (
        main(
            [
                "metrics",
                "run",
                "--input",
                str(FIXTURE),
                "--metrics",
                "rouge_l,bleu",
                "-o",
                str(scores),
            ]
        )
        == 0
    )
    out = tmp_path / "eval"
    args = ["meta-eval", "--input", str(FIXTURE), "--scores", str(scores), "--out", str(out)]
    assert main([*args, "--protocol", "pointwise", "--n-boot", "200", "--no-plots"]) == 0
    capsys.readouterr()
    md = (out / "table.md").read_text(encoding="utf-8")
    # issue 42: not a note on every pointwise run, one clause of the intro saying why the
    # accuracy columns are absent
    assert "pairwise accuracy needs pairs" not in md
    assert "no pairwise-accuracy columns (the pointwise protocol has no pairs)" in md
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert len(result["cells"]) == 8
    assert all(c["stats"]["acc_ties"]["not_applicable"] for c in result["cells"])
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "pairwise accuracy needs pairs" not in html
    assert "bleu / coherence: pairwise accuracy" not in html  # the per-cell lines are gone
    # the protocol line names protocol, level and aggregation, and no pairwise-only setting
    line = "protocol=pointwise at level global | level: global (all responses pooled)"
    assert line in html
    for md_or_html in (md, html):
        assert "aggregation=per_annotator" in md_or_html
        assert "12 responses, 6 items, 3 label(s) per response" in md_or_html
        assert "normalize=" not in md_or_html and "epsilon=" not in md_or_html
        assert " pairs, " not in md_or_html
        # a visible caution: 12 responses of 6 inputs pooled at the global level
        assert "aution: only 12 independent responses at level global (fewer than 20)" in md_or_html


def test_no_caution_on_many_items() -> None:
    from metajudge.reports.sections import small_n_caution

    cells = [{"stats": {"pearson": {"value": 0.3, "ci_n": 280}}}]
    data = {"protocol": {"correlation_level": "global"}, "dataset": {"n_items": 280}}
    assert small_n_caution({**data, "cells": cells}) is None
    few = [{"stats": {"pearson": {"value": 0.3, "ci_n": 7}}}]
    systems = {"protocol": {"correlation_level": "system"}, "dataset": {"n_items": 300}}
    got = small_n_caution({**systems, "cells": few})
    assert got is not None and got.startswith("caution: only 7 independent systems at level system")
