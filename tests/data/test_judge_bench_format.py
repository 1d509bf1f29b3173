"""JUDGE-BENCH's unified format (Bavaresco et al., ACL 2025) read directly, and the published
inter-human α reproduced through ``metajudge data agreement``'s code path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from metajudge.analyses.annotator_agreement import AgreementOptions, agreement
from metajudge.cli import main
from metajudge.data.judge_bench import published_alpha
from metajudge.data.loading import load as load_file
from metajudge.errors import InputError

PUBLISHED = {
    ("dices-990", "safety"): 0.1432,
    ("dices-350-crowdsourced", "safety"): 0.1609,
    ("recipe-crowd-sourcing-data", "grammar"): 0.4151,
    ("recipe-crowd-sourcing-data", "fluency"): 0.4324,
    ("recipe-crowd-sourcing-data", "verbosity"): 0.3991,
    ("recipe-crowd-sourcing-data", "structure"): 0.3986,
    ("recipe-crowd-sourcing-data", "success"): 0.3627,
    ("recipe-crowd-sourcing-data", "overall"): 0.4351,
    ("inferential-strategies", "Sound Reasoning"): 1.0,
}


@pytest.fixture(scope="module")
def jb(load):  # type: ignore[no-untyped-def]
    return load("dmg_judge_bench")


@pytest.mark.parametrize(("subset", "dim"), list(PUBLISHED))
def test_published_alpha_reproduced(jb, subset: str, dim: str) -> None:  # type: ignore[no-untyped-def]
    part = jb.subset(subset)
    res = agreement(part, AgreementOptions(splits=1))
    row = next(r for r in res.rows if r.dimension == dim)
    assert round(row.alpha, 4) == PUBLISHED[(subset, dim)]
    pub = published_alpha(part.card)
    assert pub is not None and row.alpha == pytest.approx(pub[dim], abs=1e-9)


def test_every_shipped_file_reads(jb) -> None:  # type: ignore[no-untyped-def]
    counts = {s: len(jb.subset(s).records) for s in jb.subsets}
    assert counts["dices-990"] == 990 and counts["medical-safety"] == 3701
    assert counts["toxic-chat-test"] == 2853 and len(counts) == 20
    assert jb.subset("dices-990").card.annotators == 76  # uneven counts padded with None
    assert jb.subset("recipe-crowd-sourcing-data").card.kind == "likert"
    mixed = jb.subset("roscoe-drop-overall").card
    assert mixed.kind == "categorical" and mixed.scale_of("Coherency").ordered
    assert {r.meta["subset"] for r in jb.records} == set(jb.subsets)


def test_input_file_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(os.environ["METAJUDGE_DATA_DIR"]) / "dmg_judge_bench"
    src = data / "data/dices/dices_990.json"
    ds = load_file(src)
    assert ds.name == "dices-990" and ds.card.files[0].sha256
    assert main(["data", "agreement", "--input", str(src), "--splits", "2"]) == 0
    out = capsys.readouterr().out
    assert "published α" in out and "0.1432" in out
    exp = tmp_path / "d.jsonl"
    assert main(["data", "export", "--input", str(src), "-o", str(exp)]) == 0
    assert main(["data", "validate", str(exp)]) == 0
    assert (
        main(
            [
                "data",
                "export",
                "--input",
                str(data / "data/medical-safety/data.json"),
                "-o",
                str(exp),
            ]
        )
        == 0
    )
    assert main(["data", "validate", str(exp)]) == 0


def _write(tmp_path: Path, **change: object) -> Path:
    obj = {
        "dataset": "toy",
        "annotations": [
            {
                "metric": "ok",
                "category": "categorical",
                "labels_list": ["Yes", "No"],
                "prompt": "?",
            },
            {"metric": "q", "category": "continuous", "worst": 0, "best": 1, "prompt": "?"},
        ],
        "instances": [
            {
                "id": 1,
                "instance": "a",
                "annotations": {
                    "ok": {"majority_human": "yes", "individual_human_scores": ["yes", "No", "no"]},
                    "q": {"mean_human": 0.5, "individual_human_scores": [0.2, 0.8]},
                },
            },
            {
                "id": 2,
                "instance": "b",
                "annotations": {
                    "ok": {"majority_human": "No", "individual_human_scores": "['No']"},
                    "q": {"mean_human": 0.1, "individual_human_scores": [0.1, 0.1]},
                },
            },
        ],
    }
    obj.update(change)  # type: ignore[arg-type]
    p = tmp_path / "new_set.json"
    p.write_text(json.dumps(obj))
    return p


def test_new_file_any_format(tmp_path: Path) -> None:
    ds = load_file(_write(tmp_path))
    assert ds.name == "new_set" and ds.card.kind == "categorical"
    assert ds.records[0].scores["ok"] == ("Yes", "No", "No")
    assert ds.records[1].scores["ok"] == ("No", None, None)  # padded
    assert ds.card.scale_of("q").labels is None
    lv = {r.dimension: r.level for r in agreement(ds, AgreementOptions(splits=1)).rows}
    assert lv == {"ok": "nominal", "q": "interval"}


@pytest.mark.parametrize(
    ("inst", "field"),
    [
        (
            {"ok": {"individual_human_scores": ["maybe"]}},
            "instances[0] (id 1).annotations.ok.individual_human_scores[0]",
        ),
        ({"ok": {"individual_human_scores": []}}, "instances[0] (id 1).annotations.ok"),
        (
            {"ok": {"individual_human_scores": "['Yes'"}},
            "instances[0] (id 1).annotations.ok.individual_human_scores",
        ),
    ],
)
def test_bad_input_names_record_and_field(tmp_path: Path, inst: dict, field: str) -> None:  # type: ignore[type-arg]
    p = _write(tmp_path, instances=[{"id": 1, "instance": "a", "annotations": inst}])
    with pytest.raises(InputError) as e:
        load_file(p)
    assert e.value.field == field and str(p) in str(e.value)


def test_unknown_category(tmp_path: Path) -> None:
    p = _write(tmp_path, annotations=[{"metric": "ok", "category": "ranked"}])
    with pytest.raises(InputError, match="unknown category") as e:
        load_file(p)
    assert e.value.field == "annotations[0].category"


def test_every_subset_exports_valid_records(jb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from metajudge.data.formats import write_jsonl
    from metajudge.data.validation import read_jsonl

    for s in jb.subsets:
        part = jb.subset(s)
        out = tmp_path / f"{s}.jsonl"
        write_jsonl(out, part.records, card=part.card)
        card, recs = read_jsonl(out)
        assert card == part.card and recs == part.records, s


def _inst(i: int, scores: list[int]) -> dict:  # type: ignore[type-arg]
    return {"id": i, "instance": "x", "annotations": {"q": {"individual_human_scores": scores}}}


def test_validate_cli_on_judge_bench_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graded = [{"metric": "q", "category": "graded", "worst": 1, "best": 3, "prompt": "?"}]
    ok = _write(tmp_path, annotations=graded, instances=[_inst(1, [1, 3]), _inst(2, [2])])
    assert main(["data", "validate", str(ok)]) == 0
    assert "OK " in capsys.readouterr().out
    bad = _write(
        tmp_path, instances=[{"id": 7, "annotations": {"ok": {"individual_human_scores": ["?"]}}}]
    )
    assert main(["data", "validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "instances[0] (id 7).annotations.ok.individual_human_scores[0]" in err
    out = tmp_path / "never.jsonl"
    assert main(["data", "export", "--input", str(bad), "-o", str(out)]) == 2
    assert not out.exists()  # nothing partial written
