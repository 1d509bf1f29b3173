"""Issue 66, "also": a full disk is named by the run's ``--out``, the cache's error by its file.

Before: on a full disk ``meta-eval`` said "a file: No space left on device" (the plots' hand-over
file in ``$TMPDIR``, or the run lock's record, had failed); the cache's "disk I/O error" said
"move the file aside" and nothing of the disk. Now each error names ``--out`` (or the file of it
being written) and what to do; the cache's names its file and, on a disk without room, says so.
A full disk is emulated: every write of the run fails with ``ENOSPC`` as a full disk's does.
"""

from __future__ import annotations

import errno
import os
import pathlib
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from metajudge.cli import main
from tests.robustness.conftest import ROOT, InputGuard

GRADED = ROOT / "tests" / "fixtures" / "byod" / "graded.jsonl"
META = ["meta-eval", "--input", str(GRADED), "--metrics", "bleu", "--n-boot", "20"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    capsys.readouterr()
    try:
        rc: object = main(argv)
    except BaseException as e:  # noqa: BLE001 - the point: nothing may escape main()
        rc = f"raised {type(e).__name__}: {e}"
    return rc, capsys.readouterr().err


def _full(*_: Any, **__: Any) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_tmpdir_does_not_fail_the_run_on_a_temporary_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    inputs_unchanged: InputGuard,
) -> None:
    """Every write into ``$TMPDIR`` (where the plots' child draws and is handed the result)
    fails: before, the run failed with "a file: No space left on device"; now the plots are
    drawn in the run itself, into ``--out``, and nothing is left in ``$TMPDIR``."""
    inputs_unchanged.watch(GRADED)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr("tempfile.tempdir", None)
    write_bytes, fsync = pathlib.Path.write_bytes, os.fsync

    def full_bytes(self: Path, data: bytes) -> int:
        if str(self).startswith(str(tmpdir)):
            _full()
        return write_bytes(self, data)

    def full_fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(tmpdir)):
            _full()
        fsync(fd)

    monkeypatch.setattr(pathlib.Path, "write_bytes", full_bytes)
    monkeypatch.setattr(os, "fsync", full_fsync)
    out = tmp_path / "o"
    rc, err = _run([*META, "--out", str(out)], capsys)
    assert rc == 0, err[-800:]
    assert {"scatter.png", "correlation_pearson.png"} <= {p.name for p in out.iterdir()}
    assert list(tmpdir.iterdir()) == []


def test_a_full_disk_at_the_run_lock_names_the_out_folder(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    inputs_unchanged: InputGuard,
) -> None:
    inputs_unchanged.watch(GRADED)
    write = os.write

    def full_lock(fd: int, data: bytes) -> int:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".lock"):
            _full()
        return write(fd, data)

    monkeypatch.setattr(os, "write", full_lock)
    out = tmp_path / "o"
    rc, err = _run([*META, "--no-plots", "--out", str(out)], capsys)
    assert rc == 2, err[-800:]
    assert f"{out}: No space left on device" in err and "a file:" not in err, err[-800:]
    assert list(tmp_path.iterdir()) == []  # no lock file left


@pytest.mark.parametrize("free", [0, 1 << 40])
def test_the_cache_disk_io_error_names_the_file(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    inputs_unchanged: InputGuard,
    free: int,
) -> None:
    """sqlite says "disk I/O error" where its ``-shm`` or journal found no room: with no room
    on the disk the error says so; either way it names the file in what to do."""
    import shutil

    db = tmp_path / "c.sqlite"
    sqlite3.connect(db).close()
    inputs_unchanged.watch(db)

    def io_error(*_: Any, **__: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(sqlite3, "connect", io_error)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: SimpleNamespace(total=1, used=1, free=free))
    rc, err = _run(["cache", "stats", "--cache-file", str(db)], capsys)
    assert rc == 2, err[-800:]
    assert err.count(str(db)) >= 2 and "disk I/O error" in err, err
    if free:
        assert f"move {db} aside" in err, err
    else:
        assert f"free space on the disk of {db}" in err, err
