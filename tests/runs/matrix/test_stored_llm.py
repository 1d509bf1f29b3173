"""Stored LLM-judge cells stay within their CIs when recomputed.

llama.cpp is not bit-deterministic across builds and thread layouts, so the stored judge cells
(``baselines/judges/``) are not regression-tested to the decimal like the deterministic
baselines: a stored cell is recomputed from scratch (an empty response cache, the same seeded
subset, the real embedded server) and its headline value must fall inside the stored CI.
The cheapest stored cell is used (the pairwise judge on 50 PandaLM pairs, 100 calls).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from metajudge.runs.matrix.prepare import CellOptions
from metajudge.runs.matrix.run import run_cell
from metajudge.runs.matrix.table import read_cell

STORED = Path(__file__).resolve().parents[3] / "baselines" / "judges"


def _headline(cell: dict) -> dict:
    h = cell["headline"]
    for r in cell["results"]:
        if r["statistic"] == h["statistic"] and r["dimension"] == h["dimension"]:
            return r
    raise AssertionError(f"no headline result in {cell['metric']} × {cell['dataset']}")


@pytest.mark.slow
@pytest.mark.llm
def test_a_stored_judge_cell_recomputed_stays_within_its_ci(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] not installed")
    stored = read_cell(STORED / "pairwise_judge__pandalm_testset.json")
    monkeypatch.setenv("METAJUDGE_CACHE_DIR", str(tmp_path / "cache"))  # nothing cached
    opts = CellOptions(
        stored["metric"],
        dataset=stored["dataset"],
        backbone=stored["backbone"],
        limit=stored["subset"]["n"],
        seed=stored["subset"]["seed"],
        data_dir=str(data_dir),
        baselines=str(tmp_path),
        progress=False,
    )
    again, _ = run_cell(opts)
    assert again["subset"]["ids"] == stored["subset"]["ids"]
    assert again["ledger"]["calls"] > 0 and again["ledger"]["cached"] == 0
    old, new = _headline(stored), _headline(again)
    lo, hi = old["ci"]
    assert lo <= new["value"] <= hi, (new["value"], old["value"], old["ci"])
