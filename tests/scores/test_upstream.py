"""External score files: formats, id checks and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.data.formats import Input, LikertRecord, PairwiseRecord, Response
from metajudge.errors import InputError
from metajudge.scores import files as score_files
from metajudge.scores import readers
from metajudge.scores.readers import rows as rows_mod
from metajudge.scores.readers import upstream as external


def _pairs() -> list[PairwiseRecord]:
    return [
        PairwiseRecord(
            id=str(i),
            input=Input(question="q"),
            a=Response("sysA", "x"),
            b=Response("sysB", "y"),
            labels={"q": (1.0,)},
        )
        for i in range(3)
    ]


def _likert() -> list[LikertRecord]:
    return [
        LikertRecord(
            id=f"e{i}", input=Input(question="q"), system=s, response=None, scores={"q": (3.0,)}
        )
        for i in range(2)
        for s in ("m1", "m2")
    ]


def test_wide_csv_for_pairwise_maps_systems_to_sides(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text("item,system,bleu,judge\n0,sysA,0.1,3\n0,sysB,0.4,\n1,sysA,0.2,4\n")
    rows = score_files.read_scores(p, _pairs())
    keys = {(r["key"], r["metric"]): r["score"] for r in rows}
    assert keys[("0::a", "bleu")] == 0.1 and keys[("0::b", "bleu")] == 0.4
    assert keys[("0::b", "judge")] is None  # empty cell = missing, counted later
    assert next(r for r in rows if r["key"] == "0::b" and r["metric"] == "judge")["error"]


@pytest.mark.parametrize(
    "body,field,line,msg",
    [
        ("item,system,bleu\n9,sysA,0.1\n", "item", 2, "unknown item id '9'"),
        ("item,system,bleu\n0,sysC,0.1\n", "system", 2, "unknown system 'sysC'"),
        ("item,system,bleu\n0,sysA,0.1\n0,sysA,0.2\n", "bleu", 3, "duplicate"),
        ("item,system,bleu\n0,sysA,high\n", "bleu", 2, "non-numeric"),
    ],
)
def test_wide_csv_errors_name_file_line_field(
    tmp_path: Path, body: str, field: str, line: int, msg: str
) -> None:
    p = tmp_path / "bad.csv"
    p.write_text(body)
    with pytest.raises(InputError) as ei:
        score_files.read_scores(p, _pairs())
    e = ei.value
    assert e.path == str(p) and e.line == line and e.field == field
    assert msg in str(e)


def test_jsonl_score_rows_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    rows = [
        {"key": "e0::m1", "metric": "m", "score": 1.5, "signature": "m|v1"},
        {"item": "e0", "system": "m2", "metric": "m", "score": None, "error": "timeout"},
    ]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    got = score_files.read_scores(p, _likert())
    assert [r["key"] for r in got] == ["e0::m1", "e0::m2"]
    assert got[1]["score"] is None and got[1]["error"] == "timeout"
    p.write_text(json.dumps({"item": "e0", "system": "m1", "metric": "m", "score": [1]}) + "\n")
    with pytest.raises(InputError, match="non-numeric") as ei:
        score_files.read_scores(p, _likert())
    assert ei.value.line == 1 and ei.value.field == "score"
    p.write_text(json.dumps({"item": "e7", "system": "m1", "metric": "m", "score": 1}) + "\n")
    with pytest.raises(InputError, match="unknown item"):
        score_files.read_scores(p, _likert())


def test_wide_json_and_lftqa_style_detection(tmp_path: Path) -> None:
    p = tmp_path / "wide.json"
    p.write_text(json.dumps([{"item": "e1", "system": "m2", "rouge": 0.3, "bleu": 2}]))
    rows = score_files.read_scores(p, _likert())
    assert {(r["metric"], r["score"]) for r in rows} == {("rouge", 0.3), ("bleu", 2.0)}
    q = tmp_path / "bleu.json"
    q.write_text(
        json.dumps(
            [
                {"example_id": "e0", "model": "m1", "score": 5},
                {"example_id": "e0", "model": "m1", "score": 4},
            ]
        )
    )
    assert readers.detect(q).name == "lftqa"
    with pytest.raises(InputError, match="duplicate"):
        score_files.read_scores(q, _likert())


def test_family_helpers() -> None:
    assert rows_mod.collapse_families(["ragchecker_a", "ragchecker_b", "x"], ["a", "b"]) == [
        "ragchecker",
        "x",
    ]
    assert rows_mod.metric_for_dimension("ragchecker", "b", ["ragchecker_b"]) == "ragchecker_b"
    assert rows_mod.metric_for_dimension("nope", "b", ["ragchecker_b"]) is None


def test_ragchecker_baseline_real(data_dir, load) -> None:  # type: ignore[no-untyped-def]
    from metajudge.data.registry import resolve_file

    ds = load("ragchecker_meta_eval")
    path = resolve_file("ragchecker_meta_eval", "baseline_ragchecker.json", data_dir)
    assert readers.detect(path).name == "ragchecker"
    rows = external.ragchecker_baseline(path, ds.records)
    assert len(rows) == 280 * 2 * 3
    assert {r["metric"] for r in rows} == {
        "ragchecker_correctness",
        "ragchecker_completeness",
        "ragchecker_overall",
    }
    assert all(r["score"] is not None for r in rows)


def test_hanna_columns_real(data_dir, load) -> None:  # type: ignore[no-untyped-def]
    from metajudge.data.registry import resolve_file

    ds = load("hanna")
    path = resolve_file("hanna", "hanna_metric_scores_llm.csv", data_dir)
    wanted = ["hanna.bleu", "hanna.bertscore_f1", "hanna.beluga-13b_run1_coherence"]
    rows = external.hanna_metric_scores(path, records=ds.records, metrics=wanted)
    assert {r["metric"] for r in rows} == set(wanted)
    assert len(rows) == 3 * 11 * 96
    assert rows_mod.collapse_families(
        ["hanna.beluga-13b_run1_" + d for d in ds.card.dimensions], ds.card.dimensions
    ) == ["hanna.beluga-13b_run1"]


def test_score_files_declare_column_directions(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
    from tests.analyses.metric_vs_human.test_evaluate import _rows, _toy

    ds, truth = _toy(12, seed=1)
    rows = _rows("err", [0.0] * 12, [-float(t) for t in truth])  # an error rate: lower is better
    plain = meta_evaluate(ds, rows, n_boot=0, normalize="raw", aggregation="mean")
    f = tmp_path / "err.jsonl"
    f.write_text("".join(json.dumps({**r, "direction": "lower"}) + "\n" for r in rows))
    declared = score_files.read_scores(f, ds.records)
    assert {r["direction"] for r in declared} == {"lower"}
    res = meta_evaluate(ds, declared, n_boot=0, normalize="raw", aggregation="mean")
    assert res.value("err", "quality") == pytest.approx(-plain.value("err", "quality"))
    assert res.data["metrics"][0]["direction"] == "lower"
    wide = tmp_path / "wide.csv"
    wide.write_text(
        "item,side,err:lower\n"
        + "".join(f"{r['key'].replace('::', ',')},{r['score']}\n" for r in rows)
    )
    got = score_files.read_scores(wide, ds.records)
    assert {r["metric"] for r in got} == {"err"} and got[0]["direction"] == "lower"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**rows[0], "direction": "down"}) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl.*direction"):
        score_files.read_scores(bad, ds.records)


def test_unknown_ids_are_dropped_and_counted_unless_strict(tmp_path: Path) -> None:
    """issue 26: rows for items or systems the dataset lacks are dropped and counted (one line
    per file row, whatever its metric columns); strict refuses them as before."""
    from metajudge.scores.readers.alignment import IdPolicy

    p = tmp_path / "s.csv"
    p.write_text("item,system,bleu,judge\n0,sysA,0.1,3\n9,sysA,0.2,4\n0,sysC,0.3,5\n1,sysB,0.4,2\n")
    ids = IdPolicy()
    rows = score_files.read_scores(p, _pairs(), ids=ids)
    assert sorted({r["key"] for r in rows}) == ["0::a", "1::b"]
    assert ids.summary() == {
        "rule": "drop",
        "rows_dropped": 2,
        "files": {"s.csv": 2},
        "first": ["9/sysA", "0/sysC"],
        "rows_other_subsets": 0,
        "subset": None,
    }
    assert ids.warning() == (
        "2 score rows for ids the dataset does not contain were dropped (s.csv: 2; first ids: "
        "9/sysA, 0/sysC; --strict-ids refuses them)"
    )
    with pytest.raises(InputError) as ei:
        score_files.read_scores(p, _pairs(), ids=IdPolicy(strict=True))
    assert (ei.value.line, ei.value.field) == (3, "item")
    assert "unknown item id '9'" in str(ei.value)


def test_a_file_of_unknown_ids_only_is_refused_under_either_rule(tmp_path: Path) -> None:
    from metajudge.scores.readers.alignment import IdPolicy

    p = tmp_path / "s.jsonl"
    p.write_text('{"item": "e7", "system": "m1", "metric": "m", "score": 1}\n')
    with pytest.raises(InputError) as ei:
        score_files.read_scores(p, _likert(), ids=IdPolicy())
    assert (ei.value.path, ei.value.line, ei.value.field) == (str(p), 1, "item")
    assert "unknown item id 'e7'" in str(ei.value) and "no row of the file" in str(ei.value)
