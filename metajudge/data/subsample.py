"""The one rule for a seeded random subset of a dataset's labelled items.

Used by ``metajudge demo`` (:func:`metajudge.runs.demo.draw_subset`) and by
``metajudge matrix run --limit N`` (:mod:`metajudge.runs.matrix.run`). The unit drawn is the
*item*, the record ``id``: a pair for pairwise data, an input (a document with all of its
responses) for Likert data, so that a per-input protocol (G-Eval's summary level) sees every
response of each input drawn. Items are drawn uniformly without replacement by
``rng.choice(len(pool), size=n, replace=False)`` and kept in dataset order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from metajudge.data.formats import PairwiseRecord, Record
from metajudge.errors import InputError

HOW = (
    "uniformly without replacement from the items with a human label, "
    "numpy.random.default_rng(seed).choice"
)


def labelled(rec: Record) -> bool:
    """A record with at least one human label (some mitigation pairs were left unannotated)."""
    lab = rec.labels if isinstance(rec, PairwiseRecord) else rec.scores
    return any(v is not None for vs in lab.values() for v in vs)


@dataclass(frozen=True)
class Draw:
    """A subset: its records, the item ids drawn, how many items there were to draw from."""

    records: list[Record]
    ids: list[str]
    n: int
    of: int
    unit: str  # "pairs" | "inputs"

    def describe(self, seed: int | None) -> dict[str, Any]:
        return {
            "n": self.n,
            "N": self.of,
            "unit": self.unit,
            "seed": seed,
            "how": HOW if self.n < self.of else "all items",
            "ids": list(self.ids),
        }


def draw_items(records: Sequence[Record], n: int | None, rng: Any) -> Draw:
    """``n`` of the labelled items of ``records`` (all of them when ``n`` is None or covers
    them), drawn by ``rng`` (a ``numpy.random.Generator``) as the module docstring says.

    >>> import numpy as np
    >>> from metajudge.data.formats import Input, LikertRecord
    >>> recs = [LikertRecord(str(i // 2), Input("q"), s, "r", {"d": (1,)}) for i, s in
    ...         zip(range(6), "ababab")]
    >>> d = draw_items(recs, 2, np.random.default_rng(0))
    >>> d.n, d.of, d.unit, len(d.records)
    (2, 3, 'inputs', 4)
    """
    pool = [r for r in records if labelled(r)]
    ids = list(dict.fromkeys(r.id for r in pool))
    unit = "pairs" if pool and isinstance(pool[0], PairwiseRecord) else "inputs"
    if n is None or n == len(ids):
        return Draw(pool, ids, len(ids), len(ids), unit)
    if n < 1:
        raise InputError(f"a subset needs at least 1 item, asked for {n}", field="limit")
    if n > len(ids):
        raise InputError(f"the dataset has {len(ids)} labelled {unit}, asked for {n}", field="n")
    chosen = sorted(int(i) for i in rng.choice(len(ids), size=n, replace=False))
    keep = {ids[i] for i in chosen}
    return Draw([r for r in pool if r.id in keep], [ids[i] for i in chosen], n, len(ids), unit)
