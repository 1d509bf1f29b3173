"""The scatter plot of a meta-evaluation drawn in a child process while the bootstrap runs.

``scatter.png`` shows each metric's normalised pair differences against the human labels
(:func:`metajudge.reports.plots.plot_scatter`): nothing in it depends on the bootstrap. On a
small dataset drawing it (18 panels of matplotlib text layout for RAGChecker) takes about as
long as the whole bootstrap, so :func:`start` forks a child that meta-evaluates the same rows
without resamples (:data:`CHILD_OPTIONS`: the points and the table's layout are those of the
full run) and draws the plot into a temporary folder, on the second core, while the parent
evaluates; :meth:`ScatterAhead.collect` moves the finished file into the run folder.

The child is used only where forking is cheap and safe: on Linux, for at most
:data:`MAX_RECORDS` records (the child holds a second aligned view). Everywhere else, and
when the child fails (its error is logged), the plot is drawn in the parent as before, so the
file is the same either way.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: most dataset records for which the scatter is drawn ahead in a child process
MAX_RECORDS = 50_000
#: the child's protocol changes: no resamples, no comparisons, one statistic (the points and
#: the cells' columns do not depend on them)
CHILD_OPTIONS: dict[str, Any] = {"n_boot": 0, "compare": False, "statistics": ("pearson",)}
SCATTER_FILE = "scatter.png"
_ERROR_FILE = "error.txt"


class ScatterAhead:
    """A forked child drawing ``scatter.png`` into ``folder``."""

    def __init__(self, process: Any, folder: Path) -> None:
        self.process = process
        self.folder = folder

    def collect(self, path: Path, draw: Callable[[Path], Path]) -> Path:
        """Wait for the child and move its plot to ``path``; on a failure of the child, log
        why and ``draw(path)`` in this process instead."""
        self.process.join()
        made = self.folder / SCATTER_FILE
        try:
            if self.process.exitcode == 0 and made.is_file():
                shutil.move(str(made), str(path))
                return path
            err = self.folder / _ERROR_FILE
            why = err.read_text() if err.is_file() else f"exit code {self.process.exitcode}"
            log.warning("the scatter plot's child process failed, drawn here instead: %s", why)
            return draw(path)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def cancel(self) -> None:
        """Stop the child (the run failed, was interrupted, or the plot was collected) and
        remove its folder."""
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()
        shutil.rmtree(self.folder, ignore_errors=True)


def start(
    ds: Any, rows: Sequence[Any], evaluate: Callable[..., Any], enabled: bool
) -> ScatterAhead | None:
    """Fork the child that draws the scatter of ``evaluate(ds, rows, **CHILD_OPTIONS)``, or
    None where it is not used (``enabled`` false: no plots; see the module docstring)."""
    if not enabled or not sys.platform.startswith("linux"):
        return None
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    if len(ds.records) > MAX_RECORDS:
        return None
    folder = Path(tempfile.mkdtemp(prefix="metajudge-scatter-"))
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=_child, args=(ds, rows, evaluate, folder), daemon=True)
    proc.start()
    return ScatterAhead(proc, folder)


@contextlib.contextmanager
def drawing(
    ds: Any, rows: Sequence[Any], evaluate: Callable[..., Any], enabled: bool
) -> Iterator[ScatterAhead | None]:
    """:func:`start` for the ``with`` block of a run; at its end, however it ends, the child
    is stopped and its folder removed (nothing is left once the plot was collected)."""
    ahead = start(ds, rows, evaluate, enabled)
    try:
        yield ahead
    finally:
        if ahead is not None:
            ahead.cancel()


def _child(ds: Any, rows: Sequence[Any], evaluate: Callable[..., Any], folder: Path) -> None:
    """In the child: evaluate without resamples and draw; an error is written for the parent."""
    try:
        from metajudge.reports.plots import plot_scatter

        plot_scatter(evaluate(ds, rows, **CHILD_OPTIONS), folder / SCATTER_FILE)
    except BaseException:  # noqa: BLE001 - reported to the parent, which draws the plot itself
        (folder / _ERROR_FILE).write_text(traceback.format_exc(limit=4))
        os._exit(1)
