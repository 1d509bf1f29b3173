"""``data validate``: every error of a file with file, line and field, in exact words; label kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.formats import Scale
from metajudge.data.loading import load as load_file
from metajudge.data.validation import check_file, read_jsonl
from metajudge.errors import InputError

LIKERT_CARD = {
    "name": "summ",
    "kind": "likert",
    "dimensions": ["coherence", "fluency"],
    "scale": {"min": 1, "max": 5, "values": [1, 2, 3, 4, 5]},
    "annotators": 3,
}
CAT_CARD = {
    "name": "safety",
    "kind": "categorical",
    "dimensions": ["safe"],
    "scale": {"labels": ["No", "Unsure", "Yes"], "ordered": True},
    "annotators": 3,
}


def _resp(i: str, scores: dict, system: str = "s1") -> dict:  # type: ignore[type-arg]
    return {
        "id": i,
        "input": {"question": "q"},
        "system": system,
        "response": "r",
        "scores": scores,
    }


def _pair(i: str) -> dict:  # type: ignore[type-arg]
    return {
        "id": i,
        "input": {"question": "q"},
        "a": {"system": "x", "response": "r"},
        "b": {"system": "y", "response": "s"},
        "labels": {"coherence": [1, 0, -1]},
    }


def _file(tmp_path: Path, card: dict | None, recs: list, name: str = "f.jsonl") -> Path:  # type: ignore[type-arg]
    lines = ([json.dumps({"card": card})] if card is not None else []) + [
        json.dumps(r) for r in recs
    ]
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _errors(p: Path) -> list[str]:
    return [str(e) for e in check_file(p).errors]


def test_allowed_values_vs_range(tmp_path: Path) -> None:
    p = _file(
        tmp_path,
        LIKERT_CARD,
        [_resp("1", {"coherence": [2.67, 3, 4]}), _resp("2", {"coherence": [7, 3, 4]})],
    )
    errs = _errors(p)
    assert errs == [
        (
            f"{p}:2: field scores.coherence[0]: label 2.67 is outside the allowed values {{1,2,3,4,5}}"
            " (it is inside the range [1, 5]: store each annotator's own label, not a mean)"
        ),
        f"{p}:3: field scores.coherence[0]: label 7 is outside the declared scale [1, 5]",
    ]


def test_missing_card_fields_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    card = {k: v for k, v in LIKERT_CARD.items() if k not in ("name", "scale")}
    p = _file(tmp_path, card, [_resp("1", {"coherence": [1, 2, 3]})])
    assert _errors(p) == [f"{p}:1: field card: missing card field(s): name, scale"]
    assert main(["data", "validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert "missing card field(s): name, scale" in err and "KeyError" not in err


def test_json_not_jsonl_detected(tmp_path: Path) -> None:
    recs = [_resp("1", {"coherence": [1, 2, 3]}), _resp("2", {"coherence": [1, 2, 3]})]
    arr = tmp_path / "arr.json"
    arr.write_text(json.dumps(recs, indent=2))
    one_line = tmp_path / "one.json"
    one_line.write_text(json.dumps(recs))
    obj = tmp_path / "obj.json"
    obj.write_text(json.dumps({"card": LIKERT_CARD, "records": recs}, indent=2))
    want = "this looks like {}, not JSON Lines: one record per line (one JSON object a line)"
    assert _errors(arr) == [f"{arr}:1: field <json>: " + want.format("a JSON array")]
    assert _errors(one_line) == [f"{one_line}:1: field <json>: " + want.format("a JSON array")]
    assert _errors(obj) == [
        f"{obj}:1: field <json>: " + want.format("a JSON object spread over several lines")
    ]


def test_record_kind_vs_card_kind(tmp_path: Path) -> None:
    p = _file(tmp_path, LIKERT_CARD, [_pair("1")])
    assert _errors(p) == [
        (
            f"{p}:2: field <record>: record kind pairwise does not match the card kind likert: "
            "a likert card needs records with id, input, system, response, scores"
        )
    ]


def test_empty_dimensions_and_unknown_kind(tmp_path: Path) -> None:
    p = _file(tmp_path, {**LIKERT_CARD, "dimensions": []}, [_resp("1", {"coherence": [1, 2, 3]})])
    assert _errors(p)[0] == (
        f'{p}:1: field card.dimensions: the card declares no dimensions: list at least one name in "dimensions"'
    )
    q = _file(tmp_path, {**LIKERT_CARD, "kind": "graded"}, [], name="k.jsonl")
    assert _errors(q) == [
        (
            f"{q}:1: field card.kind: unknown kind 'graded' "
            "(allowed: likert, categorical, binary, pairwise, benchmark)"
        )
    ]


def test_annotator_count_and_all_null_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _file(
        tmp_path,
        LIKERT_CARD,
        [_resp("1", {"coherence": [1, 2]}), _resp("2", {"coherence": [None, None, None]})],
    )
    rep = check_file(p)
    assert not rep.errors
    assert [str(w) for w in rep.warnings] == [
        (
            f"{p}:2: field scores.coherence: 2 annotator values where the card says annotators: 3 "
            "(use null for an annotator who did not rate)"
        ),
        f"{p}:3: field scores.coherence: all ratings are null (no annotator labelled this dimension)",
    ]
    assert main(["data", "validate", str(p)]) == 0
    err = capsys.readouterr().err
    assert err.count("metajudge: warning: ") == 2


def test_every_error_listed_up_to_max(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = [_resp(str(i), {"coherence": [9, 9, 9]}) for i in range(10)]
    p = _file(tmp_path, LIKERT_CARD, recs)
    rep = check_file(p, max_errors=20)
    assert rep.n_errors == 30 and len(rep.errors) == 20
    assert main(["data", "validate", str(p), "--max-errors", "5"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len([x for x in err if x.startswith("metajudge: error: ")]) == 5
    assert err[-1] == f"{p}: 30 error(s) (first 5 shown; --max-errors)"
    with pytest.raises(InputError, match=r"and 29 more"):
        read_jsonl(p)


def test_categorical_card_loads(tmp_path: Path) -> None:
    recs = [_resp(str(i), {"safe": ["No", "Yes", None]}) for i in range(3)]
    p = _file(tmp_path, CAT_CARD, recs)
    ds = load_file(p)
    assert ds.card.label_kind == "categorical" and ds.card.scale.ordered
    assert ds.card.scale == Scale(0.0, 2.0, None, ("No", "Unsure", "Yes"), True)
    assert ds.records[0].scores["safe"] == ("No", "Yes", None)  # type: ignore[union-attr]
    bad = _file(tmp_path, CAT_CARD, [_resp("1", {"safe": ["Maybe", 1, None]})], name="b.jsonl")
    assert _errors(bad) == [
        f"{bad}:2: field scores.safe[1]: expected a string or null, got integer",
    ]
    bad2 = _file(tmp_path, CAT_CARD, [_resp("1", {"safe": ["Maybe", "No", None]})], name="c.jsonl")
    assert _errors(bad2) == [
        (
            f"{bad2}:2: field scores.safe[0]: label 'Maybe' is not one of the card's labels "
            "{No < Unsure < Yes}"
        )
    ]


def test_string_values_under_likert_say_categorical(tmp_path: Path) -> None:
    card = {**LIKERT_CARD, "scale": {"min": 0, "max": 2, "values": ["No", "Unsure", "Yes"]}}
    p = _file(tmp_path, card, [_resp("1", {"coherence": [1, 2, 3]})])
    errs = _errors(p)
    assert errs[0] == (
        f"{p}:1: field card.scale.values[0]: expected a number, got string "
        '(string labels need kind "categorical" and scale {"labels": [...]})'
    )
    assert "could not convert" not in " ".join(errs)


def test_label_kinds() -> None:
    from metajudge.data.registry import load_card

    assert load_card("hanna").label_kind == "numeric"
    assert load_card("ragchecker_meta_eval").label_kind == "pairwise"
    assert load_card("mudabench").label_kind == "none"
    from metajudge.data.validation import card_from_obj

    b = card_from_obj({**CAT_CARD, "kind": "binary", "scale": {"labels": ["no", "yes"]}})
    assert b.label_kind == "binary" and b.record_kind == "response"
    with pytest.raises(InputError, match="scale.labels"):
        card_from_obj({**CAT_CARD, "kind": "binary"})  # three labels


def test_header_less_categorical_inferred(tmp_path: Path) -> None:
    p = _file(tmp_path, None, [_resp("1", {"safe": ["No", "Yes"]}), _resp("2", {"safe": ["Yes"]})])
    ds = load_file(p)
    assert ds.card.kind == "categorical" and ds.card.scale.labels == ("No", "Yes")
    with pytest.raises(InputError, match="no pairwise view"):
        ds.pairs()


def test_shipped_cards_and_fixtures_match_the_schemas() -> None:
    """The JSON Schemas are the documented truth: every shipped card and fixture satisfies them."""
    from metajudge.data.registry import cards_dir
    from metajudge.data.validation import schema_errors

    cards = sorted(cards_dir().glob("*.json"))
    assert len(cards) >= 10
    for c in cards:
        assert schema_errors(json.loads(c.read_text()), "card", path=c, line=None) == [], c
    fixtures = sorted((Path(__file__).parents[1] / "fixtures" / "byod").glob("*.jsonl"))
    for f in fixtures:
        lines = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        card = lines[0]["card"]
        assert schema_errors(card, "card", path=f, line=1) == []
        kind = card["kind"]
        for i, rec in enumerate(lines[1:], start=2):
            assert schema_errors(rec, f"record.{kind}", path=f, line=i) == [], (f, i)
        rep = check_file(f)
        assert not rep.errors and not rep.warnings, (f, rep.errors, rep.warnings)


def test_data_show_export_take_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = [_resp(str(i), {"coherence": [1, 2, 3]}, system=s) for i in range(2) for s in "ab"]
    p = _file(tmp_path, LIKERT_CARD, recs)
    assert main(["data", "show", "--input", str(p), "-n", "1"]) == 0
    out = capsys.readouterr().out
    assert '"name": "summ"' in out and '"records": 4' in out
    # --dataset takes only a name (issue 18: a path there loaded cards from outside the card
    # folder); the message says --input
    assert main(["data", "show", "--dataset", str(p)]) == 2
    assert "--input" in capsys.readouterr().err
    o = tmp_path / "out.jsonl"
    assert main(["data", "export", "--input", str(p), "--pairs", "-o", str(o)]) == 0
    assert "wrote 2 pairs from 2 inputs of summ" in capsys.readouterr().out
    assert main(["data", "validate", str(o)]) == 0
    assert main(["data", "show", "--dataset", "no_such_set"]) == 2
    assert "unknown dataset 'no_such_set'" in capsys.readouterr().err


def test_data_list_data_dir_lists_without_download(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from metajudge.data import fetch

    def no_download(*a: object, **k: object) -> None:
        raise AssertionError("data list --data-dir must not download")

    monkeypatch.setattr(fetch, "download_file", no_download)
    src = Path(__import__("os").environ["METAJUDGE_DATA_DIR"]) / "ragchecker_meta_eval"
    shutil.copytree(src, tmp_path / "ragchecker_meta_eval")
    (tmp_path / "hanna").mkdir()  # a built-in dataset folder with its files missing
    recs = [_resp(str(i), {"coherence": [1, 2, 3]}) for i in range(3)]
    (tmp_path / "mine").mkdir()
    _file(tmp_path / "mine", LIKERT_CARD, recs, name="summ.jsonl")
    assert main(["data", "list", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert set(rows) == {"hanna", "ragchecker_meta_eval", "summ"}
    assert "missing 3 of 3 files" in rows["hanna"]
    assert " 280 " in rows["ragchecker_meta_eval"] and rows["ragchecker_meta_eval"].endswith("ok")


def test_load_file_recognises_an_upstream_file() -> None:
    import os

    p = Path(os.environ["METAJUDGE_DATA_DIR"]) / "ragchecker_meta_eval" / "human_labeled_data.json"
    ds = load_file(p)
    assert ds.name == "ragchecker_meta_eval" and len(ds.records) == 280
    assert load_file(p.parent).name == "ragchecker_meta_eval"
