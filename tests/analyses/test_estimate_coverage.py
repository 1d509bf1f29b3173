"""A reduced run of benchmarks/bench_estimate_coverage.py: ``calibrate estimate``'s 95% CIs cover
each system's full-label mean at a rate of at least 0.93 when 5% or 10% of the labels are kept
(conformal_judge_sheng2025, lftqa_eval; 25 seeded draws each, where the benchmark takes 500), and
the naive CI around the raw judge mean does not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_estimate_coverage.py"


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_estimate_coverage", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
@pytest.mark.parametrize("name", ["conformal_judge_sheng2025", "lftqa_eval"])
def test_coverage_with_few_labels(name: str, data_dir: Path) -> None:
    b = _bench()
    rows = b.full_rows(name)
    for fraction in (0.05, 0.10):
        r = b.simulate(rows, fraction, 25)
        assert r["calibrated"]["coverage"] >= 0.93, (name, fraction, r)
        assert r["naive"]["coverage"] < r["calibrated"]["coverage"], (name, fraction)
        assert r["calibrated"]["cis"] == 25 * len(rows.systems)
