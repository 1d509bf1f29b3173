"""The loader's fast pass (data/fast_records.py) builds only what the full check accepts, and
builds it equal to the full path's record; a bad record deep in a large file is refused with
the same file, line, field and words as ``data validate`` (the JSON Schema) gives."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import metajudge as mj
from metajudge.data.fast_records import FastRecords
from metajudge.data.formats import DatasetCard, PairwiseRecord, Scale, write_jsonl
from metajudge.data.validation import Rules, _build, check_file, infer_kind, record_errors
from metajudge.errors import InputError

from .test_record_structure import BAD, CARD, CAT, FULL_INPUT, GOOD, PAIR, RESP, _mutants

PLAIN_INPUT = {k: v for k, v in FULL_INPUT.items() if k != "tables"}  # tables: the full path
PLAIN_PAIR = {**PAIR, "input": PLAIN_INPUT}
PLAIN_RESP = {**RESP, "input": PLAIN_INPUT}
PLAIN_CAT = {**CAT, "input": PLAIN_INPUT}
RECORDS = [
    ("pairwise", PLAIN_PAIR),
    ("pairwise", GOOD),
    ("likert", PLAIN_RESP),
    ("categorical", PLAIN_CAT),
    ("binary", PLAIN_CAT),
    ("pairwise", PAIR),  # with a table
]

PAIR_CARD = DatasetCard.from_dict(
    {**CARD, "dimensions": ["overall", "other"], "scale": {"min": -2, "max": 2}, "annotators": None}
)
RULES = [
    Rules(),  # no card: kind inferred, no scale
    Rules.of(PAIR_CARD),
    Rules("likert", Scale(0, 3), ("coherence",), 3),
    Rules("categorical", Scale.from_dict({"labels": ["Yes", "No"]}), ("safe",), 3),
    Rules("binary", Scale.from_dict({"labels": ["Yes", "No"]}), ("safe",), None),
]


def _full(d: Any, rules: Rules) -> Any:
    """The full path: every error, else the record it builds."""
    errs = record_errors(d, rules, path="f", line=1, schema=False)
    return errs or _build(d, rules.kind or infer_kind(d))


@pytest.mark.parametrize("rules", RULES, ids=["none", "pairwise", "likert", "categorical", "bin"])
@pytest.mark.parametrize(
    ("kind", "rec"), RECORDS, ids=[f"{k}{i}" for i, (k, _) in enumerate(RECORDS)]
)
def test_fast_record_only_what_the_full_check_accepts(
    rules: Rules, kind: str, rec: dict[str, Any]
) -> None:
    fast = FastRecords(rules)
    built = 0
    for m in [rec, *_mutants(rec)]:
        got = fast.record(m)
        if got is None:
            continue
        built += 1
        want = _full(m, rules)
        assert not isinstance(want, list), (m, want)  # the full path refuses nothing it built
        assert got == want and got.to_dict() == want.to_dict(), m
    numeric = kind in ("pairwise", "likert")
    if rec is not PAIR and (rules.kind == kind or (rules.kind is None and numeric)):
        assert built > 20  # the common shapes take the fast path


def test_fast_record_keeps_values_as_read() -> None:
    """-0.0 stays -0.0 (equal to 0.0, so shared tuples and label maps are keyed by the sign
    too), integers become floats, equal inputs, text-less responses and label maps are shared,
    meta is copied (one empty meta for the records without one)."""
    fast = FastRecords(Rules.of(PAIR_CARD))
    recs = [
        fast.record({**GOOD, "id": f"p{i}", "labels": {"overall": lab}, "meta": {"k": "v"}})
        for i, lab in enumerate([[0.0, 1], [-0.0, 1], [0, 1.0], [None, -2]])
    ]
    assert all(isinstance(r, PairwiseRecord) for r in recs)
    labs = [r.labels["overall"] for r in recs]  # type: ignore[union-attr]
    assert labs == [(0.0, 1.0), (-0.0, 1.0), (0.0, 1.0), (None, -2.0)]
    assert [math.copysign(1, t[0]) for t in labs[:3]] == [1.0, -1.0, 1.0]
    assert labs[0] is labs[2] and labs[1] is not labs[0]
    assert recs[0].input is recs[1].input and recs[0].meta == {"k": "v"}  # type: ignore[union-attr]
    assert recs[0].meta is not recs[1].meta  # type: ignore[union-attr]
    maps = [r.labels for r in recs]  # type: ignore[union-attr]
    assert maps[0] is maps[2] and maps[1] is not maps[0] and maps[3] is not maps[0]
    bare = [fast.record({**GOOD, "id": f"m{i}"}) for i in range(2)]
    assert bare[0].meta == {} and bare[0].meta is bare[1].meta  # type: ignore[union-attr]
    none_side = fast.record({**GOOD, "b": {"system": "y", "response": None}})
    assert (
        none_side is not None
        and none_side.b is fast.record({**GOOD, "id": "q", "b": none_side.b.to_dict()}).b
    )  # type: ignore[union-attr]


def test_warnings_still_given(tmp_path: Path) -> None:
    """Records the fast pass leaves to the full path because of a warning's condition."""
    p = tmp_path / "w.jsonl"
    lines = [{"card": CARD}, GOOD, {**GOOD, "id": "p1", "labels": {"overall": [None, None]}}]
    lines.append({**GOOD, "id": "p2", "labels": {"overall": [1, 0, 1]}})
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    for schema in (True, False):
        rep = check_file(p, schema=schema)
        assert [(w.line, w.field) for w in rep.warnings] == [
            (3, "labels.overall"),
            (4, "labels.overall"),
        ]
        assert len(rep.records) == 3 and not rep.errors


