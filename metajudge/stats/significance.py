"""Comparing two metrics: paired bootstrap and Williams tests; Holm and Benjamini–Yekutieli
corrections; the p-value floor of a resampling test. The permutation tests are
:mod:`metajudge.stats.resampling_tests`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metajudge.stats.bootstrap import bootstrap_p_value, correlate, resample
from metajudge.stats.correlation import _as_xy, statistic_fn
from metajudge.stats.intervals import percentile_ci


@dataclass
class DiffResult:
    """Difference ``stat(x1, y) − stat(x2, y)`` with a CI (bootstrap) and a two-sided p-value."""

    diff: float
    lo: float
    hi: float
    p_value: float
    n_resamples: int
    method: str


def paired_bootstrap_diff(
    x1: Sequence[float] | np.ndarray,
    x2: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    statistic: str = "pearson",
    groups: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = 1000,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
    weights: np.ndarray | None = None,
    resamples: Any = None,
    samples: tuple[np.ndarray, np.ndarray] | None = None,
    observed: tuple[float, float] | None = None,
) -> DiffResult:
    """Paired bootstrap of the difference of two metrics' correlation with the same humans.

    Both metrics are evaluated on the same item resamples (Koehn 2004; Deutsch, Dror & Roth
    2021): :func:`~metajudge.stats.bootstrap.resample` (or ``weights`` (B, n_items), or the row
    weights ``resamples``), :func:`~metajudge.stats.bootstrap.correlate`; ``samples``: both
    metrics' resampled values when already computed on those resamples; ``observed``: both
    metrics' point values on these rows when already computed (a point value of a million rows
    costs two sorts). CI: percentile interval of Δ_b. p-value:
    :func:`~metajudge.stats.bootstrap.bootstrap_p_value` (two-sided, add-one smoothing, so a
    finite bootstrap never reports p = 0).
    """
    a1, ya = _as_xy(x1, y)
    a2, _ = _as_xy(x2, y)
    if samples is None:
        W = resamples
        if W is None:
            W = resample(groups, ya.size, n_resamples=n_resamples, rng=rng, weights=weights)  # type: ignore[arg-type]
        s1 = correlate([(statistic, a1, ya)], W)[0]
        s2 = correlate([(statistic, a2, ya)], W)[0]
    else:
        s1, s2 = samples
    d = s1 - s2
    if observed is None:
        observed = (statistic_fn(statistic)(a1, ya), statistic_fn(statistic)(a2, ya))
    obs = observed[0] - observed[1]
    lo, hi = percentile_ci(d, level)
    p = bootstrap_p_value(d) if math.isfinite(obs) else math.nan
    return DiffResult(float(obs), lo, hi, p, int(d.size), "paired bootstrap")


@dataclass
class WilliamsResult:
    """Williams' t for two dependent correlations sharing one variable."""

    t: float
    df: int
    p_two_sided: float
    p_one_sided: float  # H1: r12 > r13


def williams_test(r12: float, r13: float, r23: float, n: int) -> WilliamsResult:
    """Williams (1959) test of H0: ρ12 = ρ13 for correlations sharing variable 1 (the humans).

    r12 = corr(human, metric A), r13 = corr(human, metric B), r23 = corr(metric A, metric B), n
    observations. As used for MT metrics by Graham & Baldwin (2014) and given by Steiger (1980,
    eq. 7)::

        K = 1 − r12² − r13² − r23² + 2·r12·r13·r23
        t = (r12 − r13)·sqrt((n − 1)(1 + r23)) /
            sqrt(2K(n − 1)/(n − 3) + ((r12 + r13)²/4)·(1 − r23)³),   df = n − 3

    Example (Steiger 1980 / ``psych::r.test(103, .4, .5, .1)``): t = −0.89, df = 100.

    >>> res = williams_test(0.4, 0.5, 0.1, 103)
    >>> round(res.t, 2), res.df
    (-0.89, 100)
    """
    from scipy.special import stdtr  # Student t CDF, without importing scipy.stats

    if n <= 3 or not all(math.isfinite(v) for v in (r12, r13, r23)):
        return WilliamsResult(math.nan, max(n - 3, 0), math.nan, math.nan)
    K = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    num = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    den2 = 2 * K * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    if den2 <= 0:
        return WilliamsResult(math.nan, n - 3, math.nan, math.nan)
    t = num / math.sqrt(den2)
    df = n - 3
    p1 = float(stdtr(df, -t))  # P(T > t)
    p2 = float(min(1.0, 2 * stdtr(df, -abs(t))))
    return WilliamsResult(float(t), df, p2, p1)


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values; NaN entries stay NaN and do not count.

    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="mergesort")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out


