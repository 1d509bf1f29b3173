"""Checking canonical data against its JSON Schemas and its card, collecting every error.

The schemas in ``metajudge/data/schemas/`` (JSON Schema draft 2020-12) are the documented truth
of the formats: ``card.schema.json`` for the dataset card and ``record.<kind>.schema.json`` for
each record kind (pairwise, likert, categorical, binary). What a schema cannot say because it
depends on the card — dimensions, the scale, the number of annotators — is checked here too.
Every problem is an :class:`~metajudge.errors.InputError` naming file, line and field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from metajudge.data.formats import (
    KINDS,
    WORDS,
    DatasetCard,
    Input,
    Kind,
    Label,
    LikertRecord,
    PairwiseRecord,
    Record,
    Response,
    Scale,
    Table,
)
from metajudge.errors import InputError

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
RECORD_FIELDS = {
    "pairwise": "id, input, a, b, labels",
    "response": "id, input, system, response, scores",
}


@lru_cache(maxsize=16)
def schema(name: str) -> dict[str, Any]:
    """A shipped schema by name: ``card``, ``input``, ``record.pairwise``, ``record.likert``, ..."""
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=16)
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    resources = [
        (s["$id"], Resource.from_contents(s))
        for s in (schema(p.name.removesuffix(".schema.json")) for p in SCHEMA_DIR.glob("*.json"))
    ]
    return Draft202012Validator(schema(name), registry=Registry().with_resources(resources))


_TYPE_WORDS = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "object": "an object",
    "array": "a list",
    "boolean": "true or false",
    "null": "null",
}


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    return {str: "string", int: "integer", float: "number", list: "list", dict: "object"}.get(
        type(v), type(v).__name__
    )


def _field_name(prefix: str, parts: Sequence[Any]) -> str:
    out = prefix
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<record>"


def _message(e: Any, where: str) -> tuple[str, str]:
    """A plain-words ``(field, message)`` for one jsonschema error at ``where``."""
    v, inst = e.validator, e.instance
    if v == "type":
        want = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        msg = f"expected {' or '.join(_TYPE_WORDS.get(t, t) for t in want)}, got {_json_type(inst)}"
        if "scale.values" in where and isinstance(inst, str):
            msg += ' (string labels need kind "categorical" and scale {"labels": [...]})'
        return where, msg
    if v == "enum" and where.endswith("kind"):
        return where, f"unknown kind {inst!r} (allowed: {', '.join(KINDS)})"
    if v == "minItems" and where.endswith("dimensions"):
        return where, 'the card declares no dimensions: list at least one name in "dimensions"'
    if v == "minItems" and where.endswith("labels") and "scale" in where:
        return where, "a categorical scale needs at least two labels"
    if v == "minItems":
        return where, "expected a non-empty list with one value per annotator (null = no label)"
    if v == "minProperties":
        return where, "expected a non-empty object {dimension: [one value per annotator]}"
    if v == "minLength":
        return where, "expected a non-empty string"
    return where, e.message


def schema_errors(
    obj: Any, name: str, *, path: str | Path | None, line: int | None, prefix: str = ""
) -> list[InputError]:
    """Every violation of schema ``name`` by ``obj``, in document order."""
    return _input_errors(_validator(name).iter_errors(obj), name, path, line, prefix)


def structure_errors(
    d: Mapping[str, Any], kind: str, *, path: str | Path | None, line: int | None
) -> list[InputError]:
    """What :func:`schema_errors` says of a record dict under ``record.<kind>``, found in plain
    Python (:mod:`metajudge.data.structure`) and worded the same way: the loader's check."""
    from metajudge.data.structure import violations

    found = violations(d, kind)
    return _input_errors(found, f"record.{kind}", path, line, "") if found else []


