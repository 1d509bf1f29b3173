"""issue 64: files are written with the user's umask (``metrics run -o`` wrote 0600)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from metajudge.io import atomic_write, write_json


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="POSIX modes")
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_atomic_writes_follow_the_umask(tmp_path: Path, mask: int, mode: int) -> None:
    old = os.umask(mask)
    try:
        with atomic_write(tmp_path / "scores.jsonl") as fh:
            fh.write("{}\n")
        write_json(tmp_path / "result.json", {"a": 1})
    finally:
        os.umask(old)
    for name in ("scores.jsonl", "result.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode
