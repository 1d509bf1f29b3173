"""A rank-cluster table (:mod:`metajudge.analyses.system_ranking`) as Markdown, CSV, JSON, LaTeX, PNG.

The WMT metrics-task layout (Freitag et al. 2023, Table 1): rank (cluster), metric, correlation,
with the level, statistic, test, resamples, seed and the multiple-comparison rule in the caption.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from metajudge.analyses.system_ranking import RankTable
from metajudge.io import CsvWriter

FORMATS: tuple[str, ...] = ("md", "csv", "json", "tex")


def caption(t: RankTable) -> str:
    o = t.options
    j = t.to_dict()
    return (
        f"{t.dataset} / {t.dimension}: {o.statistic} at level {o.level} "
        f"({t.n_systems} systems, {t.n_items} inputs); clusters: greedy (mt-metrics-eval), "
        f"a metric starts a new cluster when significantly worse than one of the current "
        f"cluster (alpha {o.alpha}, {j['multiple_comparisons']}); test {o.method}, "
        f"{o.n_resamples} resamples, seed {o.seed}; {j['p_rule']}"
        + (f"; note: {j['note']}" if j.get("note") else "")
    )


def ranking_markdown(t: RankTable) -> str:
    lines = ["| cluster | metric | correlation |", "|---:|---|---:|"]
    lines += [f"| {r['cluster']} | {r['metric']} | {r['correlation']:.4f} |" for r in t.rows]
    return "\n".join(lines) + f"\n\n{caption(t)}\n"


def ranking_csv(t: RankTable) -> str:
    buf = io.StringIO()
    w = CsvWriter(buf, lineterminator="\n")
    w.writerow(
        ["cluster", "metric", "correlation", "level", "statistic", "method", "n_resamples", "seed"]
    )
    o = t.options
    for r in t.rows:
        w.writerow(
            [
                r["cluster"],
                r["metric"],
                repr(r["correlation"]),
                o.level,
                o.statistic,
                o.method,
                o.n_resamples,
                o.seed,
            ]
        )
    return buf.getvalue()


def _tex(s: str) -> str:
    for a, b in (
        ("\\", r"\textbackslash{}"),
        ("_", r"\_"),
        ("%", r"\%"),
        ("&", r"\&"),
        ("#", r"\#"),
    ):
        s = s.replace(a, b)
    return s


def ranking_latex(t: RankTable) -> str:
    out = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{rlr}",
        r"\toprule",
        r"Rank & Metric & Corr. \\",
        r"\midrule",
    ]
    prev = None
    for r in t.rows:
        if prev is not None and r["cluster"] != prev:
            out.append(r"\midrule")
        out.append(f"{r['cluster']} & {_tex(r['metric'])} & {r['correlation']:.3f} \\\\")
        prev = r["cluster"]
    out += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{_tex(caption(t))}}}", r"\end{table}"]
    return "\n".join(out) + "\n"


def render_ranking(t: RankTable, fmt: str) -> str:
    """The table in ``fmt`` (md, csv, json, tex)."""
    if fmt == "json":
        return json.dumps(t.to_dict(), indent=1, sort_keys=True) + "\n"
    return {"md": ranking_markdown, "csv": ranking_csv, "tex": ranking_latex}[fmt](t)


def plot_ranking(t: RankTable, path: str | Path) -> Path:
    """Horizontal bars of the correlations, coloured by cluster (PNG)."""
    from metajudge.reports.plots import _plt, _save

    plt = _plt()
    rows = t.rows[::-1]
    fig, ax = plt.subplots(figsize=(6, 0.3 * len(rows) + 1))
    cmap: Any = plt.get_cmap("tab10")
    ax.barh(
        [r["metric"] for r in rows],
        [r["correlation"] for r in rows],
        color=[cmap((r["cluster"] - 1) % 10) for r in rows],
    )
    ax.set_xlabel(f"{t.options.statistic} ({t.options.level} level); colour = cluster")
    ax.set_title(f"{t.dataset} / {t.dimension}", fontsize=9)
    try:
        return _save(fig, Path(path))
    finally:
        plt.close(fig)
