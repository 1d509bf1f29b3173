"""The loader's plain-Python record check (data/structure.py) says what the JSON Schema says:
the same errors, fields and words for every field of every record kind, mutated to every JSON
type or removed; and a file the schema refuses is refused by the loader with file, line, field."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import metajudge as mj
from metajudge.data.validation import check_file, schema_errors, structure_errors
from metajudge.errors import InputError

FULL_INPUT = {
    "question": "q",
    "reference": "r",
    "context": None,
    "documents": ["d1", "d2"],
    "tables": [{"title": "t", "header": ["h"], "rows": [["1"], ["2"]]}],
}
PAIR = {
    "id": "p1",
    "input": FULL_INPUT,
    "meta": {"subset": "s"},
    "a": {"system": "x", "response": "r"},
    "b": {"system": "y", "response": None},
    "labels": {"overall": [1, None, -0.5], "other": [2]},
}
RESP = {
    "id": "i1",
    "input": FULL_INPUT,
    "meta": {},
    "system": "s1",
    "response": "r",
    "scores": {"coherence": [1, 2.5, None]},
}
CAT = {**RESP, "scores": {"safe": ["Yes", None, "No"]}}
# one value of each JSON type (and the empty ones the schema's minimums refuse)
VALUES = [None, True, 0, 1.5, "", "x", [], [1], ["s", None], {}, {"k": 1}, {"k": [None]}]
RECORDS = [("pairwise", PAIR), ("likert", RESP), ("categorical", CAT), ("binary", CAT)]


def _paths(o: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if path:
        yield path
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _paths(v, (*path, k))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from _paths(v, (*path, i))


def _mutants(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every field replaced by every value of VALUES, and every object key removed."""
    for path in _paths(rec):
        for v in [*VALUES, "__drop__"]:
            m = copy.deepcopy(rec)
            parent = m
            for p in path[:-1]:
                parent = parent[p]
            if v == "__drop__":
                if not isinstance(parent, dict):
                    continue
                del parent[path[-1]]
            else:
                parent[path[-1]] = v
            yield m


def _words(errs: list[InputError]) -> list[str]:
    return [str(e) for e in errs]


@pytest.mark.parametrize(("kind", "rec"), RECORDS, ids=[k for k, _ in RECORDS])
def test_plain_check_equals_schema_on_every_mutation(kind: str, rec: dict[str, Any]) -> None:
    assert schema_errors(rec, f"record.{kind}", path="f", line=2) == []
    assert structure_errors(rec, kind, path="f", line=2) == []
    n = refused = 0
    for m in _mutants(rec):
        want = _words(schema_errors(m, f"record.{kind}", path="f", line=2))
        assert _words(structure_errors(m, kind, path="f", line=2)) == want, m
        n += 1
        refused += bool(want)
    assert n > 300 and refused > n // 2  # the mutations exercise the refusals


CARD = {
    "name": "prefs",
    "kind": "pairwise",
    "dimensions": ["overall"],
    "scale": {"min": -2, "max": 2, "values": [-2, -1, 0, 1, 2]},
    "annotators": 2,
}
GOOD = {
    "id": "p0",
    "input": {"question": "q"},
    "a": {"system": "x", "response": "r"},
    "b": {"system": "y", "response": "s"},
    "labels": {"overall": [1, 0]},
}
NEXT = {**GOOD, "id": "p1"}
BAD = [  # (record on line 3, field, message): one of each class of refusal
    ({k: v for k, v in NEXT.items() if k != "b"}, "b", "missing required field"),
    ({**NEXT, "id": 7}, "id", "expected a string, got integer"),
    (
        {**NEXT, "labels": {"overall": [1, "2"]}},
        "labels.overall[1]",
        "expected a number or null, got string",
    ),
    (
        {**NEXT, "labels": {"overall": [1, 3]}},
        "labels.overall[1]",
        "label 3 is outside the declared scale [-2, 2]",
    ),
    (
        {**NEXT, "labels": {"overal": [1, 0]}},
        "labels.overal",
        "unknown dimension (the card declares overall)",
    ),
    (
        {**NEXT, "input": {"question": "q", "documents": [1]}},
        "input.documents[0]",
        "expected a string, got integer",
    ),
    ({**NEXT, "id": "p0"}, "id", "duplicate id 'p0' (first seen on line 2)"),
]


@pytest.mark.parametrize(("bad", "field", "msg"), BAD, ids=[b[1] for b in BAD])
def test_loader_refuses_what_the_schema_refuses(
    tmp_path: Path, bad: dict[str, Any], field: str, msg: str
) -> None:
    p = tmp_path / "prefs.jsonl"
    lines = [{"card": CARD}, GOOD, bad]
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    want = f"{p}:3: field {field}: {msg}"
    assert [str(e) for e in check_file(p).errors] == [want]  # data validate (the schema)
    with pytest.raises(InputError) as e:
        mj.load_file(p)  # the loader (plain-Python check)
    assert (str(e.value), e.value.line, e.value.field) == (want, 3, field)


def test_each_missing_field_named_once(tmp_path: Path) -> None:
    p = tmp_path / "two.jsonl"
    p.write_text(json.dumps({"id": "p1", "input": {"question": "q"}, "labels": {"o": [1]}}) + "\n")
    want = [f"{p}:1: field {f}: missing required field" for f in ("a", "b")]
    assert [str(e) for e in check_file(p).errors] == want  # jsonschema: one error per field
    assert check_file(p).n_errors == 2
