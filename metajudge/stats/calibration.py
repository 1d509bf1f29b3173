"""Statistics of calibration and conformal prediction: errors, Brier score, expected calibration
error, the split-conformal quantile and the two-sample test used for a distribution shift.

numpy only at import; scipy is imported inside :func:`ks_two_sample`.

>>> conformal_quantile([0.1, 0.2, 0.3, 0.4], 0.5)
0.3
>>> round(expected_calibration_error([0.9, 0.9], [1, 0], bins=10), 2)
0.4
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FArr = npt.NDArray[np.float64]


def mae(pred: Sequence[float] | FArr, y: Sequence[float] | FArr) -> float:
    """Mean absolute error."""
    return float(np.mean(np.abs(np.asarray(pred, float) - np.asarray(y, float))))


def rmse(pred: Sequence[float] | FArr, y: Sequence[float] | FArr) -> float:
    """Root mean squared error."""
    return float(np.sqrt(np.mean((np.asarray(pred, float) - np.asarray(y, float)) ** 2)))


def brier(probs: FArr, labels: Sequence[int] | npt.NDArray[np.int64]) -> float:
    """Multi-class Brier score: mean over items of sum_k (p_k - [y = k])^2 (``probs``: n x K;
    a 1-D ``probs`` is a binary probability of class 1)."""
    p = np.asarray(probs, float)
    y = np.asarray(labels, int)
    if p.ndim == 1:
        return float(np.mean((p - y) ** 2))
    onehot = np.zeros_like(p)
    onehot[np.arange(len(y)), y] = 1.0
    return float(np.mean(np.sum((p - onehot) ** 2, axis=1)))


def expected_calibration_error(
    confidence: Sequence[float] | FArr, correct: Sequence[int] | FArr, *, bins: int = 10
) -> float:
    """ECE with ``bins`` equal-width confidence bins: sum_b (n_b / n) |acc_b - conf_b|
    (``correct``: 1 when the predicted class is right, or the binary outcome)."""
    c = np.asarray(confidence, float)
    ok = np.asarray(correct, float)
    idx = np.minimum((c * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            total += m.sum() / len(c) * abs(ok[m].mean() - c[m].mean())
    return float(total)


def top_label(probs: FArr) -> tuple[FArr, npt.NDArray[np.int64]]:
    """The top-label confidence and predicted class of each row of ``probs`` (n x K)."""
    p = np.asarray(probs, float)
    return p.max(axis=1), p.argmax(axis=1)


def conformal_quantile(scores: Sequence[float] | FArr, alpha: float) -> float:
    """The split-conformal quantile: the ceil((n+1)(1-alpha))-th smallest score; ``inf`` when
    that rank exceeds n (too few calibration scores for this alpha: the interval is the scale)."""
    s = np.sort(np.asarray(scores, float))
    n = len(s)
    k = math.ceil((n + 1) * (1 - alpha))
    if n == 0 or k > n:
        return math.inf
    return float(s[k - 1])


def ks_two_sample(a: Sequence[float] | FArr, b: Sequence[float] | FArr) -> tuple[float, float]:
    """Kolmogorov-Smirnov two-sample test (two-sided): ``(statistic, p-value)``."""
    from scipy.stats import ks_2samp

    r = ks_2samp(np.asarray(a, float), np.asarray(b, float))
    return float(r.statistic), float(r.pvalue)


def reliability_bins(pred: FArr, outcome: FArr, *, bins: int = 10) -> list[dict[str, float]]:
    """Equal-count bins of ``pred`` (sorted): per bin its size, mean prediction and mean outcome
    (a reliability diagram's points; a calibrated predictor lies on the diagonal)."""
    p = np.asarray(pred, float)
    y = np.asarray(outcome, float)
    order = np.argsort(p, kind="stable")
    out = []
    for part in np.array_split(order, min(bins, len(p))):
        if len(part):
            out.append(
                {
                    "n": len(part),
                    "pred": float(p[part].mean()),
                    "outcome": float(y[part].mean()),
                }
            )
    return out


def quantile_bin_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """The inner edges of ``bins`` equal-count bins of ``values`` (their quantiles at 1/bins …
    (bins-1)/bins, duplicates merged): ``np.searchsorted(edges, x, side="right")`` is x's bin.

    >>> quantile_bin_edges(np.arange(10.0), 2).tolist()
    [4.5]
    """
    return np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))
