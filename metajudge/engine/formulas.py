"""The formulas that turn a resample's weighted sums into a statistic, written once.

They sit in the engine, below :mod:`metajudge.stats` (which re-exports them), because the fast
engine ends every resample here and the statistics layer calls the engine: the formulas then
have one home and the packages no import cycle.
"""

from __future__ import annotations

import numpy as np


def pearson_from_sums(
    sxy: np.ndarray | float,
    sxx: np.ndarray | float,
    syy: np.ndarray | float,
    defined: np.ndarray | bool | None = None,
) -> np.ndarray:
    """THE formula of Pearson's r (Pearson 1896), r = S_xy / sqrt(S_xx · S_yy), from the
    centred (co)variation sums of one sample or of many (vectorised); clipped to [−1, 1].

    Every Pearson metajudge reports ends here: :func:`metajudge.stats.pearson` (one sample), the
    weighted resamples of :mod:`.weighted` and :mod:`.moments` (:func:`pearson_from_moments`),


    ``defined``: where the value is defined (NaN elsewhere; default: both variations positive).

    >>> float(pearson_from_sums(4.0, 5.0, 5.0))
    0.8
    """
    sxy, sxx, syy = np.asarray(sxy, float), np.asarray(sxx, float), np.asarray(syy, float)
    ok = (sxx > 0) & (syy > 0) if defined is None else defined
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(ok, sxy / np.sqrt(sxx * syy), np.nan)
    return np.clip(r, -1.0, 1.0)


def pearson_from_moments(
    N: np.ndarray,
    sx: np.ndarray,
    sy: np.ndarray,
    sxx: np.ndarray,
    syy: np.ndarray,
    sxy: np.ndarray,
) -> np.ndarray:
    """Pearson's r from weighted raw sums (Σw, Σwx, Σwy, Σwx², Σwy², Σwxy), one per resample:
    the sums centred, then :func:`pearson_from_sums`.

    A variance that is pure rounding error (below 1e-12 of Σwx², relative) means a constant
    resample: NaN.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / N
        vx = sxx - sx * sx / N
        vy = syy - sy * sy / N
        tol_x = 1e-12 * np.maximum(sxx, 1e-300)
        tol_y = 1e-12 * np.maximum(syy, 1e-300)
    return pearson_from_sums(cov, vx, vy, (vx > tol_x) & (vy > tol_y))


def accuracy_from_sums(credit: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """An accuracy from its (weighted) sums of credit and of scored rows: credit / scored
    (NaN where nothing is scored) — :func:`metajudge.stats.accuracy_tally`'s value,
    vectorised over resamples."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(kept > 0, credit / kept, np.nan)
