"""Selective classification with a risk guarantee: the exact binomial (Clopper–Pearson) upper
bound on a disagreement rate, and fixed-sequence testing over descending confidence thresholds.

Jung, Brahman & Choi ("Trust or Escalate", ICLR 2025, Section 3; their
``cascaded_evaluation/util.py``): a judge keeps the items whose confidence is at least a
threshold λ. For each candidate λ, from the highest down, the null "the judge's disagreement
with humans on items with confidence ≥ λ exceeds α" is rejected when the exact one-sided
binomial upper bound on that disagreement, at level 1 − δ, is at most α; the first candidate
that is not rejected stops the sequence (fixed-sequence testing, which needs no multiplicity
correction). The lowest rejected λ is kept; then P(agreement on kept items ≥ 1 − α) ≥ 1 − δ.

Candidates are the distinct calibration confidences with at least ``min_n`` calibration items at
or above them (the paper's code: 30). The paper's code scans a 5,000-point grid on [0, 1]
instead; the grid tests only some of these item sets (two confidences within 1/5,000 share a grid
point), so where the scan here stops at a set the grid skips, the grid keeps more items. Both
are valid fixed-sequence tests (a pre-set order of hypotheses). Where the paper's code keeps the highest candidate even when its bound exceeds
α, here the judge then keeps nothing (``threshold`` None): the guarantee is never given without
its test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


def binomial_upper_bound(errors: int, n: int, delta: float) -> float:
    """The exact one-sided (Clopper–Pearson) upper bound on a rate from ``errors`` of ``n``:
    the r with P(Binomial(n, r) ≤ errors) = δ (1.0 when every trial is an error).

    >>> round(binomial_upper_bound(0, 30, 0.1), 4)  # 1 - 0.1 ** (1 / 30)
    0.0739
    >>> round(binomial_upper_bound(3, 50, 0.05), 4)
    0.1478
    """
    if n <= 0:
        return 1.0
    if not 0 <= errors <= n:
        raise ValueError(f"errors must be in 0..{n}, got {errors}")
    if errors == n:
        return 1.0
    from scipy.special import betaincinv

    return float(betaincinv(errors + 1, n - errors, 1.0 - delta))


@dataclass(frozen=True)
class ThresholdTest:
    """The fixed-sequence test on one calibration set.

    ``threshold``: the lowest rejected candidate (None: none rejected, the judge keeps nothing);
    ``n_kept`` / ``errors`` / ``upper_bound`` at that threshold; ``n_candidates``: candidates with
    at least ``min_n`` items; ``n_tested``: how many were tested before the sequence stopped."""

    threshold: float | None
    n_kept: int
    errors: int
    upper_bound: float | None
    n_candidates: int
    n_tested: int


def _candidates(
    conf_sorted: np.ndarray, min_n: int, grid: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """``(thresholds, n items at or above each)``, highest threshold first, one per item set
    with at least ``min_n`` items: the distinct confidences, or (``grid``) the lowest point of
    ``linspace(0, 1, grid)`` that gives each set. As arrays (a calibration half of a million
    units has half a million distinct confidences: no Python number or tuple each)."""
    asc = conf_sorted[::-1]
    if grid is None:
        values = np.unique(asc)[::-1]
    else:
        values = np.linspace(0.0, 1.0, int(grid))
    n_at = len(asc) - np.searchsorted(asc, values, side="left")
    keep = n_at >= min_n
    v, n = values[keep], n_at[keep]
    by_n = np.lexsort((v, n))  # each set's points, lowest first
    first = np.ones(by_n.size, dtype=bool)
    first[1:] = n[by_n[1:]] != n[by_n[:-1]]
    lowest = by_n[first]  # (a point gives one set: distinct sets have distinct points)
    down = lowest[np.argsort(-v[lowest], kind="stable")]
    return v[down], n[down]


def fixed_sequence_threshold(
    correct: ArrayLike,
    confidence: ArrayLike,
    alpha: float,
    delta: float,
    *,
    min_n: int = 30,
    grid: int | None = None,
) -> ThresholdTest:
    """The threshold of fixed-sequence testing (module docstring) on calibration items with
    ``correct`` (the judge agrees with the human label; the truth side first) and
    ``confidence``. Candidates: the
    distinct confidences (``grid`` None) or the points of ``linspace(0, 1, grid)`` (the paper's
    code: 5,000).

    >>> conf = np.linspace(0.5, 1.0, 100)
    >>> fixed_sequence_threshold(conf > 0.55, conf, alpha=0.2, delta=0.1).threshold is not None
    True
    """
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=bool)
    order = np.argsort(-conf, kind="stable")
    return sorted_threshold(~ok[order], conf[order], alpha, delta, min_n=min_n, grid=grid)


def sorted_threshold(
    wrong_desc: np.ndarray,
    conf_desc: np.ndarray,
    alpha: float,
    delta: float,
    *,
    min_n: int = 30,
    grid: int | None = None,
) -> ThresholdTest:
    """:func:`fixed_sequence_threshold` of calibration items already in descending confidence
    (``wrong_desc``: the judge disagrees with the human label; ``conf_desc``: its confidence),
    tied confidences in any order: each candidate's test counts the items at or above it,
    never an order among ties, so every order of them gives the same test."""
    wrong_cum = np.cumsum(wrong_desc)
    values, sizes = _candidates(conf_desc, min_n, grid)
    best: tuple[float, int, int, float] | None = None
    tested = 0
    for i in range(values.size):
        v, n = float(values[i]), int(sizes[i])
        tested += 1
        k = int(wrong_cum[n - 1])
        ub = binomial_upper_bound(k, n, delta)
        if ub > alpha:
            break
        best = (v, n, k, ub)
    if best is None:
        return ThresholdTest(None, 0, 0, None, values.size, tested)
    return ThresholdTest(best[0], best[1], best[2], best[3], values.size, tested)
