"""The plots of a meta-evaluation drawn in a child process, beside the parent's work.

On a small dataset the plots take about as long as the whole bootstrap (importing matplotlib
and 18 panels of text layout for RAGChecker), so :func:`start` forks a child, on the second
core, that draws them into a temporary folder:

1. ``scatter.png`` at once: it shows each metric's normalised pair differences against the
   human labels (:func:`metajudge.reports.plots.plot_scatter`), and nothing in it depends on
   the bootstrap, so the child meta-evaluates the same rows without resamples
   (:data:`CHILD_OPTIONS`: the points and the table's layout are those of the full run);
2. the correlation plots once the parent hands it the final result
   (:meth:`PlotsAhead.finish`, called when the tables are about to be written): their bars
   and CIs are the run's. The parent then only waits, so the second plot is drawn at the
   same time in a process forked from the child.

:meth:`PlotsAhead.collect` moves the finished files into the run folder. Every file is the
one the parent would draw from the same result.

The child is used only where forking is cheap and safe: on Linux, for at most
:data:`MAX_RECORDS` records (the child holds a second aligned view). Everywhere else, and
for each plot the child failed to make (its error is logged), the plot is drawn in the
parent as before, so the files are the same either way.

Nothing is left behind: the folder (``metajudge-plots-<parent pid>-*``) is removed by the child
once the parent's end of the pipe is closed, whenever that happens: the parent closes it after
moving the plots out (:meth:`PlotsAhead.collect`, which waits for the child's word that it has
drawn them), on cancelling, or by dying (``kill -9`` included, before or after handing over a
result, or while waiting for the plots); the child first finishes what it draws. Ctrl-C is the
parent's to handle (the child and its drawing processes ignore SIGINT; the parent stops them,
:meth:`PlotsAhead.cancel`); a child stopped with SIGTERM stops its drawing processes before it
exits. A folder whose processes were all killed at once is removed by the next run (its parent
pid is gone, :func:`_remove_stale`).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import pickle
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: most dataset records for which the plots are drawn ahead in a child process
MAX_RECORDS = 50_000
#: the child's protocol changes for the scatter: no resamples, no comparisons, one statistic
#: (the points and the cells' columns do not depend on them)
CHILD_OPTIONS: dict[str, Any] = {"n_boot": 0, "compare": False, "statistics": ("pearson",)}
_RESULT_FILE = "result.pickle"
_ERROR_FILE = "error.txt"
_PREFIX = "metajudge-plots-"
#: the parent's messages to the child: the final result is in the folder; the parent collects;
#: the child's message to the parent: every plot it makes is in the folder
_RESULT, _KEEP, _DRAWN = "result", "keep", "drawn"


class PlotsAhead:
    """A forked child drawing the plots of a run into ``folder``; ``conn``: this end of the
    pipe that tells it the final result is in ``folder`` and hears that its plots are drawn."""

    def __init__(self, process: Any, folder: Path, conn: Any) -> None:
        self.process = process
        self.folder = folder
        self.conn = conn

    def finish(self, res: Any) -> None:
        """Hand the child the final result (``res.data``, pickled into its folder): it draws
        the correlation plots of it."""
        tmp = self.folder / f"{_RESULT_FILE}.tmp"
        try:
            tmp.write_bytes(pickle.dumps(res.data, protocol=pickle.HIGHEST_PROTOCOL))
            tmp.replace(self.folder / _RESULT_FILE)
        except OSError as e:  # no room to hand it over (a full disk): the plots are drawn here,
            log.warning("the plots' child gets no result (%s); drawn here instead", e)
            tmp.unlink(missing_ok=True)  # and a full disk is then named by the run's own files
            return
        with contextlib.suppress(OSError):  # a dead child: its plots are drawn here
            self.conn.send(_RESULT)

    def collect(
        self, out: Path, names: Sequence[str], draw: Callable[[str, Path], Path]
    ) -> dict[str, Path]:
        """Wait for the child and move each of its plots ``names`` into ``out``; a plot it did
        not make is drawn here with ``draw(name, path)``, and why is logged once."""
        with contextlib.suppress(OSError):  # a child still waiting for a result stops
            self.conn.send(_KEEP)
        with contextlib.suppress(EOFError, OSError):  # a dead child: what it drew is there
            self.conn.recv()  # _DRAWN
        written: dict[str, Path] = {}
        try:
            missing = [n for n in names if not (self.folder / n).is_file()]
            if missing:
                log.warning(
                    "the plots' child process did not make %s, drawn here instead: %s",
                    ", ".join(missing),
                    self._why(),
                )
            for name in names:
                path = out / name
                if name not in missing:
                    try:
                        shutil.move(str(self.folder / name), str(path))
                        written[name] = path
                        continue
                    except OSError:  # e.g. a full disk: drawn here, an error names the run's file
                        Path(path).unlink(missing_ok=True)
                written[name] = draw(name, path)
            return written
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.conn.close()  # the child, waiting for this, exits
            self.process.join()

    def _why(self) -> str:
        errors = [p.read_text() for p in sorted(self.folder.glob("error*.txt"))]
        return "\n".join(errors) or f"exit code {self.process.exitcode}"

    def cancel(self) -> None:
        """Stop the child (the run failed, was interrupted, or the plots were collected) and
        remove its folder."""
        self.conn.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()
        shutil.rmtree(self.folder, ignore_errors=True)


def start(
    ds: Any, rows: Sequence[Any], evaluate: Callable[..., Any], enabled: bool
) -> PlotsAhead | None:
    """Fork the child that draws the scatter of ``evaluate(ds, rows, **CHILD_OPTIONS)`` and
    then the correlation plots of the result it is handed, or None where it is not used
    (``enabled`` false: no plots; see the module docstring)."""
    if not enabled or not sys.platform.startswith("linux"):
        return None
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    if len(ds.records) > MAX_RECORDS:
        return None
    _remove_stale()
    try:
        folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
    except OSError:  # no room in $TMPDIR: the plots are drawn in the parent, as elsewhere
        return None
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=_child, args=(ds, rows, evaluate, folder, theirs, ours), daemon=True)
    proc.start()
    theirs.close()
    return PlotsAhead(proc, folder, ours)


@contextlib.contextmanager
def drawing(
    ds: Any, rows: Sequence[Any], evaluate: Callable[..., Any], enabled: bool
) -> Iterator[PlotsAhead | None]:
    """:func:`start` for the ``with`` block of a run; at its end, however it ends, the child
    is stopped and its folder removed (nothing is left once the plots were collected)."""
    ahead = start(ds, rows, evaluate, enabled)
    try:
        yield ahead
    finally:
        if ahead is not None:
            ahead.cancel()


def _remove_stale() -> None:
    """Remove the plot folders of runs whose processes are all gone (killed at once)."""
    for p in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = p.name[len(_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(1)


def _child(
    ds: Any,
    rows: Sequence[Any],
    evaluate: Callable[..., Any],
    folder: Path,
    conn: Any,
    parents: Any,
) -> None:
    """In the child: the scatter without resamples, then the correlation plots of the result
    the parent hands over; an error is written for the parent, which draws what is missing.
    The folder is removed once the parent's end is closed (module docstring)."""
    parents.close()  # only the parent holds its end: its exit ends our waits
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's; it stops us
    signal.signal(signal.SIGTERM, _stop)
    try:
        from metajudge.reports import plots

        plots.plot_scatter(evaluate(ds, rows, **CHILD_OPTIONS), folder / plots.SCATTER_PLOT)
        _draw_final(folder, conn)
        code = 0
    except BaseException:  # noqa: BLE001 - reported to the parent, which draws the plots itself
        _stop_drawing()
        with contextlib.suppress(OSError):
            (folder / _ERROR_FILE).write_text(traceback.format_exc(limit=4))
        code = 1
    with contextlib.suppress(OSError):  # a parent gone: nobody reads it
        conn.send(_DRAWN)
    while _message(conn) is not None:  # the parent moves the plots out, then closes its end
        continue
    shutil.rmtree(folder, ignore_errors=True)  # gone already, unless the parent died
    os._exit(code)


