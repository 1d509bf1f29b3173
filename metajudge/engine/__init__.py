"""The resampling engine: every statistic of every bootstrap resample, behind one entry.

:func:`statistics` is the entry the statistics layer calls
(:func:`metajudge.stats.correlation.correlate`); callers outside this package import only this
module. Two engines answer it, chosen by name (``--engine`` on the command line, passed down
explicitly in :class:`~metajudge.analyses.metric_vs_human.protocol.Protocol`):

- ``fast`` (the default): matrix products over the resamples' count vectors
  (:mod:`.weighted`), many statistics from per-item sums in one pass (:mod:`.moments`), a
  compiled rank pass for Spearman (:mod:`.rank_pass`), an exact merge count for Kendall
  (:mod:`.weighted_kendall`), resamples drawn and cached a block at a time (:mod:`.resample`,
  :mod:`.count_pass`). Its measured speed is recorded in ``docs/benchmarks.md``.
- ``reference`` (:mod:`.reference`): one resample at a time, each row repeated as often as its
  item was drawn, the statistic computed by scipy on that expanded data. Slow and obvious; the
  same random draws, so the same values (to 1e-12, ``tests/engine/test_reference.py``).

The statistics served, as requests ``(name, x, y)``: ``pearson``, ``spearman``, ``kendall``
(τ_b) of x and y, ``accuracy``: Σ w·x / Σ w·y of per-row credit x and scored flag y (the
statistics layer turns its accuracies into these rows, :func:`metajudge.stats.accuracy_rows`),
and ``mean``: the same ratio of per-group values x (0 where undefined) and defined flags y, the
mean of a grouped correlation's defined per-group values over each resample's drawn groups
(:func:`metajudge.stats.grouped_mean_samples`).
Also here: the formulas that finish a resample's sums (:mod:`.formulas`), the lazy
:class:`Resamples` and the pieces of the fast engine that the permutation tests share.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metajudge.engine.formulas import accuracy_from_sums, pearson_from_moments, pearson_from_sums
from metajudge.engine.moments import (
    PASS_ITEM_ELEMENTS,
    TILE_ROWS,
    one_blas_thread,
    resampled_row_sums,
    tile_product,
)
from metajudge.engine.resample import (
    CHUNK_ELEMENTS,
    BitRows,
    Resamples,
    draw_counts,
    draw_indices,
    map_blocks,
    map_chunks,
    ready,
)
from metajudge.engine.weighted import ENGINE_STATISTICS, weighted_statistics

#: the engines :func:`statistics` runs, the default first
ENGINES: tuple[str, ...] = ("fast", "reference")


def statistics(
    requests: Sequence[tuple[str, np.ndarray, np.ndarray]],
    resamples: np.ndarray | Resamples | Sequence[Resamples],
    *,
    engine: str | None = None,
) -> list[np.ndarray]:
    """Each request ``(name, x, y)`` (``name`` in :data:`ENGINE_STATISTICS`) on every resample: the
    value of the expanded data in which row i appears ``W[b, i]`` times.

    ``resamples``: the row weights ``W`` (whole counts, ``(B, rows)``), a lazy
    :class:`Resamples`, or one column view of the same Resamples per request. ``engine``: one
    of :data:`ENGINES`, both giving the same values; ``None``: the engine the resamples were
    drawn for (:meth:`Resamples.draw`'s ``engine``; ``fast`` for weights), so every statistic
    of a run's resamples is measured by the engine the run chose, whichever path asks for it.
    """
    if engine is None:
        engine = _engine_of(resamples)
    if engine == "fast":
        return weighted_statistics(requests, resamples)
    if engine == "reference":
        from metajudge.engine.reference import reference_statistics

        return reference_statistics(requests, resamples)
    raise ValueError(f"unknown engine {engine!r} (expected one of {', '.join(ENGINES)})")


def _engine_of(resamples: np.ndarray | Resamples | Sequence[Resamples]) -> str:
    """The engine ``resamples`` were drawn for (``fast`` for weights)."""
    if isinstance(resamples, Resamples):
        return resamples.engine
    if isinstance(resamples, np.ndarray) or not len(resamples):
        return "fast"
    return _engine_of(resamples[0])


__all__ = [
    "CHUNK_ELEMENTS",
    "ENGINES",
    "ENGINE_STATISTICS",
    "PASS_ITEM_ELEMENTS",
    "TILE_ROWS",
    "BitRows",
    "Resamples",
    "accuracy_from_sums",
    "draw_counts",
    "draw_indices",
    "map_blocks",
    "map_chunks",
    "one_blas_thread",
    "pearson_from_moments",
    "pearson_from_sums",
    "ready",
    "resampled_row_sums",
    "statistics",
    "tile_product",
]
