"""Canonical record formats (DESIGN.md §2): pairwise and Likert records, dataset cards, JSONL.

Sign convention everywhere: **positive = b is better**.

A canonical JSONL file may start with one header line ``{"card": {...}}`` holding the dataset
card; every other line is one record. Records are frozen dataclasses; labels and scores are
tuples (one value per annotator, ``None`` where an annotator gave no label).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from metajudge.errors import InputError
from metajudge.io import atomic_write

Kind = Literal["pairwise", "likert", "benchmark"]
Label = float | None


@dataclass(frozen=True)
class Table:
    """One table: title, header and rows of cell strings (MT-RAIG Appendix B.4)."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "header": list(self.header),
            "rows": [list(r) for r in self.rows],
        }


@dataclass(frozen=True)
class Input:
    """What the responses answer: a question, optionally a reference, tables and documents."""

    question: str
    reference: str | None = None
    tables: tuple[Table, ...] | None = None
    documents: tuple[str, ...] | None = None
    context: str | None = None  # e.g. a dialogue history / knowledge fact / source article

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"question": self.question}
        if self.reference is not None:
            d["reference"] = self.reference
        if self.tables is not None:
            d["tables"] = [t.to_dict() for t in self.tables]
        if self.documents is not None:
            d["documents"] = list(self.documents)
        if self.context is not None:
            d["context"] = self.context
        return d


@dataclass(frozen=True)
class Response:
    system: str
    response: str | None  # None only in scores-only datasets (texts not available)

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "response": self.response}


@dataclass(frozen=True)
class PairwiseRecord:
    """Two responses to one input and per-annotator labels per dimension (positive = b better)."""

    id: str
    input: Input
    a: Response
    b: Response
    labels: Mapping[str, tuple[Label, ...]]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "input": self.input.to_dict(),
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "labels": {k: list(v) for k, v in self.labels.items()},
        }
        if self.meta:
            d["meta"] = dict(self.meta)
        return d


@dataclass(frozen=True)
class LikertRecord:
    """One response to one input with per-annotator scores per dimension.

    ``id`` names the *input* (item); records are unique by ``(id, system)``.
    """

    id: str
    input: Input
    system: str
    response: str | None
    scores: Mapping[str, tuple[Label, ...]]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "input": self.input.to_dict(),
            "system": self.system,
            "response": self.response,
            "scores": {k: list(v) for k, v in self.scores.items()},
        }
        if self.meta:
            d["meta"] = dict(self.meta)
        return d


Record = PairwiseRecord | LikertRecord


@dataclass(frozen=True)
class Scale:
    """A label scale: ``[min, max]``, optionally only the listed ``values``."""

    min: float
    max: float
    values: tuple[float, ...] | None = None

    @property
    def half_width(self) -> float:
        """Half the width of a pairwise scale (2 for -2..2, 1 for -1..1)."""
        return (self.max - self.min) / 2

    def contains(self, v: float) -> bool:
        if self.values is not None:
            return any(math.isclose(v, x, abs_tol=1e-9) for x in self.values)
        return self.min - 1e-9 <= v <= self.max + 1e-9

    def describe(self) -> str:
        if self.values is not None:
            return "{" + ",".join(_fmt_num(v) for v in self.values) + "}"
        return f"[{_fmt_num(self.min)}, {_fmt_num(self.max)}]"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"min": self.min, "max": self.max}
        if self.values is not None:
            d["values"] = list(self.values)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Scale:
        vals = d.get("values")
        return cls(
            float(d["min"]), float(d["max"]), tuple(float(v) for v in vals) if vals else None
        )


def _fmt_num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


