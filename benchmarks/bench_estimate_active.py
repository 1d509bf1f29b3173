"""Active selection (``calibrate plan --budget``) against uniform sampling at a fixed label budget.

On fully labelled shipped data (conformal_judge_sheng2025 coherence, lftqa_eval faithfulness):
each draw keeps a uniform pilot of 5% of the labels, fits the calibration on it
(:func:`~metajudge.analyses.calibration.crossfit.fit_crossfit`), then spends a budget of 10% of
the remaining rows either uniformly (π = B/n) or actively (π from the judge's uncertainty,
:func:`~metajudge.analyses.calibration.plan.active_probabilities`), both rules drawing with the
same uniform number per row, and estimates the remaining rows' mean label by the
inverse-probability-weighted estimate (:func:`~metajudge.analyses.calibration.plan.ipw_mean`).
Printed: coverage of that mean by each rule's 95% CI, the mean half-widths, and their ratio
(active / uniform).

What ships is measured the same way (:func:`simulate_estimate`, its own draws): the active plan
is :func:`~metajudge.analyses.calibration.plan.label_plan` run on the pilot, as ``calibrate plan
--budget B`` runs it (its defaults, its seeded draw); the pilot and the picked rows labelled, the
plan's probabilities on the pool's rows, as ``calibrate estimate --plan`` reads them
(:func:`~metajudge.analyses.calibration.estimate.estimate_systems`, its defaults: 40 folds,
cross-fitted on all the labels; the residual term's variance floor under the plan's design);
printed, each system's coverage of its full-label mean and the mean half-width, active against
uniform.

Beside the measured ratio, two noiseless ones from the expected Horvitz–Thompson variance
Σ (Y − f)²(1 − π)/π over the pool (f fixed; averaged over draws): ``expected`` for the rule's π,
and ``ceiling`` for the same rule fed the true root mean squared residual of each judge-score
bin (10 equal-count bins of the pool, all its labels; no mixing) — the best any rule of the
judge score alone can do here. Neither is a setting: nothing is tuned on the labels reported.
On these datasets the residual barely changes with the judge score (sheng2025 coherence: RMS
0.52 to 1.21 over its bins, but most rows in bins of 0.84–0.99), so the ceiling is itself near 1.
tests/cli/test_calibrate_plan.py runs a reduced version (40 and 50 draws).

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/bench_estimate_active.py [DRAWS]
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.analyses.calibration.crossfit import fit_crossfit, residual_bins
from metajudge.analyses.calibration.plan import active_probabilities, ipw_mean

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_estimate_coverage import DATASETS, full_rows


def _ht_var(r: np.ndarray, pi: np.ndarray) -> float:
    return float(np.sum(r**2 * (1 - pi) / pi))


def _ceiling_pi(judge: np.ndarray, r: np.ndarray, b: float) -> np.ndarray:
    edges, rms = residual_bins(judge, r, 10)
    at = np.minimum(np.searchsorted(edges, judge, side="left"), edges.size - 1)
    return active_probabilities(np.maximum(rms[at], 1e-9), b, mix=0.0)


def simulate(
    rows: Any,
    draws: int,
    *,
    pilot: float = 0.05,
    budget: float = 0.10,
    mix: float = 0.2,
    seed: int = 0,
) -> dict[str, Any]:
    """Coverage and mean half-width of the uniform and the active rule (module docstring)."""
    rng = np.random.default_rng([seed, 43])
    n = len(rows)
    k = round(pilot * n)
    stats = {m: {"hit": 0, "half": 0.0} for m in ("uniform", "active")}
    expected = {"expected": 0.0, "ceiling": 0.0}
    for d in range(draws):
        keep = np.zeros(n, bool)
        keep[rng.choice(n, size=k, replace=False)] = True
        part = replace(rows, label=np.where(keep, rows.label, np.nan))
        cf = fit_crossfit(part, seed=d, folds=5)
        pool = rows.take(~keep)
        f, y = cf.predict(pool.judge), pool.label
        target = float(y.mean())
        b = budget * len(pool)
        rules = {
            "uniform": np.full(len(pool), b / len(pool)),
            "active": active_probabilities(cf.residual_sd(pool.judge), b, mix),
        }
        v_unif = _ht_var(y - f, rules["uniform"])
        expected["expected"] += (_ht_var(y - f, rules["active"]) / v_unif) ** 0.5 / draws
        ceiling = _ceiling_pi(pool.judge, y - f, b)
        expected["ceiling"] += (_ht_var(y - f, ceiling) / v_unif) ** 0.5 / draws
        draw = rng.random(len(pool))  # one uniform per row, shared by both rules
        for m, pi in rules.items():
            picked = draw < pi
            e = ipw_mean(f, y, pi, picked)
            stats[m]["hit"] += e["lo"] <= target <= e["hi"]
            stats[m]["half"] += (e["hi"] - e["lo"]) / 2
    out = {
        m: {"coverage": s["hit"] / draws, "half_width": s["half"] / draws} for m, s in stats.items()
    }
    out["ratio"] = out["active"]["half_width"] / out["uniform"]["half_width"]
    out |= {f"ratio_{k}": v for k, v in expected.items()}
    return out | {"draws": draws, "pilot": pilot, "budget": budget, "rows": n}


def _plan_rows(rows: Any, keep: np.ndarray, pi: np.ndarray, picked: np.ndarray) -> Any:
    """``rows`` as ``calibrate estimate --plan`` sees them: labels on the pilot and the picked
    pool rows, the pool's probabilities and draws."""
    pool = ~keep
    full_pi, drawn = np.full(len(rows), np.nan), np.zeros(len(rows), bool)
    full_pi[pool], drawn[pool] = pi, picked
    label = np.where(keep | drawn, rows.label, np.nan)
    return replace(rows, label=label, pi=full_pi, drawn=drawn)


