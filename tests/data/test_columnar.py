"""Issue 65's columnar input: the same data as JSONL and as Parquet / Arrow IPC give the same
meta-evaluation (1e-12, through the CLI), and Chatbot Arena battle files (JSON and Parquet) read
as they are released: one pairwise record per battle, ties and both-bad ties kept apart, the
judge as annotator; ``data doctor`` names both."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metajudge.data.loading import file_kind, load
from metajudge.errors import InputError
from metajudge.runs.data_commands import run_validate
from metajudge.scores.doctor import describe

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
feather = pytest.importorskip("pyarrow.feather")

ROOT = Path(__file__).resolve().parents[2]
BYOD = ROOT / "tests" / "fixtures" / "byod"
DATA, AUTHORS = BYOD / "faithfulness.jsonl", BYOD / "faithfulness_authors.csv"
WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
MODELS = ("gpt-4", "claude-v1", "vicuna-13b", "alpaca-13b")


def _jsonl(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    objs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return objs[0]["card"], objs[1:]


def _nested_parquet(dst: Path) -> Path:
    """The JSONL file's records as a Parquet table of the same fields, the card as metadata."""
    card, recs = _jsonl(DATA)
    t = pa.Table.from_pylist(recs)
    pq.write_table(t.replace_schema_metadata({b"metajudge.card": json.dumps(card)}), dst)
    return dst


def _flat_arrow(dst: Path) -> Path:
    """The same records with the input's fields as flat columns, in an Arrow IPC file."""
    card, recs = _jsonl(DATA)
    flat = [{**{k: v for k, v in r.items() if k != "input"}, **r["input"]} for r in recs]
    t = pa.Table.from_pylist(flat)
    feather.write_feather(t.replace_schema_metadata({b"metajudge.card": json.dumps(card)}), dst)
    return dst


def _score_tables(tmp: Path) -> tuple[Path, Path]:
    """The authors' CSV as a wide Parquet table and as long score rows in Arrow IPC."""
    rows = list(csv.DictReader(AUTHORS.open(encoding="utf-8")))
    metrics = [k for k in rows[0] if k not in ("item", "system")]
    wide = {k: [r[k] for r in rows] for k in ("item", "system")}
    wide |= {m: [float(r[m]) if r[m] else None for r in rows] for m in metrics}
    pq.write_table(pa.table(wide), tmp / "wide.parquet")
    long = [
        {"item": r["item"], "system": r["system"], "metric": m, "score": float(r[m])}
        for r in rows
        for m in metrics
        if r[m]
    ]
    feather.write_feather(pa.Table.from_pylist(long), tmp / "long.arrow")
    return tmp / "wide.parquet", tmp / "long.arrow"


