"""Reference implementations the tests compare the product against: slow, obvious loops.

Not shipped: the product's one entry per statistic is in :mod:`metajudge.stats`
(:func:`~metajudge.stats.bootstrap_ci` = ``resample`` + ``correlate`` + percentile interval).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from metajudge.stats import CORRELATIONS, BootstrapResult, pairwise_accuracy, percentile_ci
from metajudge.stats.bootstrap import _group_index
from metajudge.stats.correlation import _as_xy


def bootstrap_ci_reference(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    statistic: str = "pearson",
    groups: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = 1000,
    rng: np.random.Generator,
    level: float = 0.95,
) -> BootstrapResult:
    """The slow, obvious bootstrap: a Python loop that materialises each resample.

    Draws the same item indices as :func:`metajudge.stats.bootstrap_ci` (row by row from the
    same generator state) and computes the statistic with scipy on the expanded data. Reference
    for tests and for the benchmarks' speed ratio.
    """
    from scipy import stats as ss

    xa, ya = _as_xy(x, y)
    gi, n_items = _group_index(groups, xa.size)
    rows_of = (
        [np.flatnonzero(gi == g) for g in range(n_items)]
        if gi is not None
        else [np.array([i]) for i in range(xa.size)]
    )
    fns: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
        "pearson": lambda a, b: float(ss.pearsonr(a, b)[0]),
        "spearman": lambda a, b: float(ss.spearmanr(a, b)[0]),
        "kendall": lambda a, b: float(ss.kendalltau(a, b, variant="b")[0]),
        "acc_ties": lambda a, b: pairwise_accuracy(human=b, judge=a, policy="three_way"),
        "acc_no_ties": lambda a, b: pairwise_accuracy(
            human=b, judge=a, policy="exclude_human_ties"
        ),
    }
    fn = fns[statistic]
    out = np.empty(n_resamples)
    for b in range(n_resamples):
        idx = rng.integers(0, n_items, size=n_items)
        rows = np.concatenate([rows_of[i] for i in idx])
        xb, yb = xa[rows], ya[rows]
        if statistic in CORRELATIONS and (np.ptp(xb) == 0 or np.ptp(yb) == 0):
            out[b] = math.nan
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[b] = fn(xb, yb)
    est = fn(xa, ya)
    lo, hi = percentile_ci(out, level)
    return BootstrapResult(est, lo, hi, level, n_resamples, int(np.isnan(out).sum()), out)
