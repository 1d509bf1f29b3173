"""Which interval a value gets: the one rule that picks the CI method from n.

The percentile bootstrap (Efron & Tibshirani 1993, §13.3) is too narrow on few units: with
independent normal x, y (ρ = 0) its 95% interval of Pearson's r excludes 0 in 8.6%, 10.1% and
8.5% of 2,000 simulated datasets at n = 6, 10 and 20 (``tests/stats/test_intervals.py``). On at
most ``small_n`` independent units (20 by default, :data:`SMALL_N`, always passed explicitly by
the caller; n = 20 included, where the percentile bootstrap still excludes ρ = 0 in 9%)
:func:`choose` gives instead an interval that keeps its level:

* Pearson's r: Fisher's z (Fisher 1921), se = 1/sqrt(n − 3);
* Spearman's ρ: Fisher's z with Bonett & Wright's (2000, Psychometrika 65:23–28) variance
  se² = (1 + ρ²/2)/(n − 3). Fieller, Hartley & Pearson's (1957) se² = 1.06/(n − 3) (what the
  ``fisher_ci`` beside every value uses) excludes ρ = 0 in 8.1% of 2,000 simulated
  independent datasets at n = 5 (the 10 of 120 rank orders with |ρ| ≥ 0.9); Bonett & Wright's
  widens with |ρ| and keeps the level (1.7%: only |ρ| = 1);
* Kendall's τ_b: Fisher's z with Fieller, Hartley & Pearson's (1957) se = sqrt(0.437/(n − 4));
* a mean of per-group correlations (item- or system-grouped levels): Student's t on the
  per-group values, mean ± t_{G−1}·sd/sqrt(G), clipped to [−1, 1];
* an accuracy (a proportion): Wilson's score interval (Wilson 1927) on n units.

Below :data:`MIN_CI_N` (5) units no interval is given (method ``"none (n < 5)"``). Every
interval carries its method's name; results show it beside the value (``ci_method``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from metajudge.stats.correlation import fisher_z_ci

FArr = NDArray[np.float64]

#: default number of independent units up to which (included) the percentile bootstrap is not used
SMALL_N = 20
#: fewest independent units for any interval
MIN_CI_N = 5
PERCENTILE = "percentile bootstrap"
NO_CI = f"none (n < {MIN_CI_N})"
FISHER_METHODS: dict[str, str] = {
    "pearson": "Fisher z",
    "spearman": "Fisher z (Fieller 1957, se^2 = 1.06/(n-3))",
    "kendall": "Fisher z (Fieller 1957, se^2 = 0.437/(n-4))",
}
BONETT_WRIGHT = "Fisher z (Bonett-Wright 2000, se^2 = (1 + r^2/2)/(n-3))"
T_GROUPED = "Student t on the per-group values"
WILSON = "Wilson score"
CORRELATIONS = ("pearson", "spearman", "kendall")


@dataclass(frozen=True)
class Interval:
    """An interval and the method that gave it (``lo``/``hi`` NaN: none)."""

    lo: float
    hi: float
    method: str | None
    n: int

    @property
    def ci(self) -> list[float] | None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            return None
        return [float(self.lo), float(self.hi)]


def percentile_ci(
    samples: np.ndarray, level: float = 0.95, *, min_defined: float = 0.5
) -> tuple[float, float]:
    """Percentile interval of the finite bootstrap samples (Efron & Tibshirani 1993, §13.3).

    ``(nan, nan)`` when fewer than ``min_defined`` of the resamples give a defined value (an
    interval from a minority of resamples would describe a different population).

    >>> percentile_ci(np.array([0.1, 0.2, 0.3, np.nan]), 0.5)
    (0.15000000000000002, 0.25)
    >>> percentile_ci(np.array([0.1, np.nan, np.nan]))
    (nan, nan)
    """
    s = np.asarray(samples, dtype=float)
    fin = s[np.isfinite(s)]
    if fin.size == 0 or fin.size < min_defined * s.size:
        return (math.nan, math.nan)
    lo, hi = np.quantile(fin, [(1 - level) / 2, 1 - (1 - level) / 2])
    return (float(lo), float(hi))


def wilson_ci(p: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson's (1927) score interval of a proportion ``p`` observed on ``n`` units.

    >>> lo, hi = wilson_ci(0.5, 10)
    >>> round(lo, 4), round(hi, 4)
    (0.2366, 0.7634)
    """
    from statistics import NormalDist

    if not math.isfinite(p) or n < 1:
        return (math.nan, math.nan)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z / den * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def bonett_wright_ci(rho: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Fisher-z interval of Spearman's ρ with Bonett & Wright's (2000) se² = (1 + ρ²/2)/(n − 3).

    >>> lo, hi = bonett_wright_ci(0.9, 5)
    >>> round(lo, 3), round(hi, 3)
    (-0.169, 0.996)
    """
    from statistics import NormalDist

    if not math.isfinite(rho) or n <= 3:
        return (math.nan, math.nan)
    se = math.sqrt((1 + rho * rho / 2) / (n - 3))
    z = math.atanh(min(max(rho, -0.9999999999), 0.9999999999))
    q = NormalDist().inv_cdf(0.5 + level / 2)
    return (math.tanh(z - q * se), math.tanh(z + q * se))


def t_mean_ci(values: FArr, level: float = 0.95) -> tuple[float, float]:
    """Student's t interval of the mean of ``values`` (per-group correlations), clipped to
    [−1, 1]; NaN with fewer than two values."""
    from scipy.stats import t as student_t

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return (math.nan, math.nan)
    m = float(v.mean())
    half = float(student_t.ppf(0.5 + level / 2, v.size - 1)) * float(v.std(ddof=1))
    half /= math.sqrt(v.size)
    return (max(-1.0, m - half), min(1.0, m + half))


def small_n_interval(
    statistic: str, value: float, n: int, level: float, unit_values: FArr | None = None
) -> Interval:
    """The interval :func:`choose` gives at or below ``small_n``: Fisher z, t or Wilson by statistic."""
    if n < MIN_CI_N or not math.isfinite(value):
        return Interval(math.nan, math.nan, NO_CI if n < MIN_CI_N else None, n)
    if statistic in CORRELATIONS:
        if unit_values is not None:
            return Interval(*t_mean_ci(unit_values, level), T_GROUPED, n)
        if statistic == "spearman":
            return Interval(*bonett_wright_ci(value, n, level), BONETT_WRIGHT, n)
        lo, hi = fisher_z_ci(value, n, level=level, method=statistic)  # type: ignore[arg-type]
        return Interval(lo, hi, FISHER_METHODS[statistic], n)
    return Interval(*wilson_ci(value, n, level), WILSON, n)


def choose(
    statistic: str,
    value: float,
    n: int,
    samples: FArr | None,
    level: float,
    *,
    small_n: int,
    unit_values: FArr | None = None,
) -> Interval:
    """THE interval of a meta-evaluation value (module docstring): above ``small_n``
    independent units, the percentile interval of the bootstrap ``samples`` (None: no
    bootstrap was asked for, no interval); at or below it :func:`small_n_interval`; below
    :data:`MIN_CI_N` none. ``unit_values``: the per-group values a grouped mean averages.

    >>> choose("pearson", 0.5, 4, None, 0.95, small_n=20).method
    'none (n < 5)'
    >>> [round(b, 3) for b in choose("pearson", 0.5, 10, np.zeros(9), 0.95, small_n=20).ci]
    [-0.189, 0.859]
    """
    if n < MIN_CI_N:
        return Interval(math.nan, math.nan, NO_CI, n)
    if samples is None:
        return Interval(math.nan, math.nan, None, n)
    if n <= small_n:
        return small_n_interval(statistic, value, n, level, unit_values)
    lo, hi = percentile_ci(samples, level)
    return Interval(lo, hi, PERCENTILE, n)


def fisher_interval(statistic: str, value: float, n: int, level: float) -> Interval:
    """The Fisher-z interval shown beside every correlation (``fisher_ci``), none below
    :data:`MIN_CI_N` units."""
    if n < MIN_CI_N:
        return Interval(math.nan, math.nan, NO_CI, n)
    lo, hi = fisher_z_ci(value, n, level=level, method=statistic)  # type: ignore[arg-type]
    return Interval(lo, hi, FISHER_METHODS[statistic], n)
