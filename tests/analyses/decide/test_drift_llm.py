"""The drift gate on a real judge (slow; embedded llama.cpp server, SmolLM2-135M).

Temperature 0 against temperature 1.0 on 7 anchor pairs (14 responses) of
lftqa_mitigation_pradhumant must fail the gate (exit 1: the per-response change rate is far above
0.10); the same judge at temperature 0 twice — both runs answered from the cache the first
command filled — must pass (exit 0) with zero backend calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.llm]

T0 = ["--option", "before.mode=samples", "--option", "before.n=1",
      "--option", "before.temperature=0.0"]  # fmt: skip


def _cmd(data_dir: Path, out: Path, after_t: str) -> list[str]:
    return ["decide", "drift", "--dataset", "lftqa_mitigation_pradhumant",
            "--metric", "geval_faithfulness", "--limit", "7", "--backbone", "smollm2-135m",
            "--n-boot", "500", "--data-dir", str(data_dir), "--out", str(out), *T0,
            "--option", "after.mode=samples", "--option", "after.n=1",
            "--option", f"after.temperature={after_t}"]  # fmt: skip


def test_drift_gate_real_judge(data_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make llama)")
    assert main(_cmd(data_dir, tmp_path / "hot", "1.0")) == 1
    hot = json.loads((tmp_path / "hot" / "drift.json").read_text())
    assert hot["change"]["n"] == 14 and hot["change"]["value"] > 0.10
    assert any(r.startswith("change rate") for r in hot["reasons"])
    assert sum(r["cost"]["calls"] for r in hot["runs"].values()) > 0

    assert main(_cmd(data_dir, tmp_path / "rerun", "0.0")) == 0
    rerun = json.loads((tmp_path / "rerun" / "drift.json").read_text())
    assert rerun["passed"] and rerun["change"]["value"] == 0.0 and rerun["shift"]["value"] == 0.0
    assert all(r["cost"]["calls"] == 0 for r in rerun["runs"].values())  # all from the cache
