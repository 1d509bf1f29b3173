"""``metajudge report render DIR``: re-render a meta-eval run folder in place from its own result.

:func:`run_report` holds the folder's lock; the result file it reads must be the one the folder's
manifest vouches for (:func:`metajudge.run_folder.check_manifest`), ``--published`` /
``--percent`` are recorded in ``result.json`` first (nothing is recomputed), the tables (and
plots) are rendered again (:func:`metajudge.reports.render.render_all`), and the manifest then
vouches for the new files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ReportRun:
    """What ``report`` printed and wrote: ``text`` (the table in ``--format``, or the path of
    ``report.html``), the files re-rendered, ``notes`` (said before the text, on standard output
    unless ``--format json``) and ``warnings`` (standard error)."""

    text: str
    written: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def record_display(
    folder: str | Path, *, published: str | None, percent: bool | None, run: ReportRun
) -> None:
    """``--published FILE`` / ``--percent``: attach the file's rows and record the scale in the
    folder's ``result.json`` (atomically; nothing is recomputed), so the tables and
    ``report.html`` rendered from it agree."""
    if not published and percent is None:
        return
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult
    from metajudge.reports.published import attach_published, read_published_file, unmatched_line
    from metajudge.reports.render import RESULT_FILE
    from metajudge.reports.scale import set_percent
    from metajudge.runs.meta_eval_categorical import is_categorical_result

    if published:
        read_published_file(published)  # exit 2 on a bad file, before anything is written
    if is_categorical_result(folder) is not None:
        run.notes.append("categorical run: --published/--percent do not apply; ignored")
        return
    path = Path(folder) / RESULT_FILE
    res = MetaEvalResult.load(path)
    set_percent(res.data, percent)
    if published:
        attach_published(res, user_file=published)
        if unmatched_line(res.data):
            run.warnings.append(f"metajudge: warning: {unmatched_line(res.data)}")
    from metajudge.run_folder import write_file

    write_file(folder, RESULT_FILE, res.to_json() + "\n")


def paper_latex(folders: list[str], **table: Any) -> str:
    """The paper table of several meta-eval run folders (:func:`paper_of` with ``table``'s
    options); nothing is written."""
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult
    from metajudge.errors import InputError
    from metajudge.reports.render import RESULT_FILE

    results = []
    for f in folders:
        path = Path(f) / RESULT_FILE
        if not path.is_file():
            raise InputError(f"{f}: no {RESULT_FILE} (not a meta-eval run folder)", field="dir")
        results.append(MetaEvalResult.load(path))
    return paper_of(results, **table)


def paper_of(
    results: list[Any],
    *,
    dimension: str | None = None,
    names_file: str | Path | None = None,
    **options: Any,
) -> str:
    """:func:`metajudge.reports.paper_table.paper_table` of ``results`` on ``dimension`` (None:
    every dimension), rows from ``names_file`` (``--table names=FILE``), ``options`` its others."""
    from metajudge.errors import InputError
    from metajudge.reports.paper_table import paper_table, read_metric_names

    dims = results[0].data["dataset"]["dimensions"]
    if dimension is not None and dimension not in dims:
        raise InputError(
            f"unknown dimension {dimension!r} (the runs have {', '.join(dims)})", field="dimension"
        )
    names = None
    if names_file is not None:
        metrics = list(dict.fromkeys(m["name"] for r in results for m in r.data["metrics"]))
        names = read_metric_names(names_file, metrics)
    return paper_table(results, dimension=dimension, names=names, **options)


def render_table(res: Any, fmt: str) -> str:
    """A meta-eval result as ``fmt`` (md, csv, json, tex)."""
    from metajudge.reports import latex, tables

    if fmt == "tex":
        return latex.latex_table(res)
    return {"md": tables.to_markdown, "csv": tables.to_csv, "json": tables.to_json}[fmt](res)


def _render(
    folder: str | Path, fmt: str, plots: bool, browser_cap: int | None, run: ReportRun
) -> None:
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult
    from metajudge.reports.render import RESULT_FILE, render_all
    from metajudge.runs.meta_eval_categorical import is_categorical_result

    if fmt == "html":
        from metajudge.reports.html_run import write_html_report

        cap = {} if browser_cap is None else {"cap": browser_cap}
        run.text = str(write_html_report(folder, **cap))
        return
    cat = is_categorical_result(folder)
    if cat is not None:
        from metajudge.reports.categorical_report import RENDER, render_categorical

        run.written = render_categorical(folder, cat)
        run.text = RENDER.get(fmt, RENDER["md"])(cat)
        return
    res = MetaEvalResult.load(Path(folder) / RESULT_FILE)
    run.written = render_all(folder, plots=plots, result=res)
    run.text = render_table(res, fmt)


def run_report(
    folder: str | Path,
    *,
    fmt: str = "md",
    plots: bool = True,
    browser_cap: int | None = None,
    published: str | None = None,
    percent: bool | None = None,
) -> ReportRun:
    """Re-render ``folder`` in place (module docstring)."""
    from metajudge.run_folder import RESULT_FILES, check_manifest, refresh_manifest, run_lock

    run = ReportRun("")
    with run_lock(folder):
        check_manifest(folder, RESULT_FILES)
        record_display(folder, published=published, percent=percent, run=run)
        _render(folder, fmt, plots, browser_cap, run)
        refresh_manifest(folder)
    return run
