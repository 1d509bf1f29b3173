"""`data list` reads its counts from the cards; the cards' counts equal the loaded data's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.card_counts import counts_of, listing_row, row_from_card
from metajudge.data.registry import describe_counts, list_datasets, load_card
from tests.conftest import Load


@pytest.mark.parametrize("name", list_datasets())
def test_card_counts_equal_the_loaded_data(name: str, load: Load) -> None:
    """A converter change that moves a count fails here; `python -m metajudge.data.card_counts`
    rewrites the cards (`metajudge data fetch --recount`)."""
    card = load_card(name)
    assert card.counts, f"{name}: card has no counts (run metajudge data fetch --recount)"
    assert counts_of(dict(card.counts)) == counts_of(describe_counts(load(name)))
    assert row_from_card(card) == describe_counts(load(name))


def test_data_list_json_is_the_loaded_counts_without_loading(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, load: Load
) -> None:
    from metajudge.data import loading

    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("data list loaded a dataset")

    monkeypatch.setattr(loading, "load", refuse)
    assert main(["data", "list", "--format", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) == set(list_datasets())
    assert rows["hanna"]["records"] == 1056 and rows["hanna"]["annotators"] == 3
    monkeypatch.undo()
    assert rows["ragchecker_meta_eval"] == describe_counts(load("ragchecker_meta_eval"))


def test_a_card_without_counts_is_loaded_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = load_card("ragchecker_meta_eval").to_dict()
    src.pop("counts")
    (tmp_path / "ragchecker_meta_eval.json").write_text(json.dumps(src), encoding="utf-8")
    monkeypatch.setenv("METAJUDGE_CARDS_DIR", str(tmp_path))
    row = listing_row("ragchecker_meta_eval")
    assert row["records"] == 280 and row["pairs"] == 280


def test_jsonl_written_from_a_card_leaves_its_counts_out(tmp_path: Path, load: Load) -> None:
    from metajudge.data.formats import write_jsonl

    ds = load("ragchecker_meta_eval")
    out = tmp_path / "part.jsonl"
    write_jsonl(out, ds.records[:3], ds.card)
    head = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert "counts" not in head["card"]


@pytest.mark.parametrize("name", list_datasets())
def test_card_facts_equal_the_matrix_facts_of_the_loaded_data(name: str, load: Load) -> None:
    from metajudge.runs.matrix.table import builtin_facts, dataset_facts

    assert builtin_facts(name, None) == dataset_facts(load(name))


def test_human_labels_links_every_card_and_nothing_else() -> None:
    """``human_labels/`` at the top of the repository holds one link per card of the package."""
    repo = Path(__file__).resolve().parents[2]
    cards = repo / "metajudge" / "data" / "cards"
    links = sorted((repo / "human_labels").iterdir())
    assert [p.name for p in links] == sorted(p.name for p in cards.glob("*.json"))
    for p in links:
        assert p.is_symlink() and p.resolve() == (cards / p.name).resolve()
