"""Is a correlation the same in every slice? Fisher z per slice and Cochran's Q.

Per slice k with correlation r_k on n_k units: z_k = atanh r_k with weight w_k = n_k − 3
(Fisher 1921). The pooled z̄ = Σ w_k z_k / Σ w_k; Cochran's Q = Σ w_k (z_k − z̄)² is χ² with
K − 1 degrees of freedom under homogeneity (Cochran 1954; Hedges & Olkin 1985, ch. 11), and
I² = max(0, (Q − (K − 1)) / Q) is the share of variation beyond chance (Higgins & Thompson 2002).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Heterogeneity:
    """Cochran's Q over slices: Q, degrees of freedom, p-value, I² and the pooled correlation."""

    q: float
    df: int
    p: float
    i2: float
    pooled_r: float
    n_slices: int


def cochran_q(r: Sequence[float], n: Sequence[int]) -> Heterogeneity:
    """Cochran's Q for K correlations ``r`` on ``n`` units (slices with n <= 3 or NaN r skipped).

    >>> h = cochran_q([0.5, 0.5], [50, 80])
    >>> round(h.q, 6), h.df, round(h.p, 3)
    (0.0, 1, 1.0)
    """
    from scipy import stats as ss

    ra, na = np.asarray(r, dtype=float), np.asarray(n, dtype=float)
    ok = np.isfinite(ra) & (na > 3)
    z = np.arctanh(np.clip(ra[ok], -0.9999999, 0.9999999))
    w = na[ok] - 3
    k = int(ok.sum())
    if k < 2:
        return Heterogeneity(math.nan, max(k - 1, 0), math.nan, math.nan, math.nan, k)
    zbar = float((w * z).sum() / w.sum())
    q = float((w * (z - zbar) ** 2).sum())
    i2 = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
    return Heterogeneity(q, k - 1, float(ss.chi2.sf(q, k - 1)), i2, math.tanh(zbar), k)
