"""The plots drawn in a forked child (metajudge.runs.plot_ahead): ``scatter.png`` while the
bootstrap runs, the correlation plots of the final result while the tables are written; each the
same file as drawn from ``result.json`` afterwards, whatever happens to the child."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.cli import main
from metajudge.data.source import DataSource
from metajudge.reports.plots import META_EVAL_PLOTS, draw_plot
from metajudge.runs import meta_eval, plot_ahead

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")

ARGS = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", "shipped", "--n-boot", "50"]


def _started(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record what :func:`plot_ahead.start` returned at each run."""
    seen: list[Any] = []
    real = plot_ahead.start

    def spy(*a: Any, **k: Any) -> Any:
        seen.append(real(*a, **k))
        return seen[-1]

    monkeypatch.setattr(plot_ahead, "start", spy)
    return seen


def _drawn_afterwards(out: Path, tmp: Path, name: str = "scatter.png") -> bytes:
    res = MetaEvalResult.load(out / "result.json")
    return draw_plot(res, name, tmp / f"again_{name}").read_bytes()


def _every_plot_as_drawn_afterwards(out: Path, tmp: Path) -> None:
    for name in META_EVAL_PLOTS:
        assert (out / name).read_bytes() == _drawn_afterwards(out, tmp, name), name


def test_the_scatter_drawn_ahead_is_the_plot_of_the_result(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _started(monkeypatch)
    out = tmp_path / "run"
    assert main([*ARGS, "--out", str(out), "--paths-only"]) == 0
    assert len(seen) == 1 and seen[0] is not None  # a child drew it
    assert seen[0].process.exitcode == 0
    _every_plot_as_drawn_afterwards(out, tmp_path)
    assert not seen[0].folder.exists()  # its temporary folder is gone


def test_a_failed_child_is_logged_and_the_plot_drawn_here(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(plot_ahead, "CHILD_OPTIONS", {"statistics": ("no_such_statistic",)})
    seen = _started(monkeypatch)
    out = tmp_path / "run"
    with caplog.at_level(logging.WARNING, logger="metajudge.runs.plot_ahead"):
        assert main([*ARGS, "--out", str(out), "--paths-only"]) == 0
    assert seen[0] is not None and seen[0].process.exitcode == 1
    assert "did not make correlation_pearson.png, correlation_spearman.png, scatter.png" in (
        caplog.text
    )
    assert "no_such_statistic" in caplog.text
    _every_plot_as_drawn_afterwards(out, tmp_path)


def test_a_child_failing_on_the_final_result_keeps_its_scatter(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The child drew the scatter, then failed on the correlations: those two are drawn here."""

    def broken(folder: Path, reader: Any) -> None:
        reader.recv()
        raise RuntimeError("correlations failed in the child")

    monkeypatch.setattr(plot_ahead, "_draw_final", broken)  # the forked child inherits it
    seen = _started(monkeypatch)
    out = tmp_path / "run"
    with caplog.at_level(logging.WARNING, logger="metajudge.runs.plot_ahead"):
        assert main([*ARGS, "--out", str(out), "--paths-only"]) == 0
    assert seen[0] is not None and seen[0].process.exitcode == 1
    text = caplog.text
    assert "did not make correlation_pearson.png, correlation_spearman.png, drawn" in text
    assert "correlations failed in the child" in text and "scatter.png, drawn" not in text
    _every_plot_as_drawn_afterwards(out, tmp_path)


def _gone(pid: int) -> bool:
    """The process ``pid`` has exited (reaped, or a zombie nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_a_child_waiting_for_the_result_exits_when_the_parent_dies() -> None:
    """kill -9 of the run while its child waits for the final result (the scatter drawn): the
    child sees the pipe close and exits; it is never left behind."""
    code = (
        "import time\n"
        "from metajudge.reports import plots\n"
        "from metajudge.runs import plot_ahead\n"
        "plots.plot_scatter = lambda *a, **k: None\n"
        "class D: records = [0]\n"
        "a = plot_ahead.start(D(), [], lambda *a, **k: None, True)\n"
        "print(a.process.pid, a.folder, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pid, folder = proc.stdout.readline().split()
    time.sleep(0.5)
    assert not _gone(int(pid))  # waiting for a result
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    t0 = time.monotonic()
    while not _gone(int(pid)) and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    if not _gone(int(pid)):
        os.kill(int(pid), signal.SIGKILL)
        raise AssertionError("the plots' child outlived its killed parent")
    assert not Path(folder).exists()  # the child removed it: the killed parent could not


def test_a_failed_evaluation_stops_the_child(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _started(monkeypatch)

    def broken(*a: Any, **k: Any) -> Any:
        raise RuntimeError("evaluation failed")

    monkeypatch.setattr(meta_eval, "_evaluate", broken)
    with pytest.raises(RuntimeError, match="evaluation failed"):
        meta_eval.run_meta_eval(
            DataSource(dataset="ragchecker_meta_eval", scores=("shipped",)),
            out_dir=tmp_path / "run",
            progress=False,
        )
    assert seen[0] is not None and not seen[0].process.is_alive()
    assert not seen[0].folder.exists()
    assert not (tmp_path / "run" / "result.json").exists()


def test_no_child_without_plots_or_above_the_record_limit(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _started(monkeypatch)
    assert main([*ARGS, "--out", str(tmp_path / "a"), "--paths-only", "--no-plots"]) == 0
    monkeypatch.setattr(plot_ahead, "MAX_RECORDS", 100)  # RAGChecker has 280
    assert main([*ARGS, "--out", str(tmp_path / "b"), "--paths-only"]) == 0
    assert seen == [None, None]
    assert (tmp_path / "b" / "scatter.png").read_bytes() == _drawn_afterwards(
        tmp_path / "b", tmp_path
    )
