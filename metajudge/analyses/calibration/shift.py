"""THE distribution-shift check of a calibration moved to other data: a two-sample
Kolmogorov-Smirnov test of the judge's scores where the calibration was fitted against the scores
it is used on (``calibrate conformal --target``, ``calibrate apply``). A shift means the rows are
not exchangeable with the calibration rows, so what was measured there (coverage, error) is not
guaranteed here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metajudge.stats.calibration import ks_two_sample


def score_shift(
    source: Sequence[float] | Any,
    target: Sequence[float] | Any,
    shift_alpha: float = 0.05,
    *,
    consequence: str = "exchangeability fails, coverage on the target is not guaranteed",
) -> dict[str, Any]:
    """``ks_statistic``, ``ks_p``, ``shift_alpha``, ``shifted`` (p < shift_alpha) and the
    ``warning`` (None when not shifted) of the judge's scores ``source`` (calibration) against
    ``target``; ``consequence``: what a shift means for the command."""
    stat, p = ks_two_sample(source, target)
    shifted = p < shift_alpha
    return {
        "ks_statistic": stat,
        "ks_p": p,
        "shift_alpha": shift_alpha,
        "shifted": shifted,
        "warning": (
            f"the judge's scores differ in distribution between the calibration data and the "
            f"target (two-sample Kolmogorov-Smirnov D = {stat:.3f}, p = {p:.3g} < {shift_alpha}): "
            f"{consequence}"
            if shifted
            else None
        ),
    }