@dataclass(frozen=True)
class SourceFile:
    path: str  # path inside the upstream repository
    sha256: str
    bytes: int | None = None
    local: str | None = None  # path inside the data folder (defaults to the basename)
    repository: str | None = (
        None  # overrides the card's repository (a dataset assembled from two repos)
    )
    commit: str | None = None  # overrides the card's commit

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class DatasetCard:
    """What a dataset is, where it comes from, and how its labels read."""

    name: str
    kind: Kind
    description: str
    repository: str  # e.g. "amazon-science/RAGChecker"
    commit: str
    files: tuple[SourceFile, ...]
    license: str
    dimensions: tuple[str, ...]
    scale: Scale  # the label scale of the records as stored (pairwise diff scale or Likert scale)
    annotators: int | None  # annotators per item (None: not stated upstream)
    direction: str  # how to read a label, e.g. "positive = b better"
    notes: str = ""  # how ambiguous upstream labels were read
    # per-response score columns the dataset ships: [{"loader": NAME, "file": ..., ...}], read by
    # the loader table of metajudge.metaeval.shipped (owned by the meta-evaluation)
    shipped_scores: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = self._core_dict()
        if self.shipped_scores:
            d["shipped_scores"] = [dict(s) for s in self.shipped_scores]
        return d

    def _core_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "repository": self.repository,
            "commit": self.commit,
            "files": [f.to_dict() for f in self.files],
            "license": self.license,
            "dimensions": list(self.dimensions),
            "scale": self.scale.to_dict(),
            "annotators": self.annotators,
            "direction": self.direction,
            "notes": self.notes,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DatasetCard:
        return cls(
            name=d["name"],
            kind=d["kind"],
            description=d.get("description", ""),
            repository=d.get("repository", ""),
            commit=d.get("commit", ""),
            files=tuple(SourceFile(**f) for f in d.get("files", [])),
            license=d.get("license", ""),
            dimensions=tuple(d["dimensions"]),
            scale=Scale.from_dict(d["scale"]),
            annotators=d.get("annotators"),
            direction=d.get("direction", ""),
            notes=d.get("notes", ""),
            shipped_scores=tuple(dict(s) for s in d.get("shipped_scores") or ()),
        )


# ---------------------------------------------------------------------------------------------
# Parsing dicts into records, with errors that name file, line and field.


class _Ctx:
    def __init__(self, path: str | Path | None, line: int | None) -> None:
        self.path, self.line = path, line

    def err(self, field_: str, msg: str) -> InputError:
        return InputError(msg, path=self.path, line=self.line, field=field_)


def _req(d: Mapping[str, Any], key: str, ctx: _Ctx, prefix: str = "") -> Any:
    if not isinstance(d, Mapping):
        raise ctx.err(
            prefix.rstrip(".") or "<record>", f"expected an object, got {type(d).__name__}"
        )
    if key not in d:
        raise ctx.err(prefix + key, "missing required field")
    return d[key]


def _str(v: Any, name: str, ctx: _Ctx, *, optional: bool = False) -> str | None:
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise ctx.err(name, f"expected a string, got {type(v).__name__}")
    return v


def _parse_table(d: Any, name: str, ctx: _Ctx) -> Table:
    if not isinstance(d, Mapping):
        raise ctx.err(name, "expected a table object {title, header, rows}")
    header = _req(d, "header", ctx, name + ".")
    rows = _req(d, "rows", ctx, name + ".")
    if (
        not isinstance(header, list)
        or not isinstance(rows, list)
        or not all(isinstance(r, list) for r in rows)
    ):
        raise ctx.err(name, "header must be a list and rows a list of lists")
    return Table(
        title=str(d.get("title", "")),
        header=tuple(str(h) for h in header),
        rows=tuple(tuple("" if c is None else str(c) for c in r) for r in rows),
    )


def _parse_input(d: Any, ctx: _Ctx) -> Input:
    if not isinstance(d, Mapping):
        raise ctx.err("input", "expected an object with at least 'question'")
    q = _str(_req(d, "question", ctx, "input."), "input.question", ctx)
    ref = _str(d.get("reference"), "input.reference", ctx, optional=True)
    tables = d.get("tables")
    if tables is not None:
        if not isinstance(tables, list):
            raise ctx.err("input.tables", "expected a list of tables")
        tables = tuple(_parse_table(t, f"input.tables[{i}]", ctx) for i, t in enumerate(tables))
    docs = d.get("documents")
    if docs is not None:
        if not isinstance(docs, list) or not all(isinstance(x, str) for x in docs):
            raise ctx.err("input.documents", "expected a list of strings")
        docs = tuple(docs)
    context = _str(d.get("context"), "input.context", ctx, optional=True)
    return Input(question=q, reference=ref, tables=tables, documents=docs, context=context)


