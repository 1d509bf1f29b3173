"""Issue 44 items 1, 3 and 20: what ``--out`` may be, and a killed run never mixes two runs.

1. ``--out .``, ``--out ""`` and a non-empty folder that is not a run folder exit 2 and change
   nothing: the folder keeps its inode and every file, a file held open in it and a background
   appender's file go on as before (real subprocesses). An empty folder is filled in place (its
   inode kept); a run folder is replaced as before.
3. ``kill -9`` during ``meta-eval`` into a folder whose previous run had no ``scores.jsonl``:
   the new run's ``scores.jsonl`` never lies beside the old ``result.json``.
20. ``--out`` a symlink to a folder: the folder it points to is written, the link stays, and no
    ``.<name>.stage-*`` is left behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.robustness.test_run_folder import assert_one_run

ROOT = Path(__file__).parents[2]
FIX = ROOT / "tests" / "fixtures" / "byod"
GRADED = FIX / "graded.jsonl"
APPENDER = """import sys, time
with open(sys.argv[1], "a", encoding="utf-8") as fh:
    for i in range(100000):
        fh.write(f"{i}\\n"); fh.flush(); time.sleep(0.01)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def _cli(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metajudge", *argv],
        check=False,
        env=_env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _meta(out: str, *extra: str) -> list[str]:
    return [
        "meta-eval",
        "--input",
        str(GRADED),
        "--metrics",
        "bleu",
        "--protocol",
        "pointwise",
        "--no-plots",
        "--n-boot",
        "20",
        "--paths-only",
        "--out",
        out,
        *extra,
    ]


def _state(folder: Path, skip: str) -> dict[str, tuple[int, str]]:
    """``relative path -> (inode, sha256)`` of every file under ``folder`` but ``skip``."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != skip:
            out[str(p.relative_to(folder))] = (
                p.stat().st_ino,
                hashlib.sha256(p.read_bytes()).hexdigest(),
            )
    return out


def _lines(p: Path) -> int:
    return len(p.read_text(encoding="utf-8").splitlines())


@pytest.mark.slow
def test_refused_out_changes_nothing(tmp_path: Path) -> None:
    """Before: exit 0 and ``proj`` another inode (the appender writing into the old, deleted
    folder; everything copied). After: exit 2 naming --out for ``.``, ``""`` and ``proj`` given
    from outside, with the folder's inode, files, open file and appender untouched."""
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "main.py").write_text("print('mine')\n", encoding="utf-8")
    (proj / "notes.txt").write_text("mine\n", encoding="utf-8")
    ino = proj.stat().st_ino
    before = _state(proj, "log.txt")
    held = open(proj / "held.txt", "w", encoding="utf-8")  # noqa: SIM115 - held open across runs
    appender = subprocess.Popen([sys.executable, "-c", APPENDER, str(proj / "log.txt")])
    try:
        time.sleep(0.3)
        for cwd, out in ((proj, "."), (proj, ""), (tmp_path, str(proj)), (proj / "src", "..")):
            r = _cli(_meta(out), cwd=cwd)
            assert r.returncode == 2, (out, r.returncode, r.stderr[-800:])
            assert "--out" in r.stderr and "Traceback" not in r.stderr, r.stderr[-800:]
            assert "nothing was changed" in r.stderr or "empty" in r.stderr, r.stderr[-800:]
            assert proj.stat().st_ino == ino
        grown = _lines(proj / "log.txt")
        time.sleep(0.3)
        assert _lines(proj / "log.txt") > grown  # the appender still writes into proj
        held.write("still here\n")
        held.flush()
    finally:
        appender.kill()
        appender.wait()
        held.close()
    assert (proj / "held.txt").read_text(encoding="utf-8") == "still here\n"
    after = _state(proj, "log.txt")
    after.pop("held.txt")
    assert after == before
    assert sorted(p.name for p in proj.iterdir()) == ["held.txt", "log.txt", "notes.txt", "src"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]  # no lock, no stage beside it


