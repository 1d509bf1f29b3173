"""Coverage of ``calibrate estimate``'s CIs by a seeded simulation on fully labelled shipped data.

On conformal_judge_sheng2025 (SummEval coherence, 16 systems x 100 documents, the released
gpt-4o-mini rating distributions as the judge: the expected rating) and lftqa_eval (faithfulness,
10 systems x 300 questions, G-Eval gpt-4o as the judge): keep 5%, 10% and 25% of the labels at
random (the rest are unlabelled), estimate every system, and count how often each system's 95% CI
covers that system's full-label mean. Beside it the naive CI around the raw judge mean and the
labels-only CI (the mean of the kept labels, clustered t).

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/bench_estimate_coverage.py [DRAWS]

Default 500 draws per fraction; tests/analyses/test_estimate_coverage.py runs a reduced version.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Any

import numpy as np

from metajudge.analyses.calibration.estimate import Settings, estimate_systems
from metajudge.data.source import DataSource
from metajudge.runs.calibrate_estimate import estimate_rows
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.stats import clustered as cl

DATASETS = {
    "conformal_judge_sheng2025": ("shipped:sheng.4omini_coherence", "coherence"),
    "lftqa_eval": ("shipped:geval_gpt-4o_faithfulness", "faithfulness"),
}
FRACTIONS = (0.05, 0.10, 0.25)


def full_rows(name: str) -> Any:
    scores, dim = DATASETS[name]
    src = DataSource(dataset=name, scores=(scores,), dimension=dim, ids=IdPolicy())
    rows, _ = estimate_rows(src)
    return rows.take(rows.labelled)


def _labels_only(rows: Any, system: str, alpha: float) -> tuple[float, float] | None:
    r = rows.of(system)
    r = r.take(r.labelled)
    if len(set(r.cluster.tolist())) < 2:
        return None
    m, se, g = cl.clustered_mean(r.label, r.cluster)
    return cl.t_interval(m, se, g - 1.0, alpha)


def simulate(rows: Any, fraction: float, draws: int, *, seed: int = 0, folds: int = 40) -> dict:
    """Coverage of each method's CIs over ``draws`` random keeps of ``fraction`` of the labels."""
    target = {s: float(rows.of(s).label.mean()) for s in rows.systems}
    hit = {"calibrated": 0, "naive": 0, "labels_only": 0}
    width = dict.fromkeys(hit, 0.0)
    n = {"calibrated": 0, "naive": 0, "labels_only": 0}
    per_system = dict.fromkeys(rows.systems, 0)
    rng = np.random.default_rng([seed, int(fraction * 1000)])
    k = max(4, round(fraction * len(rows)))
    for d in range(draws):
        keep = np.zeros(len(rows), bool)
        keep[rng.choice(len(rows), size=k, replace=False)] = True
        part = replace(rows, label=np.where(keep, rows.label, np.nan))
        _, systems, _ = estimate_systems(part, Settings(seed=d, folds=folds))
        for s in systems:
            t = target[s["system"]]
            cis = {
                "calibrated": (s["lo"], s["hi"]),
                "naive": (s["judge_mean"]["lo"], s["judge_mean"]["hi"]),
            }
            lo_only = _labels_only(part, s["system"], 0.05)
            if lo_only is not None:
                cis["labels_only"] = lo_only
            for m, (lo, hi) in cis.items():
                hit[m] += lo <= t <= hi
                width[m] += hi - lo
                n[m] += 1
            per_system[s["system"]] += s["lo"] <= t <= s["hi"]
    return {
        "fraction": fraction,
        "labels": k,
        "draws": draws,
        **{m: {"coverage": hit[m] / n[m], "mean_width": width[m] / n[m], "cis": n[m]} for m in hit},
        "min_system_coverage": min(per_system.values()) / draws,
    }


def main(draws: int = 500) -> dict:
    out = {}
    for name in DATASETS:
        rows = full_rows(name)
        out[name] = [simulate(rows, f, draws) for f in FRACTIONS]
    return out


def table(res: dict) -> str:
    lines = [
        "| Dataset | Labels kept | Calibrated: coverage (width) | Naive judge mean | Labels only | Worst system |",
        "|---|---|---|---|---|---|",
    ]
    for name, rows in res.items():
        for r in rows:
            cell = {
                m: f"{r[m]['coverage']:.3f} ({r[m]['mean_width']:.3f})"
                for m in ("calibrated", "naive", "labels_only")
            }
            lines.append(
                f"| {name} | {r['fraction']:.0%} ({r['labels']}) | {cell['calibrated']} | "
                f"{cell['naive']} | {cell['labels_only']} | {r['min_system_coverage']:.3f} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    res = main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
    print(table(res))
    print(json.dumps(res, indent=1))
