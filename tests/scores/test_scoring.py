"""score_dataset / write_scores / read_scores, resume, and the CLI commands of metajudge.cli.metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.formats import (
    Input,
    LikertRecord,
    PairwiseRecord,
    Response,
    write_jsonl,
)
from metajudge.errors import InputError
from metajudge.scores.files import read_scores
from metajudge.scores.scoring import score_dataset, score_lookup, write_scores


def _records() -> list[PairwiseRecord]:
    return [
        PairwiseRecord(
            id="p1",
            input=Input(question="What was revenue?", reference="Revenue was $4.2 billion."),
            a=Response("sysA", "Revenue was 4.2 billion dollars."),
            b=Response("sysB", "I am not sure."),
            labels={"overall": (-1.0, -2.0)},
        ),
        PairwiseRecord(
            id="p2",
            input=Input(question="Capital?", reference="Paris is the capital of France."),
            a=Response("sysA", "Paris."),
            b=Response("sysB", ""),
            labels={"overall": (1.0, 1.0)},
        ),
        PairwiseRecord(
            id="p3",
            input=Input(question="Scores only", reference=None),
            a=Response("sysA", "text"),
            b=Response("sysB", None),
            labels={"overall": (0.0, 0.0)},
        ),
    ]


def test_score_dataset_rows_and_keys() -> None:
    rows = score_dataset(_records(), ["bleu", "rouge_l"], progress=False)
    assert len(rows) == 2 * 6
    assert [r["key"] for r in rows[:6]] == ["p1::a", "p1::b", "p2::a", "p2::b", "p3::a", "p3::b"]
    r0 = rows[0]
    assert set(r0) == {
        "key",
        "item",
        "system",
        "side",
        "metric",
        "score",
        "signature",
        "details",
        "error",
        "inputs",  # the digest of what bleu read (issue 44 item 2)
    }
    assert (r0["item"], r0["system"], r0["side"], r0["metric"]) == ("p1", "sysA", "a", "bleu")
    look = score_lookup(rows)
    assert look[("p2::b", "rouge_l")] == 0.0  # empty response: documented 0
    bad = [r for r in rows if r["score"] is None]
    assert {r["key"] for r in bad} == {"p3::a", "p3::b"}  # no reference / no response
    assert all(r["error"] for r in bad)


def test_score_dataset_likert_and_options() -> None:
    recs = [
        LikertRecord("i1", Input("q", "the cats sat"), "s1", "the cat sat", {"x": (1.0,)}),
        LikertRecord("i1", Input("q", "the cats sat"), "s2", "a dog ran", {"x": (2.0,)}),
    ]
    rows = score_dataset(
        recs, ["rouge_l"], options={"rouge_l": {"use_stemmer": False}}, progress=False
    )
    assert [r["key"] for r in rows] == ["i1::s1", "i1::s2"] and rows[0]["side"] is None
    assert "stem:no" in rows[0]["signature"] and rows[0]["score"] == pytest.approx(2 / 3)
    with pytest.raises(InputError, match="not being scored"):
        score_dataset(recs, ["bleu"], options={"rouge_l": {}}, progress=False)
    with pytest.raises(InputError, match="unknown metric"):
        score_dataset(recs, ["nope"], progress=False)
    with pytest.raises(InputError, match="twice"):
        score_dataset(recs, ["bleu", "bleu"], progress=False)


def test_write_read_round_trip(tmp_path: Path) -> None:
    rows = score_dataset(_records(), ["bleu", "number_match"], progress=False)
    p = tmp_path / "s.jsonl"
    assert write_scores(p, rows) == len(rows)
    assert read_scores(p) == rows


def _write_lines(p: Path, objs: list) -> Path:
    p.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return p


GOOD = {
    "key": "1::a",
    "item": "1",
    "system": "s",
    "side": "a",
    "metric": "bleu",
    "score": 1.0,
    "signature": "bleu|x",
    "details": {},
    "error": None,
}


@pytest.mark.parametrize(
    "change,field",
    [
        ({"score": "0.5"}, "score"),
        ({"score": True}, "score"),
        ({"score": None}, "error"),  # null score without a reason
        ({"key": ""}, "key"),
        ({"metric": 3}, "metric"),
        ({"side": "c"}, "side"),
        ({"details": [1]}, "details"),
    ],
)
def test_read_scores_validation(tmp_path: Path, change: dict, field: str) -> None:
    p = _write_lines(tmp_path / "bad.jsonl", [GOOD, {**GOOD, "key": "2::a", **change}])
    with pytest.raises(InputError) as ei:
        read_scores(p)
    assert ei.value.line == 2 and ei.value.field == field and ei.value.path == str(p)


def test_read_scores_duplicates_missing_nan_and_empty(tmp_path: Path) -> None:
    p = _write_lines(tmp_path / "dup.jsonl", [GOOD, GOOD])
    with pytest.raises(InputError, match="first on line 1") as ei:
        read_scores(p)
    assert ei.value.line == 2
    p2 = _write_lines(
        tmp_path / "miss.jsonl", [{k: v for k, v in GOOD.items() if k != "signature"}]
    )
    with pytest.raises(InputError, match="missing required field"):
        read_scores(p2)
    p3 = tmp_path / "nan.jsonl"
    p3.write_text(json.dumps(GOOD).replace("1.0", "NaN") + "\n")
    assert read_scores(p3)[0]["score"] is None  # NaN: a missing score, as in every score file
    p3.write_text(json.dumps(GOOD).replace("1.0", "Infinity") + "\n")
    with pytest.raises(InputError, match="finite"):
        read_scores(p3)
    p4 = tmp_path / "empty.jsonl"
    p4.write_text("")
    with pytest.raises(InputError, match="empty"):
        read_scores(p4)
    assert read_scores(p4, allow_empty=True) == []
    with pytest.raises(InputError, match="non-finite"):
        write_scores(tmp_path / "w.jsonl", [{**GOOD, "score": float("nan")}])
    assert not (tmp_path / "w.jsonl").exists()  # atomic: nothing half-written


def test_resume_keeps_rows_with_the_same_signature(tmp_path: Path) -> None:
    out = tmp_path / "scores.jsonl"
    rows = score_dataset(_records(), ["bleu", "rouge_l"], progress=False)
    # mark a cached row: if it is reused, the marker survives
    for r in rows:
        if r["key"] == "p1::a":
            r["score"] = 0.123456
    write_scores(out, rows)
    again = score_dataset(_records(), ["bleu", "rouge_l"], progress=False, cache_path=out)
    look = score_lookup(again)
    assert look[("p1::a", "bleu")] == 0.123456 and look[("p1::a", "rouge_l")] == 0.123456
    # another signature (option change) -> recomputed
    other = score_dataset(
        _records(),
        ["rouge_l"],
        options={"rouge_l": {"use_stemmer": False}},
        progress=False,
        cache_path=out,
    )
    assert score_lookup(other)[("p1::a", "rouge_l")] != 0.123456


def test_cli_score_metrics_list_and_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.jsonl"
    write_jsonl(data, _records())
    out = tmp_path / "scores.jsonl"
    rc = main(
        [
            "metrics",
            "run",
            "--input",
            str(data),
            "--metrics",
            "bleu,rouge_l,number_match",
            "-o",
            str(out),
            "--quiet",
        ]
    )
    assert rc == 0
    rows = read_scores(out)
    assert len(rows) == 18 and {r["metric"] for r in rows} == {"bleu", "rouge_l", "number_match"}
    text = capsys.readouterr().out
    assert "wrote 18 rows" in text and "bleu|nrefs:1" in text
    # resume: a changed option recomputes only that metric's rows
    rc = main(
        [
            "metrics",
            "run",
            "--input",
            str(data),
            "--metrics",
            "rouge_l",
            "-o",
            str(out),
            "--quiet",
            "--option",
            "rouge_l.use_stemmer=false",
        ]
    )
    assert rc == 0
    rows = read_scores(out)
    assert len(rows) == 18  # bleu and number_match rows kept
    assert all("stem:no" in r["signature"] for r in rows if r["metric"] == "rouge_l")
    assert "(12 rows of other metrics kept)" in capsys.readouterr().out
    rc = main(
        [
            "metrics",
            "run",
            "--input",
            str(data),
            "--metrics",
            "bleu",
            "-o",
            str(out),
            "--quiet",
            "--fresh",
        ]
    )
    assert rc == 0 and len(read_scores(out)) == 6  # --fresh: only this run's rows
    assert (
        main(
            [
                "metrics",
                "run",
                "--input",
                str(data),
                "--metrics",
                "bleu",
                "-o",
                str(out),
                "--option",
                "bleu",
            ]
        )
        == 2
    )
    assert "expected METRIC.KEY=VALUE" in capsys.readouterr().err
    assert main(["metrics", "list", "--format", "json"]) == 0
    infos = json.loads(capsys.readouterr().out)
    by = {i["name"]: i for i in infos}
    assert by["bleu"]["range"] == [0.0, 100.0] and by["rouge_l"]["direction"] == "higher"


def test_cli_score_real_dataset(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "rc.jsonl"
    rc = main(
        [
            "metrics",
            "run",
            "--dataset",
            "ragchecker_meta_eval",
            "--metrics",
            "bleu",
            "-o",
            str(out),
            "--quiet",
        ]
    )
    assert rc == 0
    rows = read_scores(out)
    assert len(rows) == 560 and all(r["score"] is not None for r in rows)
    assert {r["side"] for r in rows} == {"a", "b"}


def test_each_distinct_response_is_scored_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pairwise file repeats responses across pairs: the metric sees each distinct one once,
    and every response key still gets its row (issue 12)."""
    from metajudge.metrics import registry
    from metajudge.metrics.lexical import RougeL

    calls: list[tuple[str, str]] = []

    class CountingRougeL(RougeL):
        def _score_pair(self, key: str, response: str, reference: str, state: object):  # type: ignore[no-untyped-def]
            calls.append((response, reference))
            return super()._score_pair(key, response, reference, state)

    resolve = registry._resolve
    monkeypatch.setattr(
        registry, "_resolve", lambda t: CountingRougeL if t == "test:CountingRougeL" else resolve(t)
    )
    monkeypatch.setitem(
        registry._REGISTRY,
        "rouge_l_counted",
        registry._Entry("rouge_l_counted", "test:CountingRougeL"),
    )
    q = Input(question="Q?", reference="The cat sat on the mat.")
    texts = ["The cat sat.", "A dog ran.", "The mat."]
    recs = [
        PairwiseRecord(
            f"p{i}{j}", q, Response(f"s{i}", texts[i]), Response(f"s{j}", texts[j]), {"o": (1.0,)}
        )
        for i in range(3)
        for j in range(3)
        if i != j
    ]  # 6 pairs, 12 response keys, 3 distinct responses
    rows = score_dataset(recs, ["rouge_l_counted"], progress=False)
    assert len(rows) == 12 and len(calls) == 3
    plain = score_dataset(recs, ["rouge_l"], progress=False)  # the registered metric, unwrapped
    assert [(r["key"], r["score"]) for r in rows] == [(r["key"], r["score"]) for r in plain]
    assert len({r["key"] for r in rows}) == 12 and len(calls) == 3


