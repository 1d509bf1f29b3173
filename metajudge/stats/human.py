"""Human labels: the mean over annotators and the inter-human reference (ceiling).

One definition each, used by the meta-evaluation and the backbone swap alike.

* :func:`annotator_mean` — the mean of the labels present per row (NaN = no label).
* :func:`leave_one_out` — the inter-human reference of a label matrix (rows × annotators):
  each annotator vs the mean of the others (leave-one-annotator-out, as in the inter-annotator
  "ceiling" of Deutsch et al. 2022 and the split used for RAGChecker's human agreement, Ru et
  al. 2024); with two annotators, 1 vs 2 and 2 vs 1. Each comparison is a pair of label vectors
  on the rows where both exist; callers turn them into a statistic and average it over the
  comparisons, so the reference does not depend on the order of the annotators — a statistic
  that is not symmetric (accuracy with the reference's ties excluded, ``acc_no_ties``) is
  averaged over both roles.
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


#: the definition :func:`leave_one_out` returns for two annotators
TWO_ANNOTATORS = (
    "annotator 1 vs annotator 2 and 2 vs 1, averaged (each annotator is the reference once, so "
    "the value does not depend on their order)"
)


def leave_one_out(
    labels: FArr, *, every_annotator: bool = True
) -> tuple[list[HumanComparison], str | None]:
    """The inter-human comparisons of a (rows × annotators) label matrix, and their definition.

    One comparison per annotator: that annotator (``single``) vs the mean of the others
    (``ref``) on the rows where both exist, averaged by the caller. Two annotators: 1 vs 2 and
    2 vs 1 (:data:`TWO_ANNOTATORS`), so the reference of an asymmetric statistic does not depend
    on which annotator is listed first. ``every_annotator`` is accepted for old callers and no
    longer changes anything (two annotators once gave a single comparison, order-dependent).
    Returns ``([], None)`` with fewer than two annotators.

    >>> comps, how = leave_one_out(np.array([[1.0, 2.0, 3.0], [2.0, 2.0, np.nan]]))
    >>> how, [c.ref.tolist() for c in comps]
    ('each of 3 annotators vs the mean of the others (averaged)', [[2.5, 2.0], [2.0, 2.0], [1.5]])
    >>> [c.ref.tolist() for c in leave_one_out(np.array([[1.0, 2.0], [3.0, 4.0]]))[0]]
    [[2.0, 4.0], [1.0, 3.0]]
    """
    del every_annotator  # kept in the signature for old callers
    L = np.asarray(labels, dtype=float)
    A = L.shape[1] if L.ndim == 2 else 1
    if A < 2:
        return [], None
    out = []
    for j in range(A):
        mo = annotator_mean(np.delete(L, j, axis=1))
        idx = np.flatnonzero(np.isfinite(L[:, j]) & np.isfinite(mo))
        out.append(HumanComparison(j, L[idx, j], mo[idx], idx))
    how = (
        TWO_ANNOTATORS if A == 2 else f"each of {A} annotators vs the mean of the others (averaged)"
    )
    return out, how
