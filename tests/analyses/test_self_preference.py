"""The self-preference check (metajudge.analyses.self_preference) by hand, and `metajudge judge
self-preference` on Judging the Judges (GPT-4 judging GPT-4 Turbo's TriviaQA answers)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from metajudge.analyses.self_preference import self_preference
from metajudge.cli import main


def test_by_hand() -> None:
    """4 questions x 2 systems (own 'f', other 'o'). On f the judge accepts 4/4, humans 2/4:
    +0.5; on o the judge accepts 2/4, humans 2/4: 0; self-preference +0.5."""
    T, F = "True", "False"
    gold = [T, T, F, F, T, F, T, F]
    judge = [T, T, T, T, T, F, T, F]
    systems = ["f"] * 4 + ["o"] * 4
    groups = ["q1", "q2", "q3", "q4"] * 2
    res = self_preference(gold, judge, systems, groups, ["f"], n_boot=500, seed=0)
    assert (res.n_own, res.n_other) == (4, 4)
    assert res.judge_rate_own == 1.0 and res.human_rate_own == 0.5
    assert res.over_acceptance_own == 0.5 and res.over_acceptance_other == 0.0
    assert res.self_preference == 0.5
    lo, hi = res.self_preference_ci
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0  # per question the own excess is 0 or 1, the other 0
    with pytest.raises(Exception, match="family"):
        self_preference(gold, judge, systems, groups, ["nobody"], n_boot=10)


def test_gpt4_on_gpt4_turbo(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv.field_size_limit(1 << 30)
    path = data_dir / "judging_the_judges_thakur2024" / "TriviaQA_Judges_w_HumanJudgement_V2.csv"
    with open(path, encoding="utf-8") as f:
        raw = [r for r in csv.DictReader(f) if r["Human-Eval"].strip()]
    own = [r for r in raw if r["model"] == "gpt-4t"]
    other = [r for r in raw if r["model"] != "gpt-4t"]

    def rate(rows: list[dict], col: str) -> float:
        return float(np.mean([r[col] == "True" for r in rows]))

    argv = ["judge", "self-preference", "--dataset", "judging_the_judges_thakur2024"]
    argv += ["--judge", "GPT-4", "--family", "gpt-4t", "--n-boot", "300", "--format", "json"]
    assert main(argv) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["n_own"] == len(own) == 400 and j["n_other"] == len(other) == 2800
    assert j["judge_rate_own"] == pytest.approx(rate(own, "GPT-4"))
    assert j["human_rate_own"] == pytest.approx(rate(own, "Human-Eval"))
    want = rate(own, "GPT-4") - rate(own, "Human-Eval")
    want -= rate(other, "GPT-4") - rate(other, "Human-Eval")
    assert j["self_preference"] == pytest.approx(want)
    assert round(j["judge_rate_own"], 3) == 0.833 and round(j["human_rate_own"], 3) == 0.853
    assert j["self_preference_ci"][0] < 0 < j["self_preference_ci"][1]
