"""The "Ties Matter" table: Kendall variants, acc_23 with a calibrated tie band, SPA, per metric.

For each metric of a :class:`~metajudge.analyses.metric_vs_human.matrices.ScoreMatrices` at a level (global:
all responses; item / system-grouped: pairs within each input / system, averaged as
mt-metrics-eval's ``average_by``; system: the systems' mean scores): τ_a, τ_b, τ_c, acc_23 at
ε = 0, the calibrated ε* with its acc_23 (fitted on the same pairs: optimistic, said so), the
cross-validated acc_23 (ε fitted on the other folds of inputs), and the soft pairwise accuracy of
the system ranking (Thompson et al. 2024). Deutsch, Foster & Freitag (2023).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from metajudge.analyses.metric_vs_human.matrices import ScoreMatrices
from metajudge.stats import kendall as kd
from metajudge.stats.spa import soft_pairwise_accuracy

NOTE = (
    "eps* maximises acc23 on the same pairs it is scored on (optimistic; Deutsch, Foster & "
    "Freitag 2023, sec. 4); acc23_cv fits eps on the other folds of inputs"
)


def _flat(sm: ScoreMatrices, M: np.ndarray, level: str) -> tuple[np.ndarray, ...]:
    m, n = M.shape
    if level == "system":
        ok = np.isfinite(M) & np.isfinite(sm.human)
        with np.errstate(invalid="ignore"):
            x = np.array([M[i][ok[i]].mean() if ok[i].any() else np.nan for i in range(m)])
            y = np.array([sm.human[i][ok[i]].mean() if ok[i].any() else np.nan for i in range(m)])
        return x, y, None, np.arange(m)
    items = np.tile(np.arange(n), m)
    groups = {"global": None, "item": items, "system-grouped": np.repeat(np.arange(m), n)}[level]
    return M.ravel(), sm.human.ravel(), groups, items


def kendall_rows(
    sm: ScoreMatrices,
    level: str = "item",
    *,
    seed: int = 0,
    cv_folds: int = 5,
    n_perm: int = 1000,
) -> list[dict[str, Any]]:
    """One row per metric: τ_a, τ_b, τ_c, acc23, eps*, acc23 at eps*, acc23_cv, SPA."""
    out = []
    for name, M in sm.metrics.items():
        x, y, groups, units = _flat(sm, M, level)
        row: dict[str, Any] = {"metric": name, "level": level}
        for v in ("a", "b", "c", "acc23"):
            row[f"tau_{v}" if v != "acc23" else "acc23"] = kd.kendall_variant(
                x, y, v, groups=groups
            )
        tc = kd.tie_calibration(x, y, groups)
        row["epsilon"], row["acc23_calibrated"] = tc.epsilon, tc.value
        ok = np.isfinite(x) & np.isfinite(y)
        cv = math.nan
        if len(np.unique(units[ok])) >= 2:
            g = None if groups is None else groups[ok]
            cv, _ = kd.tie_calibration_cv(
                x[ok], y[ok], units[ok], g, k=cv_folds, rng=np.random.default_rng(seed)
            )
        row["acc23_cv"] = cv
        row["spa"] = soft_pairwise_accuracy(sm.human, M, n_resamples=n_perm, rng=seed).value
        out.append(row)
    return out
