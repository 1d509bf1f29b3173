"""Soft pairwise accuracy (SPA) of system rankings (Thompson, Mathur, Deutsch & Khayrallah 2024).

For every pair of systems (i, j), a paired permutation test over segments gives the p-value of
"system i beats system j", once from the human scores and once from the metric's; SPA is
1 − mean over pairs |p_human − p_metric| (mt-metrics-eval's ``pce.compute_one_minus_pce``,
"1 − pairwise confidence error"). The permutation flips each segment's pair of scores with
probability ½; the same flips serve every pair and both score sources, as in the reference.
p = #{Δ* ≥ Δ}/k (Thompson et al.'s rule, one-sided, no add-one, so p-values match theirs).

Missing cells: SPA needs every system scored on the same segments; segments where any system
lacks a human or metric score are dropped (:func:`complete_segments` reports how many).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from metajudge.results import Result


def sign_flips(n_resamples: int, n_segments: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, n_segments)`` of ±1: each segment's scores swapped (−1) or kept (+1)."""
    return np.where(rng.random((n_resamples, n_segments)) < 0.5, -1.0, 1.0)


def pairwise_p_values(scores: np.ndarray, flips: np.ndarray) -> np.ndarray:
    """Upper triangle: p of "system i > system j" by a paired permutation test over segments.

    ``scores``: (systems, segments); ``flips``: :func:`sign_flips`. Lower triangle NaN.
    """
    scores = np.asarray(scores, dtype=float)
    m = scores.shape[0]
    total = scores.sum(1)
    partial = flips @ scores.T  # (k, m)
    p = np.full((m, m), np.nan)
    for i in range(m):
        for j in range(i + 1, m):
            null = partial[:, i] - partial[:, j]
            p[i, j] = float((null >= total[i] - total[j]).mean())
    return p


def one_minus_pce(p_human: np.ndarray, p_metric: np.ndarray) -> float:
    """1 − mean |p_human − p_metric| over the upper-triangle system pairs."""
    iu = np.triu_indices(p_human.shape[0], 1)
    return float(1.0 - np.mean(np.abs(p_human[iu] - p_metric[iu])))


def complete_segments(human: np.ndarray, metric: np.ndarray) -> tuple[np.ndarray, int]:
    """Columns (segments) where every system has both scores, and how many were dropped."""
    ok = np.isfinite(human).all(0) & np.isfinite(metric).all(0)
    return ok, int((~ok).sum())


@dataclass
class SPAResult(Result):
    """Soft pairwise accuracy with its permutations, seed and dropped segments."""

    value: float
    n_systems: int
    n_segments: int
    segments_dropped: int
    n_perm: int
    seed: int | None


def soft_pairwise_accuracy(
    human: np.ndarray,
    metric: np.ndarray,
    *,
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    flips: np.ndarray | None = None,
) -> SPAResult:
    """SPA of ``metric`` against ``human`` ((systems, segments) matrices; Thompson et al. 2024).

    ``n_resamples`` sign flips drawn from ``rng`` (a Generator, or an int seed, recorded), or
    ``flips`` given.

    >>> h = np.array([[3.0, 4, 5, 4], [1.0, 2, 2, 1], [2.0, 3, 3, 2]])
    >>> soft_pairwise_accuracy(h, h * 2, n_resamples=200, rng=0).value
    1.0
    """
    seed = int(rng) if isinstance(rng, (int, np.integer)) else None
    ok, dropped = complete_segments(np.asarray(human, float), np.asarray(metric, float))
    H, M = np.asarray(human, float)[:, ok], np.asarray(metric, float)[:, ok]
    if H.shape[0] < 2 or H.shape[1] < 1:
        return SPAResult(math.nan, H.shape[0], H.shape[1], dropped, n_resamples, seed)
    if flips is None:
        flips = sign_flips(n_resamples, H.shape[1], np.random.default_rng(rng))
    v = one_minus_pce(pairwise_p_values(H, flips), pairwise_p_values(M, flips))
    return SPAResult(v, H.shape[0], H.shape[1], dropped, flips.shape[0], seed)
