"""Human labels: the mean over annotators and the inter-human reference (ceiling).

One definition each, used by the meta-evaluation and the backbone swap alike.

* :func:`annotator_mean` — the mean of the labels present per row (NaN = no label).
* :func:`aggregate_labels` — one label per row under a named rule (:data:`AGGREGATION_RULES`):
  mean, median, majority (ties: the median of the tied labels) or mode-else-mean.
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


#: the rules of :func:`aggregate_labels`, each with the words every output states it in
AGGREGATION_RULES: dict[str, str] = {
    "mean": "the annotators' mean",
    "median": "the annotators' median",
    "majority": "the most frequent label; a tie between most frequent labels: their median",
    "mode-else-mean": "the label most annotators agree on (a unique mode held by two or more), "
    "else the annotators' mean",
}


def aggregate_labels(labels: FArr, rule: str) -> FArr:
    """One label per row of a (rows × annotators) matrix under ``rule`` (NaN = no label; a row
    without labels gives NaN). ``mean``, ``median``; ``majority``: the most frequent label, a tie
    between the most frequent: the median of the tied labels; ``mode-else-mean``: the label a
    unique majority of two or more annotators agrees on, else the mean (the rule of a dialogue
    summarisation paper's meta-evaluation).

    >>> L = np.array([[2.0, 2, 2], [1, 1, 4], [1, 2, 5], [3, np.nan, np.nan]])
    >>> [aggregate_labels(L, r).round(3).tolist() for r in AGGREGATION_RULES]
    [[2.0, 2.0, 2.667, 3.0], [2.0, 1.0, 2.0, 3.0], [2.0, 1.0, 2.0, 3.0], [2.0, 1.0, 2.667, 3.0]]
    """
    L = np.asarray(labels, dtype=float)
    if L.ndim == 1:
        return L.copy()
    if rule == "mean":
        return annotator_mean(L)
    fin = np.isfinite(L)
    out = np.full(L.shape[0], np.nan)
    has = fin.any(axis=1)
    if rule == "median":
        out[has] = np.nanmedian(L[has], axis=1)
        return out
    if rule not in AGGREGATION_RULES:
        raise ValueError(f"unknown aggregation {rule!r}; one of {', '.join(AGGREGATION_RULES)}")
    # counts[r, a]: how many annotators of row r gave annotator a's label (0 where a has none)
    counts = ((L[:, :, None] == L[:, None, :]) & fin[:, None, :]).sum(axis=2) * fin
    top = counts.max(axis=1, initial=0)
    at_top = (counts == top[:, None]) & fin
    if rule == "majority":  # each tied label appears ``top`` times: the median of the tied labels
        tied = np.where(at_top, L, np.nan)
        out[has] = np.nanmedian(tied[has], axis=1)
        return out
    unique_mode = (top >= 2) & (at_top.sum(axis=1) == top)
    mode = np.where(at_top, L, 0.0).sum(axis=1) / np.maximum(top, 1)
    return np.where(unique_mode, mode, annotator_mean(L))


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
