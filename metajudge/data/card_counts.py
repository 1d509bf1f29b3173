"""The counts ``metajudge data list`` shows, read from the cards instead of the data.

Loading all built-in datasets to count their records takes seconds (every upstream file is
converted); a listing should answer at once. Each built-in card therefore carries ``counts``
(:data:`COUNTED`), the output of :func:`~metajudge.data.registry.describe_counts` on the dataset
as :func:`~metajudge.data.loading.load` reads it by default. The upstream files are pinned by
sha256 in the same card, so the counts can only change when a converter changes; the test
``tests/data/test_card_counts.py`` loads every dataset and fails when a card's counts differ,
and ``metajudge data fetch --recount`` rewrites them. The same entry holds ``facts``: what the metric ×
dataset matrix reads from the records (:func:`metajudge.runs.matrix.table.dataset_facts`), so
``metajudge matrix`` needs no load either.

A card without counts (a new dataset, a user's folder) is loaded and counted as before.
"""

from __future__ import annotations

import json
from typing import Any

from metajudge.data.formats import DatasetCard

#: The counts a card stores (the rest of a listing row comes from the card itself).
COUNTED: tuple[str, ...] = (
    "records",
    "items",
    "pairs",
    "annotators",
    "systems",
    "subsets",
    "dimensions",
)


def counts_of(row: dict[str, Any]) -> dict[str, Any]:
    """The part of a :func:`describe_counts` row that a card stores."""
    return {k: row[k] for k in COUNTED}


def row_from_card(card: DatasetCard) -> dict[str, Any] | None:
    """A ``data list`` row built from the card alone, or None when the card has no counts."""
    if not card.counts or any(k not in card.counts for k in COUNTED):
        return None
    return {
        "name": card.name,
        "kind": card.kind,
        **{k: card.counts[k] for k in COUNTED if k not in ("subsets", "dimensions")},
        "annotators_upstream": card.annotators,
        "dimensions": list(card.counts["dimensions"]),
        "subsets": list(card.counts["subsets"]),
        "license": card.license,
    }


def listing_row(name: str) -> dict[str, Any]:
    """The ``data list`` row of built-in dataset ``name``: from its card when the card counts,
    else from loading the dataset."""
    from metajudge.data.loading import load
    from metajudge.data.registry import describe_counts, load_card

    row = row_from_card(load_card(name))
    return row if row is not None else describe_counts(load(name))


def write_counts(name: str, counts: dict[str, Any]) -> bool:
    """Store ``counts`` in built-in card ``name`` (atomically); False when they were current."""
    from metajudge.data.registry import cards_dir
    from metajudge.io import atomic_write

    path = cards_dir() / f"{name}.json"
    card = json.loads(path.read_text(encoding="utf-8"))
    if card.get("counts") == counts:
        return False
    card["counts"] = counts
    with atomic_write(path) as fh:
        fh.write(json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    return True
