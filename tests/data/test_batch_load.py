"""The text-free load in record batches (data/batch_load.py) gives the records the line-by-line
pass gives, and declines (the line pass then reads the file) every file it cannot read as that
pass would: the same records, or the same first error, either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import metajudge.data.batch_load as bl
from metajudge.data.loading import load
from metajudge.errors import InputError

CARD = {
    "name": "batch_probe",
    "kind": "pairwise",
    "description": "d",
    "repository": "",
    "commit": "",
    "files": [],
    "license": "",
    "dimensions": ["overall", "style"],
    "scale": {"min": -2, "max": 2},
    "annotators": 3,
    "direction": "positive = b better",
    "notes": "",
}
TEXTS = ["a b  c", " lead and trail ", "x\x1cy\tz\nw", "non\u00a0ascii \u3000 spaces", "", "é é"]


def _rows(n: int) -> list[dict[str, Any]]:
    """Pairs with every label form the line pass reads: ints, floats, -0.0, null labels,
    one label or three, repeated and distinct systems and texts."""
    labels = [[1, 1.5, None], [-0.0], [0.0, 0, -2], [2], [None, 1.25, -1.5]]
    return [
        {
            "id": f"p{i}",
            "input": {"question": f"q{i % 7}"},
            "a": {"system": f"s{i % 4}", "response": TEXTS[i % len(TEXTS)]},
            "b": {"system": f"s{(i + 1) % 5}", "response": TEXTS[(i * 5 + 1) % len(TEXTS)] * 3},
            "labels": {"overall": labels[i % 5], "style": labels[(i + 2) % 5]},
        }
        for i in range(n)
    ]


def _write(path: Path, rows: list[Any], card: dict[str, Any] | None = CARD) -> Path:
    lines = ([json.dumps({"card": card})] if card is not None else []) + [
        r if isinstance(r, str) else json.dumps(r) for r in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, bool]:
    """What a text-free load gives with the batch route and without it (each: the card and
    records, or the error's words), and whether the batch route built the records."""
    used = []
    real = bl.batch_load

    def spy(*a: Any, **k: Any) -> Any:
        got = real(*a, **k)
        used.append(got is not None)
        return got

    def read() -> Any:
        try:
            ds = load(str(path), texts=False)
            return ds.card, ds.records
        except InputError as e:
            return str(e)

    monkeypatch.setattr(bl, "batch_load", spy)
    batched = read()
    monkeypatch.setattr(bl, "batch_load", lambda *a, **k: None)
    return batched, read(), bool(used and used[0])


def test_batches_give_the_line_pass_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "d.jsonl", _rows(3000))
    monkeypatch.setattr(bl, "JSON_BLOCK", 1 << 14)  # many batches
    batched, lines, used = _both(path, monkeypatch)
    assert used
    assert batched == lines
    assert not isinstance(lines, str), lines  # loaded, not refused
    _card, recs = batched
    assert len(recs) == 3000 and recs[3].a.words == len(TEXTS[3].split())
    # -0.0 kept as read, apart from the 0.0 of an equal tuple
    assert [str(r.labels["overall"]) for r in recs[1:3]] == ["(-0.0,)", "(0.0, 0.0, -2.0)"]
    assert [str(x.labels) for x in recs] == [str(x.labels) for x in lines[1]]


def test_a_parquet_table_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = _rows(500)
    for r in rows:
        r["labels"] = {
            k: [None if v is None else float(v) for v in x] for k, x in r["labels"].items()
        }
    table = pa.Table.from_pylist(rows)
    table = table.replace_schema_metadata({b"metajudge.card": json.dumps(CARD).encode()})
    pq.write_table(table, tmp_path / "d.parquet")
    batched, lines, used = _both(tmp_path / "d.parquet", monkeypatch)
    assert used and batched == lines and not isinstance(lines, str)


BAD_ROW = _rows(1)[0]


def _with(**kw: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(BAD_ROW)), **kw}