@pytest.mark.parametrize(("bad", "field", "msg"), BAD, ids=[b[1] for b in BAD])
def test_bad_record_deep_in_a_large_file(
    tmp_path: Path, bad: dict[str, Any], field: str, msg: str
) -> None:
    """20,000 good records (the first, id p0, on line 2), the bad one on line 20,002, one more."""
    p = tmp_path / "big.jsonl"
    good = [json.dumps(GOOD)] + [json.dumps({**GOOD, "id": f"g{i}"}) for i in range(1, 20_000)]
    tail = json.dumps({**GOOD, "id": "g_last"})
    lines = [json.dumps({"card": CARD}), *good, json.dumps(bad), tail]
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    line = 20_002
    want = f"{p}:{line}: field {field}: {msg}"
    # the words data validate (the schema) gives on line 3: test_record_structure.py
    assert [str(e) for e in check_file(p, schema=False).errors] == [want]
    with pytest.raises(InputError) as e:
        mj.load_file(p)  # the loader's own pass
    assert (str(e.value), e.value.line, e.value.field) == (want, line, field)


def test_records_load_back_equal(tmp_path: Path) -> None:
    """Records written by ``write_jsonl`` load back equal (through the fast pass)."""
    fast = FastRecords(Rules())
    recs = [fast.record(m) for m in (PLAIN_PAIR, {**PLAIN_PAIR, "id": "p2", "meta": {}})]
    recs.append(fast.record(PLAIN_RESP))
    assert all(r is not None for r in recs)
    p = tmp_path / "back.jsonl"
    write_jsonl(p, recs[:2])  # type: ignore[arg-type]
    assert mj.load_file(p).records == recs[:2]


@pytest.mark.parametrize("rules", RULES, ids=["none", "pairwise", "likert", "categorical", "bin"])
def test_text_free_records_are_the_lean_ones(rules: Rules) -> None:
    """Without texts, a record of the fast pass is built as :meth:`FastRecords.lean` makes the
    record with texts (input :data:`NO_TEXT`, responses shared by system and word count), given
    word counts or not; refused where the record with texts is."""
    from metajudge.data.fast_records import NO_TEXT

    with_texts, lean = FastRecords(rules), FastRecords(rules, texts=False)
    built = 0
    for rec in [r for _, r in RECORDS]:
        for m in [rec, *_mutants(rec)]:
            want = with_texts.record(m)
            assert (lean.record(m) is None) is (want is None), m
            if want is None:
                continue
            for words in (None, (3, None)):
                got = lean.record(m, words)
                assert got == with_texts.lean(want, words), (m, words)
                built += isinstance(got, PairwiseRecord) and got.input is NO_TEXT
    assert built > 20 or rules.kind not in (None, "pairwise")
