"""Active selection (``calibrate plan --budget``) against plain uniform labelling at a fixed
label budget, as a user would run each.

On the five fully labelled sets of bench_estimate_coverage.py (SummEval coherence and consistency
by gpt-4o-mini, relevance by Qwen, HANNA coherence by ChatGPT run 1, TriviaQA by Llama-7B),
each draw keeps a uniform pilot of 5% of the labels, then spends a budget of 10% of the
remaining rows in one of two ways, from the same pilot:

- **active**: :func:`~metajudge.analyses.calibration.plan.label_plan` on the pilot, as ``calibrate
  plan --budget B`` runs it (its defaults: the balanced design, each system topped up to its
  share, π by the judge's uncertainty within systems where that pays, drawn systematically along
  the judge score; or uniform selection where the pilot predicts a half-width ratio above 0.97;
  its seeded draw); the pilot and the picked rows labelled and estimated as ``calibrate estimate
  --plan`` does (:func:`~metajudge.analyses.calibration.estimate.estimate_systems` with the
  plan's probabilities);
- **uniform**: each pool row labelled with probability B/n (the same uniform numbers), estimated
  by plain ``calibrate estimate`` (no plan: the labels are a random sample).

The active arm follows the plan's advice: where ``calibrate plan`` recommends uniform labelling
(its predicted ratio above 0.97) it selects uniformly, and the active arm there IS uniform
labelling (the same labels and the same estimate as the uniform arm, ratio 1 on those draws).
Beside it, **forced**: the plan's active design on every draw (``--mix 0.2`` where it
recommended uniform), what ignoring the advice would give.

Printed per dataset: the systems' coverage of their full-label means under each arm (all
systems, and the worst system's over the draws), the mean half-widths and their ratio (active /
uniform), the pilot's predicted ratio and how often the plan recommended active selection, the
ratio over the draws where it did, and the forced ratio. The half-width is each system's
(hi − lo)/2, averaged over systems and draws; the ratio is active's mean over uniform's, over all
draws (the issue's criterion: active against uniform at the same number of labels). Seeds: the
pilots by ``[SEED, 44]``, draw d's plan and folds by ``SEED + d`` (the design was chosen on SEED
1000 and 2000; the figures in docs/calibrating.md are SEED 0 and, fresh, SEED 3000).

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/bench_estimate_active.py [DRAWS [SEED [NAME,...]]]

tests/cli/test_calibrate_plan.py runs a reduced version.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_estimate_coverage import DATASETS, full_rows


def _plan_rows(rows: Any, keep: np.ndarray, pi: np.ndarray, picked: np.ndarray) -> Any:
    """``rows`` as ``calibrate estimate --plan`` sees them: labels on the pilot and the picked
    pool rows, the pool's probabilities and draws."""
    pool = ~keep
    full_pi, drawn = np.full(len(rows), np.nan), np.zeros(len(rows), bool)
    full_pi[pool], drawn[pool] = pi, picked
    label = np.where(keep | drawn, rows.label, np.nan)
    return replace(rows, label=label, pi=full_pi, drawn=drawn)


