"""``scatter.png`` drawn in a forked child while the bootstrap runs (metajudge.runs.plot_ahead):
the same file as drawn from ``result.json`` afterwards, whatever happens to the child."""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.cli import main
from metajudge.reports.plots import plot_scatter
from metajudge.runs import meta_eval, plot_ahead

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")

ARGS = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", "shipped", "--n-boot", "50"]


def _leftovers() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("metajudge-scatter-*"))


def _started(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record what :func:`plot_ahead.start` returned at each run."""
    seen: list[Any] = []
    real = plot_ahead.start

    def spy(*a: Any, **k: Any) -> Any:
        seen.append(real(*a, **k))
        return seen[-1]

    monkeypatch.setattr(plot_ahead, "start", spy)
    return seen


def _drawn_afterwards(out: Path, tmp: Path) -> bytes:
    res = MetaEvalResult.load(out / "result.json")
    return plot_scatter(res, tmp / "again.png").read_bytes()


def test_the_scatter_drawn_ahead_is_the_plot_of_the_result(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _leftovers()
    seen = _started(monkeypatch)
    out = tmp_path / "run"
    assert main([*ARGS, "--out", str(out), "--quiet"]) == 0
    assert len(seen) == 1 and seen[0] is not None  # a child drew it
    assert seen[0].process.exitcode == 0
    assert (out / "scatter.png").read_bytes() == _drawn_afterwards(out, tmp_path)
    assert _leftovers() == before


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
        assert main([*ARGS, "--out", str(out), "--quiet"]) == 0
    assert seen[0] is not None and seen[0].process.exitcode == 1
    assert "child process failed" in caplog.text and "no_such_statistic" in caplog.text
    assert (out / "scatter.png").read_bytes() == _drawn_afterwards(out, tmp_path)


def test_a_failed_evaluation_stops_the_child(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _leftovers()
    seen = _started(monkeypatch)

    def broken(*a: Any, **k: Any) -> Any:
        raise RuntimeError("evaluation failed")

    monkeypatch.setattr(meta_eval, "_evaluate", broken)
    with pytest.raises(RuntimeError, match="evaluation failed"):
        meta_eval.run_meta_eval(
            "ragchecker_meta_eval", out_dir=tmp_path / "run", scores=["shipped"], progress=False
        )
    assert seen[0] is not None and not seen[0].process.is_alive()
    assert _leftovers() == before
    assert not (tmp_path / "run" / "result.json").exists()


def test_no_child_without_plots_or_above_the_record_limit(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _started(monkeypatch)
    assert main([*ARGS, "--out", str(tmp_path / "a"), "--quiet", "--no-plots"]) == 0
    monkeypatch.setattr(plot_ahead, "MAX_RECORDS", 100)  # RAGChecker has 280
    assert main([*ARGS, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert seen == [None, None]
    assert (tmp_path / "b" / "scatter.png").read_bytes() == _drawn_afterwards(
        tmp_path / "b", tmp_path
    )
