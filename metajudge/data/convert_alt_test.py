"""``alt_test_calderon2025`` as a built-in dataset: each annotation set of the Alternative
Annotator Test's release (an Alt-Test folder, :mod:`metajudge.data.alt_test_dir`) one subset
with its own card, its records built from ``human_annotations.json`` and its LLMs' labels
(``llm_annotations.json``) the judge columns ``--scores shipped`` reads (:func:`llm_rows`).

An instance id splits into (item, system, dimension) where the release joins them with ``__``
(:data:`ID_PARTS`): SummEval ``text__system__dimension``, LGBTeen ``post__model__question``,
CEBaB ``review__aspect``; framing and MT-Bench instances are one item each (system ``-``,
dimension ``label``). Each dimension's labels are one slot per annotator, in the human file's
order (``None`` where that annotator gave no label). The categorical label list is every label
a human or an LLM gave (an LLM label no human used counts as a disagreement, as in the
Alt-Test, rather than as an invalid label).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from metajudge.data.alt_test_dir import HUMAN_FILE, LLM_FILE, AltTestData, alt_test_data
from metajudge.data.formats import DatasetCard, Input, LikertRecord, Scale, SourceFile

#: which parts an instance id joins with ``__``: ("item", "system", "dimension") in order
ID_PARTS: dict[str, tuple[str, ...]] = {
    "summeval": ("item", "system", "dimension"),
    "lgbteen": ("item", "system", "dimension"),
    "cebab_aspects": ("item", "dimension"),
    "cebab_stars": ("item", "dimension"),
}
NO_SYSTEM = "-"
ONE_DIMENSION = "label"


def split_id(subset: str, iid: str) -> tuple[str, str, str]:
    """``(item, system, dimension)`` of instance ``iid`` of ``subset``.

    >>> split_id("summeval", "dm-test-8764__M11__coherence")
    ('dm-test-8764', 'M11', 'coherence')
    >>> split_id("framing", "BBC--2017__co1")
    ('BBC--2017__co1', '-', 'label')
    """
    parts = ID_PARTS.get(subset)
    if parts is None:
        return iid, NO_SYSTEM, ONE_DIMENSION
    pieces = iid.rsplit("__", len(parts) - 1)
    if len(pieces) != len(parts):
        return iid, NO_SYSTEM, ONE_DIMENSION
    got = dict(zip(parts, pieces))
    return got["item"], got.get("system", NO_SYSTEM), got["dimension"]


def _files(card: DatasetCard, subset: str) -> dict[str, SourceFile]:
    from metajudge.data.fetch import local_relpath

    return {
        Path(local_relpath(sf)).name: sf
        for sf in card.files
        if Path(local_relpath(sf)).parent.name == subset
    }


def subsets_of(card: DatasetCard) -> list[str]:
    """The annotation sets the card lists (folders holding a human_annotations.json)."""
    from metajudge.data.fetch import local_relpath

    rels = [Path(local_relpath(sf)) for sf in card.files]
    return [r.parent.name for r in rels if r.name == HUMAN_FILE]


def read_subset(
    card: DatasetCard, subset: str, root: str | Path | None, files: Mapping[str, Path] | None
) -> tuple[AltTestData, tuple[SourceFile, ...]]:
    """The Alt-Test annotations of ``subset`` (sha256-checked files) and their source files."""
    from metajudge.data.fetch import local_relpath, resolve_source
    from metajudge.io import read_json

    srcs = _files(card, subset)
    paths = {}
    for name in (HUMAN_FILE, LLM_FILE):
        sf = srcs[name]
        rel = local_relpath(sf)
        paths[name] = files[rel] if files and rel in files else resolve_source(card, sf, root)
    data = alt_test_data(
        read_json(paths[HUMAN_FILE]),
        read_json(paths[LLM_FILE]),
        human_path=paths[HUMAN_FILE],
        llm_path=paths[LLM_FILE],
        source=f"{card.name}/{subset}",
    )
    return data, tuple(srcs.values())


def _scale(data: AltTestData) -> Scale:
    labels = [
        v for table in (data.humans, data.llms) for row in table.values() for v in row.values()
    ]
    if data.label_type == "numeric":
        nums = sorted({float(v) for v in labels})
        return Scale(nums[0], nums[-1], tuple(nums))
    return Scale(0.0, 0.0, None, tuple(sorted({str(v) for v in labels})))


def _records(subset: str, data: AltTestData) -> tuple[list[LikertRecord], tuple[str, ...]]:
    annotators = list(data.humans)
    slots: dict[tuple[str, str], dict[str, list[Any]]] = {}
    dims: dict[str, None] = {}
    for k, h in enumerate(annotators):
        for iid, v in data.humans[h].items():
            item, system, dim = split_id(subset, iid)
            dims.setdefault(dim, None)
            by_dim = slots.setdefault((item, system), {})
            row = by_dim.setdefault(dim, [None] * len(annotators))
            row[k] = v if data.label_type == "numeric" else str(v)
    recs = [
        LikertRecord(
            id=item,
            input=Input(question=""),
            system=system,
            response=None,
            scores={d: tuple(v) for d, v in by_dim.items()},
            meta={"subset": subset},
        )
        for (item, system), by_dim in slots.items()
    ]
    return recs, tuple(dims)


def subset_card(
    card: DatasetCard,
    subset: str,
    data: AltTestData,
    dims: tuple[str, ...],
    files: tuple[SourceFile, ...],
) -> DatasetCard:
    """The card of one annotation set: its kind, dimensions, label scale and judge columns."""
    from metajudge.data.fetch import local_relpath

    llm_file = next(local_relpath(sf) for sf in files if Path(local_relpath(sf)).name == LLM_FILE)
    return replace(
        card,
        name=subset,
        kind="likert" if data.label_type == "numeric" else "categorical",
        description=f"{card.description} This subset: {subset}.",
        files=files,
        dimensions=dims,
        scale=_scale(data),
        annotators=len(data.humans),
        direction="higher = better" if data.label_type == "numeric" else "labels as listed",
        notes=(
            f"{card.notes} Annotator slots, in order: {', '.join(data.humans)}. Judge columns "
            f"(--scores shipped): {', '.join(data.llms)}"
            + (" (one per dimension: <llm>_<dimension>)." if len(dims) > 1 else ".")
        ),
        shipped_scores=({"loader": "alt_test_llm_labels", "file": llm_file, "subset": subset},),
    )


def load_alt_test_collection(
    card: DatasetCard, root: str | Path | None, files: Mapping[str, Path] | None = None
) -> Any:
    """Every annotation set of the card: one part per subset (its own card and records); the
    whole collection's records carry dimensions ``<subset>/<dimension>``."""
    from metajudge.data.registry import Dataset

    parts: dict[str, Dataset] = {}
    whole: list[LikertRecord] = []
    for subset in subsets_of(card):
        data, srcs = read_subset(card, subset, root, files)
        recs, dims = _records(subset, data)
        parts[subset] = Dataset(
            card=subset_card(card, subset, data, dims, srcs), records=recs, subsets=(subset,)
        )
        whole += [
            replace(
                r, id=f"{subset}/{r.id}", scores={f"{subset}/{d}": v for d, v in r.scores.items()}
            )
            for r in recs
        ]
    scales = {f"{s}/{d}": p.card.scale for s, p in parts.items() for d in p.card.dimensions}
    full = replace(
        card, dimensions=tuple(scales), scale=next(iter(scales.values())), dimension_scales=scales
    )
    return Dataset(card=full, records=whole, subsets=tuple(parts), parts=parts)
