"""Shared fixtures: the local data folder (real datasets, each loaded once) and an isolated user cache."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from metajudge.data.registry import Dataset

_REPO = Path(__file__).resolve().parents[1]


def _find_data_dir() -> Path | None:
    env = os.environ.get("METAJUDGE_DATA_DIR")
    if env and Path(env).is_dir():
        return Path(env)
    cand = _REPO.parent / "shared" / "human_labels"
    return cand if cand.is_dir() else None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real human-judgment datasets (``$METAJUDGE_DATA_DIR`` or ``../shared/human_labels``)."""
    d = _find_data_dir()
    if d is None:
        why = "data folder absent: set METAJUDGE_DATA_DIR to the human_labels folder (real data)"
        pytest.skip(reason=why)
    return d


@pytest.fixture(autouse=True)
def _isolated_user_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never touch the user's real cache from a test; keep the data folder visible."""
    monkeypatch.setenv("METAJUDGE_CACHE_DIR", str(tmp_path_factory.mktemp("mj-cache")))
    d = _find_data_dir()
    if d is not None and not os.environ.get("METAJUDGE_DATA_DIR"):
        monkeypatch.setenv("METAJUDGE_DATA_DIR", str(d))


#: the type of the ``load`` fixture (annotate a test's parameter ``load: Load``)
Load = Callable[..., "Dataset"]


@pytest.fixture(scope="session")
def load(data_dir: Path) -> Load:
    """``load(name, subset=None, **options)``: a real dataset, parsed once per test session.

    Memoised per (name, subset, options); every test that asks gets the same object, so tests
    read it and never change it (records are frozen; a test that needs to edit the record list
    copies it: ``list(ds.records)``).
    """
    from metajudge.data.registry import load_dataset

    cache: dict[tuple[str, str | None, tuple[tuple[str, Any], ...]], Dataset] = {}

    def _load(name: str, subset: str | None = None, **options: Any) -> Dataset:
        opts = tuple(sorted(options.items()))
        if (name, subset, opts) not in cache:
            if (name, None, opts) not in cache:
                cache[(name, None, opts)] = load_dataset(name, data_dir, **options)
            if subset is not None:
                cache[(name, subset, opts)] = cache[(name, None, opts)].subset(subset)
        return cache[(name, subset, opts)]

    return _load
