"""A canonical record's structure checked in plain Python, in the loader's own pass.

Loading a canonical JSONL file checks every record against what its JSON Schema
(``schemas/record.<kind>.schema.json`` with ``input.schema.json``) says — required fields,
types, non-empty ids, label lists and label objects — without running a JSON Schema validator
per record: :func:`violations` returns the same violations, one per failing keyword, as
``jsonschema`` would (keyword, its schema value, the offending instance, the path), so that
:func:`metajudge.data.validation.structure_errors` words them exactly like
:func:`~metajudge.data.validation.schema_errors`. ``metajudge data validate`` keeps the
schema validator itself; ``tests/data/test_record_structure.py`` checks that both agree on
every field of every record kind, mutated to every JSON type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

PAIRWISE_REQUIRED = ["id", "input", "a", "b", "labels"]
RESPONSE_REQUIRED = ["id", "input", "system", "response"]  # scores absent = unlabelled
SIDE_REQUIRED = ["system", "response"]
TABLE_REQUIRED = ["header", "rows"]
STR_OR_NULL = ["string", "null"]
NUM_OR_NULL = ["number", "null"]


class Violation(NamedTuple):
    """One failing schema keyword, shaped like a ``jsonschema`` error where it is read."""

    validator: str
    validator_value: Any
    instance: Any
    path: tuple[Any, ...]

    @property
    def absolute_path(self) -> tuple[Any, ...]:
        return self.path


def _is(v: Any, t: str) -> bool:
    """JSON Schema's ``type`` as ``jsonschema`` tests it on parsed JSON."""
    if t == "string":
        return isinstance(v, str)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    return v is None  # "null"


def _ok(v: Any, want: str | list[str]) -> bool:
    return _is(v, want) if isinstance(want, str) else any(_is(v, t) for t in want)


def _num_or_null(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def _str_or_null(v: Any) -> bool:
    return v is None or isinstance(v, str)


class _Check:
    """The violations found so far."""

    def __init__(self) -> None:
        self.out: list[Violation] = []

    def type(self, v: Any, want: str | list[str], path: tuple[Any, ...]) -> bool:
        """Is ``v`` of type ``want`` (a name or a list of names)? Records a violation if not."""
        if _ok(v, want):
            return True
        self.out.append(Violation("type", want, v, path))
        return False

    def required(self, obj: Mapping[str, Any], names: list[str], path: tuple[Any, ...]) -> None:
        if any(k not in obj for k in names):
            self.out.append(Violation("required", names, obj, path))

    def opt(self, obj: Mapping[str, Any], key: str, want: str | list[str], path: tuple) -> bool:  # type: ignore[type-arg]
        """Type of an optional property: True when present and of type ``want``."""
        if key not in obj:
            return False
        if _ok(obj[key], want):
            return True
        self.out.append(Violation("type", want, obj[key], (*path, key)))
        return False


def violations(d: Mapping[str, Any], kind: str) -> list[Violation]:
    """What the schema ``record.<kind>`` refuses in the record dict ``d``, unordered."""
    c = _Check()
    pairwise = kind == "pairwise"
    c.required(d, PAIRWISE_REQUIRED if pairwise else RESPONSE_REQUIRED, ())
    if c.opt(d, "id", "string", ()) and not d["id"]:
        c.out.append(Violation("minLength", 1, d["id"], ("id",)))
    if c.opt(d, "input", "object", ()):
        _input(c, d["input"])
    c.opt(d, "meta", "object", ())
    if pairwise:
        for side in ("a", "b"):
            if c.opt(d, side, "object", ()):
                c.required(d[side], SIDE_REQUIRED, (side,))
                c.opt(d[side], "system", "string", (side,))
                c.opt(d[side], "response", STR_OR_NULL, (side,))
    else:
        c.opt(d, "system", "string", ())
        c.opt(d, "response", STR_OR_NULL, ())
    name = "labels" if pairwise else "scores"
    if c.opt(d, name, "object", ()):
        _labels(c, d[name], name, numeric=kind in ("pairwise", "likert"))
    return c.out


def _input(c: _Check, i: Mapping[str, Any]) -> None:
    p = ("input",)
    c.required(i, ["question"], p)
    c.opt(i, "question", "string", p)
    c.opt(i, "reference", STR_OR_NULL, p)
    c.opt(i, "context", STR_OR_NULL, p)
    if c.opt(i, "documents", ["array", "null"], p) and i["documents"] is not None:
        for k, doc in enumerate(i["documents"]):
            c.type(doc, "string", (*p, "documents", k))
    if not c.opt(i, "tables", ["array", "null"], p) or i["tables"] is None:
        return
    for k, t in enumerate(i["tables"]):
        tp = (*p, "tables", k)
        if not c.type(t, "object", tp):
            continue
        c.required(t, TABLE_REQUIRED, tp)
        c.opt(t, "title", "string", tp)
        c.opt(t, "header", "array", tp)
        if c.opt(t, "rows", "array", tp):
            for j, row in enumerate(t["rows"]):
                c.type(row, "array", (*tp, "rows", j))


def _labels(c: _Check, m: Mapping[str, Any], name: str, *, numeric: bool) -> None:
    item, ok = (NUM_OR_NULL, _num_or_null) if numeric else (STR_OR_NULL, _str_or_null)
    if not m:
        if name == "labels":  # a per-response record may be unlabelled (partial labels)
            c.out.append(Violation("minProperties", 1, m, (name,)))
        return
    for dim, vals in m.items():
        if not c.type(vals, "array", (name, dim)):
            continue
        if not vals:
            c.out.append(Violation("minItems", 1, vals, (name, dim)))
        for k, v in enumerate(vals):
            if not ok(v):
                c.out.append(Violation("type", item, v, (name, dim, k)))