DECLINED = {
    "blank line": "",
    "two values on a line": json.dumps(_with(id="x1")) + json.dumps(_with(id="x2")),
    "duplicate id": json.dumps(_with(id="p0")),
    "NaN label": json.dumps(_with(id="x", labels={"overall": [1], "style": [1]})).replace(
        "[1]}", "[NaN]}"
    ),
    "huge integer label": json.dumps(_with(id="x")).replace("[-0.0]", "[" + "9" * 400 + "]"),
    "label outside the scale": json.dumps(_with(id="x", labels={"overall": [3], "style": [1]})),
    "two annotators of three": json.dumps(_with(id="x", labels={"overall": [1, 1], "style": [1]})),
    "only null labels": json.dumps(_with(id="x", labels={"overall": [None], "style": [1]})),
    "a dimension absent": json.dumps(_with(id="x", labels={"overall": [1]})),
    "null response": json.dumps(_with(id="x", a={"system": "s", "response": None})),
    "absent response": json.dumps(_with(id="x", a={"system": "s"})),
    "meta": json.dumps(_with(id="x", meta={"k": "v"})),
    "reference": json.dumps(_with(id="x", input={"question": "q", "reference": "r"})),
    "duplicate key": json.dumps(_with(id="x"))[:-1] + ', "id": "y"}',
    "lone surrogate": json.dumps(_with(id="x")).replace('"q0"', '"\\ud800"'),
    "empty id": json.dumps(_with(id="")),
    "system a number": json.dumps(_with(id="x", a={"system": 3, "response": "r"})),
    "malformed": '{"id": "x",',
}


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_declined_files_read_line_by_line(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "d.jsonl", [*_rows(40), DECLINED[name], *_rows(3)[2:]])
    batched, lines, used = _both(path, monkeypatch)
    assert not used
    assert batched == lines


def test_not_utf8_declined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path / "d.jsonl", _rows(5))
    path.write_bytes(path.read_bytes().replace(b"lead", b"l\xffad"))
    batched, lines, used = _both(path, monkeypatch)
    assert not used and batched == lines and "UTF-8" in str(lines)


def test_no_card_line_read_line_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batched, lines, used = _both(_write(tmp_path / "d.jsonl", _rows(5), card=None), monkeypatch)
    assert not used and batched == lines


def _arena(path: Path, battles: list[dict[str, Any]]) -> Path:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(battles), path)
    return path


def _battles(n: int) -> list[dict[str, Any]]:
    """Battles with what a released file holds: repeated question ids, a missing one, every
    winner, a judge or none, a null model, a conversation without an assistant turn."""
    winners = ["model_a", "model_b", "tie", "tie (bothbad)"]
    out = []
    for i in range(n):
        conv = [{"role": "user", "content": f"question {i}"}]
        answer = [] if i % 7 == 3 else [{"role": "assistant", "content": f"a {i} é\u3000x"}]
        out.append(
            {
                "question_id": None if i % 11 == 5 else f"q{i % 13}",
                "model_a": None if i % 17 == 2 else f"m{i % 4}",
                "model_b": f"m{(i + 1) % 5}",
                "winner": winners[i % 4],
                "judge": None if i % 6 == 1 else f"user_{i % 3}",
                "conversation_a": conv + answer,
                "conversation_b": [*conv, {"role": "assistant", "content": "b " * (i % 9)}],
                "turn": 1 + i % 2,
                "language": None if i % 5 == 0 else "English",
                "tstamp": 1.7e9 + i,
            }
        )
    return out


def test_arena_battles_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("metajudge.data.columnar.RECORD_BATCH_ROWS", 64)  # several batches
    path = _arena(tmp_path / "arena.parquet", _battles(300))
    batched, lines, used = _both(path, monkeypatch)
    assert used and batched == lines and not isinstance(lines, str)
    recs = batched[1]
    assert [list(r.meta) for r in recs] == [list(r.meta) for r in lines[1]]  # and their order
    assert recs[13].id == "q0#2" and recs[5].id == "battle6" and recs[2].a.system == "None"


@pytest.mark.parametrize("case", ["unknown winner", "an id made twice"])
def test_arena_battles_declined(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    battles = _battles(30)
    if case == "unknown winner":
        battles[20]["winner"] = "draw"
    else:  # q1, q1 (-> q1#2), then a question_id q1#2: the line pass names the repeat
        battles[0]["question_id"] = battles[1]["question_id"] = "q1"
        battles[2]["question_id"] = "q1#2"
    batched, lines, used = _both(_arena(tmp_path / "arena.parquet", battles), monkeypatch)
    assert not used and batched == lines and isinstance(lines, str)
