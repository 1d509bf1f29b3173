"""Issue 44 items 19 and 21: nothing left behind, no noise, when a run is killed or its reader
goes away.

19. The plots' temporary folder (``metajudge-plots-*``, PNGs and a pickled result) is gone after
    ``kill -9`` of the run (its child finishes and removes it), after Ctrl-C (SIGINT to the whole
    process group), and after ``kill -9`` of the whole group (the next run removes it).
21. ``metajudge data list | head -1`` ends quietly on the closed pipe: no error line, exit 0 or
    141 (as a Unix tool killed by SIGPIPE). Ctrl-C during ``metrics run`` on the embedded
    backbone exits 130 without "Task was destroyed but it is pending!".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
GRADED = ROOT / "tests" / "fixtures" / "byod" / "graded.jsonl"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork, signals")


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", **extra}


def _until(cond, limit: float) -> bool:  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if cond():
            return True
        time.sleep(0.01)
    return bool(cond())


def _plot_run(tmp: Path, out: Path) -> subprocess.Popen[bytes]:
    argv = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", "shipped"]
    argv += ["--n-boot", "50", "--paths-only", "--out", str(out)]
    return subprocess.Popen(
        [sys.executable, "-m", "metajudge", *argv],
        env=_env(TMPDIR=str(tmp)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, as a shell job
    )


def _folders(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("metajudge-plots-*"))


@pytest.mark.slow
def test_plot_folder_never_left_behind(tmp_path: Path) -> None:
    """Killed once the child has the final result (``result.pickle`` in its folder: the moment
    the probe's 4 of 9 kill -9s hit), or a little later, while the run waits to collect the
    correlation plots the child draws (a CI run's kill -9 landed there, and the folder stayed).
    Before: the child drew the plots and exited, leaving the folder for good. After: gone within
    a minute; after a whole-group kill, gone after the next run."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cases = ("kill -9", "kill -9 collecting", "Ctrl-C", "kill -9 group")
    for k, how in enumerate(cases):
        proc = _plot_run(tmp, tmp_path / f"out{k}")
        handed = _until(lambda: any(tmp.glob("metajudge-plots-*/result.pickle")), 180)
        assert handed, (how, proc.poll())
        if how == "kill -9 collecting":
            # the run writes its tables in milliseconds, then waits for the child's plots
            _until(lambda: any(tmp.glob("metajudge-plots-*/correlation_*.png")), 0.1)
            assert proc.poll() is None, "the run ended before its child drew"
        if how.startswith("kill -9") and how != "kill -9 group":
            proc.send_signal(signal.SIGKILL)  # the run only; its child lives on
        elif how == "Ctrl-C":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        if how == "kill -9 group":
            _until(lambda pgid=proc.pid: not _group_alive(pgid), 30)
            assert _plot_run(tmp, tmp_path / "after").wait(timeout=300) == 0
        assert _until(lambda: not _folders(tmp), 90), (how, _folders(tmp))


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_closed_pipe_ends_quietly() -> None:
    """Before: "metajudge: error: a file: Broken pipe", exit 2. After: no error, exit 0 or 141."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "metajudge", "data", "list"],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the listing is written (head -1 done)
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=120)
    assert rc in (0, 141), (rc, err)
    assert "error" not in err.lower() and "Traceback" not in err and "Exception" not in err, err


# (signal.default_int_handler: a child of a background job inherits SIGINT as ignored; Ctrl-C
# from a terminal raises KeyboardInterrupt, which is what this test is about; as _CHILD in
# tests/backends/test_embedded.py)
INTERRUPTED_BATCH = """import gc, os, signal, sys, threading, asyncio
signal.signal(signal.SIGINT, signal.default_int_handler)
from metajudge.backends.loop import LoopThread
lt = LoopThread("t")
async def call(i):
    try:
        await asyncio.sleep(60)  # a call in flight
    finally:
        await asyncio.sleep(0.2)  # cancelled: its connection takes a few loop turns to close
async def batch():
    tasks = [asyncio.ensure_future(call(i)) for i in range(40)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    lt.run(batch())
except KeyboardInterrupt:
    lt.close()  # the backend is closed on the way out, as score_dataset's finally does
    del lt
    gc.collect()
    sys.exit(130)
"""


def test_ctrl_c_leaves_no_pending_task() -> None:
    """The backends' event loop (``LoopThread``, as ``OpenAIBackend``/the embedded backbone run
    a batch) interrupted by a real SIGINT, then closed. Before: ``run`` returned as soon as the
    batch was marked cancelled and the loop was stopped with the calls still cancelling: "Task
    was destroyed but it is pending!" once per call (41 here). After: they are drained first."""
    r = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_BATCH],
        check=False,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 130 and "Task was destroyed" not in r.stderr, r.stderr[-800:]


def _embedded_ready() -> bool:
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _embedded_ready(), reason="needs llama-cpp-python (the embedded backbone)")
def test_ctrl_c_during_embedded_scoring_is_quiet(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the process group) during ``metrics run`` of a G-Eval judge on the
    embedded backbone, at three moments: exit 130, "metajudge: interrupted", no pending-task
    spam (before: up to 100 lines in 4 of 9 runs)."""
    argv = ["metrics", "run", "--input", str(GRADED), "--metrics", "geval_coherence"]
    env = _env(METAJUDGE_CACHE_DIR=str(tmp_path / "cache"))
    for k, delay in enumerate((1.0, 2.5, 4.0)):
        proc = subprocess.Popen(
            [sys.executable, "-m", "metajudge", *argv, "-o", str(tmp_path / f"s{k}.jsonl")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        ready = _until(lambda: any((tmp_path / "cache").rglob("llama-server-*.log")), 240)
        time.sleep(delay)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert ready and proc.returncode in (0, 130), (delay, proc.returncode, err[-800:])
        assert "Task was destroyed" not in err and "Traceback" not in err, err[-800:]
