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
from metajudge.io import atomic_write
from metajudge.reports import tables
from metajudge.reports.published import attach_published

RESULT_FILE = "result.json"


def render_all(
    out_dir: str | Path,
    *,
    plots: bool = True,
    result: MetaEvalResult | None = None,
    published: bool = True,
    scatter: Any = None,
) -> dict[str, Path]:
    """Render the tables (and plots) of the result in ``out_dir``. Returns {kind: path}.

    With ``published`` the matching published numbers (``baselines/published_*.json``) are
    attached to the result first (:func:`metajudge.reports.published.attach_published`).
    ``scatter``: a child drawing ``scatter.png`` already (:mod:`metajudge.runs.plot_ahead`):
    its ``collect(path, draw)`` puts the file there (or draws it with ``draw``).
    """
    out = Path(out_dir)
    res = result if result is not None else MetaEvalResult.load(out / RESULT_FILE)
    if published:
        attach_published(res)
    written: dict[str, Path] = {}
    for name, text in (
        ("table.md", tables.to_markdown(res)),
        ("table.csv", tables.to_csv(res)),
        ("cells.csv", tables.cells_csv(res)),
        ("table.json", tables.to_json(res)),
        ("table.tex", tables.to_latex(res)),
    ):
        with atomic_write(out / name) as fh:
            fh.write(text)
        written[name] = out / name
    if plots:
        from metajudge.reports.plots import plot_correlations, plot_scatter

        for s in ("pearson", "spearman"):
            p = plot_correlations(res, out / f"correlation_{s}.png", statistic=s)
            written[p.name] = p

        def draw(path: Path) -> Path:
            return plot_scatter(res, path)

        path = out / "scatter.png"
        p = scatter.collect(path, draw) if scatter is not None else draw(path)
        written[p.name] = p
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