def _input_errors(
    violations: Any, name: str, path: str | Path | None, line: int | None, prefix: str
) -> list[InputError]:
    """Schema violations (``jsonschema`` errors or :class:`~metajudge.data.structure.Violation`)
    as InputErrors naming file, line and field, in document order."""
    errs = sorted(violations, key=lambda e: [str(p) for p in e.path])
    out: list[InputError] = []
    card_missing: list[str] = []
    missing_named: set[str] = set()  # jsonschema reports `required` once per missing field
    for e in errs:
        where = _field_name(prefix, list(e.absolute_path))
        if e.validator == "required":
            missing = [k for k in e.validator_value if k not in e.instance]
            if name == "card" and not e.absolute_path:
                card_missing += [k for k in missing if k not in card_missing]
                continue
            for k in missing:
                f = _field_name(prefix, [*e.absolute_path, k])
                if f not in missing_named:
                    missing_named.add(f)
                    out.append(InputError("missing required field", path=path, line=line, field=f))
            continue
        f, msg = _message(e, where)
        out.append(InputError(msg, path=path, line=line, field=f))
    if card_missing:
        msg = f"missing card field(s): {', '.join(card_missing)}"
        out.insert(0, InputError(msg, path=path, line=line, field=prefix or "card"))
    return out


def card_errors(
    obj: Any, *, path: str | Path | None = None, line: int | None = None
) -> list[InputError]:
    """Problems with a card dict (``card.schema.json`` and what the schema cannot say)."""
    prefix = "card" if line is not None else ""
    errs = schema_errors(obj, "card", path=path, line=line, prefix=prefix)
    if not errs:
        try:
            Scale.from_dict(obj["scale"])
        except (TypeError, ValueError) as e:
            errs.append(
                InputError(str(e), path=path, line=line, field=f"{prefix}.scale".lstrip("."))
            )
    if not errs:
        from metajudge.data.names import check_card_sources

        try:  # name, repository, commit and file paths stay inside their folders
            check_card_sources(dict(obj))
        except InputError as e:
            field = f"{prefix}.{e.field}".lstrip(".") if e.field else prefix or None
            errs.append(InputError(e.message, path=path, line=line, field=field))
    return errs


def card_from_obj(
    obj: Any, *, path: str | Path | None = None, line: int | None = None
) -> DatasetCard:
    """A validated card; the first problem raises (with the number of others)."""
    raise_first(card_errors(obj, path=path, line=line))
    return DatasetCard.from_dict(obj)


def raise_first(errors: Sequence[InputError]) -> None:
    if not errors:
        return
    e = errors[0]
    if len(errors) > 1:
        more = f" (and {len(errors) - 1} more; `metajudge data validate FILE` lists them)"
        raise InputError(e.message + more, path=e.path, line=e.line, field=e.field)
    raise e


# ---------------------------------------------------------------------------------------------
# Records


@dataclass(frozen=True)
class Rules:
    """What a record is checked against: the card's kind, scale, dimensions and annotators."""

    kind: Kind | None = None
    scale: Scale | None = None
    dimensions: tuple[str, ...] | None = None
    annotators: int | None = None
    dimension_scales: Mapping[str, Scale] = field(default_factory=dict)

    @classmethod
    def of(cls, card: DatasetCard | None) -> Rules:
        if card is None:
            return cls()
        kind = card.kind if card.kind != "benchmark" else None
        return cls(kind, card.scale, card.dimensions, card.annotators, card.dimension_scales)

    def scale_of(self, dimension: str) -> Scale | None:
        return self.dimension_scales.get(dimension, self.scale)


def shape_of(d: Mapping[str, Any]) -> str:
    """``pairwise`` (a, b, labels) or ``response`` (system, scores) from a record's fields."""
    return "pairwise" if any(k in d for k in ("labels", "a", "b")) else "response"


def infer_kind(d: Mapping[str, Any]) -> Kind:
    if shape_of(d) == "pairwise":
        return "pairwise"
    scores = d.get("scores")
    vals = (
        [v for vs in scores.values() if isinstance(vs, list) for v in vs]
        if isinstance(scores, Mapping)
        else []
    )
    return "categorical" if any(isinstance(v, str) for v in vals) else "likert"


