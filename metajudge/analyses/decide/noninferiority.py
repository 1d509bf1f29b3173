"""Non-inferiority of judge Y against judge X on agreement with humans.

Let a_X, a_Y be the two judges' agreement with humans (the dataset protocol's statistic) and
Δ = a_Y − a_X. From B paired bootstrap resamples of Δ (the same resampled items for both judges,
Efron 1979) take the one-sided (1 − α) bounds L = q_α(Δ*) and U = q_{1−α}(Δ*). With margin δ:

- *superior* if L > 0; *non-inferior* if L > −δ; *inferior* if U < −δ; else *inconclusive*
  (the two-CI-free reading of the non-inferiority test, Wellek 2010, *Testing Statistical
  Hypotheses of Equivalence and Noninferiority*, ch. 2; Walker & Nowacki 2011).

Default δ = 0.05: on a correlation or an accuracy in [0, 1] a loss of five points is the
smallest difference the published backbone comparisons treat as meaningful (LFTQA-Eval's three
G-Eval backbones differ by 0.04–0.17 in instance-level Pearson) and below the inter-annotator
spread of the human references; it is a convention, so the CLI makes it a required choice to
state (``--margin``) and the report prints it.

Labels needed (power): with the bootstrap SE of Δ and n items, σ = SE·√n; the items needed for
the one-sided test to conclude at power 0.8 if the observed Δ is the truth are
:func:`~metajudge.stats.n_for_margin` against −δ (non-inferiority when Δ > −δ,
inferiority otherwise); "additional labels" = that minus n.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from metajudge import stats
from metajudge.results import Result

Verdict = Literal["superior", "non-inferior", "inferior", "inconclusive"]
DEFAULT_MARGIN = 0.05


@dataclass(frozen=True)
class NonInferiority(Result):
    """Y against X: Δ = a_Y − a_X, its two-sided CI and one-sided bounds, the verdict."""

    x: str
    y: str
    statistic: str
    a_x: float
    a_y: float
    delta: float
    ci: tuple[float, float]
    lower: float
    upper: float
    margin: float
    alpha: float
    verdict: Verdict
    n: int
    p_two_sided: float
    labels_needed: float
    additional_labels: float

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self) | {"sentence": self.sentence()}
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()
        }

    def sentence(self) -> str:
        """The verdict in one sentence with the numbers that carry it."""
        pct = round((1 - self.alpha) * 100)
        s = (
            f"Can {self.y} replace {self.x}? {self.verdict.capitalize()} at margin δ = {self.margin:g}: "
            f"{self.statistic} {self.a_y:.3f} vs {self.a_x:.3f}, Δ = {self.delta:+.3f}, "
            f"one-sided {pct}% bound {self.lower:+.3f} (n = {self.n})"
        )
        if self.verdict == "inconclusive":
            more = self.additional_labels
            s += (
                "; about "
                + (f"{math.ceil(more)}" if math.isfinite(more) else "unboundedly many")
                + " more human-labelled items would settle it (power 0.8)"
            )
        return s + "."


def verdict_of(lower: float, upper: float, margin: float) -> Verdict:
    """The decision rule of the module docstring.

    >>> verdict_of(0.01, 0.1, 0.05), verdict_of(-0.03, 0.02, 0.05), verdict_of(-0.2, -0.06, 0.05)
    ('superior', 'non-inferior', 'inferior')
    >>> verdict_of(-0.08, 0.01, 0.05)
    'inconclusive'
    """
    if not (math.isfinite(lower) and math.isfinite(upper)):
        return "inconclusive"
    if lower > 0:
        return "superior"
    if lower > -margin:
        return "non-inferior"
    if upper < -margin:
        return "inferior"
    return "inconclusive"


def non_inferiority(
    x: str,
    y: str,
    a_x: float,
    a_y: float,
    samples_x: np.ndarray,
    samples_y: np.ndarray,
    *,
    n: int,
    statistic: str,
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
    power: float = 0.8,
) -> NonInferiority:
    """Decide from paired bootstrap replicates of both agreements (same resamples, same order)."""
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    d = np.asarray(samples_y, dtype=float) - np.asarray(samples_x, dtype=float)
    lower, upper = stats.percentile_ci(d, 1 - 2 * alpha)
    ci = stats.percentile_ci(d, 1 - alpha)
    delta = a_y - a_x
    fin = d[np.isfinite(d)]
    sd = float(fin.std(ddof=1)) * math.sqrt(n) if fin.size > 1 else math.nan
    verdict = verdict_of(lower, upper, margin)
    need = stats.n_for_margin(delta, -margin, sd, alpha=alpha, power=power)
    more = max(0.0, need - n) if verdict == "inconclusive" else 0.0
    return NonInferiority(
        x,
        y,
        statistic,
        a_x,
        a_y,
        delta,
        ci,
        lower,
        upper,
        margin,
        alpha,
        verdict,
        n,
        stats.bootstrap_p_value(d),
        need,
        more,
    )
