"""Sample sizes: how many human labels a decision needs.

- :func:`n_for_correlation` — items needed to detect a correlation r (Fisher z; Cohen 1988,
  ch. 3; Bonett & Wright 2000): n = ((z_{1−α/2} + z_{1−β}) / atanh r)² + 3.
- :func:`n_for_margin` — items needed for a one-sided test that a paired difference exceeds a
  bound (non-inferiority / inferiority; Chow, Shao & Wang 2008, *Sample Size Calculations in
  Clinical Research*, §3.2): n = σ²·(z_{1−α} + z_{1−β})² / (Δ − bound)², with σ the per-item
  standard deviation of the difference (from a bootstrap SE, σ = SE·√n).
"""

from __future__ import annotations

import math
from statistics import NormalDist


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