def record_errors(
    d: Any,
    rules: Rules,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    schema: bool = True,
) -> list[InputError]:
    """Every problem with one record dict under ``rules``. ``schema``: check the structure with
    the JSON Schema validator (``data validate``), else in plain Python (:func:`structure_errors`,
    the loader's pass: the same errors in the same words)."""
    if not isinstance(d, Mapping):
        msg = f"expected a JSON object, got {_json_type(d)}"
        return [InputError(msg, path=path, line=line, field="<record>")]
    kind = rules.kind or infer_kind(d)
    want = "pairwise" if kind == "pairwise" else "response"
    if rules.kind is not None and shape_of(d) != want:
        found = "pairwise" if shape_of(d) == "pairwise" else "per-response (likert)"
        msg = (
            f"record kind {found} does not match the card kind {kind}: "
            f"a {kind} card needs records with {RECORD_FIELDS[want]}"
        )
        return [InputError(msg, path=path, line=line, field="<record>")]
    if schema:
        errs = schema_errors(d, f"record.{kind}", path=path, line=line)
    else:
        errs = structure_errors(d, kind, path=path, line=line)
    if errs:
        return errs
    name = "labels" if kind == "pairwise" else "scores"
    for dim, vals in (d.get(name) or {}).items():
        errs += _label_errors(f"{name}.{dim}", dim, vals, rules, path, line)
    return errs


def _label_errors(
    fname: str, dim: str, vals: list[Any], rules: Rules, path: Any, line: int | None
) -> list[InputError]:
    def err(f: str, msg: str) -> InputError:
        return InputError(msg, path=path, line=line, field=f)

    if rules.dimensions is not None and dim not in rules.dimensions:
        return [err(fname, f"unknown dimension (the card declares {', '.join(rules.dimensions)})")]
    out: list[InputError] = []
    for i, v in enumerate(vals):
        if v is None:
            continue
        if isinstance(v, float) and not math.isfinite(v):
            out.append(err(f"{fname}[{i}]", f"expected a finite number or null, got {v!r}"))
        elif (sc := rules.scale_of(dim)) is not None and not sc.contains(v):
            out.append(err(f"{fname}[{i}]", _outside(v, sc)))
    return out


def record_warnings(
    d: Mapping[str, Any], rules: Rules, *, path: str | Path | None = None, line: int | None = None
) -> list[InputError]:
    """What is legal but probably a mistake in a valid record: all-null ratings of a dimension,
    and a number of annotator values other than the card's ``annotators`` (or 1, an aggregate)."""
    out: list[InputError] = []
    name = "labels" if shape_of(d) == "pairwise" else "scores"
    k = rules.annotators
    for dim, vals in (d.get(name) or {}).items():
        fname = f"{name}.{dim}"
        if all(v is None for v in vals):
            msg = "all ratings are null (no annotator labelled this dimension)"
            out.append(InputError(msg, path=path, line=line, field=fname))
        if k and len(vals) not in (1, k):
            msg = (
                f"{len(vals)} annotator values where the card says annotators: {k} "
                "(use null for an annotator who did not rate)"
            )
            out.append(InputError(msg, path=path, line=line, field=fname))
    return out


def _outside(v: float | str, scale: Scale) -> str:
    if scale.labels is not None:
        return f"label {v!r} is not one of the card's labels {scale.describe()}"
    if scale.values is not None and scale.in_range(float(v)):
        return (
            f"label {v!r} is outside the allowed values {scale.describe()} (it is inside the "
            f"range {scale.describe_range()}: store each annotator's own label, not a mean)"
        )
    return f"label {v!r} is outside the declared scale {scale.describe_range()}"


