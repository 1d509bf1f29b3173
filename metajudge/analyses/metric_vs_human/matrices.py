"""Scores as (systems × inputs) matrices: the layout of the level-aware significance tests.

Deutsch, Dror & Roth (2021) and nlpstats hold a metric's scores as a matrix whose rows are systems
and whose columns are inputs; a response a system never produced is NaN. :func:`score_matrices`
builds that layout from a Likert dataset (human score = the annotators' mean) and score rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class ScoreMatrices:
    """Human and metric scores of one dimension, rows ``systems``, columns ``items`` (NaN: none)."""

    dimension: str
    systems: list[str]
    items: list[str]
    human: np.ndarray = field(repr=False)
    metrics: dict[str, np.ndarray] = field(repr=False)

    @property
    def n_cells(self) -> int:
        return int(np.isfinite(self.human).sum())


def score_matrices(
    records: Sequence[Any],
    rows: Iterable[Mapping[str, Any]],
    dimension: str,
    metrics: Sequence[str] | None = None,
) -> ScoreMatrices:
    """The (systems × items) matrices of ``dimension`` and of each metric in ``rows``.

    ``records``: Likert records (``id``, ``system``, ``scores[dimension]``); ``rows``: score rows
    (``item``, ``system``, ``metric``, ``score``). A score without a record is ignored.
    """
    systems = sorted({str(r.system) for r in records})
    items = list(dict.fromkeys(str(r.id) for r in records))
    si = {s: i for i, s in enumerate(systems)}
    ii = {s: i for i, s in enumerate(items)}
    human = np.full((len(systems), len(items)), np.nan)
    for r in records:
        labels = [v for v in r.scores.get(dimension, []) if v is not None]
        if labels:
            human[si[str(r.system)], ii[str(r.id)]] = float(np.mean(labels))
    mats: dict[str, np.ndarray] = {}
    for row in rows:
        m = str(row["metric"])
        if metrics is not None and m not in metrics:
            continue
        s, it, v = str(row.get("system")), str(row.get("item")), row.get("score")
        if s not in si or it not in ii or v is None:
            continue
        mats.setdefault(m, np.full(human.shape, np.nan))[si[s], ii[it]] = float(v)
    order = list(metrics) if metrics is not None else sorted(mats)
    return ScoreMatrices(dimension, systems, items, human, {m: mats[m] for m in order if m in mats})
