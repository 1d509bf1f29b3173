"""Statistics of calibration and conformal prediction: errors, Brier score, expected calibration
error, the split-conformal quantile and the two-sample test used for a distribution shift.

numpy only at import; scipy is imported inside :func:`ks_two_sample`.

>>> conformal_quantile([0.1, 0.2, 0.3, 0.4], 0.5)
0.3
>>> round(expected_calibration_error([1, 0], [0.9, 0.9], bins=10), 2)
0.4
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FArr = npt.NDArray[np.float64]


def mae(human: Sequence[float] | FArr, judge: Sequence[float] | FArr) -> float:
    """Mean absolute error of the judge's values against the human ones."""
    return float(np.mean(np.abs(np.asarray(judge, float) - np.asarray(human, float))))


def rmse(human: Sequence[float] | FArr, judge: Sequence[float] | FArr) -> float:
    """Root mean squared error of the judge's values against the human ones."""
    return float(np.sqrt(np.mean((np.asarray(judge, float) - np.asarray(human, float)) ** 2)))


def brier(labels: Sequence[int] | npt.NDArray[np.int64], probs: FArr) -> float:
    """Multi-class Brier score of the judge's ``probs`` against the human ``labels``: mean over
    items of sum_k (p_k - [y = k])^2 (``probs``: n x K; a 1-D ``probs`` is a binary
    probability of class 1)."""
    p = np.asarray(probs, float)
    y = np.asarray(labels, int)
    if p.ndim == 1:
        return float(np.mean((p - y) ** 2))
    onehot = np.zeros_like(p)
    onehot[np.arange(len(y)), y] = 1.0
    return float(np.mean(np.sum((p - onehot) ** 2, axis=1)))


def expected_calibration_error(
    correct: Sequence[int] | FArr, confidence: Sequence[float] | FArr, *, bins: int = 10
) -> float:
    """ECE with ``bins`` equal-width confidence bins: sum_b (n_b / n) |acc_b - conf_b|
    (``correct``: 1 when the predicted class is right, or the binary outcome; the truth side
    first, as sklearn's ``calibration_curve(y_true, y_prob)``)."""
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
    s = np.asarray(scores, float)
    n = len(s)
    k = math.ceil((n + 1) * (1 - alpha))
    if n == 0 or k > n:
        return math.inf
    return float(np.partition(s, k - 1)[k - 1])  # that order statistic, without a full sort


#: fewer held-out rows per split (or fold) than this: the held-out errors are flagged
MIN_HELD_OUT = 30


def min_calibration_rows(alpha: float) -> int:
    """The fewest calibration scores whose :func:`conformal_quantile` is finite at ``alpha``
    (the smallest n with ceil((n+1)(1-alpha)) <= n).

    >>> min_calibration_rows(0.1), min_calibration_rows(0.2)
    (9, 4)
    """
    n = 1
    while math.ceil((n + 1) * (1 - alpha)) > n:
        n += 1
    return n


def ks_two_sample(a: Sequence[float] | FArr, b: Sequence[float] | FArr) -> tuple[float, float]:
    """Kolmogorov-Smirnov two-sample test (two-sided): ``(statistic, p-value)``."""
    from scipy.stats import ks_2samp

    r = ks_2samp(np.asarray(a, float), np.asarray(b, float))
    return float(r.statistic), float(r.pvalue)


def reliability_bins(outcome: FArr, pred: FArr, *, bins: int = 10) -> list[dict[str, float]]:
    """Equal-count bins of ``pred`` (sorted): per bin its size, mean prediction and mean outcome
    (a reliability diagram's points; a calibrated predictor lies on the diagonal). The outcome
    (truth side) first."""
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


#: conformity scores of prediction sets over classes (:func:`set_scores`)
SET_METHODS = ("lac", "aps")


def _aps_cumulative(probs: FArr) -> tuple[FArr, FArr]:
    """Per row and class: the probability mass of the classes ranked before it (descending
    probability, ties by class order) and that mass plus its own."""
    p = np.asarray(probs, float)
    order = np.argsort(-p, axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=1)
    incl_ranked = np.cumsum(ranked, axis=1)
    incl = np.empty_like(p)
    np.put_along_axis(incl, order, incl_ranked, axis=1)
    return incl - p, incl


