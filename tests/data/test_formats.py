"""Canonical formats: records, JSONL round trip, Likert→pairwise, and every bad-input case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.formats import (
    DatasetCard,
    Input,
    LikertRecord,
    PairwiseRecord,
    Response,
    Scale,
    Table,
    likert_to_pairwise,
    pairwise_scale_from_likert,
    word_count,
    write_jsonl,
)
from metajudge.data.validation import read_jsonl
from metajudge.errors import InputError


def _card(
    kind: str = "pairwise", scale: Scale | None = None, dims: tuple[str, ...] = ("overall",)
) -> DatasetCard:
    return DatasetCard(
        name="toy",
        kind=kind,
        description="toy",
        repository="o/r",
        commit="c" * 40,
        files=(),
        license="MIT",
        dimensions=dims,
        scale=scale or Scale(-2, 2, (-2, -1, 0, 1, 2)),
        annotators=2,
        direction="positive = b better",
    )


def _pair(i: str, labels: tuple[float | None, ...] = (1.0, 2.0)) -> PairwiseRecord:
    return PairwiseRecord(
        id=i,
        input=Input(
            "q?", reference="ref", tables=(Table("t", ("a", "b"), (("1", "2"),)),), documents=("d",)
        ),
        a=Response("sysA", "answer a"),
        b=Response("sysB", None),
        labels={"overall": labels},
        meta={"k": [1, 2]},
    )


def test_pairwise_round_trip(tmp_path: Path) -> None:
    recs = [_pair("1"), _pair("2", (None, -2.0))]
    p = tmp_path / "x.jsonl"
    assert write_jsonl(p, recs, card=_card()) == 2
    card, back = read_jsonl(p)
    assert card == _card()
    assert back == recs


def test_likert_to_pairwise_sign_and_order() -> None:
    inp = Input("q")
    recs = [
        LikertRecord("i1", inp, "zeta", "z", {"q": (4.0, 2.0)}),  # mean 3
        LikertRecord("i1", inp, "alpha", "a", {"q": (5.0, None)}),  # mean 5
        LikertRecord("i1", inp, "mid", "m", {"q": (None, None)}),  # no score: no pairs with a label
        LikertRecord("i2", inp, "alpha", "a", {"q": (1.0,)}),  # alone on its input: no pair
    ]
    pairs = likert_to_pairwise(recs)
    assert [p.id for p in pairs] == ["i1::alpha|zeta"]
    p = pairs[0]
    assert (p.a.system, p.b.system) == ("alpha", "zeta")
    assert p.labels["q"] == (3.0 - 5.0,)  # positive = b better; here a (alpha) is better
    assert pairwise_scale_from_likert(Scale(1, 5)) == Scale(-4, 4)


def _write(tmp_path: Path, lines: list[str], name: str = "bad.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return p


def _good(i: str, v: float = 1) -> str:
    return json.dumps(
        {
            "id": i,
            "input": {"question": "q"},
            "a": {"system": "x", "response": "r"},
            "b": {"system": "y", "response": "s"},
            "labels": {"overall": [v, v]},
        }
    )


HEADER = json.dumps({"card": _card().to_dict()})


@pytest.mark.parametrize(
    ("lines", "line", "field", "words"),
    [
        ([HEADER, _good("1"), '{"id": "2", "input": '], 3, "<json>", "malformed JSON"),
        (
            [
                HEADER,
                _good("1"),
                json.dumps(
                    {
                        "id": "2",
                        "input": {"question": "q"},
                        "a": {"system": "x", "response": "r"},
                        "labels": {"overall": [1, 1]},
                    }
                ),
            ],
            3,
            "b",
            "missing required field",
        ),
        ([HEADER, _good("1"), _good("2", 3)], 3, "labels.overall[0]", "outside the declared scale"),
        ([HEADER, _good("1"), _good("1")], 3, "id", "duplicate id"),
        (
            [
                HEADER,
                json.dumps(
                    {
                        "id": "1",
                        "input": {"question": "q"},
                        "a": {"system": "x", "response": "r"},
                        "b": {"system": "y", "response": "s"},
                        "labels": {"fluency": [1]},
                    }
                ),
            ],
            2,
            "labels.fluency",
            "unknown dimension",
        ),
    ],
)
def test_bad_input_names_file_line_field(
    tmp_path: Path,
    lines: list[str],
    line: int,
    field: str,
    words: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    p = _write(tmp_path, lines)
    with pytest.raises(InputError) as ei:
        read_jsonl(p)
    e = ei.value
    assert (e.path, e.line, e.field) == (str(p), line, field)
    assert words in str(e)
    # the CLI prints one clear error line and exits non-zero
    assert main(["data", "validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("metajudge: error: ")
        and f"{p}:{line}: field {field}: " in err
        and words in err
    )


def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for lines in ([], [HEADER], ["", "  "]):
        p = _write(tmp_path, lines, name="empty.jsonl")
        with pytest.raises(InputError, match="empty file"):
            read_jsonl(p)
        assert main(["data", "validate", str(p)]) == 2
        assert "empty file" in capsys.readouterr().err


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_validate_against_named_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a header, ``--card`` supplies the scale: RAGChecker's is {-2,-1,0,1,2}."""
    ok = _write(tmp_path, [_good("1", 2)], name="ok.jsonl")
    assert main(["data", "validate", str(ok), "--card", "ragchecker_meta_eval"]) == 0
    assert "OK" in capsys.readouterr().out
    half = _write(tmp_path, [_good("1", 0.5)], name="half.jsonl")
    # no card line: an error naming line 1 (issue 26), unless --no-card (then the scale is not
    # checked and the output says so)
    assert main(["data", "validate", str(half)]) == 2
    assert f"{half}:1: field card: no card line" in capsys.readouterr().err
    assert main(["data", "validate", str(half), "--no-card"]) == 0
    assert "no card (scale not checked)" in capsys.readouterr().out
    assert main(["data", "validate", str(half), "--card", "ragchecker_meta_eval"]) == 2
    assert (
        f"{half}:1: field labels.overall[0]: label 0.5 is outside the allowed values"
        in capsys.readouterr().err
    )