def test_reference_field_and_all_failed_exit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs = [
        LikertRecord(
            f"r{i}",
            Input(question=f"Summarise article {i}", context="The cat sat on the mat all day."),
            "sys",
            "The cat sat on the mat.",
            {"overall": (3.0,)},
            meta={"summary": "A cat sat."},
        )
        for i in range(3)
    ]
    f = tmp_path / "refree.jsonl"
    write_jsonl(f, recs)
    out = tmp_path / "s.jsonl"
    # no input.reference: every row fails -> exit 1 with the first errors and a hint
    assert (
        main(
            ["metrics", "run", "--input", str(f), "--metrics", "rouge_l", "-o", str(out), "--quiet"]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "no reference text" in err and "--reference-field" in err
    # against another field of the record
    rc = main(
        ["metrics", "run", "--input", str(f), "--metrics", "rouge_l", "-o", str(out), "--quiet", "--fresh",
         "--reference-field", "input.context"]
    )  # fmt: skip
    assert rc == 0
    rows = read_scores(out)
    assert all(r["score"] is not None and r["score"] > 0.5 for r in rows)
    rows = score_dataset(recs, ["rouge_l"], progress=False, reference_field="meta.summary")
    assert all(r["score"] is not None for r in rows)
    with pytest.raises(InputError, match="input.source"):
        score_dataset(recs, ["rouge_l"], progress=False, reference_field="input.source")
