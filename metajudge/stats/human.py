"""Human labels: the mean over annotators and the inter-human reference (ceiling).

One definition each, used by the meta-evaluation and the backbone swap alike.

* :func:`annotator_mean` — the mean of the labels present per row (NaN = no label).
* :func:`leave_one_out` — the inter-human reference of a label matrix (rows × annotators):
  annotator 1 vs annotator 2 when there are two, else each annotator vs the mean of the others
  (leave-one-annotator-out, as in the inter-annotator "ceiling" of Deutsch et al. 2022 and the
  split used for RAGChecker's human agreement, Ru et al. 2024). Each comparison is a pair of
  label vectors on the rows where both exist; callers turn them into a statistic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FArr = NDArray[np.float64]


def annotator_mean(labels: FArr) -> FArr:
    """Mean label per row over the annotators present (NaN where a row has no label).

    >>> annotator_mean(np.array([[1.0, 3.0], [2.0, np.nan], [np.nan, np.nan]])).tolist()
    [2.0, 2.0, nan]
    """
    L = np.asarray(labels, dtype=float)
    if L.ndim == 1:
        return L.copy()
    cnt = np.isfinite(L).sum(axis=1)
    s = np.where(np.isfinite(L), L, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, s / np.maximum(cnt, 1), np.nan)


@dataclass(frozen=True)
class HumanComparison:
    """One annotator (``single``) against a reference (``ref``) on rows ``rows``."""

    annotator: int
    single: FArr
    ref: FArr
    rows: NDArray[np.int64]


def leave_one_out(
    labels: FArr, *, every_annotator: bool = False
) -> tuple[list[HumanComparison], str | None]:
    """The inter-human comparisons of a (rows × annotators) label matrix, and their definition.

    Two annotators: annotator 1 vs annotator 2 (one comparison). Three or more: each annotator
    vs the mean of the others on the rows where both exist (one comparison per annotator,
    averaged by the caller). With ``every_annotator`` two annotators also give one comparison
    each (annotator 1 vs 2 and 2 vs 1), so that a metric can be set beside each of them.
    Returns ``([], None)`` with fewer than two annotators.

    >>> comps, how = leave_one_out(np.array([[1.0, 2.0, 3.0], [2.0, 2.0, np.nan]]))
    >>> how, [c.ref.tolist() for c in comps]
    ('each of 3 annotators vs the mean of the others (averaged)', [[2.5, 2.0], [2.0, 2.0], [1.5]])
    """
    L = np.asarray(labels, dtype=float)
    A = L.shape[1] if L.ndim == 2 else 1
    if A < 2:
        return [], None
    if A == 2 and not every_annotator:
        idx = np.flatnonzero(np.isfinite(L).all(axis=1))
        return [HumanComparison(0, L[idx, 1], L[idx, 0], idx)], "annotator 1 vs annotator 2"
    out = []
    for j in range(A):
        mo = annotator_mean(np.delete(L, j, axis=1))
        idx = np.flatnonzero(np.isfinite(L[:, j]) & np.isfinite(mo))
        out.append(HumanComparison(j, L[idx, j], mo[idx], idx))
    return out, f"each of {A} annotators vs the mean of the others (averaged)"