def test_write_is_atomic_on_failure(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"

    def gen():  # type: ignore[no-untyped-def]
        yield _pair("1")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        write_jsonl(out, gen(), card=_card())
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file left either


def test_mixed_kinds_rejected(tmp_path: Path) -> None:
    lik = json.dumps(
        {
            "id": "9",
            "input": {"question": "q"},
            "system": "s",
            "response": "r",
            "scores": {"overall": [1]},
        }
    )
    p = _write(tmp_path, [_good("1"), lik])
    with pytest.raises(InputError, match="mixes pairwise and Likert"):
        read_jsonl(p)


@pytest.mark.parametrize("ids", [("p", "q", "r"), ("p", "q::1", "p", "r"), ("x",)])
def test_pair_key_index_reads_as_the_dict_of_the_keys(ids: tuple[str, ...]) -> None:
    """The view's pairwise keys and their index, made when read, read as the tuple of keys and
    the dict ``{key: position}`` they replace (a repeated id's keys at its last pair, listed
    once where first seen), and place a score file's keys at the same positions."""
    from metajudge.data.formats import PairKeyIndex, PairKeys, response_key
    from metajudge.scores.readers.rows import strided_positions

    keys = tuple(response_key(p, s) for p in ids for s in ("a", "b"))
    as_dict = {k: i for i, k in enumerate(keys)}
    lazy, index = PairKeys(ids), PairKeyIndex(ids)
    assert tuple(lazy) == keys and [lazy[i] for i in range(-len(keys), len(keys))] == [*keys, *keys]
    with pytest.raises(IndexError):
        lazy[len(keys)]
    assert list(index) == list(as_dict) and dict(index.items()) == as_dict
    assert len(index) == len(as_dict) and dict(index) == as_dict
    for probe in [*keys, "p::c", "p", "::a", "zz::b", 3]:
        assert index.get(probe) == as_dict.get(probe)  # type: ignore[call-overload]
        assert (probe in index) == (probe in as_dict)
    for wanted in (keys[::2], keys[1::2], keys[2:], keys[::-1], keys[:1]):
        got, want = strided_positions(index, wanted), strided_positions(as_dict, wanted)
        assert (got is None) == (want is None) or len(set(ids)) < len(ids)
        if got is not None:
            assert got.tolist() == [as_dict[k] for k in wanted]


def test_pair_keys_at_positions_are_the_keys_there() -> None:
    """``PairKeyIndex.keys_at``'s keys by slices of the ids are the keys at those positions,
    for every range of positions over a few pairs (steps 1 to 4, odd and even ends)."""
    from metajudge.data.formats import PairKeyIndex, pair_rows_at, response_key

    for n in range(6):
        ids = tuple(f"i{k}" for k in range(n))
        keys = [response_key(p, s) for p in ids for s in ("a", "b")]
        index = PairKeyIndex(ids)
        for lo in range(2 * n + 1):
            for hi in range(lo, 2 * n + 1):
                for step in (1, 2, 3, 4):
                    at = range(lo, hi, step)
                    assert index.keys_at(at) == [keys[p] for p in at], (n, lo, hi, step)
                    at_ids, sides = pair_rows_at(ids, at)
                    assert list(map(response_key, at_ids, sides)) == [keys[p] for p in at]


def test_long_lines_read_as_a_stream_keep_their_refusals(tmp_path: Path) -> None:
    """A JSONL file read line by line (issue 65): a huge integer on a line of long texts and a
    byte that is not UTF-8 are refused naming their line (and field, offset)."""
    text = "word " * 400
    rec = {"id": "p1", "input": {"question": text}, "a": {"system": "x", "response": text}}
    rec |= {"b": {"system": "y", "response": text}, "labels": {"overall": [1]}}
    ok = json.dumps(rec)
    huge = ok.replace('"overall": [1]', '"overall": [' + "9" * 320 + "]")
    p = tmp_path / "huge.jsonl"
    p.write_text(ok.replace("p1", "p0") + "\n" + huge + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="outside the range of a float") as e:
        read_jsonl(p)
    assert e.value.line == 2 and str(e.value.field).startswith("labels.overall")
    bad = tmp_path / "bytes.jsonl"
    bad.write_bytes(ok.encode() + b"\n" + ok.replace("p1", "p2").encode()[:50] + b"\xff\n")
    with pytest.raises(InputError, match="not UTF-8") as e:
        read_jsonl(bad)
    assert e.value.line == 2 and f"offset {len(ok) + 1 + 50}" in str(e.value)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "one",
        "two words",
        " lead and trail ",
        "tab\tnew\nline\r\nvt\x0bff\x0c",
        "x\x1cy\x1dz\x1e\x1fw",  # separators str.split splits on
        "a\x00b\x7fc",  # control characters it does not
        "é\u00a0b c",  # non-ASCII: Unicode spaces
        "a\u2028b\u3000c",
        "  many   spaces  ",
        "a",
        "\n",
    ],
)
def test_word_count_is_str_split(text: str) -> None:
    assert word_count(text) == len(text.split())
    assert Response("s", text).n_words() == float(len(text.split()))


