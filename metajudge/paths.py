"""Where things live: the data folder, the user cache, run folders."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """``$METAJUDGE_CACHE_DIR`` or ``$XDG_CACHE_HOME/metajudge`` or ``~/.cache/metajudge``."""
    env = os.environ.get("METAJUDGE_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "metajudge"


def data_dir_from_env(explicit: str | Path | None = None) -> Path | None:
    """The local data folder: ``explicit`` (``--data-dir``) first, then ``$METAJUDGE_DATA_DIR``."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("METAJUDGE_DATA_DIR")
    return Path(env) if env else None


def default_run_dir(command: str, name: str) -> Path:
    """The run folder of a command run without ``--out``: ``<user cache>/runs/<command>/<name>``
    (outside the source tree; the next run of the same name replaces it, as a set)."""
    return user_cache_dir() / "runs" / command / name
