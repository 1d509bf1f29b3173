"""Shared fixtures: the local data folder (real datasets, each loaded once) and an isolated user cache."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
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

#: every built-in dataset parsed from the real data folder in this session, by (name, options)
_PARSED: dict[tuple[str, tuple[tuple[str, Any], ...]], Dataset] = {}


def _parsed_key(real: Path, name: str, data_dir: Any, options: dict[str, Any]) -> tuple | None:
    """The key of a load of the real data folder; ``None`` for any other load (a test's own
    folder, ``files=`` overrides, unhashable options), which is never memoised."""
    where = data_dir if data_dir is not None else os.environ.get("METAJUDGE_DATA_DIR")
    if where is None or options.get("files") is not None:
        return None
    if Path(where).resolve() != real.resolve():
        return None
    key = (name, tuple(sorted((k, v) for k, v in options.items() if k != "files")))
    try:
        hash(key)
    except TypeError:
        return None
    return key


@pytest.fixture(scope="session", autouse=True)
def _datasets_parsed_once() -> Iterator[None]:
    """Each built-in dataset of the real data folder is parsed once per session, by whichever
    caller asks first (a test, the API, an in-process CLI run); later loads get the same object.

    Loaded datasets are shared: nothing may change them (records are frozen dataclasses; the
    library and the tests never edit a ``Dataset``'s lists). Loads of any other folder, and
    ``files=`` overrides, go through untouched, so the loading tests still exercise the loader.
    """
    from metajudge.data import loading

    real = _find_data_dir()
    if real is None:
        yield
        return
    original = loading._builtin  # a built-in name, parsed by its converter (loading.load)

    @functools.wraps(original)
    def parse_builtin(name: str, data_dir: Any = None, **options: Any) -> Dataset:
        key = _parsed_key(real, name, data_dir, options)
        if key is None:
            return original(name, data_dir, **options)
        if key not in _PARSED:
            _PARSED[key] = original(name, data_dir, **options)
        return _PARSED[key]

    loading._builtin = parse_builtin  # type: ignore[assignment]
    yield
    loading._builtin = original  # type: ignore[assignment]


@pytest.fixture(scope="session")
def load(data_dir: Path) -> Load:
    """``load(name, subset=None, **options)``: a real dataset, parsed once per test session.

    Memoised per (name, subset, options) (:func:`_datasets_parsed_once`); every test that asks
    gets the same object, so tests read it and never change it (records are frozen; a test that
    needs to edit the record list copies it: ``list(ds.records)``).
    """
    from metajudge.data.loading import load as load_source

    subsets: dict[tuple[str, str, tuple[tuple[str, Any], ...]], Dataset] = {}

    def _load(name: str, subset: str | None = None, **options: Any) -> Dataset:
        ds = load_source(name, data_dir, **options)
        if subset is None:
            return ds
        key = (name, subset, tuple(sorted(options.items())))
        if key not in subsets:
            subsets[key] = ds.subset(subset)
        return subsets[key]

    return _load


#: the scripts that made the framework fixtures (run by hand with their framework, README there)
collect_ignore_glob = ["fixtures/*"]
