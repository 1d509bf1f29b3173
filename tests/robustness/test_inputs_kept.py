"""Issue 66, group 1: no output of any command replaces or changes an input.

Before: ``calibrate plan --input fd --out fd/plan`` (fd a CJE fresh-draw folder) wrote its run
folder into the input folder, through a symlink too, and ``data export --input fd -o
fd/extra_responses.jsonl`` added a system to it (the probe's ``-o fd/base_responses.jsonl``
replaced the labels). Now an output inside an input folder, one that is an input, and a run
folder holding an input are refused with exit 2 naming the option and the input, and nothing is
written. Every input is checked byte for byte and inode for inode (``inputs_unchanged``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.robustness.conftest import InputGuard

ROOT = Path(__file__).parents[2]
GRADED = ROOT / "tests" / "fixtures" / "byod" / "graded.jsonl"


def _fresh_draws(tmp_path: Path, data_dir: Path) -> Path:
    """A writable copy of the CJE arena sample's fresh draws (a folder input)."""
    fd = tmp_path / "fd"
    shutil.copytree(data_dir / "cje_arena_sample" / "fresh_draws", fd)
    for p in (fd, *fd.iterdir()):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return fd


@pytest.mark.parametrize("where", ["fd/plan", "link/plan", "fd/base_responses.jsonl"])
def test_run_folder_inside_an_input_folder_is_refused(
    tmp_path: Path, data_dir: Path, inputs_unchanged: InputGuard, where: str
) -> None:
    fd = _fresh_draws(tmp_path, data_dir)
    (tmp_path / "link").symlink_to(fd)
    argv = ["calibrate", "plan", "--input", str(fd), "--budget", "20", "--out", where]
    proc = inputs_unchanged.run(argv, fd, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-800:]
    assert "--out" in proc.stderr and str(fd) in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "link" / "plan").exists()


@pytest.mark.parametrize("name", ["extra_responses.jsonl", "base_responses.jsonl"])
def test_output_file_inside_an_input_folder_is_refused(
    tmp_path: Path, data_dir: Path, inputs_unchanged: InputGuard, name: str
) -> None:
    fd = _fresh_draws(tmp_path, data_dir)
    argv = ["data", "export", "--input", str(fd), "-o", str(fd / name)]
    proc = inputs_unchanged.run(argv, fd)
    assert proc.returncode == 2, proc.stderr[-800:]
    assert "--output" in proc.stderr and str(fd) in proc.stderr, proc.stderr


def test_run_folder_holding_an_input_is_refused(
    tmp_path: Path, inputs_unchanged: InputGuard
) -> None:
    """A run folder is replaced as a whole: one holding the input (an output of its old run
    read back as input) would lose it."""
    out = tmp_path / "run"
    meta = ["meta-eval", "--metrics", "bleu", "--n-boot", "10", "--no-plots", "--paths-only"]
    first = inputs_unchanged.run([*meta, "--input", str(GRADED), "--out", str(out)], GRADED)
    assert first.returncode == 0, first.stderr[-800:]
    inner = out / "input.jsonl"
    shutil.copy(GRADED, inner)
    again = inputs_unchanged.run([*meta, "--input", str(inner), "--out", str(out)], inner)
    assert again.returncode == 2, again.stderr[-800:]
    assert "--out" in again.stderr and f"holds the input {inner}" in again.stderr


def test_the_guard_sees_bytes_inodes_and_listings(tmp_path: Path) -> None:
    """The fixture itself: a changed byte, a file replaced by a copy (same bytes, new inode) and
    a file added to an input folder each fail; a file left alone passes."""
    import os

    (tmp_path / "a").write_text("x")
    changes = [
        lambda: (tmp_path / "a").write_text("y"),
        lambda: ((tmp_path / "t").write_text("x"), os.replace(tmp_path / "t", tmp_path / "a")),
        lambda: (tmp_path / "b").write_text("x"),
    ]
    for change in changes:
        guard = InputGuard()
        guard.watch(tmp_path)
        guard.check()
        change()
        with pytest.raises(pytest.fail.Exception, match="changed"):
            guard.check()
        (tmp_path / "b").unlink(missing_ok=True)
        (tmp_path / "a").write_text("x")
