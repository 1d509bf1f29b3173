"""Write every report of a meta-evaluation run folder from its ``result.json``.

``render_all(out_dir)`` reads ``<out_dir>/result.json`` and (re)writes ``table.md``,
``table.csv``, ``cells.csv``, ``table.json``, ``table.tex``, ``correlation_pearson.png``,
``correlation_spearman.png`` and ``scatter.png``; nothing is recomputed. Each file is written
atomically.
"""

from __future__ import annotations

from pathlib import Path

from metajudge.io import atomic_write
from metajudge.metaeval.protocol import MetaEvalResult
from metajudge.reports import tables

RESULT_FILE = "result.json"


def render_all(
    out_dir: str | Path, *, plots: bool = True, result: MetaEvalResult | None = None
) -> dict[str, Path]:
    """Render the tables (and plots) of the result in ``out_dir``. Returns {kind: path}."""
    out = Path(out_dir)
    res = result if result is not None else MetaEvalResult.load(out / RESULT_FILE)
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
        p = plot_scatter(res, out / "scatter.png")
        written[p.name] = p
    return written
