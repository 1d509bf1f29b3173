"""``metajudge decide alt-test-plan``: the Alt-Test simulation for choosing ε and n."""

from __future__ import annotations

import json

import pytest

from metajudge.analyses.alt_test import AltTestSettings, alt_test
from metajudge.analyses.alt_test_plan import PlanSettings, alt_test_plan, simulated_set
from metajudge.cli import main

BASE = [
    "decide",
    "alt-test-plan",
    "--annotators",
    "4",
    "--reps",
    "20",
    "--alt-epsilon",
    "0.1",
    "--n",
    "30",
    "--n",
    "100",
    "--n",
    "300",
    "--format",
    "json",
]


def _plan(capsys: pytest.CaptureFixture[str], llm_noise: str) -> list[dict]:
    assert main([*BASE, "--llm-noise", llm_noise]) == 0
    return json.loads(capsys.readouterr().out)["rows"]


def test_a_better_llm_passes_more_often_as_n_grows(capsys: pytest.CaptureFixture[str]) -> None:
    """3 categories, 4 annotators with noise 0.3, LLM noise 0.15, ε 0.1, 20 replicates (seed 0):
    the pass rate rises 0.30 → 0.95 → 1.00 over n = 30, 100, 300."""
    rows = _plan(capsys, "0.15")
    assert [r["n"] for r in rows] == [30, 100, 300]
    assert [r["pass_rate"] for r in rows] == [0.30, 0.95, 1.0]
    assert [r["winning_rate"] for r in rows] == [0.325, 0.95, 1.0]


def test_a_worse_llm_never_passes(capsys: pytest.CaptureFixture[str]) -> None:
    """LLM noise 0.6 against annotators' 0.3 (same settings): winning and pass rate 0 at
    every n."""
    rows = _plan(capsys, "0.6")
    assert [r["pass_rate"] for r in rows] == [0.0, 0.0, 0.0]
    assert [r["winning_rate"] for r in rows] == [0.0, 0.0, 0.0]
    # ties count as a win for both, so the LLM "wins" 0.69 of items yet beats no annotator
    assert round(rows[0]["advantage_probability"], 3) == 0.689


def test_the_plan_runs_the_one_alt_test() -> None:
    """One replicate's row is the Alt-Test of the simulated set, run by ``alt_test``."""
    s = PlanSettings(annotators=4, llm_noise=0.2, n_items=(60,), epsilons=(0.15,), reps=1)
    (row,) = alt_test_plan(s).rows
    res = alt_test(simulated_set(s, 60, 0), AltTestSettings(epsilon=0.15, scoring="accuracy"))
    assert row.winning_rate == res.llms[0].winning_rate
    assert row.advantage_probability == res.llms[0].advantage_probability
    assert row.pass_rate == float(res.llms[0].passed)


def test_n_below_min_items_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "alt-test-plan", "--n", "20", "--reps", "2"]) == 2
    assert "--min-items 30" in capsys.readouterr().err
