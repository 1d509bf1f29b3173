"""Write every report of a meta-evaluation run folder from its ``result.json``.

``render_all(out_dir)`` reads ``<out_dir>/result.json`` and (re)writes ``table.md``,
``table.csv``, ``cells.csv``, ``table.json``, ``table.tex``, ``correlation_pearson.png``,
``correlation_spearman.png`` and ``scatter.png``; nothing is recomputed. Each file is written
atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.reports import tables
from metajudge.reports.latex import latex_table
from metajudge.reports.published import attach_published
from metajudge.run_folder import write_file

RESULT_FILE = "result.json"


def render_all(
    out_dir: str | Path,
    *,
    plots: bool = True,
    result: MetaEvalResult | None = None,
    published: bool = True,
    ahead: Any = None,
) -> dict[str, Path]:
    """Render the tables (and plots) of the result in ``out_dir``. Returns {kind: path}.

    With ``published`` the matching published numbers (``baselines/published_*.json``) are
    attached to the result first (:func:`metajudge.reports.published.attach_published`).
    ``ahead``: a child process that drew ``scatter.png`` already and draws the correlation plots
    of the final result while the tables are written (:mod:`metajudge.runs.plot_ahead`); its
    ``collect(out, names, draw)`` puts the files there (drawing here, with ``draw``, any it did
    not make).
    """
    out = Path(out_dir)
    res = result if result is not None else MetaEvalResult.load(out / RESULT_FILE)
    if published:
        attach_published(res)
    if plots and ahead is not None:
        ahead.finish(res)  # the result is final: the child draws its correlations meanwhile
    written: dict[str, Path] = {}
    for name, text in (
        ("table.md", tables.to_markdown(res)),
        ("table.csv", tables.to_csv(res)),
        ("cells.csv", tables.cells_csv(res)),
        ("table.json", tables.to_json(res)),
        ("table.tex", latex_table(res)),
    ):
        written[name] = write_file(out, name, text)
    if plots:
        from metajudge.reports.plots import META_EVAL_PLOTS, draw_plot

        def draw(name: str, path: Path) -> Path:
            return draw_plot(res, name, path)

        if ahead is not None:
            written.update(ahead.collect(out, META_EVAL_PLOTS, draw))
        else:
            written.update({name: draw(name, out / name) for name in META_EVAL_PLOTS})
    return written


def markdown(result: Any) -> str:
    """The Markdown report of any result: a meta-evaluation, a backbone swap or judge diagnostics."""
    if isinstance(result, MetaEvalResult):
        return tables.to_markdown(result)
    from metajudge.reports import swap_report
    from metajudge.results import as_data

    if "per_backbone" in as_data(result):
        return swap_report.swap_markdown(result)
    return swap_report.diagnostics_markdown(result)


def plot(result: Any, out_dir: str | Path) -> dict[str, Path]:
    """The plots of a meta-evaluation or backbone-swap result, written into ``out_dir``."""
    if isinstance(result, MetaEvalResult):
        return {k: v for k, v in render_all(out_dir, result=result).items() if k.endswith(".png")}
    from metajudge.reports.swap_report import plot_swap

    return plot_swap(result, out_dir)
