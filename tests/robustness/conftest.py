"""The robustness suite's guard on inputs (issue 66): no command may change an input.

:func:`inputs_unchanged` records every file under the paths a test hands to a command (its
bytes' sha256 and its inode, the listing of each folder) and fails the test when any of them
differ after the command (:meth:`InputGuard.run`) or at the test's end. Every test of the suite
also keeps ``tests/fixtures`` unchanged, and the whole run the data folder.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

#: relative path -> (sha256 of the bytes, inode); a folder's own entry is ("<dir>", inode)
Snapshot = dict[str, tuple[str, int]]


def snapshot(path: str | Path) -> Snapshot:
    """The bytes and inode of ``path`` and, for a folder, of everything under it (symlinks
    followed at the top, not below: a link's own target is recorded, not walked)."""
    root = Path(path).resolve()
    if not root.exists():
        return {}
    if root.is_file():
        return {".": (hashlib.sha256(root.read_bytes()).hexdigest(), root.stat().st_ino)}
    seen: Snapshot = {}
    for d, dirs, files in os.walk(root):
        here = Path(d)
        seen[str(here.relative_to(root))] = ("<dir>", here.stat().st_ino)
        for name in files:
            p = here / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                seen[rel] = ("-> " + os.readlink(p), p.lstat().st_ino)
            else:
                seen[rel] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_ino)
        dirs.sort()
    return seen


class InputGuard:
    """The inputs of a test's commands, checked before and after each."""

    def __init__(self) -> None:
        self.watched: dict[Path, Snapshot] = {}

    def watch(self, *paths: str | Path) -> None:
        """Record ``paths`` as they are now (each file under a folder too)."""
        for p in paths:
            self.watched[Path(p)] = snapshot(p)

    def check(self) -> None:
        """Fail when an input watched differs from its record (bytes, inode, a file added to
        or removed from an input folder)."""
        for p, before in self.watched.items():
            after = snapshot(p)
            if after != before:
                changed = sorted(
                    k for k in set(before) | set(after) if before.get(k) != after.get(k)
                )
                pytest.fail(f"input {p} changed: {changed[:10]}")

    def run(
        self,
        argv: list[str],
        *inputs: str | Path,
        env: dict[str, str] | None = None,
        cwd: str | Path | None = None,
        timeout: float = 600,
    ) -> subprocess.CompletedProcess[str]:
        """``metajudge ARGV`` in a subprocess (``env`` added to the environment), ``inputs``
        watched around it and checked after it."""
        self.watch(*inputs)
        base = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run(
            [sys.executable, "-m", "metajudge", *argv],
            check=False,
            env={**base, **(env or {})},
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        self.check()
        return proc


@pytest.fixture
def inputs_unchanged() -> Iterator[InputGuard]:
    """An :class:`InputGuard`: hand it every input of the test's commands; checked at the end."""
    guard = InputGuard()
    yield guard
    guard.check()


@pytest.fixture(autouse=True)
def _fixtures_unchanged() -> Iterator[None]:
    """Every robustness test: the shared fixture files (``tests/fixtures``, the inputs most
    tests hand to a command) keep their bytes and inodes."""
    guard = InputGuard()
    guard.watch(ROOT / "tests" / "fixtures")
    yield
    guard.check()


@pytest.fixture(scope="session", autouse=True)
def _data_unchanged() -> Iterator[None]:
    """The whole robustness run: the real datasets' folder (``$METAJUDGE_DATA_DIR``, read by
    many tests) keeps its bytes and inodes (checked once, at the end)."""
    from tests.conftest import _find_data_dir

    guard = InputGuard()
    found = _find_data_dir()
    if found is not None:
        guard.watch(found)
    yield
    guard.check()