def _build(d: Mapping[str, Any], kind: Kind) -> Record:
    """A record from a dict that passed :func:`record_errors`."""
    i = d["input"]
    tables = i.get("tables")
    inp = Input(
        question=i["question"],
        reference=i.get("reference"),
        tables=None
        if tables is None
        else tuple(
            Table(
                title=str(t.get("title", "")),
                header=tuple(str(h) for h in t["header"]),
                rows=tuple(tuple("" if c is None else str(c) for c in r) for r in t["rows"]),
            )
            for t in tables
        ),
        documents=None if i.get("documents") is None else tuple(i["documents"]),
        context=i.get("context"),
    )
    meta = dict(d.get("meta") or {})

    def lab(m: Mapping[str, list[Any]]) -> dict[str, tuple[Label, ...]]:
        num = kind in ("pairwise", "likert")
        return {
            str(k): tuple(float(v) if num and v is not None else v for v in vs)
            for k, vs in m.items()
        }

    if kind == "pairwise":
        a, b = (Response(d[s]["system"], d[s]["response"]) for s in ("a", "b"))
        return PairwiseRecord(
            id=str(d["id"]), input=inp, a=a, b=b, labels=lab(d["labels"]), meta=meta
        )
    return LikertRecord(
        id=str(d["id"]),
        input=inp,
        system=d["system"],
        response=d["response"],
        scores=lab(d.get("scores") or {}),
        meta=meta,
    )


def record_from_dict(
    d: Any,
    *,
    kind: Kind | None = None,
    scale: Scale | None = None,
    dimensions: Sequence[str] | None = None,
    annotators: int | None = None,
    path: str | Path | None = None,
    line: int | None = None,
) -> Record:
    """Validate one dict and build a record. ``kind=None`` infers it from the fields."""
    dims = tuple(dimensions) if dimensions is not None else None
    rules = Rules(kind if kind != "benchmark" else None, scale, dims, annotators)
    raise_first(record_errors(d, rules, path=path, line=line, schema=False))
    return _build(d, rules.kind or infer_kind(d))


# ---------------------------------------------------------------------------------------------
# Files


#: lines between two calls of :func:`check_file`'s ``progress``
PROGRESS_EVERY = 4096


@dataclass
class Report:
    """The outcome of checking one file: its card, the good records and every error found."""

    path: str
    card: DatasetCard | None
    records: list[Record] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    n_errors: int = 0  # all errors, including those beyond max_errors
    warnings: list[InputError] = field(default_factory=list)  # legal, probably a mistake

    def add(self, errs: Sequence[InputError], max_errors: int) -> None:
        self.n_errors += len(errs)
        self.errors.extend(errs[: max(0, max_errors - len(self.errors))])


def dataset_objects(path: str | Path, texts: bool = True) -> Iterator[tuple[int, Any]]:
    """``(line or row, object)`` of each record of a dataset file, the card first where the file
    holds one: a Chatbot Arena battle file's battles (:mod:`metajudge.data.arena`), a columnar
    table's rows (:mod:`metajudge.data.columnar`), else a JSONL file's lines. ``texts`` False
    (a text-free load): a columnar table's pairwise texts are not read, each row's responses'
    word counts under the key :data:`WORDS` instead."""
    from metajudge.data import arena, columnar
    from metajudge.data.formats import iter_jsonl_objects

    if arena.is_arena(path):
        return arena.arena_objects(path, texts)
    if columnar.is_columnar(path):
        return columnar.columnar_objects(path, texts)
    return iter_jsonl_objects(path)