def _message(conn: Any) -> Any:
    """The parent's next message (None when it closed its end, or on SIGTERM while waiting)."""
    try:
        return conn.recv()
    except (EOFError, OSError, SystemExit):
        return None


_DRAWING: list[int] = []  # in the child: the pids of its drawing processes


def _stop_drawing() -> None:
    """Kill and reap the child's drawing processes (before the folder is removed)."""
    for pid in _DRAWING:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
    _DRAWING.clear()


def _draw_final(folder: Path, conn: Any) -> None:
    """Wait for the parent's final result and draw its correlation plots into ``folder``: the
    first here, each other one in a forked grandchild at the same time (the parent waits for
    them on its idle core). When the parent closes the pipe or collects without a result,
    nothing is drawn."""
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult
    from metajudge.reports import plots

    if _message(conn) != _RESULT:
        return
    res = MetaEvalResult(pickle.loads((folder / _RESULT_FILE).read_bytes()))
    first, *others = plots.CORRELATION_PLOTS
    _DRAWING.extend(_fork_drawing(res, name, folder) for name in others)
    plots.draw_plot(res, first, folder / first)
    for pid in list(_DRAWING):
        os.waitpid(pid, 0)
        _DRAWING.remove(pid)


def _fork_drawing(res: Any, name: str, folder: Path) -> int:
    """Fork a process that draws the plot ``name`` of ``res`` into ``folder`` (an error goes
    to ``error-<name>.txt``); returns its pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        from metajudge.reports import plots

        plots.draw_plot(res, name, folder / name)
    except BaseException:  # noqa: BLE001 - reported to the parent, which draws the plot itself
        (folder / f"error-{name}.txt").write_text(traceback.format_exc(limit=4))
        code = 1
    os._exit(code)
