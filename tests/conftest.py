"""Shared fixtures: the local data folder (real datasets) and an isolated user cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