def check_file(
    path: str | Path,
    card: DatasetCard | None = None,
    *,
    max_errors: int = 20,
    schema: bool = True,
    progress: Any = None,
    texts: bool = True,
) -> Report:
    """Check a canonical JSONL file (header card or ``card``), a columnar table or an Arena
    battle file (:func:`~metajudge.data.columnar.columnar_objects`); collect up to ``max_errors``
    errors.

    ``schema``: records through the JSON Schema validator (``data validate``), else through the
    loader's own pass: a record of the common shape checked and built in one go
    (:class:`~metajudge.data.fast_records.FastRecords`), any other through the plain-Python
    check (:func:`structure_errors`; the same errors as the schema's). ``progress``: an
    optional callback, called with the number of lines read so far (every
    :data:`PROGRESS_EVERY` lines and at the end). ``texts`` False: a text-free load, each
    record checked whole, then kept without its texts
    (:meth:`~metajudge.data.fast_records.FastRecords.lean`)."""
    from metajudge.data.fast_records import fast_builder, shape_key

    rep = Report(str(path), card)
    seen: dict[tuple[str, ...], int] = {}
    kinds: set[bool] = set()
    first = True
    line = 0
    rules = Rules.of(card)
    fast, lean = fast_builder(rules, schema, texts)
    try:
        for line, obj in dataset_objects(path, texts):
            is_header = first and isinstance(obj, Mapping) and "card" in obj
            first = False
            if is_header:
                errs = card_errors(obj["card"], path=path, line=line)
                rep.add(errs, max_errors)
                rep.card = None if errs else DatasetCard.from_dict(obj["card"])
                rules = Rules.of(rep.card)
                fast, lean = fast_builder(rules, schema, texts)
                continue
            if progress is not None and line % PROGRESS_EVERY == 0:
                progress(line)
            words = obj.pop(WORDS, None) if type(obj) is dict else None
            rec = fast(obj, words)  # the common shape, checked and built (lean) in one go
            if rec is None:
                rec = _checked(obj, rules, rep, (path, line), max_errors, schema)
                if rec is None:
                    continue
                if not texts:
                    rec = lean.lean(rec, words)
            kinds.add(isinstance(rec, PairwiseRecord))
            key = shape_key(rec)
            if key in seen:
                what = f"id {rec.id!r}" if len(key) == 1 else f"(id, system) {key!r}"
                msg = f"duplicate {what} (first seen on line {seen[key]})"
                rep.add([InputError(msg, path=path, line=line, field="id")], max_errors)
                continue
            seen[key] = line
            rep.records.append(rec)
    except InputError as e:  # unreadable line: nothing after it can be trusted
        rep.add([e], max_errors)
        return rep
    if progress is not None:
        progress(line)
    if not rep.records and not rep.n_errors:
        rep.add([InputError("empty file: no records", path=path)], max_errors)
    if len(kinds) > 1:
        rep.add([InputError("mixes pairwise and Likert records", path=path)], max_errors)
    return rep


def _checked(
    obj: Any, rules: Rules, rep: Report, at: tuple[str | Path, int], max_errors: int, schema: bool
) -> Record | None:
    """The full path of :func:`check_file` for one record: every error (added to ``rep``, then
    ``None``), else the record and its warnings."""
    path, line = at
    errs = record_errors(obj, rules, path=path, line=line, schema=schema)
    if errs:
        rep.add(errs, max_errors)
        return None
    rec = _build(obj, rules.kind or infer_kind(obj))
    if len(rep.warnings) < max_errors:
        rep.warnings += record_warnings(obj, rules, path=path, line=line)
    return rec


def read_jsonl(
    path: str | Path, card: DatasetCard | None = None, *, progress: Any = None, texts: bool = True
) -> tuple[DatasetCard | None, list[Record]]:
    """Read and validate a canonical JSONL file; the first error raises (naming how many more).

    Checks: JSON Lines syntax, the card (header line or ``card``), every record against its
    schema (in the loader's own pass, :func:`structure_errors`) and the card (dimensions, scale,
    annotators), duplicate ids, a non-empty file. ``progress``, ``texts``: see :func:`check_file`.
    """
    from metajudge.bulk import paused_gc

    with paused_gc():  # one record's objects after another, no cycles
        rep = check_file(
            path, card, max_errors=1_000_000, schema=False, progress=progress, texts=texts
        )
    raise_first(rep.errors)
    return rep.card, rep.records
