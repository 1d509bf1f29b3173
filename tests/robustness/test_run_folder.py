"""Issue 30 item 3: a run folder is written as a set (:mod:`metajudge.run_folder`).

``kill -9`` at random (seeded) moments of ``metajudge meta-eval`` into an existing folder never
leaves files of two runs; a second run into the same ``--out`` refuses naming the first; stale
temporaries (``.agreement_heatmap.png.*.tmp``) are removed; the readers (``report render``, the HTML
re-render of a meta-eval and of a judge swap folder) work on the new layout.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metajudge.cli import main

ROOT = Path(__file__).parents[2]
FIX = ROOT / "tests" / "fixtures" / "byod"
CATEGORICAL = FIX / "categorical.jsonl"
CAT_SCORES = FIX / "categorical_judge.csv"
GRADED = FIX / "graded.jsonl"


HOLD_LOCK = """import sys, time
from metajudge.run_folder import run_lock
with run_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(120)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def assert_one_run(out: Path) -> str:
    """Every file of ``out`` is the one its manifest names (sha256: result.json, the tables, the
    plots and report.html of one run), and nothing the manifest lists is missing; returns the
    run id."""
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    listed = {**m["kept"], **m["files"]}
    present = {
        p.name
        for p in out.iterdir()
        if p.is_file() and p.name != "manifest.json" and not p.name.endswith(".tmp")
    }
    assert present == set(listed), (present ^ set(listed), m["run_id"])
    for name, sha in listed.items():
        assert _sha(out / name) == sha, (name, m["run_id"])
    assert "result.json" in m["files"] and "report.html" in m["files"]
    return str(m["run_id"])


def _meta_argv(out: Path, seed: int, *extra: str) -> list[str]:
    return [
        "meta-eval",
        "--dataset",
        "ragchecker_meta_eval",
        "--metrics",
        "bleu",
        "--n-boot",
        "20",
        "--seed",
        str(seed),
        "--paths-only",
        "--out",
        str(out),
        *extra,
    ]


def _cli(argv: list[str]) -> int:
    cmd = [sys.executable, "-m", "metajudge", *argv]
    return subprocess.run(cmd, check=False, env=_env(), capture_output=True, timeout=600).returncode


def _spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "metajudge", *argv],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_for_stage(out: Path, proc: subprocess.Popen[bytes], limit: float) -> bool:
    """Wait until the run starts its write phase (a stage folder beside ``out``)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and proc.poll() is None:
        if list(out.parent.glob(f".{out.name}.stage-*")):
            return True
        time.sleep(0.005)
    return False


@pytest.mark.slow
def test_kill9_loop_never_mixes_two_runs(tmp_path: Path) -> None:
    """24 kills: half at a random offset of up to twice a whole ``--no-plots`` run (so about
    half of those land after the run has swapped its folder in, and a third run id is all but
    certain to be seen: P(none of 12) ~ 2**-12), half at a random moment of the write phase;
    after each, ``out`` holds exactly one run. Then a full run cleans every temporary."""
    out = tmp_path / "m"
    t0 = time.monotonic()
    assert _cli(_meta_argv(out, 0)) == 0
    first = assert_one_run(out)
    assert (out / "scatter.png").is_file() and (out / "scores.jsonl").is_file()
    t1 = time.monotonic()
    assert _cli(_meta_argv(out, 1, "--no-plots")) == 0
    whole = time.monotonic() - t1
    assert not (out / "scatter.png").exists()  # the old run's plots left with the old run
    rng = random.Random(30)
    seen = {first, assert_one_run(out)}
    in_write = 0
    for k in range(24):
        proc = _spawn(_meta_argv(out, k % 3, *(("--no-plots",) if k % 2 else ())))
        if k % 2:
            time.sleep(rng.uniform(0.0, whole * 2.0))
        elif _wait_for_stage(out, proc, 120):
            time.sleep(rng.uniform(0.0, 0.4))
            in_write += 1
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        seen.add(assert_one_run(out))
    assert in_write >= 10 and len(seen) >= 3, (in_write, len(seen), time.monotonic() - t0)
    assert main(_meta_argv(out, 5, "--no-plots")) == 0
    assert_one_run(out)
    assert not list(out.parent.glob(f".{out.name}.stage-*"))
    assert not list(out.parent.glob(f".{out.name}.old-*"))
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_second_run_into_the_same_out_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: both runs exited 0, last writer won. After: exit 2 naming the first (pid, start)."""
    out = tmp_path / "cat"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HOLD_LOCK,
            str(out),
        ],
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        argv = [
            "meta-eval",
            "--input",
            str(CATEGORICAL),
            "--scores",
            str(CAT_SCORES),
            "--paths-only",
        ]
        capsys.readouterr()
        rc = main([*argv, "--out", str(out)])
        err = capsys.readouterr().err
        assert rc == 2 and f"pid {holder.pid}, started 20" in err, (rc, err)
        assert "another run is writing into this folder" in err and not out.exists()
    finally:
        holder.kill()
        holder.wait()
    assert main([*argv, "--out", str(out)]) == 0  # the lock died with its process
    assert_one_run(out)


