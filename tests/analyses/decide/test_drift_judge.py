"""``metajudge decide drift --judge``: the judge run twice by decide (options checked first).

The real-drift run (embedded SmolLM2, temperature 0 vs 1.0) is tests/analyses/decide/test_drift_llm.py
(slow); these tests check the argument rules, which refuse before any server starts.
"""

from __future__ import annotations

import pytest

from metajudge.cli import main

BASE = ["decide", "drift", "--dataset", "lftqa_mitigation_pradhumant", "--metric"]


@pytest.mark.parametrize(
    "extra",
    [
        ["geval_faithfulness", "--option", "after.temperature=1.0"],  # no --backbone
        ["geval_faithfulness", "--backbone", "smollm2-135m", "--option", "middle.n=1"],
        ["geval_faithfulness", "--backbone", "smollm2-135m", "--option", "after.bogus=1"],
        ["geval_faithfulness", "--backbone", "smollm2-135m", "--option", "after.temperature=-1"],
        ["geval_faithfulness", "--backbone", "smollm2-135m", "--backbones", "a,b"],
    ],
)
def test_drift_judge_options_refused(extra: list[str], capsys: pytest.CaptureFixture) -> None:
    assert main([*BASE, *extra]) == 2
    assert "error" in capsys.readouterr().err.lower()
