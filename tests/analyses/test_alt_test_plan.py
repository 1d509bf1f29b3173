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


def _plan(capsys: pytest.CaptureFixture[str], llm_noise: str, *extra: str) -> list[dict]:
    assert main([*BASE, "--llm-noise", llm_noise, *extra]) == 0
    return json.loads(capsys.readouterr().out)["rows"]


def test_a_better_llm_passes_more_often_as_n_grows(capsys: pytest.CaptureFixture[str]) -> None:
    """3 categories, 4 annotators with noise 0.3, LLM noise 0.15, ε 0.1, 20 replicates (seed 0),
    the paper's model (the default): the pass rate rises 0.55 → 0.95 → 1.00 over n = 30, 100,
    300 (docs/judges.md); the uniform model, kept by name, gives 0.30 → 0.95 → 1.00."""
    rows = _plan(capsys, "0.15")
    assert [r["n"] for r in rows] == [30, 100, 300]
    assert [r["pass_rate"] for r in rows] == [0.55, 0.95, 1.0]
    assert [r["winning_rate"] for r in rows] == [0.525, 0.925, 1.0]
    rows = _plan(capsys, "0.15", "--simulation", "uniform")
    assert [r["pass_rate"] for r in rows] == [0.30, 0.95, 1.0]
    assert [r["winning_rate"] for r in rows] == [0.325, 0.95, 1.0]


def test_a_worse_llm_never_passes(capsys: pytest.CaptureFixture[str]) -> None:
    """LLM noise 0.6 against annotators' 0.3 (same settings): winning and pass rate 0 at
    every n, under either model."""
    for model, adv in (("dirichlet", 0.802), ("uniform", 0.689)):
        rows = _plan(capsys, "0.6", "--simulation", model)
        assert [r["pass_rate"] for r in rows] == [0.0, 0.0, 0.0]
        assert [r["winning_rate"] for r in rows] == [0.0, 0.0, 0.0]
        # ties count as a win for both, so the LLM "wins" most items yet beats no annotator
        assert round(rows[0]["advantage_probability"], 3) == adv


def test_the_default_is_the_papers_model(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 5: the authors' model (alt_test_example.ipynb: priors from Dirichlet(1),
    labels and noise drawn from the priors) is the default. Two annotators agree with probability
    (1 − η)² + (2η − η²)·Σπ², and E[Σπ²] = 2 / (K + 1) under Dirichlet(1) (1 / K uniform): at
    K = 4, η = 0.3, 0.694 against 0.6175. K = 4, 3 annotators, noise 0.3, 100 replicates: the
    pass rate at n = 50, ε 0.2 is 0.73 under the paper's model, 0.66 under the uniform one."""
    from itertools import combinations

    import numpy as np

    for model, want in (("dirichlet", 0.49 + 0.51 * 2 / 5), ("uniform", 0.49 + 0.51 / 4)):
        s = PlanSettings(categories=4, annotators=3, model=model)
        agree = []
        for rep in range(300):
            hum = simulated_set(s, 100, rep).humans
            agree += [
                np.mean([hum[a][i] == hum[b][i] for i in hum[a]])
                for a, b in combinations(sorted(hum), 2)
            ]
        assert float(np.mean(agree)) == pytest.approx(want, abs=0.015), model
    argv = ["decide", "alt-test-plan", "--categories", "4", "--annotators", "3", "--n", "50"]
    argv += ["--alt-epsilon", "0.2", "--format", "json"]
    got = {}
    for extra in ([], ["--simulation", "uniform"]):
        assert main([*argv, *extra]) == 0
        d = json.loads(capsys.readouterr().out)
        got[d["settings"]["model"]] = d["rows"][0]["pass_rate"]
    assert got == {"dirichlet": 0.73, "uniform": 0.66}
    assert main([*argv[:-2], "--simulation", "beta"]) == 2


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