@pytest.mark.slow
def test_empty_folder_filled_in_place_then_replaced(tmp_path: Path) -> None:
    """An empty folder (a user's, or a mount point) is filled in place: same inode, one run; a
    second run replaces the run folder and keeps a user's file put in it."""
    out = tmp_path / "empty"
    out.mkdir()
    ino = out.stat().st_ino
    r = _cli(_meta(str(out)))
    assert r.returncode == 0, r.stderr[-800:]
    assert out.stat().st_ino == ino
    assert_one_run(out)
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    r = _cli(_meta(str(out), "--seed", "1"))
    assert r.returncode == 0, r.stderr[-800:]
    assert_one_run(out)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


@pytest.mark.slow
def test_symlink_out_leaves_no_stage(tmp_path: Path) -> None:
    """Before: the link was exchanged with the stage, leaving ``.link.stage-*`` (a symlink) for
    good and the run beside the old one. After: the target is written; the link stays a link."""
    real = tmp_path / "real"
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    for seed in ("0", "1"):  # the first run creates the target, the second replaces it
        r = _cli(_meta(str(link), "--seed", seed))
        assert r.returncode == 0, r.stderr[-800:]
        assert link.is_symlink() and link.resolve() == real.resolve()
        assert_one_run(real)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"], list(
            tmp_path.iterdir()
        )


def _wait_scores(out: Path, proc: subprocess.Popen[bytes], limit: float) -> bool:
    """Wait until the run has scored (its ``scores.jsonl`` exists, in ``out`` or in a stage)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and proc.poll() is None:
        if (out / "scores.jsonl").exists() or list(
            out.parent.glob(f".{out.name}.stage-*/scores.jsonl")
        ):
            return True
        time.sleep(0.002)
    return False


@pytest.mark.slow
def test_kill9_never_leaves_new_scores_beside_old_result(tmp_path: Path) -> None:
    """The old run scored nothing (``--scores FILE``), the new one scores bleu on the 280-record
    RAGChecker set; killed (real SIGKILL) from the moment it has its scores on: the folder holds
    the old run alone (before: the new run's ``scores.jsonl`` beside the old ``result.json``),
    until a run completes."""
    out = tmp_path / "m"
    shipped = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", "shipped"]
    shipped += ["--no-plots", "--n-boot", "20", "--paths-only", "--out", str(out)]
    r = _cli(shipped)
    assert r.returncode == 0, r.stderr[-800:]
    first = assert_one_run(out)
    assert not (out / "scores.jsonl").exists()
    scoring = [*shipped[:3], "--metrics", "bleu", *shipped[5:]]
    killed = 0
    for delay in (0.0, 0.05, 0.2):
        proc = subprocess.Popen(
            [sys.executable, "-m", "metajudge", *scoring],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        seen = _wait_scores(out, proc, 300)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        killed += seen
        if proc.returncode == -signal.SIGKILL:
            assert assert_one_run(out) == first
            assert not (out / "scores.jsonl").exists()
    assert killed >= 1
    r = _cli(scoring)
    assert r.returncode == 0, r.stderr[-800:]
    assert assert_one_run(out) != first
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "scores.jsonl" in m["kept"]  # a cache: carried into the next run
    r = _cli(shipped)  # a run that scores nothing keeps the cache
    assert r.returncode == 0 and (out / "scores.jsonl").is_file()
    assert_one_run(out)


@pytest.mark.parametrize("out", ["", "."])
def test_programmatic_run_refuses_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    """``run_meta_eval(out_dir="")`` (the API) is refused as the CLI is, before any work."""
    from metajudge.data.source import DataSource
    from metajudge.errors import InputError
    from metajudge.runs.meta_eval import run_meta_eval

    (tmp_path / "mine.txt").write_text("x", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    src = DataSource(path=str(GRADED))
    with pytest.raises(InputError, match="--out"):
        run_meta_eval(src, out_dir=out, metrics=["bleu"], plots=False, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
