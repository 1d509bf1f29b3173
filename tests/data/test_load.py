"""The one loader, :func:`metajudge.data.loading.load` (issue 24): a built-in dataset name, or a
canonical JSONL, JUDGE-BENCH or recognised upstream file; ``mj.load_file``/``mj.load_dataset``
and the old spellings are that same function; a loaded Dataset records its source and
``load`` takes the recorded source back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import metajudge as mj
from metajudge.data.loading import file_kind, load, open_dataset
from metajudge.data.registry import Dataset
from metajudge.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
GRADED = ROOT / "tests" / "fixtures" / "byod" / "graded.jsonl"
RECIPES = "dmg_judge_bench/data/recipe_crowd_sourcing_data/meta_evaluation_recipes.json"
RAGCHECKER = "ragchecker_meta_eval/human_labeled_data.json"


def test_every_public_name_is_the_one_loader() -> None:
    from metajudge import data
    from metajudge.data import registry

    assert mj.load_file is load and mj.load_dataset is load and data.load is load
    for old in ("load_dataset", "load_file", "load_jsonl_dataset"):  # hidden old spellings
        assert getattr(data, old) is load
    assert data.open_dataset is open_dataset
    # the loader is defined and reached in data.loading only: the registry does not import it
    # (no import circle inside data/)
    assert not hasattr(registry, "load_file") and not hasattr(registry, "open_dataset")


def test_the_three_file_kinds_and_a_name(data_dir: Path) -> None:
    cases = {
        GRADED: ("jsonl", "byod_summaries", "likert", 12),
        data_dir / RECIPES: ("judge_bench", "recipe-crowd-sourcing-data", "likert", 52),
        data_dir / RAGCHECKER: ("upstream", "ragchecker_meta_eval", "pairwise", 280),
    }
    for path, (kind, name, card_kind, n) in cases.items():
        assert file_kind(path)[0] == kind
        for how in (mj.load_file(path), mj.load_file(str(path)), load(path, data_dir)):
            assert (how.name, how.kind, len(how.records)) == (name, card_kind, n)
            assert how.source == {"input": str(path.resolve())}
    by_name = mj.load_dataset("ragchecker_meta_eval", data_dir)
    assert by_name.source == {"dataset": "ragchecker_meta_eval"}
    assert [r.to_dict() for r in by_name.records] == [
        r.to_dict() for r in load(data_dir / RAGCHECKER).records
    ]


def test_recorded_source_loads_the_same_data(data_dir: Path, tmp_path: Path) -> None:
    ds = load("lftqa_eval", data_dir, subset="qtsumm")
    assert ds.source == {"dataset": "lftqa_eval", "subset": "qtsumm"}
    again = load(json.loads(json.dumps(ds.source)), data_dir)  # as a run folder keeps it
    assert [(r.id, r.system) for r in again.records] == [(r.id, r.system) for r in ds.records]
    whole = load(GRADED)  # a subset with its own card (as dmg_judge_bench's files)
    whole.parts = {"p": Dataset(card=whole.card, records=whole.records[:2])}
    part = whole.subset("p")
    assert part.records == whole.records[:2] and part.source["subset"] == "p"
    assert load(part, subset="p") is part  # a Dataset already of that subset
    fixed = load(GRADED, card=None)
    assert load(fixed.source).records == fixed.records
    with pytest.raises(InputError, match="names neither a dataset nor an input file"):
        load({"subset": "x"})


def test_clear_errors() -> None:
    with pytest.raises(InputError, match="unknown dataset 'no_such_dataset'"):
        load("no_such_dataset")
    with pytest.raises(InputError, match="file not found"):
        load("missing.jsonl")
    with pytest.raises(InputError, match="is not a dataset name.*--input"):
        open_dataset(str(GRADED))
    with pytest.raises(InputError, match="exactly one of --dataset NAME and --input FILE"):
        open_dataset("hanna", GRADED)
    with pytest.raises(InputError, match="cannot load a int"):
        load(3)  # type: ignore[arg-type]


def test_converter_options_are_recorded(data_dir: Path) -> None:
    ds = load("lftqa_mitigation_pradhumant", data_dir, fully="tie")
    assert ds.source == {"dataset": "lftqa_mitigation_pradhumant", "options": {"fully": "tie"}}
    assert load(ds.source, data_dir).records == ds.records