def _parse_labels(
    d: Any, name: str, ctx: _Ctx, scale: Scale | None, dims: Sequence[str] | None
) -> dict[str, tuple[Label, ...]]:
    if not isinstance(d, Mapping) or not d:
        raise ctx.err(name, "expected a non-empty object {dimension: [one value per annotator]}")
    out: dict[str, tuple[Label, ...]] = {}
    for dim, vals in d.items():
        fname = f"{name}.{dim}"
        if dims is not None and dim not in dims:
            raise ctx.err(fname, f"unknown dimension (the card declares {', '.join(dims)})")
        if not isinstance(vals, list) or not vals:
            raise ctx.err(fname, "expected a non-empty list with one value per annotator")
        row: list[Label] = []
        for i, v in enumerate(vals):
            if v is None:
                row.append(None)
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ctx.err(f"{fname}[{i}]", f"expected a finite number or null, got {v!r}")
            if scale is not None and not scale.contains(float(v)):
                raise ctx.err(
                    f"{fname}[{i}]", f"label {v!r} is outside the declared scale {scale.describe()}"
                )
            row.append(float(v))
        out[str(dim)] = tuple(row)
    return out


def record_from_dict(
    d: Any,
    *,
    kind: Kind | None = None,
    scale: Scale | None = None,
    dimensions: Sequence[str] | None = None,
    path: str | Path | None = None,
    line: int | None = None,
) -> Record:
    """Validate one dict and build a record. ``kind=None`` infers it from the fields."""
    ctx = _Ctx(path, line)
    if not isinstance(d, Mapping):
        raise ctx.err("<record>", f"expected a JSON object, got {type(d).__name__}")
    if kind is None:
        kind = "pairwise" if "labels" in d or "a" in d else "likert"
    rid = _req(d, "id", ctx)
    if not isinstance(rid, (str, int)) or isinstance(rid, bool) or str(rid) == "":
        raise ctx.err("id", "expected a non-empty string")
    inp = _parse_input(_req(d, "input", ctx), ctx)
    meta = d.get("meta") or {}
    if not isinstance(meta, Mapping):
        raise ctx.err("meta", "expected an object")
    if kind == "pairwise":
        sides = []
        for side in ("a", "b"):
            s = _req(d, side, ctx)
            system = _str(_req(s, "system", ctx, side + "."), side + ".system", ctx)
            resp = _str(
                _req(s, "response", ctx, side + "."), side + ".response", ctx, optional=True
            )
            sides.append(Response(system=system or "", response=resp))
        labels = _parse_labels(_req(d, "labels", ctx), "labels", ctx, scale, dimensions)
        return PairwiseRecord(
            id=str(rid), input=inp, a=sides[0], b=sides[1], labels=labels, meta=dict(meta)
        )
    system = _str(_req(d, "system", ctx), "system", ctx)
    resp = _str(_req(d, "response", ctx), "response", ctx, optional=True)
    scores = _parse_labels(_req(d, "scores", ctx), "scores", ctx, scale, dimensions)
    return LikertRecord(
        id=str(rid), input=inp, system=system or "", response=resp, scores=scores, meta=dict(meta)
    )


# ---------------------------------------------------------------------------------------------
# JSONL


def write_jsonl(
    path: str | Path, records: Iterable[Record], card: DatasetCard | None = None
) -> int:
    """Write records (and the card as a header line) atomically. Returns the record count."""
    n = 0
    with atomic_write(path) as fh:
        if card is not None:
            fh.write(json.dumps({"card": card.to_dict()}, ensure_ascii=False) + "\n")
        for r in records:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n


def iter_jsonl_objects(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed_object)`` for each non-blank line; malformed JSON names the line."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    with open(path, encoding="utf-8") as fh:
        for i, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield i, json.loads(raw)
            except json.JSONDecodeError as e:
                raise InputError(
                    f"malformed JSON: {e.msg} (column {e.colno})", path=path, line=i, field="<json>"
                ) from None