def simulate(
    rows: Any, draws: int, *, pilot: float = 0.05, budget: float = 0.10, seed: int = 0
) -> dict[str, Any]:
    """Per-system coverage and mean half-width of each arm (module docstring)."""
    from metajudge.analyses.calibration.estimate import Settings, estimate_systems
    from metajudge.analyses.calibration.plan import DEFAULT_MIX, label_plan

    rng = np.random.default_rng([seed, 44])
    n = len(rows)
    truth = {s: float(rows.of(s).label.mean()) for s in rows.systems}
    arms = ("uniform", "active")
    stats = {m: {"hit": 0, "half": 0.0, "n": 0} for m in arms}
    per_system = {m: dict.fromkeys(truth, 0) for m in arms}  # each system's covering draws
    chosen = {m: 0.0 for m in arms}  # half-widths over the draws where active was recommended
    rest = {m: 0.0 for m in arms}  # and where uniform was: the same labels, the same estimate
    forced = 0.0  # the active design on every draw, the advice ignored
    predicted, recommended = [], 0
    for d in range(draws):
        keep = np.zeros(n, bool)
        keep[rng.choice(n, size=round(pilot * n), replace=False)] = True
        part = replace(rows, label=np.where(keep, rows.label, np.nan))
        st = Settings(seed=seed + d, n_boot=20)  # (n_boot: the Rogan–Gladen side value only)
        b = budget * int((~keep).sum())
        res, picks = label_plan(part, st, half_width=None, budget=b)
        pi, picked = np.array([p[4] for p in picks]), np.array([p[5] for p in picks], bool)
        draw = np.random.default_rng([seed + d, 42]).random(pi.size)  # label_plan's uniform draw
        active = res.selection["recommendation"] == "active"
        assert active or np.array_equal(draw < pi, picked)
        predicted.append(res.selection["predicted_ratio"])
        recommended += active
        uni = draw < b / pi.size
        lab = keep.copy()
        lab[~keep] = uni
        runs = {
            "uniform": replace(rows, label=np.where(lab, rows.label, np.nan)),
            "active": _plan_rows(rows, keep, pi, picked),
        }
        if not active:
            _, picks = label_plan(part, st, half_width=None, budget=b, mix=DEFAULT_MIX)
            pi, picked = np.array([p[4] for p in picks]), np.array([p[5] for p in picks], bool)
            runs["forced"] = _plan_rows(rows, keep, pi, picked)
        for m, r in runs.items():
            _, systems, _ = estimate_systems(r, st)
            if m == "forced" or (active and m == "active"):
                forced += sum((e["hi"] - e["lo"]) / 2 for e in systems)
            if m == "forced":
                continue
            for e in systems:
                half = (e["hi"] - e["lo"]) / 2
                hit = e["lo"] <= truth[e["system"]] <= e["hi"]
                stats[m]["hit"] += hit
                per_system[m][e["system"]] += hit
                stats[m]["half"] += half
                stats[m]["n"] += 1
                chosen[m] += half if active else 0.0
                rest[m] += 0.0 if active else half
    out: dict[str, Any] = {
        m: {
            "coverage": s["hit"] / s["n"],
            "worst_system_coverage": min(per_system[m].values()) / draws,
            "half_width": s["half"] / s["n"],
        }
        for m, s in stats.items()
    }
    out["ratio"] = out["active"]["half_width"] / out["uniform"]["half_width"]
    out["ratio_where_active"] = chosen["active"] / chosen["uniform"] if recommended else None
    out["ratio_where_uniform"] = rest["active"] / rest["uniform"] if recommended < draws else None
    out["ratio_forced"] = forced / stats["uniform"]["half"]
    out["predicted_ratio"] = float(np.mean(predicted))
    out["active_recommended"] = recommended / draws
    return out | {"draws": draws, "systems": len(truth), "pilot": pilot, "budget": budget}


def main(draws: int = 500, seed: int = 0, names: list[str] | None = None) -> dict:
    return {name: simulate(full_rows(name), draws, seed=seed) for name in names or DATASETS}


if __name__ == "__main__":
    args = sys.argv[1:]
    res = main(
        int(args[0]) if args else 500,
        int(args[1]) if len(args) > 1 else 0,
        args[2].split(",") if len(args) > 2 else None,
    )
    for name, r in res.items():
        where = r["ratio_where_active"]
        print(
            f"{name}: uniform coverage {r['uniform']['coverage']:.3f} (worst system "
            f"{r['uniform']['worst_system_coverage']:.3f}) half-width "
            f"{r['uniform']['half_width']:.4f}; active (as planned) coverage "
            f"{r['active']['coverage']:.3f} (worst system "
            f"{r['active']['worst_system_coverage']:.3f}) half-width "
            f"{r['active']['half_width']:.4f}; ratio "
            f"{r['ratio']:.3f} (predicted {r['predicted_ratio']:.3f}; active recommended in "
            f"{r['active_recommended']:.0%} of draws, ratio there "
            f"{'—' if where is None else f'{where:.3f}'}; where it recommended uniform the "
            f"active arm is uniform labelling; the active design forced on every draw: ratio "
            f"{r['ratio_forced']:.3f})"
        )
    print(json.dumps(res, indent=1))