def test_swap_cleans_stale_temporaries_and_rerenders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``.agreement_heatmap.png.*.tmp`` a killed judge swap left is gone after a rerun; the
    swap folder and a meta-eval folder re-render (``report render``, ``report render --format html``)."""
    scores = tmp_path / "scores.jsonl"
    argv = [
        "metrics",
        "run",
        "--input",
        str(GRADED),
        "-o",
        str(scores),
        "--metrics",
        "rouge_l,bleu",
    ]
    assert main([*argv, "--quiet"]) == 0
    out = tmp_path / "swap"
    swap = ["judge", "swap", "--input", str(GRADED), "--metric", "rouge_l", "--dimension"]
    swap += ["coherence", "--scores", f"a={scores}:rouge_l", "--scores", f"b={scores}:bleu"]
    assert main([*swap, "--n-boot", "20", "--out", str(out)]) == 0  # a run folder
    stale = out / ".agreement_heatmap.png.k3j2l1.tmp"
    stale.write_bytes(b"\x89PNG half")
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")  # a user's file is kept
    assert main([*swap, "--n-boot", "20", "--out", str(out)]) == 0
    assert not stale.exists() and (out / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    names = {p.name for p in out.iterdir()}
    assert {"swap.json", "swap.md", "report.html", "manifest.json"} <= names
    assert main(["report", "render", "--format", "html", str(out)]) == 0
    meta = tmp_path / "meta"
    argv = [
        "meta-eval",
        "--input",
        str(GRADED),
        "--scores",
        str(scores),
        "--no-plots",
        "--paths-only",
    ]
    assert main([*argv, "--out", str(meta)]) == 0
    run_id = assert_one_run(meta)
    capsys.readouterr()
    assert main(["report", "render", str(meta), "--no-plots"]) == 0
    assert main(["report", "render", "--format", "html", str(meta)]) == 0
    assert assert_one_run(meta) == run_id  # re-rendered in place: same run, manifest refreshed
    printed = capsys.readouterr().out
    assert ".stage-" not in printed and str(meta / "report.html") in printed


def test_report_refuses_a_result_the_manifest_does_not_vouch_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A result.json replaced after the run (from another run) is refused, exit 2."""
    out = tmp_path / "cat"
    argv = ["meta-eval", "--input", str(CATEGORICAL), "--scores", str(CAT_SCORES), "--paths-only"]
    assert main([*argv, "--out", str(out)]) == 0
    r = json.loads((out / "result.json").read_text(encoding="utf-8"))
    r["data"]["run"]["seconds"] = 99.0  # as another run would have written it
    (out / "result.json").write_text(json.dumps(r), encoding="utf-8")
    capsys.readouterr()
    assert main(["report", "render", str(out)]) == 2
    assert "result.json: changed since run" in capsys.readouterr().err


KILLED_WITH_A_CHILD = """import os, sys, time
from metajudge.run_folder import run_lock
with run_lock(sys.argv[1]):
    child = os.fork()
    if child == 0:  # a forked child (as the plots' child) that outlives the run
        os.close(1)
        os.close(2)
        time.sleep(30)
        os._exit(0)
    print(child, flush=True)
    os._exit(9)  # gone without releasing, as after kill -9
"""


def test_a_forked_child_does_not_hold_a_killed_runs_lock(tmp_path: Path) -> None:
    """Before: the child kept the flock through its inherited fd, and the next run was refused
    ("another run is writing into this folder") until it exited (CI: a killed run's plots child
    still drawing). After: the child closes the lock fds it inherits; the next run proceeds."""
    out = tmp_path / "m"
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_WITH_A_CHILD, str(out)],
        check=False,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 9 and proc.stdout.strip().isdigit(), proc.stderr
    assert (tmp_path / ".m.lock").exists()  # left as a kill leaves it
    from metajudge.run_folder import run_lock

    try:
        with run_lock(out):
            pass
    finally:
        os.kill(int(proc.stdout), signal.SIGKILL)