def aps_mass_above(probs: FArr) -> FArr:
    """Per row and class of ``probs`` (n x K): the mass of the classes ranked before it (the
    ``above`` of :func:`prediction_sets`; row by row, so the rows of many subsets can be read
    from one call)."""
    return _aps_cumulative(probs)[0]


def set_scores(
    method: str, labels: npt.NDArray[np.int64], probs: FArr, u: FArr | None = None
) -> FArr:
    """Conformity scores of the true classes ``labels`` (indices into the columns of ``probs``,
    n x K): ``lac`` (least ambiguous set-valued classifier, Sadinle, Lei & Wasserman 2019):
    1 - p(true class); ``aps`` (adaptive prediction sets, Romano, Sesia & Candès 2020): the
    mass of the classes ranked above the true class plus ``u`` times its own (``u``: one
    uniform(0, 1) draw per row, the randomised score; None: 1, the non-randomised one).

    >>> set_scores("lac", np.array([1]), np.array([[0.7, 0.3]])).round(2).tolist()
    [0.7]
    >>> set_scores("aps", np.array([1]), np.array([[0.7, 0.3]])).round(2).tolist()
    [1.0]
    >>> set_scores("aps", np.array([1]), np.array([[0.7, 0.3]]), np.array([0.5])).round(2).tolist()
    [0.85]
    """
    p = np.asarray(probs, float)
    y = np.asarray(labels, int)
    rows = np.arange(len(y))
    above = aps_mass_above(p)[rows, y] if method == "aps" else None
    return true_class_scores(method, p[rows, y], above, u)


def true_class_scores(
    method: str, p_true: FArr, above_true: FArr | None = None, u: FArr | None = None
) -> FArr:
    """:func:`set_scores` from each row's probability of its true class ``p_true`` and (aps)
    the mass ranked above that class ``above_true`` (both read once per unit, a subset's scores
    are those of its rows)."""
    if method == "lac":
        return 1.0 - p_true
    if method == "aps":
        w = np.ones(len(p_true)) if u is None else np.asarray(u, float)
        return above_true + w * p_true
    raise ValueError(f"unknown set method {method!r} (known: {', '.join(SET_METHODS)})")


def prediction_sets(
    method: str, probs: FArr, q: float, u: FArr | None = None, *, above: FArr | None = None
) -> npt.NDArray[np.bool_]:
    """The prediction set of each row of ``probs`` (n x K boolean) for the conformal quantile
    ``q`` of :func:`set_scores`: every class whose score is at most q. ``lac``: 1 - p <= q (a
    set may be empty); ``aps`` with ``u`` (one uniform draw per row, the randomised sets):
    mass ranked above + u * own <= q (a set may be empty); ``aps`` without ``u``: the classes in
    descending probability until their mass reaches q, that class included (never empty, a
    superset of {score <= q}: coverage holds, conservatively). ``above``: :func:`aps_mass_above`
    of ``probs`` when already computed (read by the randomised sets).

    >>> prediction_sets("lac", np.array([[0.7, 0.3], [0.5, 0.5]]), 0.6).tolist()
    [[True, False], [True, True]]
    >>> prediction_sets("aps", np.array([[0.7, 0.3]]), 0.75).tolist()
    [[True, True]]
    >>> prediction_sets("aps", np.array([[0.7, 0.3]]), 0.75, np.array([0.5])).tolist()
    [[True, False]]
    """
    p = np.asarray(probs, float)
    if method == "lac":
        return (1.0 - p) <= q + 1e-12
    if method == "aps":
        if u is not None:
            before = aps_mass_above(p) if above is None else np.asarray(above, float)
            return before + np.asarray(u, float)[:, None] * p <= q + 1e-12
        before, incl = _aps_cumulative(p)
        return (before < q - 1e-12) | (incl <= q + 1e-12)
    raise ValueError(f"unknown set method {method!r} (known: {', '.join(SET_METHODS)})")
