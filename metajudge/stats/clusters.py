"""Rank clusters: metrics ordered by correlation, grouped while not significantly different.

WMT's metrics task tables (Freitag et al. 2021-2024; mt-metrics-eval's ``AssignRanks``): sort
metrics by correlation, best first; walk down the list, and start a new cluster (rank + 1) at
the first metric that is significantly worse (adjusted p ≤ α) than any metric of the current
cluster — which, the list being sorted, includes the cluster's best. Greedy, as the reference.
"""

from __future__ import annotations

import numpy as np


def rank_clusters(values: np.ndarray, p_adjusted: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Cluster rank (1 = top) of each metric; ``p_adjusted[i, j]``: p of "metric i ≠ j".

    ``values``: each metric's correlation (NaN ranks last); the p matrix is symmetric in use
    (only pairs i < j in sorted order are read).

    >>> p = np.array([[np.nan, 0.5, 0.01], [0.5, np.nan, 0.02], [0.01, 0.02, np.nan]])
    >>> rank_clusters(np.array([0.9, 0.8, 0.3]), p).tolist()
    [1, 1, 2]
    """
    v = np.asarray(values, dtype=float)
    order = np.argsort(np.where(np.isfinite(v), -v, np.inf), kind="mergesort")
    ranks = np.zeros(v.size, dtype=np.int64)
    rank, start = 1, 0
    for pos, i in enumerate(order):
        members = order[start:pos]
        if any(p_adjusted[j, i] <= alpha or p_adjusted[i, j] <= alpha for j in members):
            rank += 1
            start = pos
        ranks[i] = rank
    return ranks