@dataclass(frozen=True)
class PFloor:
    """The smallest p-value a resampling test can report, and the smallest after Holm.

    A test on ``n_resamples`` resamples cannot report p below its floor — 2/(B + 1) for the
    two-sided bootstrap p (:func:`~metajudge.stats.bootstrap_p_value`), 1/(k + 1) for the
    permutation p — and Holm over ``n_tests`` tests multiplies the smallest by ``n_tests``
    (B = 1000 and 18 tests: 0.002 and 0.036). A p at the floor means "p ≤ floor", not p =
    floor: :meth:`text` writes it so, and :meth:`note` says when the floor keeps every test
    from reaching α. The one rule for these statements (rank clusters, meta-evaluation
    comparisons, backbone swap).

    >>> f = PFloor.bootstrap(1000, 18)
    >>> round(f.floor, 4), round(f.holm_floor, 3), f.text(f.floor), f.text(0.25)
    (0.002, 0.036, '≤0.002', '0.25')
    """

    rule: str
    floor: float
    n_resamples: int
    n_tests: int
    #: what one Holm family is, said with its size ("" : every test reported together)
    family: str = ""

    @classmethod
    def bootstrap(cls, n_resamples: int, n_tests: int, family: str = "") -> PFloor:
        return cls("2/(B + 1)", 2.0 / (n_resamples + 1), n_resamples, n_tests, family)

    @classmethod
    def permutation(cls, n_resamples: int, n_tests: int, family: str = "") -> PFloor:
        return cls("1/(k + 1)", 1.0 / (n_resamples + 1), n_resamples, n_tests, family)

    @property
    def tests_words(self) -> str:
        """``31 tests`` or, with a family, ``31 tests (per dimension and statistic)``."""
        return f"{self.n_tests} tests" + (f" ({self.family})" if self.family else "")

    @property
    def holm_floor(self) -> float:
        return min(1.0, self.n_tests * self.floor)

    def at_floor(self, p: float | None) -> bool:
        """Whether the raw ``p`` is the floor (the true p may be anything below it)."""
        return p is not None and math.isfinite(p) and p <= self.floor * (1 + 1e-9)

    def text(self, p: float | None, raw: float | None = None) -> str:
        """``p`` (``raw``: its unadjusted p when ``p`` is Holm-adjusted) as ``≤p`` at the floor."""
        if p is None or not math.isfinite(p):
            return "—"
        return f"≤{p:.3g}" if self.at_floor(p if raw is None else raw) else f"{p:.3g}"

    def needed(self, alpha: float) -> int:
        """The fewest resamples whose Holm floor over these tests is below ``alpha``: the
        floor's numerator (2 for the bootstrap, 1 for permutations) times the tests / alpha,
        rounded down.

        >>> PFloor.bootstrap(1000, 132).needed(0.05)
        5280
        """
        numerator = 2 if self.rule.startswith("2/") else 1
        return max(math.floor(numerator * self.n_tests / alpha), 1)

    def note(self, alpha: float, *, fewer: bool = True) -> str | None:
        """Why no test can be significant at ``alpha`` after Holm, or None when one can;
        ``fewer``: also suggest fewer tests (``--compare-to``; not where it is given)."""
        if self.n_tests and self.holm_floor > alpha:
            how = ", or fewer tests" if fewer else ""
            flag = ", or --compare-to METRIC" if fewer else ""
            return (
                f"with {self.n_resamples} resamples the smallest p is {self.rule} = "
                f"{self.floor:.3g}; Holm over {self.tests_words} cannot fall below "
                f"{self.holm_floor:.3g}, so it cannot reach alpha {alpha}: use at least "
                f"{self.needed(alpha)} resamples{how} (meta-eval: --n-boot "
                f"{self.needed(alpha)}{flag})"
            )
        return None

    def to_dict(self, alpha: float, *, fewer: bool = True) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "floor": self.floor,
            "n_resamples": self.n_resamples,
            "n_tests": self.n_tests,
            **({"family": self.family, "needed": self.needed(alpha)} if self.family else {}),
            "holm_floor": self.holm_floor,
            "meaning": "a p at the floor is reported as <= floor (the test cannot resolve below)",
            "note": self.note(alpha, fewer=fewer),
        }


def benjamini_yekutieli(pvalues: Sequence[float] | np.ndarray, q: float = 0.05) -> np.ndarray:
    """Rejections of the Benjamini–Yekutieli (2001) step-up procedure at FDR ``q`` (valid under
    any dependence): reject the k smallest p-values, k the largest with
    ``p_(k) <= k·q / (m·H_m)``, ``H_m = 1 + 1/2 + … + 1/m``. NaN entries are not rejected and
    do not count in m.

    >>> benjamini_yekutieli([0.001, 0.02, 0.04, 0.5], q=0.05).tolist()
    [True, False, False, False]
    >>> benjamini_yekutieli([0.001, 0.008, 0.04, 0.5], q=0.05).tolist()
    [True, True, False, False]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.zeros(p.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="mergesort")]
    ranks = np.arange(1, m + 1)
    below = np.flatnonzero(p[order] <= ranks * q / (m * np.sum(1.0 / ranks)))
    if below.size:
        out[order[: below[-1] + 1]] = True
    return out


def t_test_less(x: Sequence[float] | np.ndarray, mu: float) -> tuple[float, float]:
    """One-sample t-test of H0: mean(x) >= ``mu`` against H1: mean(x) < ``mu``: ``(t, p)``,
    ``p = P(T_{n-1} <= t)`` (as ``scipy.stats.ttest_1samp(x, mu, alternative='less')``). With no
    spread, t is ±inf (p 0 or 1) or, when mean(x) = mu, NaN; fewer than two values give NaN.

    >>> t, p = t_test_less([0.0, 0.1, -0.1, 0.2, 0.0], 0.2)
    >>> round(t, 3), round(p, 4)
    (-3.138, 0.0175)
    """
    from scipy.special import stdtr

    a = np.asarray(x, dtype=float)
    n = a.size
    if n < 2:
        return math.nan, math.nan
    diff = float(a.mean()) - mu
    sd = float(a.std(ddof=1))
    if sd == 0.0 or not math.isfinite(sd):
        if diff == 0.0:
            return math.nan, math.nan
        return (-math.inf, 0.0) if diff < 0 else (math.inf, 1.0)
    t = diff / (sd / math.sqrt(n))
    return t, float(stdtr(n - 1, t))