def _meta_eval(tmp: Path, data: Path, scores: Path, name: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    out = tmp / name
    argv = ["meta-eval", "--input", str(data), "--scores", str(scores), "--out", str(out)]
    p = subprocess.run(
        [sys.executable, "-m", "metajudge", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    return json.loads((out / "result.json").read_text(encoding="utf-8"))


def _numbers(d: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a result but where it was read from (run, timing, the file's signature)."""
    if isinstance(d, dict):
        skip = ("run", "timing_s", "signatures")
        items = [(k, v) for k, v in d.items() if k not in skip]
        return {k2: v2 for k, v in items for k2, v2 in _numbers(v, f"{path}/{k}").items()}
    if isinstance(d, list):
        return {k: v for i, x in enumerate(d) for k, v in _numbers(x, f"{path}[{i}]").items()}
    return {path: d}


def _assert_equal(a: dict[str, Any], b: dict[str, Any]) -> None:
    na, nb = _numbers(a), _numbers(b)
    assert na.keys() == nb.keys()
    for k, v in na.items():
        if isinstance(v, float) and isinstance(nb[k], float) and not math.isnan(v):
            assert nb[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k
        else:
            same_nan = isinstance(v, float) and math.isnan(v) and math.isnan(nb[k])
            assert nb[k] == v or same_nan, k


def test_jsonl_and_columnar_give_equal_meta_eval(tmp_path: Path) -> None:
    wide, long = _score_tables(tmp_path)
    base = _meta_eval(tmp_path, DATA, AUTHORS, "jsonl")
    assert base["metrics"] and base["cells"]
    parquet = _meta_eval(tmp_path, _nested_parquet(tmp_path / "d.parquet"), wide, "parquet")
    arrow = _meta_eval(tmp_path, _flat_arrow(tmp_path / "d.arrow"), long, "arrow")
    _assert_equal(base, parquet)
    _assert_equal(base, arrow)


def test_columnar_records_equal_jsonl_records(tmp_path: Path) -> None:
    jsonl = load(DATA)
    for p in (_nested_parquet(tmp_path / "d.parquet"), _flat_arrow(tmp_path / "d.arrow")):
        assert file_kind(p) == ("columnar", None)
        ds = load(p)
        assert ds.card == jsonl.card
        assert ds.records == jsonl.records
        v = run_validate(str(p), max_errors=20)
        assert v.ok and v.summary.startswith(f"OK {p}: 24 likert records"), v.summary


def _battles(n: int) -> list[dict[str, Any]]:
    """Battles in Arena's columns; question ``q0`` comes back once (two battles on it)."""
    out = []
    for i in range(n):
        conv = [{"role": "user", "content": f"question {i}"}]
        out.append(
            {
                "question_id": f"q{i % (n - 1)}",
                "model_a": MODELS[i % 4],
                "model_b": MODELS[(i + 1) % 4],
                "winner": WINNERS[i % 4],
                "judge": f"arena_user_{i % 3}",
                "conversation_a": [*conv, {"role": "assistant", "content": f"a{i}"}],
                "conversation_b": [*conv, {"role": "assistant", "content": f"b{i}"}],
                "turn": 1,
                "anony": True,
            }
        )
    return out


def _arena_files(tmp: Path, battles: list[dict[str, Any]]) -> tuple[Path, Path]:
    (tmp / "arena.json").write_text(json.dumps(battles), encoding="utf-8")
    pq.write_table(pa.Table.from_pylist(battles), tmp / "arena.parquet")
    return tmp / "arena.json", tmp / "arena.parquet"


def test_arena_battles_one_pairwise_record_each(tmp_path: Path) -> None:
    js, parquet = _arena_files(tmp_path, _battles(9))
    ds = load(js)
    assert file_kind(parquet) == ("arena", None) and ds.card.kind == "pairwise"
    assert load(parquet).records == ds.records
    recs = ds.records
    assert [r.id for r in recs][:2] == ["q0", "q1"] and recs[8].id == "q0#2"
    assert [r.labels["preference"] for r in recs[:4]] == [(-1.0,), (1.0,), (0.0,), (0.0,)]
    assert [r.meta.get("tie") for r in recs[:4]] == [None, None, "tie", "both bad"]
    assert recs[3].meta["winner"] == "tie (bothbad)" and recs[2].meta["winner"] == "tie"
    assert recs[4].meta["annotator"] == "arena_user_1"
    assert (recs[1].a.system, recs[1].b.system) == ("claude-v1", "vicuna-13b")
    assert (recs[1].input.question, recs[1].a.response) == ("question 1", "a1")


def test_arena_meta_eval_json_equals_parquet(tmp_path: Path) -> None:
    battles = _battles(24)
    js, parquet = _arena_files(tmp_path, battles)
    ids = [r.id for r in load(js).records]
    rows = [
        {"item": rid, "side": side, "metric": "judge", "score": (i * 7 + (side == "b")) % 5}
        for i, rid in enumerate(ids)
        for side in "ab"
    ]
    scores = tmp_path / "judge.jsonl"
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    _assert_equal(
        _meta_eval(tmp_path, js, scores, "arena_json"),
        _meta_eval(tmp_path, parquet, scores, "arena_parquet"),
    )


def test_arena_unknown_winner_names_the_field(tmp_path: Path) -> None:
    battles = _battles(5)
    battles[2]["winner"] = "draw"
    js, _ = _arena_files(tmp_path, battles)
    with pytest.raises(InputError, match="winner must be one of") as e:
        load(js)
    assert e.value.field == "winner"


def test_doctor_names_arena_columnar_records_and_score_tables(tmp_path: Path) -> None:
    js, parquet = _arena_files(tmp_path, _battles(9))
    d = describe(parquet)
    assert d["format"] == "arena" and d["rows"] == 9
    note = d["notes"][0]
    assert "3 model_a, 2 model_b, 2 tie, 2 tie (bothbad)" in note and "3 judges" in note
    assert describe(js)["format"] == "arena"
    records = describe(_nested_parquet(tmp_path / "d.parquet"))
    assert records["format"] == "columnar records" and records["rows"] == 24
    assert records["systems"] == ["abstractive", "hallucinating", "lead"]
    wide, long = _score_tables(tmp_path)
    for p in (wide, long):
        d = describe(p)
        assert d["format"] == "parquet" and d["score_columns"] == ["authors_factcc"]
        assert d["systems"] == ["abstractive", "hallucinating", "lead"]


def test_flat_pairwise_columns_and_a_map_of_labels(tmp_path: Path) -> None:
    """The documented flat columns of a pairwise record and ``labels`` as a map column."""
    src = BYOD / "pairwise.jsonl"
    card, recs = _jsonl(src)
    flat = {
        "id": [r["id"] for r in recs],
        "question": [r["input"]["question"] for r in recs],
        "reference": [r["input"].get("reference") for r in recs],
        "system_a": [r["a"]["system"] for r in recs],
        "response_a": [r["a"].get("response") for r in recs],
        "system_b": [r["b"]["system"] for r in recs],
        "response_b": [r["b"].get("response") for r in recs],
        "labels": [list(r["labels"].items()) for r in recs],
    }
    schema = pa.schema(
        [(k, pa.string()) for k in flat if k != "labels"]
        + [("labels", pa.map_(pa.string(), pa.list_(pa.float64())))],
        metadata={"metajudge.card": json.dumps(card)},
    )
    pq.write_table(pa.table(flat, schema=schema), tmp_path / "pairs.parquet")
    got, want = load(tmp_path / "pairs.parquet"), load(src)
    assert got.card == want.card and got.records == want.records


#: texts whose word counts Arrow and ``str.split`` must agree on (non-ASCII, \x1c, \v, blanks)
TEXTS = ("two words", " lead and trail ", "é\u00a0b c", "x\x1cy\x0bz", "", "  ", "a\u2028b")


def _pairwise(tmp: Path, n: int = 60) -> tuple[Path, Path, Path, Path]:
    """``n`` pairs (4 systems, 3 annotators, texts of :data:`TEXTS` and longer ones) as JSONL
    and Parquet, and one metric's scores as a wide CSV (read by key: a text-free load) and as
    JSONL score rows (a file the loader keeps the texts for)."""
    card = {
        "name": "pairs",
        "kind": "pairwise",
        "description": "text-free load test",
        "repository": "",
        "commit": "",
        "files": [],
        "license": "",
        "dimensions": ["overall"],
        "scale": {"min": -2, "max": 2},
        "annotators": 3,
        "direction": "positive = b better",
    }
    recs = []
    for i in range(n):
        text = [TEXTS[(i + k) % len(TEXTS)] + " word" * ((i * (k + 3)) % 11) for k in range(2)]
        recs.append(
            {
                "id": f"p{i}",
                "input": {"question": f"question {i} " * (i % 4 + 1)},
                "a": {"system": f"s{i % 4}", "response": text[0]},
                "b": {"system": f"s{(i + 1) % 4}", "response": text[1]},
                "labels": {"overall": [float((i * k) % 5 - 2) for k in (1, 2, 3)]},
            }
        )
    js = tmp / "pairs.jsonl"
    js.write_text("".join(json.dumps(o) + "\n" for o in [{"card": card}, *recs]), "utf-8")
    parquet = tmp / "pairs.parquet"
    t = pa.Table.from_pylist(recs)
    pq.write_table(t.replace_schema_metadata({b"metajudge.card": json.dumps(card)}), parquet)
    score = {(f"p{i}", s): float((i * 3 + (s == "b") * 5) % 7) for i in range(n) for s in "ab"}
    wide = tmp / "scores.csv"
    wide.write_text(
        "item,side,m0\n" + "".join(f"{i},{s},{v!r}\n" for (i, s), v in score.items()), "utf-8"
    )
    long = tmp / "scores.jsonl"
    rows = [{"item": i, "side": s, "metric": "m0", "score": v} for (i, s), v in score.items()]
    long.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return js, parquet, wide, long


def test_text_free_load_keeps_word_counts_not_texts(tmp_path: Path) -> None:
    from metajudge.data.fast_records import NO_TEXT

    js, parquet, _, _ = _pairwise(tmp_path)
    full = load(js)
    for p in (js, parquet):
        lean = load(p, texts=False)
        assert lean.card == full.card and len(lean.records) == len(full.records)
        for r, x in zip(full.records, lean.records, strict=True):
            assert (x.id, x.labels, x.meta, x.input) == (r.id, r.labels, r.meta, NO_TEXT)
            for got, want in ((x.a, r.a), (x.b, r.b)):
                assert (got.system, got.response) == (want.system, None)
                assert got.words == len(want.response.split())


def _run(tmp: Path, data: Path, scores: Path, name: str) -> dict[str, Any]:
    from metajudge.data.source import DataSource
    from metajudge.runs.meta_eval import run_meta_eval

    out = tmp / name
    source = DataSource(path=str(data), scores=[str(scores)])
    run_meta_eval(source, out_dir=out, plots=False, progress=False)
    return json.loads((out / "result.json").read_text(encoding="utf-8"))


def test_text_free_meta_eval_equals_the_run_with_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metajudge.data import loading
    from metajudge.runs import meta_eval

    js, parquet, wide, long = _pairwise(tmp_path)
    with_texts = _run(tmp_path, js, wide, "texts")  # a small file keeps its texts
    length = [c for c in with_texts["cells"] if c["metric"] == "trivial.length_words"]
    assert length and length[0]["stats"]["pearson"]["value"] is not None
    loads: list[bool] = []
    real = loading.open_dataset
    monkeypatch.setattr(meta_eval, "TEXT_FREE_BYTES", 0)  # every file: text-free
    monkeypatch.setattr(
        loading, "open_dataset", lambda *a, **k: loads.append(k["texts"]) or real(*a, **k)
    )
    _assert_equal(with_texts, _run(tmp_path, js, long, "jsonl_scores"))  # a JSONL score file
    _assert_equal(with_texts, _run(tmp_path, js, wide, "jsonl_text_free"))
    _assert_equal(with_texts, _run(tmp_path, parquet, wide, "parquet_text_free"))
    assert loads == [True, False, False]


def test_arena_turn_words_in_arrow_equal_the_texts(tmp_path: Path) -> None:
    battles = _battles(12)
    for i, b in enumerate(battles):
        extra = {"role": "assistant", "content": None if i % 5 == 0 else TEXTS[i % len(TEXTS)]}
        b["conversation_a"] = [*b["conversation_a"], extra]
        if i % 4 == 0:  # no assistant turn: no text
            b["conversation_b"] = b["conversation_b"][:1]
    _, parquet = _arena_files(tmp_path, battles)
    full, lean = load(parquet), load(parquet, texts=False)
    for r, x in zip(full.records, lean.records, strict=True):
        assert x.id == r.id and x.labels == r.labels and x.meta == r.meta
        for got, want in ((x.a, r.a), (x.b, r.b)):
            assert got.words == (None if want.response is None else len(want.response.split()))
    assert lean.records[0].b.words is None and lean.records[1].a.words == 4  # a1 lead and trail


def _judge_table(tmp: Path, ids: list[str], extra: dict[str, list[Any]] | None = None) -> Path:
    """A wide Parquet score table of the battles: ``judge_p``, the judge's probability that each
    side is the better (side a: 1 - p, side b: p), and ``extra`` columns."""
    p_b = [((i * 7) % 10 + 0.5) / 10.5 for i in range(len(ids))]
    table = {
        "item": [rid for rid in ids for _ in "ab"],
        "side": [s for _ in ids for s in "ab"],
        "judge_p": [x for p in p_b for x in (1 - p, p)],
    }
    pq.write_table(pa.table(table | (extra or {})), tmp / "judge.parquet")
    return tmp / "judge.parquet"


def test_wide_parquet_scores_in_columns_equal_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metajudge.scores.files import read_scores
    from metajudge.scores.readers import columnar

    _, parquet = _arena_files(tmp_path, _battles(12))
    recs = load(parquet).records
    ids = [r.id for r in recs]
    ints = [k % 3 for k in range(2 * len(ids))]
    extra = {"n": ints, "gap": [None if k % 5 == 0 else k / 4 for k in range(2 * len(ids))]}
    scores = _judge_table(tmp_path, ids, extra)
    got = read_scores(scores, recs)
    assert not isinstance(got, list)  # a ScoreTable, in columns
    monkeypatch.setattr(columnar, "_wide_in_columns", lambda *a: None)
    want = read_scores(scores, recs)
    assert isinstance(want, list) and list(got) == want
    assert {r["score"] for r in want if r["metric"] == "gap"} >= {None, 0.25}
    monkeypatch.undo()
    inf = _judge_table(tmp_path, ids, {"bad": [math.inf] + [0.0] * (2 * len(ids) - 1)})
    with pytest.raises(InputError, match="infinite"):  # refused as the row reader refuses it
        read_scores(inf, recs)


def test_arena_card_text_free_equals_the_card_with_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 65: ``judge card`` of a judge column on an Arena Parquet file read text-free gives
    every number of the card read with the texts (each part: agreement, selective, conformal)."""
    from metajudge.data import loading
    from metajudge.data.source import DataSource
    from metajudge.runs import meta_eval
    from metajudge.runs.judge_card import CardOptions, run_card

    _, parquet = _arena_files(tmp_path, _battles(400))
    scores = _judge_table(tmp_path, [r.id for r in load(parquet).records])
    src = DataSource(path=str(parquet), scores=(str(scores),), judge="judge_p")
    opts = CardOptions(n_boot=200, repeats=3)
    loads: list[bool] = []
    real = loading.open_dataset
    monkeypatch.setattr(
        loading, "open_dataset", lambda *a, **k: loads.append(k["texts"]) or real(*a, **k)
    )
    texts = run_card(src, opts, tmp_path / "texts").card
    monkeypatch.setattr(meta_eval, "TEXT_FREE_BYTES", 0)  # every file: text-free
    lean = run_card(src, opts, tmp_path / "lean").card
    assert loads == [True, False]
    page = (tmp_path / "lean" / "card.html").read_text(encoding="utf-8")
    assert "read text-free" in page and "read text-free" not in (
        tmp_path / "texts" / "card.html"
    ).read_text(encoding="utf-8")
    assert {k: p["status"] for k, p in lean["parts"].items() if p["status"] == "ok"} == {
        "agreement": "ok",
        "selective": "ok",
        "conformal": "ok",
    }
    drop = ("command",)  # the parts' command lines name their run folders
    a, b = ({k: v for k, v in _numbers(c).items() if not k.endswith(drop)} for c in (texts, lean))
    assert a.keys() == b.keys()
    for k, v in a.items():
        same_nan = isinstance(v, float) and math.isnan(v) and math.isnan(b[k])
        assert b[k] == v or same_nan, k