def simulate_estimate(
    rows: Any,
    draws: int,
    *,
    pilot: float = 0.05,
    budget: float = 0.10,
    mix: float = 0.2,
    seed: int = 0,
) -> dict[str, Any]:
    """Per-system coverage and mean half-width of the shipped estimate under each rule: the
    active plan is :func:`~metajudge.analyses.calibration.plan.label_plan` on the pilot (what
    ``calibrate plan --budget B`` runs, its defaults and its seeded draw), the uniform rule
    draws with the same uniform numbers against π = B/n; both are estimated as
    ``calibrate estimate --plan`` does."""
    from metajudge.analyses.calibration.estimate import Settings, estimate_systems
    from metajudge.analyses.calibration.plan import label_plan

    rng = np.random.default_rng([seed, 44])
    n = len(rows)
    truth = {s: float(rows.of(s).label.mean()) for s in rows.systems}
    stats = {m: {"hit": 0, "half": 0.0, "n": 0} for m in ("uniform", "active")}
    for d in range(draws):
        keep = np.zeros(n, bool)
        keep[rng.choice(n, size=round(pilot * n), replace=False)] = True
        part = replace(rows, label=np.where(keep, rows.label, np.nan))
        st = Settings(seed=d)
        b = budget * int((~keep).sum())
        _, picks = label_plan(part, st, half_width=None, budget=b, mix=mix)
        pi, picked = np.array([p[4] for p in picks]), np.array([p[5] for p in picks], bool)
        draw = np.random.default_rng([d, 42]).random(pi.size)  # label_plan's draw
        assert np.array_equal(draw < pi, picked)
        rules = {"uniform": np.full(pi.size, b / pi.size), "active": pi}
        for m, p in rules.items():
            _, systems, _ = estimate_systems(_plan_rows(rows, keep, p, draw < p), st)
            for e in systems:
                stats[m]["hit"] += e["lo"] <= truth[e["system"]] <= e["hi"]
                stats[m]["half"] += (e["hi"] - e["lo"]) / 2
                stats[m]["n"] += 1
    out = {
        m: {"coverage": s["hit"] / s["n"], "half_width": s["half"] / s["n"]}
        for m, s in stats.items()
    }
    out["ratio"] = out["active"]["half_width"] / out["uniform"]["half_width"]
    return out | {"draws": draws, "systems": len(truth)}


def main(draws: int = 200) -> dict:
    out = {}
    for name in DATASETS:
        rows = full_rows(name)
        out[name] = simulate(rows, draws) | {"shipped": simulate_estimate(rows, draws)}
    return out


if __name__ == "__main__":
    res = main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
    for name, r in res.items():
        print(
            f"{name}: uniform coverage {r['uniform']['coverage']:.3f} half-width "
            f"{r['uniform']['half_width']:.4f}; active coverage {r['active']['coverage']:.3f} "
            f"half-width {r['active']['half_width']:.4f}; ratio {r['ratio']:.3f} (expected "
            f"{r['ratio_expected']:.3f}; ceiling of a judge-score rule {r['ratio_ceiling']:.3f})"
        )
    for name, r in res.items():
        e = r["shipped"]
        print(
            f"{name}, calibrate estimate --plan, per system: uniform coverage "
            f"{e['uniform']['coverage']:.3f} half-width {e['uniform']['half_width']:.4f}; active "
            f"coverage {e['active']['coverage']:.3f} half-width {e['active']['half_width']:.4f}; "
            f"ratio {e['ratio']:.3f}"
        )
    print(json.dumps(res, indent=1))
