"""Trivial baselines: rows every meta-evaluation table carries unless turned off.

A metric or judge is only informative when it beats what needs no model at all:

- ``trivial.length_words`` — the response's length in words (whitespace tokens). On summary
  informativeness, length alone can correlate as well as an LLM judge (issue 14's note: 0.704
  pointwise Pearson on an unseen summarisation set, above a published Llama-3.1-70B judge);
- ``trivial.random`` — a uniform random score per response from ``numpy.random.default_rng(seed)``
  (the protocol's seed), in the dataset's response order: the level of chance.

A response without text gets no length (``score`` None, ``error`` saying so: counted as missing
like any other metric's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from metajudge.errors import InputError

LENGTH = "trivial.length_words"
RANDOM = "trivial.random"
TRIVIAL: tuple[str, ...] = (LENGTH, RANDOM)


def is_trivial(metric: str) -> bool:
    return metric in TRIVIAL


def trivial_rows(records: Sequence[Any], seed: int) -> Any:
    """Score rows of both trivial baselines for every response of ``records``: one
    :class:`~metajudge.scores.readers.rows.ScoreTable` (length, random per response, in columns)."""
    from metajudge.bulk import paused_gc
    from metajudge.metrics.base import ResponseKeys, response_columns
    from metajudge.scores.readers.rows import MetricColumn, RowIds, ScoreRows, ScoreTable

    with paused_gc():  # many small objects, no cycles (metajudge.bulk)
        systems, sides, lengths = response_columns(records)
    ids = RowIds(ResponseKeys(records), systems, sides)  # the keys made when read
    if len(ids.keys) != len(ids.systems):
        raise InputError("records mix pairwise and Likert kinds", field="records")
    rnd = np.random.default_rng(seed).random(len(ids))
    length = MetricColumn(
        LENGTH,
        np.array(lengths, dtype=np.float64),
        f"{LENGTH}|split:whitespace",
        missing="no response text",
    )
    random = MetricColumn(RANDOM, rnd, f"{RANDOM}|uniform|seed:{seed}")
    return ScoreRows([ScoreTable(ids, [length, random])])


def with_trivial(metrics: Sequence[str] | None) -> list[str] | None:
    """The metric list with the trivial baselines appended (None stays None: every metric)."""
    return None if metrics is None else [*metrics, *(m for m in TRIVIAL if m not in metrics)]