_DEEP_OK = "[" * 200 + "]" * 200  # MAX_JSON_DEPTH levels
_OBJ_TOO_DEEP = '{"a":' * 201 + "1" + "}" * 201


@pytest.mark.parametrize(
    ("line", "plain"),
    [
        ('{"id": "x", "t": "caf\\u00e9 \u00e9 \\ud83d\\ude00"}', True),  # escapes, a pair
        ('{"id": "x\\ud800"}', False),  # a lone high surrogate in a value
        ('{"\\udc00": 1}', False),  # a lone low one in a key
        ('["\\udc00\\ud800"]', False),  # low then high: two lone ones
        ('"\\ud800"', False),  # a bare string
        ("[1, " + "9" * 400 + "]", False),  # an integer outside a float's range
        ("[1, " + "9" * 300 + ", 1e308]", True),
        (_DEEP_OK, True),
        ("[" + _DEEP_OK + "]", False),
        ('{"a":' * 200 + "1" + "}" * 200, True),
        (_OBJ_TOO_DEEP, False),
    ],
)
def test_plain_json_is_what_parse_json_accepts(line: str, plain: bool) -> None:
    """The JSONL reader's per-line test (:func:`~metajudge.io.plain_json`): plain exactly where
    ``parse_json`` accepts the line; a line that is not plain goes through ``parse_json``,
    which refuses it naming the line."""
    from metajudge.io import parse_json, plain_json

    assert plain_json(json.loads(line)) is plain
    if plain:
        assert parse_json(line, path=None) == json.loads(line)
    else:
        with pytest.raises(InputError):
            parse_json(line, path=None)


def test_jsonl_lines_that_are_not_plain_are_refused_by_line(tmp_path: Path) -> None:
    from metajudge.data.formats import iter_jsonl_objects

    for bad in ('{"id": "x\\ud800"}', "[" + _DEEP_OK + "]", "[" + "9" * 400 + "]"):
        p = tmp_path / "d.jsonl"
        p.write_text('{"id": "ok"}\n' + bad + "\n", encoding="utf-8")
        with pytest.raises(InputError) as e:
            list(iter_jsonl_objects(p))
        assert e.value.line == 2, (bad[:20], e.value)
