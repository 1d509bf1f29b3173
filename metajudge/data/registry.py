"""The dataset registry: cards, the :class:`Dataset` type, upstream files, counts.

Cards (one JSON file per dataset) have ONE source of truth: ``metajudge/data/cards/<name>.json``,
package data, so an installed wheel carries them; ``human_labels/`` at the top of the repository
holds one symbolic link per card into that folder. ``$METAJUDGE_CARDS_DIR`` overrides the folder.

Upstream files are resolved by :func:`resolve_file` (local data folder, user cache, pinned
download with sha256 verification; see :mod:`metajudge.data.fetch`) and turned into canonical
records by one converter per upstream format (:mod:`metajudge.data.converters`). Loading a
dataset (a name or a file) is :func:`metajudge.data.loading.load`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from metajudge.data.formats import (
    DatasetCard,
    LikertRecord,
    PairwiseRecord,
    Record,
    likert_to_pairwise,
    pairwise_scale_from_likert,
)
from metajudge.errors import InputError
from metajudge.io import read_json


def cards_dir() -> Path:
    """The folder that holds the dataset cards (see the module docstring)."""
    env = os.environ.get("METAJUDGE_CARDS_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent / "cards"


def list_datasets() -> list[str]:
    """Names of every dataset with a card, sorted."""
    d = cards_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []


@lru_cache(maxsize=64)
def _load_card_cached(path: str, mtime_ns: int) -> DatasetCard:
    obj = read_json(path)  # malformed, too deep, lone surrogates: file, line, field
    try:
        return DatasetCard.from_dict(obj)
    except InputError as e:
        raise InputError(e.message, path=path, field=e.field) from None
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(
            f"invalid dataset card: {type(e).__name__}: {e}", path=path, field="card"
        ) from None


def load_card(name: str) -> DatasetCard:
    """The card of dataset ``name`` (``metajudge/data/cards/<name>.json``); ``name`` must match
    :data:`~metajudge.data.names.NAME_PATTERN` and the card must lie inside the card folder."""
    from metajudge.data.names import check_dataset_name
    from metajudge.io import inside

    check_dataset_name(name, field="dataset")
    p = inside(cards_dir(), f"{name}.json", what="dataset")
    if not p.is_file():
        known = ", ".join(list_datasets()) or "none"
        hint = f"; to read the file {name} give --input {name}" if Path(name).exists() else ""
        raise InputError(f"unknown dataset {name!r} (known: {known}){hint}", field="dataset")
    card = _load_card_cached(str(p), p.stat().st_mtime_ns)
    if card.name != name:
        raise InputError(
            f"card file is named {name!r} but declares name {card.name!r}", path=p, field="name"
        )
    return card


def resolve_file(
    name: str,
    relpath: str,
    data_dir: str | Path | None = None,
    *,
    base_url: str | None = None,
    download: bool = True,
) -> Path:
    """Path of upstream file ``relpath`` of dataset ``name``, sha256-verified.

    Order: ``<data_dir>/<name>/<relpath>`` (``data_dir`` or ``$METAJUDGE_DATA_DIR``), then
    ``user_cache_dir()/data/<name>/<relpath>``, then a download of the raw file at the pinned
    commit (``base_url`` or ``$METAJUDGE_DOWNLOAD_BASE`` overrides the GitHub raw host).
    ``relpath`` is the file's path inside the data folder as listed in the card (``local``).
    """
    from metajudge.data.fetch import find_source, resolve_source

    card = load_card(name)
    return resolve_source(
        card, find_source(card, relpath), data_dir, base_url=base_url, download=download
    )


@dataclass
class Dataset:
    """A loaded dataset: its card and its records in their native kind.

    ``records`` holds PairwiseRecord or LikertRecord objects (empty for benchmark inputs, whose
    items are in ``items``). ``subsets`` names the parts (``record.meta['subset']``) if any.
    ``source``: where :func:`~metajudge.data.loading.load` read it (``{"dataset": NAME}`` or
    ``{"input": absolute path}``, with ``subset`` and converter ``options`` when given); a run
    folder records it so its report loads the same data (empty for a Dataset built by hand).
    """

    card: DatasetCard
    records: list[Record]
    subsets: tuple[str, ...] = ()
    items: list[Any] = field(default_factory=list)
    parts: Mapping[str, Dataset] = field(default_factory=dict)  # subsets with their own cards
    _pairs: list[PairwiseRecord] | None = field(default=None, repr=False, compare=False)
    source: dict[str, Any] = field(default_factory=dict, compare=False)
    #: a subset's view (:meth:`subset`): the ids of the records of the other subsets, so score
    #: rows for them are set aside as the other subsets', not called unknown
    other_subset_ids: frozenset[str] = field(default_factory=frozenset, compare=False)

    @property
    def name(self) -> str:
        return self.card.name

    @property
    def kind(self) -> str:
        return self.card.kind

    def pairs(self, tie_band: float = 0.0) -> list[PairwiseRecord]:
        """Pairwise view: pairwise records as they are; Likert records expanded by
        :func:`~metajudge.data.formats.likert_to_pairwise` (label = mean(b) − mean(a), a tie
        within ``tie_band``)."""
        if self.card.kind in ("categorical", "binary"):
            raise InputError(
                f"{self.name} has {self.card.kind} labels: there is no pairwise view "
                "(a difference of two labels is not defined)",
                field="kind",
            )
        if self.card.kind == "likert" and tie_band:
            likert = (r for r in self.records if isinstance(r, LikertRecord))
            return likert_to_pairwise(likert, tie_band=tie_band)
        if self._pairs is None:
            if self.card.kind == "likert":
                self._pairs = likert_to_pairwise(
                    r for r in self.records if isinstance(r, LikertRecord)
                )
            else:
                self._pairs = [r for r in self.records if isinstance(r, PairwiseRecord)]
        return self._pairs

    def pairwise_card(self, tie_band: float = 0.0) -> DatasetCard:
        """The card describing :meth:`pairs` (for Likert data: the difference scale, and in its
        notes how the labels were made, the tie band included)."""
        if self.card.kind != "likert":
            return self.card
        return replace(
            self.card,
            kind="pairwise",
            scale=pairwise_scale_from_likert(self.card.scale),
            annotators=1,
            direction="positive = b better (label = mean score of b minus mean score of a)",
            notes=(
                self.card.notes
                + " Pairwise expansion: every pair of systems on the same input, systems "
                "ordered by name, one label = difference of the annotators' mean scores"
                + f"; tie band {tie_band:g}: a difference of at most {tie_band:g} in absolute "
                "value is a tie (label 0)."
            ).strip(),
        )

    def subset(self, name: str) -> Dataset:
        """Only the records (or benchmark items) of subset ``name``."""
        source = {**self.source, "subset": name} if self.source else {}
        if name in self.parts:
            return replace(self.parts[name], source=source)
        if name not in self.subsets:
            raise InputError(
                f"dataset {self.name!r} has no subset {name!r} (subsets: {', '.join(self.subsets) or 'none'})",
                field="subset",
            )
        recs = [r for r in self.records if r.meta.get("subset") == name]
        items = [i for i in self.items if getattr(i, "variant", None) == name]
        others = frozenset(r.id for r in self.records if r.meta.get("subset") != name)
        return Dataset(
            card=self.card,
            records=recs,
            subsets=(name,),
            items=items,
            source=source,
            other_subset_ids=others - {r.id for r in recs},
        )


def upstream_json(name: str, relpath: str, data_dir: str | Path | None = None) -> tuple[Path, Any]:
    """Resolve an upstream JSON file of dataset ``name`` (see :func:`resolve_file`) and parse it."""
    p = resolve_file(name, relpath, data_dir)
    return p, read_json(p)


def describe_counts(ds: Dataset) -> dict[str, Any]:
    """Counts shown by ``metajudge data list``.

    ``items``: distinct inputs (pairwise: ``meta['item_id']`` or the pair id; Likert: the record
    id; benchmark: benchmark items). ``pairs``: pairwise records after Likert expansion.
    ``annotators``: values stored per label (most in any record); ``annotators_upstream``: the
    card's number of annotators per item (None when not stated).
    """
    recs = ds.records
    if ds.card.kind == "benchmark":
        items = len(ds.items)
    elif ds.card.kind == "pairwise":
        items = len({str(r.meta.get("item_id", r.id)) for r in recs})
    else:
        items = len({r.id for r in recs})
    stored = 0
    for r in recs:
        lab = r.labels if isinstance(r, PairwiseRecord) else r.scores
        for v in lab.values():
            stored = max(stored, len(v))
    systems: set[str] = set()
    for r in recs:
        if isinstance(r, PairwiseRecord):
            systems.update((r.a.system, r.b.system))
        else:
            systems.add(r.system)
    return {
        "name": ds.card.name,
        "kind": ds.card.kind,
        "records": len(recs) if ds.card.kind != "benchmark" else len(ds.items),
        "items": items,
        "pairs": len(ds.pairs()) if ds.card.kind in ("likert", "pairwise") else 0,
        "annotators": stored,
        "annotators_upstream": ds.card.annotators,
        "dimensions": list(ds.card.dimensions),
        "systems": len(systems),
        "subsets": list(ds.subsets),
        "license": ds.card.license,
    }
