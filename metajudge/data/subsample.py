"""The one rule for a subset of a dataset's items: ``--limit N`` (a seeded random draw of the
labelled items, :func:`draw_items`) and ``--first N`` (the first N items in dataset order,
:func:`first_items`), both through :func:`select`.

Every command with ``--limit`` draws through :func:`select` with a fresh
``numpy.random.default_rng(seed)``, so the same ``--limit N --seed S`` selects the same items in
``backbone-swap``, ``decide``, ``judge diagnostics``, ``matrix run`` and ``demo``
(:func:`metajudge.runs.demo.draw_subset`). The unit drawn is the
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
#: How ``--first N`` selects.
HOW_FIRST = "the first N items in dataset order"


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
    how: str = HOW

    def describe(self, seed: int | None) -> dict[str, Any]:
        return {
            "n": self.n,
            "N": self.of,
            "unit": self.unit,
            "seed": seed,
            "how": self.how if self.n < self.of else "all items",
            "ids": list(self.ids),
        }


def draw_positions(count: int, n: int, rng: Any) -> list[int]:
    """``n`` of the positions ``0 .. count-1``, drawn uniformly without replacement by ``rng``
    (``rng.choice(count, size=n, replace=False)``), sorted: the draw of :func:`draw_items`, and
    of ``judge run-bench`` over a JUDGE-BENCH file's instances."""
    return sorted(int(i) for i in rng.choice(count, size=n, replace=False))


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
    chosen = draw_positions(len(ids), n, rng)
    keep = {ids[i] for i in chosen}
    return Draw([r for r in pool if r.id in keep], [ids[i] for i in chosen], n, len(ids), unit)


def _unit(records: Sequence[Record]) -> str:
    return "pairs" if records and isinstance(records[0], PairwiseRecord) else "inputs"


def first_items(records: Sequence[Record], n: int) -> Draw:
    """The first ``n`` items of ``records`` in dataset order (an input with all its responses;
    labelled or not, the old meaning of ``--limit``, now ``--first``)."""
    if n < 1:
        raise InputError(f"a subset needs at least 1 item, asked for {n}", field="first")
    ids = list(dict.fromkeys(r.id for r in records))
    keep = set(ids[:n])
    recs = [r for r in records if r.id in keep]
    return Draw(recs, ids[:n], min(n, len(ids)), len(ids), _unit(records), HOW_FIRST)


def select(
    records: Sequence[Record],
    *,
    limit: int | None = None,
    first: int | None = None,
    seed: int = 0,
    strict: bool = False,
) -> Draw:
    """THE subset of every command: ``limit`` items drawn by :func:`draw_items` with
    ``numpy.random.default_rng(seed)`` (all of them when ``limit`` covers them: the draw says
    ``n`` of ``N``; ``strict``: refused instead, as ``matrix run`` and ``demo`` do), or the
    ``first`` items (:func:`first_items`), or every record.

    >>> from metajudge.data.formats import Input, LikertRecord
    >>> recs = [LikertRecord(str(i), Input("q"), "s", "r", {"d": (1,)}) for i in range(30)]
    >>> select(recs, limit=3, seed=0).ids == select(recs, limit=3, seed=0).ids
    True
    >>> select(recs, first=3).ids, select(recs, limit=99).n
    (['0', '1', '2'], 30)
    """
    if limit is not None and first is not None:
        raise InputError("give --limit N (a seeded draw) or --first N, not both", field="first")
    if first is not None:
        return first_items(records, first)
    if limit is None:
        ids = list(dict.fromkeys(r.id for r in records))
        return Draw(list(records), ids, len(ids), len(ids), _unit(records), "all items")
    import numpy as np

    n = limit if strict else min(limit, len({r.id for r in records if labelled(r)}))
    return draw_items(records, n, np.random.default_rng(seed))
