"""The tie-band decision: one rule for every pairwise decision in metajudge.

A difference d = m(b) − m(a) becomes a decision in {−1, 0, 1}: 0 when |d| <= ε (a tie), else
the sign of d. This is the ``sign`` normalisation of MT-RAIG (Section 4.4) and the tie
calibration of Deutsch et al. (2023, "Ties Matter"). NaN stays NaN.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def tie_decisions(d: ArrayLike, epsilon: float | ArrayLike = 0.0) -> NDArray[np.float64]:
    """Decisions {−1, 0, 1} of differences ``d`` with tie band ``|d| <= epsilon``; NaN stays NaN.

    ``epsilon`` may be a scalar or one band per entry.

    >>> tie_decisions([0.3, -2.0, 0.0, 0.05, float("nan")], 0.1).tolist()
    [1.0, -1.0, 0.0, 0.0, nan]
    """
    a = np.asarray(d, dtype=float)
    eps = np.asarray(epsilon, dtype=float)
    with np.errstate(invalid="ignore"):
        out = np.where(np.abs(a) <= eps, 0.0, np.sign(a))
    return np.where(np.isnan(a), np.nan, out)
