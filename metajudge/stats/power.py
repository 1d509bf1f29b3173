"""Sample sizes: how many human labels a decision needs.

- :func:`n_for_correlation` — items needed to detect a correlation r (Fisher z; Cohen 1988,
  ch. 3; Bonett & Wright 2000): n = ((z_{1−α/2} + z_{1−β}) / atanh r)² + 3.
- :func:`n_for_correlation_difference` — items needed to detect a difference between two
  metrics' correlations with the same humans (Fisher z; Steiger 1980); it needs the metrics'
  correlation with each other, r12 (:func:`r12_from_scores` estimates it from their scores).
- :func:`n_for_margin` — items needed for a one-sided test that a paired difference exceeds a
  bound (non-inferiority / inferiority; Chow, Shao & Wang 2008, *Sample Size Calculations in
  Clinical Research*, §3.2): n = σ²·(z_{1−α} + z_{1−β})² / (Δ − bound)², with σ the per-item
  standard deviation of the difference (from a bootstrap SE, σ = SE·√n).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import NormalDist

import numpy as np

from metajudge.stats.correlation import pearson


def n_for_correlation(r: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Items needed to detect correlation ``r`` two-sided at ``alpha`` with ``power`` (Fisher z).

    >>> round(n_for_correlation(0.3), 1)
    84.9
    """
    if not math.isfinite(r) or r == 0 or abs(r) >= 1:
        return math.inf
    q = NormalDist().inv_cdf
    return ((q(1 - alpha / 2) + q(power)) / math.atanh(abs(r))) ** 2 + 3


def n_for_margin(
    estimate: float, bound: float, sd: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Items for a one-sided level-``alpha`` test of ``Δ > bound`` (or ``< bound``) at ``power``.

    ``estimate`` is the assumed true difference Δ, ``sd`` the per-item SD of the difference.
    Infinite when Δ sits on the bound.

    >>> round(n_for_margin(0.0, -0.05, 0.5), 1)
    618.3
    """
    gap = abs(estimate - bound)
    if not (math.isfinite(gap) and math.isfinite(sd)) or gap == 0:
        return math.inf
    q = NormalDist().inv_cdf
    return (sd * (q(1 - alpha) + q(power)) / gap) ** 2


def n_for_correlation_difference(
    r1: float, r2: float, r12: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Items to detect that two metrics' correlations with the same humans differ (Fisher z).

    r1, r2: each metric's correlation with the humans; r12: the metrics' correlation with each
    other on the same items (estimate it from the two metrics' scores,
    :func:`r12_from_scores`). Var(z1 − z2) = 2(1 − c)/(n − 3) with c the correlation of the
    two z's for overlapping correlations (Steiger 1980, *Psychological Bulletin* 87, eqs. 3 and
    11), so n = 2(1 − c)((z_{1−α/2} + z_{1−β})/(atanh r1 − atanh r2))² + 3.

    r12 = 0 is *not* the case of two independent samples: c (above) is not 0 then
    (r1 = 0.5, r2 = 0.3: c = −0.073, n = 295.8, against 276.0 for two independent samples of n
    items each, c = 0). Metrics usually correlate, and the sample size falls quickly with r12
    (127 items at r12 = 0.6), so there is no default.

    >>> round(n_for_correlation_difference(0.5, 0.3, 0.0), 1)
    295.8
    >>> round(n_for_correlation_difference(0.5, 0.3, 0.6), 1)
    126.6
    """
    vals = (r1, r2, r12)
    if not all(math.isfinite(v) and abs(v) < 1 for v in vals) or r1 == r2:
        return math.inf
    psi = r12 * (1 - r1 * r1 - r2 * r2) - 0.5 * r1 * r2 * (1 - r1 * r1 - r2 * r2 - r12 * r12)
    c = psi / ((1 - r1 * r1) * (1 - r2 * r2))
    q = NormalDist().inv_cdf
    dz = math.atanh(r1) - math.atanh(r2)
    return 2 * (1 - c) * ((q(1 - alpha / 2) + q(power)) / dz) ** 2 + 3


def r12_from_scores(
    a: Mapping[str, float | None], b: Mapping[str, float | None]
) -> tuple[float, int]:
    """The two metrics' Pearson correlation over the units both score, and that number of units.

    ``a``, ``b``: a score per unit (response key, or pair for difference protocols); NaN,
    None and units only one metric scores are left out. The one Pearson
    (:func:`~metajudge.stats.correlation.pearson`); NaN when either side is constant.

    >>> r, n = r12_from_scores({"x": 1.0, "y": 2.0, "z": 4.0, "w": None}, {"x": 1.0, "y": 3.0, "z": 4.0})
    >>> round(r, 4), n
    (0.9286, 3)
    """
    keys = [k for k in a if k in b and _finite(a[k]) and _finite(b[k])]
    if len(keys) < 3:
        return math.nan, len(keys)
    x = np.array([a[k] for k in keys], dtype=float)
    y = np.array([b[k] for k in keys], dtype=float)
    return pearson(x, y), len(keys)


def _finite(v: float | None) -> bool:
    return v is not None and math.isfinite(v)
