"""The meta-evaluation plots: the scatter's points and one-draw PNG output."""

from __future__ import annotations

import numpy as np

from metajudge.reports.plots import _points


def test_points_pairs_each_label_with_its_metric_value_in_order() -> None:
    """Pair i's metric value repeats once per non-None label; a None metric value drops the
    pair, a None label drops only that label (the per-point loop it replaces, element for
    element)."""
    xs = [0.5, None, -1.0, 2.0, 0.0]
    labels = [[1, 2], [3], [None, 4], [], [5, None, 1]]
    X, Y = _points(xs, labels)
    assert X.tolist() == [1.0, 2.0, 4.0, 5.0, 1.0]
    assert Y.tolist() == [0.5, 0.5, -1.0, 0.0, 0.0]
    X0, Y0 = _points([], [])
    assert X0.size == 0 and Y0.size == 0
    assert np.asarray(X0).dtype == float