def read_jsonl(
    path: str | Path, card: DatasetCard | None = None
) -> tuple[DatasetCard | None, list[Record]]:
    """Read and validate a canonical JSONL file.

    Checks: JSON syntax, required fields and types, labels within the card's scale and
    dimensions (the card from the header line, or ``card``), duplicate ids, a non-empty file.
    """
    path = Path(path)
    records: list[Record] = []
    seen: dict[tuple[str, ...], int] = {}
    for line, obj in iter_jsonl_objects(path):
        if isinstance(obj, Mapping) and "card" in obj and not records and line == _first_line(path):
            try:
                card = DatasetCard.from_dict(obj["card"])
            except (KeyError, TypeError, ValueError) as e:
                raise InputError(
                    f"invalid dataset card: {e}", path=path, line=line, field="card"
                ) from None
            continue
        kind = card.kind if card is not None and card.kind in ("pairwise", "likert") else None
        rec = record_from_dict(
            obj,
            kind=kind,  # type: ignore[arg-type]
            scale=card.scale if card else None,
            dimensions=card.dimensions if card else None,
            path=path,
            line=line,
        )
        key = (rec.id,) if isinstance(rec, PairwiseRecord) else (rec.id, rec.system)
        if key in seen:
            what = f"id {rec.id!r}" if len(key) == 1 else f"(id, system) {key!r}"
            raise InputError(
                f"duplicate {what} (first seen on line {seen[key]})",
                path=path,
                line=line,
                field="id",
            )
        seen[key] = line
        records.append(rec)
    if not records:
        raise InputError("empty file: no records", path=path)
    kinds = {type(r) for r in records}
    if len(kinds) > 1:
        raise InputError("mixes pairwise and Likert records", path=path)
    return card, records


def _first_line(path: Path) -> int:
    with open(path, encoding="utf-8") as fh:
        for i, raw in enumerate(fh, start=1):
            if raw.strip():
                return i
    return 0


# ---------------------------------------------------------------------------------------------
# Likert -> pairwise


def response_key(item_id: str, system_or_side: str) -> str:
    """The key of one response, the only place it is spelled.

    ``"{item id}::{side}"`` (side ``a``/``b``) for pairwise records, ``"{item id}::{system}"`` for
    Likert records.

    >>> response_key("q1", "a")
    'q1::a'
    """
    return f"{item_id}::{system_or_side}"


def split_response_key(key: str) -> tuple[str, str]:
    """The inverse of :func:`response_key`: ``(item id, side or system)``.

    >>> split_response_key("q::1::gpt-4")
    ('q::1', 'gpt-4')
    """
    item, _, rest = key.rpartition("::")
    return item, rest


def mean_label(values: Sequence[Label]) -> float | None:
    """Mean of the non-missing annotator values; None if all are missing."""
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def likert_to_pairwise(records: Iterable[LikertRecord]) -> list[PairwiseRecord]:
    """Every pair of systems that answered the same input becomes one pairwise record.

    Deterministic: inputs in first-seen order, systems ordered by name (``a`` < ``b``), the label
    per dimension is ``mean(b) - mean(a)`` of the annotators' scores (a single aggregated value;
    its sign is the preference). Pair id: ``"{item id}::{system a}|{system b}"``.
    Dimensions where either side has no score are left out of that pair's labels; a pair with no
    labelled dimension at all is dropped.
    """
    groups: dict[str, list[LikertRecord]] = {}
    for r in records:
        groups.setdefault(r.id, []).append(r)
    out: list[PairwiseRecord] = []
    for item_id, recs in groups.items():
        recs = sorted(recs, key=lambda r: r.system)
        for i in range(len(recs)):
            for j in range(i + 1, len(recs)):
                ra, rb = recs[i], recs[j]
                labels: dict[str, tuple[Label, ...]] = {}
                for dim in ra.scores:
                    if dim not in rb.scores:
                        continue
                    ma, mb = mean_label(ra.scores[dim]), mean_label(rb.scores[dim])
                    if ma is None or mb is None:
                        continue
                    labels[dim] = (mb - ma,)
                if not labels:
                    continue
                out.append(
                    PairwiseRecord(
                        id=f"{item_id}::{ra.system}|{rb.system}",
                        input=ra.input,
                        a=Response(ra.system, ra.response),
                        b=Response(rb.system, rb.response),
                        labels=labels,
                        meta={"item_id": item_id, "from": "likert"},
                    )
                )
    return out


def pairwise_scale_from_likert(scale: Scale) -> Scale:
    """The label scale of the pairwise expansion of a Likert scale [lo, hi]: [lo-hi, hi-lo]."""
    w = scale.max - scale.min
    return Scale(-w, w)
