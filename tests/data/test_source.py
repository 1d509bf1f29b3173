"""``DataSource``: what a command reads, built from the options in one place, loaded once."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from metajudge.cli.source import data_source
from metajudge.data.source import DataSource
from metajudge.errors import InputError


def test_built_from_the_options() -> None:
    args = argparse.Namespace(
        dataset=None, input="d.jsonl", subset="x", scores=["s.jsonl:j"], dimension="q", judge="j"
    )
    src = data_source(args, ids="policy", subset=None)
    assert src == DataSource(
        path="d.jsonl", scores=("s.jsonl:j",), dimension="q", judge="j", ids="policy"
    )
    assert src.args() == ["--input", "d.jsonl"] and src.name == "d.jsonl"
    named = DataSource(dataset="trust_or_escalate_jung2025", subset="a")
    assert named.args() == ["--dataset", "trust_or_escalate_jung2025", "--subset", "a"]


def test_loaded_once(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from metajudge.data import loading

    calls: list[str] = []
    load = loading.load
    monkeypatch.setattr(loading, "load", lambda *a, **k: calls.append(str(a[0])) or load(*a, **k))
    src = DataSource(dataset="trust_or_escalate_jung2025", data_dir=data_dir)
    src.load(), src.load()
    assert len(calls) == 2  # each load reads the data
    once = src.loaded_once()
    assert once.load() is once.load() and once.loaded_once() is once
    assert len(calls) == 3 and once.but(judge="j").load() is once.load()
    assert once == src  # the dataset read is not part of what the source names
    assert len(once.load().records) == 500


def test_needs_exactly_one_of_dataset_and_path() -> None:
    with pytest.raises(InputError, match="exactly one"):
        DataSource().load()
