"""The reference engine: each resample built and measured the obvious way, one at a time.

The shape of nlpstats' ``bootstrap.py``: for each resample, take its drawn items, repeat every
row as often as its item was drawn, compute the statistic on that expanded data with scipy,
collect. The items come from the same generator state by the same draw as the fast engine's
(:meth:`~metajudge.engine.resample.Resamples.indices`, :func:`~.resample.draw_indices`), so
the two engines see the same resamples and give the same values (to 1e-12: the fast engine
sums in another order). Slow — a Python loop over resamples, each O(n log n) — and meant to
be read in one sitting: ``metajudge meta-eval --engine reference`` checks a result with it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence

import numpy as np
from scipy import stats as ss

from metajudge.engine.resample import Resamples


def reference_statistics(
    requests: Sequence[tuple[str, np.ndarray, np.ndarray]],
    resamples: np.ndarray | Resamples | Sequence[Resamples],
) -> list[np.ndarray]:
    """:func:`metajudge.engine.statistics` of every request, one resample at a time."""
    if isinstance(resamples, np.ndarray | Resamples):
        views: Sequence[np.ndarray | Resamples] = [resamples] * len(requests)
    else:
        views = list(resamples)
    out = []
    for (name, x, y), W in zip(requests, views, strict=True):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        values = [plain_statistic(name, np.repeat(x, w), np.repeat(y, w)) for w in row_counts(W)]
        out.append(np.array(values, dtype=float))
    return out


def row_counts(W: np.ndarray | Resamples) -> Iterator[np.ndarray]:
    """How many times each row is in each resample: a row of ``W``'s weights (whole counts),
    or, for lazy resamples, its drawn items counted and each row given its item's count."""
    if isinstance(W, np.ndarray):
        for w in np.atleast_2d(W):
            if not np.array_equal(w, np.rint(w)) or (w < 0).any():
                raise ValueError("the reference engine needs whole counts as weights")
            yield w.astype(np.int64)
        return
    items = W.row_items()
    for drawn in W.indices():
        yield np.bincount(drawn, minlength=W.store.n_items)[items]


def plain_statistic(name: str, x: np.ndarray, y: np.ndarray) -> float:
    """The statistic ``name`` of one expanded resample (NaN where it is undefined: fewer than
    two rows, a constant variable, no scored row or defined group). ``accuracy`` and ``mean``:
    the expanded rows' sum of x over their sum of y (credit over scored rows; per-group values,
    0 where undefined, over defined groups)."""
    if name in ("accuracy", "mean"):  # x: each row's credit (value), y: scored (defined)
        return float(x.sum() / y.sum()) if y.sum() > 0 else float("nan")
    if name not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"unknown statistic {name!r}")
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "pearson":
            return float(ss.pearsonr(x, y)[0])
        if name == "spearman":
            return float(ss.spearmanr(x, y)[0])
        return float(ss.kendalltau(x, y, variant="b")[0])
