"""Score rows held in columns (scores/readers/rows.py ScoreTable/ScoreRows): the wide CSV reader that
builds them gives the rows, counts and errors of the row-by-row reader, and every reader of
rows (index_score_rows, the trivial baselines, the report) reads the same from the columns."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metajudge.analyses.metric_vs_human import trivial
from metajudge.analyses.metric_vs_human.aligned import index_score_rows
from metajudge.data.formats import Input, LikertRecord, PairwiseRecord, Response
from metajudge.errors import InputError
from metajudge.metrics.base import iter_responses
from metajudge.reports.html_items import Items
from metajudge.reports.html_views import _row_warnings
from metajudge.scores import files
from metajudge.scores.readers import rows as rows_mod
from metajudge.scores.readers import wide_csv
from metajudge.scores.readers.alignment import IdPolicy, KeyMap
from metajudge.scores.readers.rows import ScoreRows, ScoreTable, make_row, score_maps, score_values


def _pairs(n: int = 6) -> list[PairwiseRecord]:
    return [
        PairwiseRecord(
            id=f"p{i}",
            input=Input(question="q"),
            a=Response("sysA", "one two" if i % 2 else None),
            b=Response("sysB", "three"),
            labels={"q": (1.0,)},
        )
        for i in range(n)
    ]


def _likert() -> list[LikertRecord]:
    return [
        LikertRecord(id=f"e{i}", input=Input(question="q"), system=s, response="r", scores={})
        for i in range(3)
        for s in ("m1", "m2")
    ]


H = "item,side,m0,m1:lower\n"
BODIES = {
    "plain": H + "p0,a,0.5,1\np0,b,0.25,2\np1,a,-1e-3,3\np1,b,4,5\np2,a,1,1\n",
    "systems": "item,system,m0\np0,sysA,1\np0,sysB,2\np1,sysB,3\n",
    "unknown item": H + "p0,a,1,2\np9,a,1,2\np1,b,3,4\np8,b,1,1\np2,a,5,6\n",
    "bad cell before unknown id": H + "p0,a,1,2\np0,b,1,x\np1,a,1,2\np9,a,1,2\n",
    "unknown id before bad cell": H + "p0,a,1,2\np9,a,1,2\np1,a,1,2\np1,b,y,2\n",
    "duplicate, bad first cell": H + "p0,a,1,2\np0,b,1,2\np0,a,z,2\n",
    "duplicate": H + "p0,a,1,2\np1,a,1,2\np2,a,1,2\np0,a,3,4\n",
    "missing cells": H + "p0,a,,NA\n\np0,b,nan, 3 \np1,a\np1,b,null,None\np2,a,2,1\n",
    "infinite": H + "p0,a,1,2\np0,b,1,2\np1,a,1,inf\n",
    "bad side": H + "p0,a,1,2\np0,c,1,2\n",
    "empty item": H + "p0,a,1,2\n,a,1,2\n",
    "later cell first": H + "p0,a,1,2\np0,b,1,2\np1,a,1,q\np1,b,w,2\n",
}


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        return list(fn(*args))
    except InputError as e:
        return ("error", e.message, e.path, e.line, e.field)


def _both(p: Path, records: Any, strict: bool) -> tuple[Any, Any, Any, Any]:
    ids_new, ids_old = IdPolicy(strict=strict), IdPolicy(strict=strict)
    new = _outcome(wide_csv.read_wide_csv, p, KeyMap(records, ids_new))
    with open(p, encoding="utf-8", newline="") as fh:
        delim = "\t" if p.suffix == ".tsv" else ","
        old = _outcome(wide_csv.read_wide_csv_rows, p, KeyMap(records, ids_old), fh, delim, False)
    return new, old, ids_new.dropped, ids_old.dropped


@pytest.mark.parametrize("frames", [False, True])  # pandas' reader first, or the csv module's
@pytest.mark.parametrize("chunk", [2, 1 << 15])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_wide_csv_in_columns_reads_as_the_row_by_row_reader(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    strict: bool,
    chunk: int,
    frames: bool,
) -> None:
    monkeypatch.setattr(wide_csv.WideCsv, "CHUNK", chunk)
    monkeypatch.setattr(wide_csv.WideCsv, "FRAMES_FROM_BYTES", 0 if frames else 1 << 62)
    p = tmp_path / "s.csv"
    p.write_text(BODIES[name])
    new, old, dropped_new, dropped_old = _both(p, _pairs(), strict)
    assert new == old
    if isinstance(new, list):  # (after an error the run stops: nothing is counted)
        assert dropped_new == dropped_old


def test_the_outcomes_compared_are_the_expected_ones(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text(BODIES["bad cell before unknown id"])
    new, _, _, _ = _both(p, _pairs(), strict=True)
    assert new == ("error", "non-numeric score 'x'", str(p), 3, "m1:lower")
    p.write_text(BODIES["unknown id before bad cell"])
    new, _, _, _ = _both(p, _pairs(), strict=True)
    assert new[:2] == ("error", "unknown item id 'p9' (not a pair of this dataset)")
    assert new[3:] == (3, "item")
    p.write_text(BODIES["duplicate"])
    new, _, _, _ = _both(p, _pairs(), strict=False)
    assert new == (
        "error",
        "duplicate score for 'p0::a' metric 'm0' (first at line 2)",
        str(p),
        5,
        "m0",
    )
    p.write_text(BODIES["missing cells"])
    rows, _, _, _ = _both(p, _pairs(), strict=False)
    by = {(r["key"], r["metric"]): r for r in rows}
    assert by[("p0::b", "m1")]["score"] == 3.0 and by[("p0::b", "m1")]["direction"] == "lower"
    assert by[("p1::a", "m0")]["score"] is None
    assert by[("p1::a", "m0")]["error"] == "missing in the score file"
    assert by[("p2::a", "m0")]["score"] == 2.0


def test_likert_tsv_and_unknown_system_as_the_row_by_row_reader(tmp_path: Path) -> None:
    p = tmp_path / "s.tsv"
    p.write_text("item\tsystem\tbleu\ne0\tm1\t1\ne0\tm9\t2\ne1\tm2\t3\ne2\tm1\t\n")
    new, old, dropped_new, dropped_old = _both(p, _likert(), strict=False)
    assert new == old and len(new) == 3
    assert dropped_new == dropped_old and dropped_new[0]["system"] == "m9"


def test_read_scores_holds_a_wide_file_in_columns(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text(BODIES["plain"])
    rows = files.read_scores(p, _pairs(), ids=IdPolicy())
    assert isinstance(rows, ScoreRows)
    (table,) = rows.parts()
    assert isinstance(table, ScoreTable) and [c.metric for c in table.columns] == ["m0", "m1"]
    assert table.columns[0].scores.tolist() == [0.5, 0.25, -1e-3, 4.0, 1.0]
    assert len(rows) == 10 and rows[1]["metric"] == "m1" and rows[-1]["key"] == "p2::a"
    assert rows == list(rows)


def _same_index(rows: ScoreRows, keys: list[str]) -> None:
    index = {k: i for i, k in enumerate(keys)}
    cols_t, info_t = index_score_rows(rows, index)
    cols_d, info_d = index_score_rows(list(rows), index)
    assert list(cols_t) == list(cols_d)
    for m in cols_t:
        np.testing.assert_array_equal(cols_t[m].values, cols_d[m].values)
        np.testing.assert_array_equal(cols_t[m].present, cols_d[m].present)
    assert info_t == info_d


def test_index_score_rows_reads_tables_as_it_reads_rows(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text(BODIES["missing cells"])
    recs = _pairs()
    extra = [make_row(item="p5", system="sysB", side="b", metric="x", score=2.0, signature="x")]
    rows = files.read_scores(p, recs, ids=IdPolicy()) + extra + trivial.trivial_rows(recs, 3)
    keys = [r.key for r in iter_responses(recs)][:-2]  # two responses unmatched
    _same_index(rows, keys)
    _, info = index_score_rows(rows, keys)
    assert info["m0"].errors == {"missing in the score file": 4}
    assert info[trivial.LENGTH].errors == {"no response text": 3}  # p0, p2, p4 side a
    assert info[trivial.LENGTH].n_unmatched == 2
    with pytest.raises(InputError, match="duplicate score for 'p0::a' metric 'm0'") as ei:
        index_score_rows(rows + list(rows)[:1], keys)
    assert ei.value.field == f"scores[{len(rows)}]"


def test_a_table_in_the_views_order_is_its_columns_values(tmp_path: Path) -> None:
    """A score table giving every response in the view's order becomes its columns as it is
    (the column's values are the table's array, not a copy): the same columns and counts as the
    rows read one by one; a later row for one of its keys is a duplicate naming that row, and
    the table is left as read."""
    recs = _pairs()
    rows = trivial.trivial_rows(recs, 3)
    keys = [r.key for r in iter_responses(recs)]
    _same_index(rows, keys)
    table = next(iter(rows.parts()))
    cols, _ = index_score_rows(rows, keys)
    random = next(c for c in table.columns if c.metric == trivial.RANDOM)
    assert np.shares_memory(cols[trivial.RANDOM].values, random.scores)
    before = np.array(random.scores, copy=True)
    again = [
        make_row(
            item="p3", system="sysB", side="b", metric=trivial.RANDOM, score=2.0, signature="r"
        )
    ]
    with pytest.raises(InputError, match="duplicate score for 'p3::b'") as ei:
        index_score_rows(rows + again, keys)
    assert ei.value.field == f"scores[{len(rows)}]"
    assert np.array_equal(random.scores, before)


@pytest.mark.parametrize("kind", ["pairwise", "likert"])
def test_trivial_rows_in_columns_are_the_rows_of_make_row(kind: str) -> None:
    """Each response's trivial rows (pairwise records read in bulk, Likert row by row) are the
    rows ``make_row`` makes of its :class:`ResponseRef`; records of both kinds are refused."""
    recs: list[Any] = _pairs(4) if kind == "pairwise" else _likert()
    rows = trivial.trivial_rows(recs, 7)
    rnd = np.random.default_rng(7).random(len(list(iter_responses(recs))))
    want = []
    for ref, r in zip(iter_responses(recs), rnd, strict=True):
        ids = {"item": ref.item, "system": ref.system, "side": ref.side}
        n = None if ref.response is None else float(len(ref.response.split()))
        want.append(
            make_row(
                **ids,
                metric=trivial.LENGTH,
                score=n,
                signature=f"{trivial.LENGTH}|split:whitespace",
                error="no response text" if n is None else None,
            )
        )
        want.append(
            make_row(
                **ids,
                metric=trivial.RANDOM,
                score=float(r),
                signature=f"{trivial.RANDOM}|uniform|seed:7",
            )
        )
    assert list(rows) == want
    with pytest.raises(InputError, match="mix pairwise and Likert"):
        trivial.trivial_rows([*recs, *(_likert() if kind == "pairwise" else _pairs(1))], 7)


def test_the_report_reads_tables_as_it_reads_rows(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text(BODIES["missing cells"])
    recs = _pairs()
    extra = [
        make_row(
            item="p4", system="sysA", side="a", metric="x", score=None, signature="x", error="boom"
        ),
        {
            **make_row(item="p4", system="sysB", side="b", metric="x", score=1.0, signature="x"),
            "details": {"truncated": True},
        },
    ]
    rows = extra + files.read_scores(p, recs, ids=IdPolicy())
    assert _row_warnings(rows) == _row_warnings(list(rows))
    assert _row_warnings(rows)[0].startswith("x: 1 of 2 responses with no score")
    a, b = Items(), Items()
    for r in recs:
        a.add(r)
        b.add(r)
    a.attach_scores(rows)
    b.attach_scores(list(rows))
    assert a.resp == b.resp
    assert a.resp[0]["det"] == {
        "m0": {"error": "missing in the score file"},
        "m1": {"error": "missing in the score file"},
    }
    maps = score_maps(rows)
    want: dict[str, dict[str, Any]] = {}
    for r in rows:
        want.setdefault(r["metric"], {})[r["key"]] = r.get("score")
    assert list(maps) == list(want)
    for m, got in want.items():
        assert dict(maps[m]) == got
        assert all(v is None or not math.isnan(v) for v in maps[m].values())


LAYOUTS = ["dataset order", "shuffled", "one missing", "b first"]


def _laid_out(tmp_path: Path, layout: str) -> Path:
    """A score file of ``_pairs(6)`` (one metric) whose lines are in the dataset's order,
    shuffled, without ``p3,a``, or each pair's ``b`` first."""
    lines = [f"p{i},{side},{i + (0.5 if side == 'b' else 0)}" for i in range(6) for side in "ab"]
    if layout == "shuffled":
        lines = [lines[k] for k in np.random.default_rng(3).permutation(len(lines))]
    elif layout == "one missing":
        del lines[6]  # p3,a
    elif layout == "b first":
        lines = [x for i in range(6) for x in (lines[2 * i + 1], lines[2 * i])]
    p = tmp_path / "s.csv"
    p.write_text("item,side,m0\n" + "\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("layout", LAYOUTS)
def test_report_scores_by_stride_are_those_looked_up(tmp_path: Path, layout: str) -> None:
    """The report's scores of each side's keys (``score_values``): read at one stride when the
    score file lists the pairs in the dataset's order, else looked up key by key; the same
    values as a dict of the rows either way."""
    recs = _pairs(6)
    p = _laid_out(tmp_path, layout)
    rows = files.read_scores(p, recs, ids=IdPolicy())
    col = score_maps(rows)["m0"]
    want = {r["key"]: r["score"] for r in rows}
    for side in "ab":
        keys = [f"p{i}::{side}" for i in range(6)]
        got = score_values(col, keys, {})
        expect = [want.get(k, math.nan) for k in keys]
        assert np.array_equal(got, np.array(expect, dtype=float), equal_nan=True), side
    strided = {"dataset order": "b", "b first": "a"}.get(layout)
    for side in "ab":
        got = rows_mod.strided_positions(col.index, [f"p{i}::{side}" for i in range(6)])
        if side == strided:
            assert np.array_equal(got, np.arange(1, 12, 2))
        elif layout in ("shuffled", "one missing"):
            assert got is None


@pytest.mark.parametrize("layout", LAYOUTS)
def test_score_file_keys_are_placed_in_the_view_as_by_a_dict(tmp_path: Path, layout: str) -> None:
    """A pairwise score file's keys (``RowKeys``: the dataset's own id strings and each line's
    side) index into the view's ``PairKeyIndex`` at the positions a dict of the keys gives,
    by stride (ids and sides compared) where the file lists the pairs in order."""
    from metajudge.analyses.metric_vs_human.aligned import align
    from metajudge.scores.readers.rows import RowKeys

    recs = _pairs(6)
    p = _laid_out(tmp_path, layout)
    table = files.read_scores(p, recs, ids=IdPolicy()).parts()[0]
    keys = table.ids.keys
    assert isinstance(keys, RowKeys) and all(
        it is next(r.id for r in recs if r.id == it) for it in keys.items
    )
    view = align(recs, dimensions=["q"])
    as_dict = {k: i for i, k in enumerate(view.keys)}
    strided = rows_mod.strided_positions(view.key_index, keys)
    assert (strided is not None) == (layout == "dataset order")
    if strided is not None:
        assert strided.tolist() == [as_dict[k] for k in keys]
    cols, _ = index_score_rows(files.read_scores(p, recs, ids=IdPolicy()), view.key_index)
    want, _ = index_score_rows(files.read_scores(p, recs, ids=IdPolicy()), as_dict)
    assert np.array_equal(cols["m0"].values, want["m0"].values, equal_nan=True)
    assert np.array_equal(cols["m0"].present, want["m0"].present)


@pytest.mark.parametrize("name", ["plain", "systems", "missing cells", "infinite", "unknown item"])
def test_plain_files_take_pandas_frames_and_the_others_the_line_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Which files pandas' reader takes whole: only plain ones (``systems`` names systems of a
    pairwise set, ``missing cells`` holds ``NA`` and a short line, ``infinite`` an ``inf``,
    ``unknown item`` ids the dataset lacks: each read by the line rule)."""
    monkeypatch.setattr(wide_csv.WideCsv, "CHUNK", 2)
    p = tmp_path / "s.csv"
    p.write_text(BODIES[name])
    header = BODIES[name].split("\n", 1)[0].split(",")
    wide = wide_csv.WideCsv(p, KeyMap(_pairs(), IdPolicy()), header)
    with wide_csv.csv_frames(p, ",", header) as frames:
        assert wide.read_frames(frames) is (name == "plain")


def test_pandas_frames_read_every_float_as_python_does(tmp_path: Path) -> None:
    """17 significant digits, tiny and huge exponents, signs; a column of integers only (read
    by pandas as int64, up to 2^63 - 1): each value as ``float(text)``, so a large file reads
    the numbers the csv module's reader does."""
    rng = np.random.default_rng(7)
    vals = np.concatenate(
        [rng.normal(size=3000), rng.normal(size=500) * 10.0 ** rng.integers(-300, 300, 500)]
    )
    texts = [repr(float(v)) for v in vals] + ["0.00000000000001953", "-0", "+7", ".5", "5."]
    texts += ["9007199254740993", "123456789012345678901234567890", "1e5"]
    ints = [str(int(v)) for v in rng.integers(-(2**63) + 1, 2**63 - 1, len(texts))]
    ints[:3] = ["9007199254740993", "-42", str(2**63 - 1)]
    p = tmp_path / "s.csv"
    lines = (f"p{i},a,{t},{k}\n" for i, (t, k) in enumerate(zip(texts, ints, strict=True)))
    p.write_text("item,side,m0,m1\n" + "".join(lines))
    header = ["item", "side", "m0", "m1"]
    wide = wide_csv.WideCsv(p, KeyMap(_pairs(len(texts)), IdPolicy()), header)
    with wide_csv.csv_frames(p, ",", header) as frames:
        assert wide.read_frames(frames)
    m0, m1 = wide.table([("m0", None), ("m1", None)]).parts()[0].columns
    assert m0.scores.tobytes() == np.array([float(t) for t in texts]).tobytes()
    assert m1.scores.tobytes() == np.array([float(t) for t in ints]).tobytes()
