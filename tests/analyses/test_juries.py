"""Juries (metajudge.analyses.juries) on hand-made labels, and `metajudge judge jury` on the
released judges of a built-in dataset."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from metajudge.analyses.juries import jury
from metajudge.cli import main


def _case() -> tuple[list[str], dict[str, list[str]], list[str]]:
    """8 inputs, one response each, gold alternating no/yes. A is always right, B always wrong,
    C right on even inputs only."""
    gold = ["no", "yes"] * 4
    flip = {"no": "yes", "yes": "no"}
    preds = {
        "A": list(gold),
        "B": [flip[g] for g in gold],
        "C": [g if i % 2 == 0 else flip[g] for i, g in enumerate(gold)],
    }
    return gold, preds, [f"g{i}" for i in range(8)]


def test_votes_tie_rule_and_weights() -> None:
    gold, preds, groups = _case()
    res = jury(gold, preds, groups, ("no", "yes"), fit_fraction=0.5, seed=3)
    assert res.n_fit == 4 and res.n_eval == 4 and len(res.fit_groups) == 4
    ev = [i for i, g in enumerate(groups) if g not in res.fit_groups]
    rows = {r["name"]: r for r in res.rows}
    assert res.best_single == "A" and rows["A"]["accuracy"] == 1.0
    # majority of three: right exactly where C is right (A + C outvote B), i.e. even inputs
    assert rows["majority vote"]["accuracy"] == pytest.approx(np.mean([i % 2 == 0 for i in ev]))
    # weights: acc 1 and 0 clipped to 1 - 0.5/4 and 0.5/4: w_A = log(7) = -w_B; A's label wins
    assert res.weights["A"] == pytest.approx(math.log(7)) and res.weights["B"] == pytest.approx(
        -math.log(7)
    )
    assert rows["weighted vote"]["accuracy"] == 1.0 and rows["weighted vote"]["mcnemar_p"] == 1.0
    # two judges that always disagree: every item a tie, which goes to the better judge (A)
    two = jury(gold, {"A": preds["A"], "B": preds["B"]}, groups, ("no", "yes"), seed=3)
    assert {r["name"]: r["accuracy"] for r in two.rows}["majority vote"] == 1.0


def test_error_correlation_and_effective_number() -> None:
    """Errors of three judges on 40 inputs; the Pearson correlation of the error indicators on
    the evaluation split recomputed here, and k / (1 + (k-1) * mean)."""
    rng = np.random.default_rng(7)
    gold = ["yes" if rng.random() < 0.5 else "no" for _ in range(40)]
    flip = {"no": "yes", "yes": "no"}
    shared = rng.random(40) < 0.3
    preds = {
        j: [flip[g] if (shared[i] or rng.random() < 0.1) else g for i, g in enumerate(gold)]
        for j in ("x", "y", "z")
    }
    groups = [f"g{i}" for i in range(40)]
    res = jury(gold, preds, groups, ("no", "yes"), seed=1)
    ev = [i for i, g in enumerate(groups) if g not in res.fit_groups]
    wrong = {j: np.array([preds[j][i] != gold[i] for i in ev], dtype=float) for j in preds}
    pairs = [("x", "y"), ("x", "z"), ("y", "z")]
    r = [np.corrcoef(wrong[a], wrong[b])[0, 1] for a, b in pairs]
    for (a, b), v in zip(pairs, r):
        assert res.error_correlation[a][b] == pytest.approx(v)
    assert res.mean_error_correlation == pytest.approx(np.mean(r))
    assert res.effective_judges == pytest.approx(3 / (1 + 2 * np.mean(r)))


def test_jury_command_on_released_judges(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["judge", "jury", "--dataset", "alt_test_calderon2025", "--subset", "mtbench"]
    assert main([*argv, "--format", "json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert (
        len(j["judges"]) == 6
        and j["n_fit"] + j["n_eval"] == 85 - j["dropped"]["a_judge_without_label"]
    )
    names = [r["name"] for r in j["rows"]]
    assert names[-2:] == ["majority vote", "weighted vote"]
    assert main(argv) == 0
    assert "of 6 judges agrees with the human majority" in capsys.readouterr().out
    assert (
        main(["judge", "jury", "--dataset", "alt_test_calderon2025", "--subset", "summeval"]) == 2
    )
