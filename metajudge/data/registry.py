"""The dataset registry: cards, loading, counts.

Cards (one JSON file per dataset) have ONE source of truth: ``human_labels/<name>.json`` at the
top of the repository, found relative to this package (``Path(__file__).parents[2]``).
``$METAJUDGE_CARDS_DIR`` overrides the folder. ``metajudge/data/cards`` is a symbolic link to
``human_labels/``, so a built wheel carries the same cards as package data and an installed
package without the repository falls back to them.

Upstream files are resolved by :func:`resolve_file` (local data folder, user cache, pinned
download with sha256 verification; see :mod:`metajudge.data.fetch`) and turned into canonical
records by one converter per upstream format (:mod:`metajudge.data.converters`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
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
from metajudge.io import read_json, read_text


def cards_dir() -> Path:
    """The folder that holds the dataset cards (see the module docstring)."""
    env = os.environ.get("METAJUDGE_CARDS_DIR")
    if env:
        return Path(env)
    repo_cards = Path(__file__).resolve().parents[2] / "human_labels"
    if repo_cards.is_dir():
        return repo_cards
    return Path(__file__).resolve().parent / "cards"


def list_datasets() -> list[str]:
    """Names of every dataset with a card, sorted."""
    d = cards_dir()
    return sorted(p.stem for p in d.glob("*.json")) if d.is_dir() else []


@lru_cache(maxsize=64)
def _load_card_cached(path: str, mtime_ns: int) -> DatasetCard:
    try:
        obj = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise InputError(
            f"malformed JSON in dataset card: {e.msg}", path=path, line=e.lineno, field="<json>"
        ) from None
    try:
        return DatasetCard.from_dict(obj)
    except InputError as e:
        raise InputError(e.message, path=path, field=e.field) from None
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(
            f"invalid dataset card: {type(e).__name__}: {e}", path=path, field="card"
        ) from None


def load_card(name: str) -> DatasetCard:
    """The card of dataset ``name`` (``human_labels/<name>.json``); ``name`` must match
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
    """

    card: DatasetCard
    records: list[Record]
    subsets: tuple[str, ...] = ()
    items: list[Any] = field(default_factory=list)
    parts: Mapping[str, Dataset] = field(default_factory=dict)  # subsets with their own cards
    _pairs: list[PairwiseRecord] | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.card.name

    @property
    def kind(self) -> str:
        return self.card.kind

    def pairs(self) -> list[PairwiseRecord]:
        """Pairwise view: pairwise records as they are; Likert records expanded by
        :func:`~metajudge.data.formats.likert_to_pairwise` (label = mean(b) − mean(a))."""
        if self.card.kind in ("categorical", "binary"):
            raise InputError(
                f"{self.name} has {self.card.kind} labels: there is no pairwise view "
                "(a difference of two labels is not defined)",
                field="kind",
            )
        if self._pairs is None:
            if self.card.kind == "likert":
                self._pairs = likert_to_pairwise(
                    r for r in self.records if isinstance(r, LikertRecord)
                )
            else:
                self._pairs = [r for r in self.records if isinstance(r, PairwiseRecord)]
        return self._pairs

    def pairwise_card(self) -> DatasetCard:
        """The card describing :meth:`pairs` (for Likert data: the difference scale)."""
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
                "ordered by name, one label = difference of the annotators' mean scores."
            ).strip(),
        )

    def subset(self, name: str) -> Dataset:
        """Only the records (or benchmark items) of subset ``name``."""
        if name in self.parts:
            return self.parts[name]
        if name not in self.subsets:
            raise InputError(
                f"dataset {self.name!r} has no subset {name!r} (subsets: {', '.join(self.subsets) or 'none'})",
                field="subset",
            )
        recs = [r for r in self.records if r.meta.get("subset") == name]
        items = [i for i in self.items if getattr(i, "variant", None) == name]
        return Dataset(card=self.card, records=recs, subsets=(name,), items=items)


def upstream_json(name: str, relpath: str, data_dir: str | Path | None = None) -> tuple[Path, Any]:
    """Resolve an upstream JSON file of dataset ``name`` (see :func:`resolve_file`) and parse it."""
    p = resolve_file(name, relpath, data_dir)
    return p, read_json(p)


def _subsets_of(records: Sequence[Record]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for r in records:
        s = r.meta.get("subset")
        if isinstance(s, str):
            seen.setdefault(s, None)
    return tuple(seen)


def load_dataset(
    name: str,
    data_dir: str | Path | None = None,
    *,
    files: Mapping[str, Path] | None = None,
    **options: Any,
) -> Dataset:
    """Load dataset ``name`` from its upstream files (see :func:`resolve_file`) as canonical records.

    ``files`` maps a card file's ``local`` name to a path to use instead (still sha256-checked).
    ``options`` go to the dataset's converter (e.g. ``fully='tie'`` for
    ``lftqa_mitigation_pradhumant``; see the card's notes).
    """
    from metajudge.data import converters

    card = load_card(name)
    if card.kind == "benchmark":
        from metajudge.data import benchmarks

        items = benchmarks.load_benchmark_items(name, data_dir=data_dir)
        subsets = tuple(
            dict.fromkeys(getattr(i, "variant", "") for i in items if getattr(i, "variant", ""))
        )
        return Dataset(card=card, records=[], subsets=subsets, items=items)
    if card.name in converters.COLLECTIONS:
        return converters.COLLECTIONS[card.name](card, data_dir, files)
    records = converters.convert(card, data_dir=data_dir, files=files, **options)
    return Dataset(card=card, records=records, subsets=_subsets_of(records))


def load_file(
    path: str | Path, *, data_dir: str | Path | None = None, card: DatasetCard | None = None
) -> Dataset:
    """Load a user's file as a :class:`Dataset` — what every ``--input FILE`` option calls.

    - a canonical JSONL file (README, "Bring your own data"): its header card, else ``card``,
      else a card inferred from the records (name = the file's stem);
    - an upstream file of a built-in dataset, recognised by its pinned sha256 (e.g. RAGChecker's
      ``human_labeled_data.json``): loaded by that dataset's converter, other files of the
      dataset resolved as usual from ``data_dir``;
    - a folder ``<dir>/<name>`` holding a built-in dataset's files: ``load_dataset(name, <dir>)``.
    """
    p = Path(path)
    if p.is_dir():
        if (cards_dir() / f"{p.name}.json").is_file():
            return load_dataset(p.name, data_dir=p.parent)
        raise InputError(
            "is a folder: give a canonical JSONL file, or a folder named like a built-in "
            f"dataset ({', '.join(list_datasets())})",
            path=p,
        )
    if not p.is_file():
        raise InputError("file not found", path=p)
    if p.suffix == ".json":
        from metajudge.data import judge_bench

        obj = read_json(p)
        if judge_bench.is_judge_bench(obj):
            return judge_bench.read_obj(obj, p, **judge_bench.provenance_of(p, upstream_match(p)))
    found = upstream_match(p)
    if found is not None and found[0] in _collections():
        raise InputError(
            f"a file of dataset {found[0]!r} that is not one of its data files (its data files "
            f"load one by one with --input FILE, all of them with --dataset {found[0]})",
            path=p,
        )
    if found is not None:
        return load_dataset(found[0], data_dir=data_dir, files={found[1]: p})
    return load_jsonl_dataset(p, card=card)


def _collections() -> Mapping[str, Any]:
    from metajudge.data.converters import COLLECTIONS

    return COLLECTIONS


def upstream_match(path: Path) -> tuple[str, str] | None:
    """``(dataset, local name)`` of the built-in dataset file with this size and sha256, if any."""
    from metajudge.data.fetch import local_relpath
    from metajudge.io import sha256_file

    size = path.stat().st_size
    digest: str | None = None
    for name in list_datasets():
        card = load_card(name)
        for sf in card.files:
            if sf.bytes is not None and sf.bytes != size:
                continue
            digest = digest or sha256_file(path)
            if digest == sf.sha256 and card.kind != "benchmark":
                return name, local_relpath(sf)
    return None


def load_jsonl_dataset(path: str | Path, card: DatasetCard | None = None) -> Dataset:
    """Load a canonical JSONL file (its header card, else ``card``, else an inferred card)."""
    from metajudge.data.validation import read_jsonl

    found, records = read_jsonl(path, card=card)
    card = found or card or infer_card(records, Path(path))
    return Dataset(card=card, records=records, subsets=_subsets_of(records))


def infer_card(records: Sequence[Record], path: Path) -> DatasetCard:
    """A card for header-less records: kind, dimensions and the range (or labels) seen."""
    from metajudge.data.formats import Scale

    pairwise = isinstance(records[0], PairwiseRecord)
    labels = [r.labels if isinstance(r, PairwiseRecord) else r.scores for r in records]
    dims = tuple(dict.fromkeys(d for lab in labels for d in lab))
    vals = [v for lab in labels for vs in lab.values() for v in vs if v is not None]
    strings = sorted({v for v in vals if isinstance(v, str)})
    if strings:
        kind, scale = "categorical", Scale(0.0, len(strings) - 1.0, None, tuple(strings))
    else:
        nums = [float(v) for v in vals]
        kind = "pairwise" if pairwise else "likert"
        scale = Scale(min(nums, default=0.0), max(nums, default=0.0))
    return DatasetCard(
        name=path.stem,
        kind=kind,  # type: ignore[arg-type]
        description=f"records read from {path} (no card: kind, dimensions and scale inferred)",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=dims,
        scale=scale,
        annotators=None,
        direction="positive = b better" if pairwise else "higher = better",
    )


def open_dataset(
    dataset: str | None = None,
    input: str | Path | None = None,
    *,
    data_dir: str | Path | None = None,
) -> Dataset:
    """The dataset named by ``--dataset NAME`` or ``--input FILE`` (exactly one of them).

    ``dataset`` is only ever a name (:func:`load_card`); a file is read only through ``input``
    (a path given as ``dataset`` is refused with a message saying ``--input``).
    """
    if (dataset is None) == (input is None):
        raise InputError("give exactly one of --dataset NAME and --input FILE", field="dataset")
    if dataset is not None:
        load_card(dataset)  # raises: not a name, or unknown (naming the known ones)
    if input is not None:
        return load_file(input, data_dir=data_dir)
    return load_dataset(str(dataset), data_dir=data_dir)


def list_local(data_dir: str | Path) -> list[dict[str, Any]]:
    """What a data folder holds, without downloading: built-in datasets (``<dir>/<name>/``) whose
    files are all there, with their counts, those with files missing, and canonical JSONL files."""
    from metajudge.data.fetch import local_relpath

    root = Path(data_dir)
    if not root.is_dir():
        raise InputError("data folder not found", path=root, field="data_dir")
    rows: list[dict[str, Any]] = []
    names = set(list_datasets())
    for name in sorted(n for n in names if (root / n).is_dir()):
        card = load_card(name)
        missing = [
            local_relpath(f) for f in card.files if not (root / name / local_relpath(f)).is_file()
        ]
        if missing:
            status = f"missing {len(missing)} of {len(card.files)} files ({', '.join(missing)})"
            rows.append({"name": name, "kind": card.kind, "status": status})
            continue
        ds = load_dataset(name, data_dir=root)
        rows.append({**describe_counts(ds), "status": "ok", "path": str(root / name)})
    for p in sorted(root.rglob("*.jsonl")):
        if p.relative_to(root).parts[0] in names:
            continue  # an upstream file of a built-in dataset
        try:
            rows.append({**describe_counts(load_jsonl_dataset(p)), "status": "ok", "path": str(p)})
        except InputError as e:
            rows.append({"name": str(p.relative_to(root)), "kind": "?", "status": f"invalid: {e}"})
    return rows


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
