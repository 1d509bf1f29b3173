"""Selective judging's guarantee by simulation: is P(agreement on kept items < 1 − α) ≤ δ over
calibration draws from the population? (Trust or Escalate, Jung et al. 2025; issue 41 item 2.)

Two populations, seeded:

- **synthetic**, known exactly: a judge's confidence c ~ U(0.5, 1) and it agrees with the human
  with probability c, so the population agreement of the items kept at threshold t is
  E[c | c ≥ t] = (1 + t) / 2. For each calibration size n, ``draws`` i.i.d. calibration sets,
  the fixed-sequence threshold of each (``metajudge.stats.selective``, the paper's grid), and
  the share of draws whose threshold's population agreement is below 1 − α (a violation);
- **released** (trust_or_escalate_jung2025, 500 pairs), the dataset standing in for the
  population: ``calibrate selective``'s own "population violations" (calibration sets drawn
  i.i.d. from the 500 pairs, thresholds applied to all of them) beside its realised test-set
  share, which is not the guarantee's quantity.

Prints both tables; ``tests/analyses/test_selective_guarantee.py`` asserts a reduced run.

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/selective_guarantee.py [DRAWS]
"""

from __future__ import annotations

import sys

import numpy as np

from metajudge.stats.selective import fixed_sequence_threshold

SIZES = (30, 50, 100, 250, 1000)
JUDGES = ("mistral-7b-instruct", "gpt-3.5-turbo", "gpt-4-turbo")


def synthetic(
    n_cal: int, *, alpha: float = 0.15, delta: float = 0.1, draws: int = 1000, seed: int = 0
) -> dict[str, float]:
    """Violation rate, share of draws keeping anything, and the mean population agreement of
    the kept items, over ``draws`` calibration sets of ``n_cal`` from the synthetic population."""
    rng = np.random.default_rng([seed, n_cal])
    violations = kept = 0
    agree = []
    for _ in range(draws):
        c = rng.uniform(0.5, 1.0, n_cal)
        ok = rng.uniform(size=n_cal) < c
        t = fixed_sequence_threshold(ok, c, alpha, delta, grid=5000).threshold
        if t is None:
            continue
        kept += 1
        pop = (1.0 + max(t, 0.5)) / 2.0  # E[c | c >= t], c ~ U(0.5, 1)
        agree.append(pop)
        violations += pop < 1.0 - alpha - 1e-12
    return {
        "n": n_cal,
        "violation_rate": violations / draws,
        "kept_share": kept / draws,
        "mean_population_agreement": float(np.mean(agree)) if agree else float("nan"),
    }


def released(
    judge: str,
    *,
    alpha: float = 0.15,
    delta: float = 0.1,
    draws: int = 1000,
    seed: int = 0,
    n_cal: int = 250,
) -> dict[str, float | int | None]:
    """``calibrate selective``'s population violations and realised test share for ``judge``."""
    from metajudge.analyses.selective import calibrate_selective

    res = calibrate_selective(
        "trust_or_escalate_jung2025",
        [judge],
        alpha=alpha,
        delta=delta,
        repeats=draws,
        seed=seed,
        n_calibration=n_cal,
    )
    (c,) = res.configs
    return {
        "judge": judge,
        "population_violation_share": c.population_violation_share,
        "population_draws_kept": c.population_draws_kept,
        "test_reached_share": c.reached_share,
        "test_splits_kept": draws - c.splits_empty,
    }


def main(draws: int = 1000) -> str:
    lines = [
        (
            "Synthetic population (c ~ U(0.5, 1), P(agree) = c), alpha 0.15, delta 0.1, "
            f"{draws} draws per n:"
        ),
        "",
        "| n calibration | violation rate (<= 0.1) | draws keeping any | mean population agreement |",
        "|---|---|---|---|",
    ]
    for n in SIZES:
        r = synthetic(n, draws=draws)
        lines.append(
            f"| {n} | {r['violation_rate']:.3f} | {r['kept_share']:.3f} | "
            f"{r['mean_population_agreement']:.3f} |"
        )
    lines += [
        "",
        f"trust_or_escalate_jung2025 (500 pairs as the population), 250 calibration, {draws} draws:",
        "",
        "| judge | population violations (<= 0.1) | draws keeping any | realised test share >= 0.85 | splits keeping any |",
        "|---|---|---|---|---|",
    ]
    for j in JUDGES:
        r = released(j, draws=draws)
        v, t = r["population_violation_share"], r["test_reached_share"]
        lines.append(
            f"| {j} | {v:.3f} | {r['population_draws_kept']} | "
            f"{'–' if t is None else f'{t:.3f}'} | {r['test_splits_kept']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
