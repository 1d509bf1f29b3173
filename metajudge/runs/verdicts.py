"""``metajudge judge verdicts``: accuracy of external judges' pairwise verdicts under a named
protocol (:func:`run_verdicts`), the report shown and, with ``output``, written to a file.

The choice among the judges (``--choose``) is :func:`metajudge.runs.decide.run_choose_verdicts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class VerdictsRun:
    """The report to show (Markdown when it was written to a file) and the file written."""

    text: str
    written: Path | None = None


def _format(fmt: str | None, output: str | Path | None) -> str:
    """``--format``, else from ``output``'s suffix (``.csv``, ``.json``; else Markdown)."""
    if fmt is None and output:
        return {".csv": "csv", ".json": "json"}.get(Path(output).suffix, "md")
    return fmt or "md"


def run_verdicts(
    inputs: Sequence[str | Path],
    protocol: str = "double_game",
    *,
    seed: int = 0,
    n_boot: int = 1000,
    fmt: str | None = None,
    output: str | Path | None = None,
) -> VerdictsRun:
    """Read each verdict file (one judge each), evaluate them under ``protocol`` and render the
    report in ``fmt``; with ``output``, write it there (atomically, refused before any work when
    ``output`` is an input or a folder) and show the Markdown. JudgeBench's published accuracies
    are shown beside ours under ``double_game``."""
    from metajudge.analyses.verdict_accuracy import evaluate_verdicts
    from metajudge.io import atomic_write, check_output_file
    from metajudge.reports.verdict_tables import published_judgebench, render_verdicts
    from metajudge.scores.released_verdicts import read_verdicts

    if output:
        check_output_file(output, inputs=inputs)
    judges = [read_verdicts(p) for p in inputs]
    res = evaluate_verdicts(judges, protocol, seed=seed, n_boot=n_boot)
    pub = published_judgebench() if protocol == "double_game" else {}
    text = render_verdicts(res, _format(fmt, output), pub)
    if not output:
        return VerdictsRun(text)
    with atomic_write(output) as fh:
        fh.write(text)
    return VerdictsRun(render_verdicts(res, "md", pub), Path(output))
