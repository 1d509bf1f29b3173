"""baselines/ours_*.json: recomputing a deterministic metric's correlation must give the stored value."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from metajudge.runs.baselines import (
    BASELINE_SPECS,
    NOT_BASELINED,
    baseline_path,
    compare_baseline,
    compute_baseline,
)

BASELINES = Path(__file__).resolve().parents[2] / "baselines"
FAST = [s.dataset for s in BASELINE_SPECS if s.dataset != "hanna"]


def test_every_baseline_file_exists_with_signatures() -> None:
    index = json.loads((BASELINES / "ours_index.json").read_text())
    assert index["datasets"] == [s.dataset for s in BASELINE_SPECS]
    assert set(index["not_baselined"]) == set(NOT_BASELINED)
    for spec in BASELINE_SPECS:
        b = json.loads(baseline_path(BASELINES, spec.dataset).read_text())
        assert b["dataset"] == spec.dataset and b["entries"]
        assert b["protocol"]["normalize"] and "grouped" in b["protocol"]
        assert all(e["signature"] for e in b["entries"]), spec.dataset


def test_compare_reports_a_moved_correlation() -> None:
    stored = json.loads(baseline_path(BASELINES, "lftqa_eval").read_text())
    moved = copy.deepcopy(stored)
    moved["entries"][0]["pearson"] += 1e-3
    problems = compare_baseline(stored, moved)
    assert len(problems) == 1 and "pearson moved" in problems[0]
    del moved["entries"][1]
    assert any("no longer computed" in p for p in compare_baseline(stored, moved))
    assert compare_baseline(stored, copy.deepcopy(stored)) == []


@pytest.mark.parametrize("dataset", FAST)
def test_baseline_reproduces(data_dir: Path, dataset: str) -> None:
    spec = next(s for s in BASELINE_SPECS if s.dataset == dataset)
    stored = json.loads(baseline_path(BASELINES, dataset).read_text())
    fresh = compute_baseline(spec, data_dir=data_dir)
    assert compare_baseline(stored, fresh) == []


@pytest.mark.slow
def test_baseline_reproduces_hanna(data_dir: Path) -> None:
    spec = next(s for s in BASELINE_SPECS if s.dataset == "hanna")
    stored = json.loads(baseline_path(BASELINES, "hanna").read_text())
    assert compare_baseline(stored, compute_baseline(spec, data_dir=data_dir)) == []
