"""Plots of a meta-evaluation result (matplotlib, Agg backend, PNG).

* :func:`plot_correlations` — per dimension, each metric's correlation with its bootstrap CI as
  an error bar and the inter-human ceiling as a horizontal line.
* :func:`plot_scatter` — per metric and dimension, the normalised metric difference of each
  pair against the human label (jittered), the way RAGChecker's appendix plots them.
* :func:`draw_plot` — either, by its run-folder file name (:data:`META_EVAL_PLOTS`).

matplotlib is imported inside the functions, never at module import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.stats.correlation import PEARSON_MAX_ABS

#: the plots of a meta-evaluation run folder: the correlations need the final result (their
#: CIs), the scatter only the points (:mod:`metajudge.runs.plot_ahead` draws it early)
CORRELATION_PLOTS = ("correlation_pearson.png", "correlation_spearman.png")
SCATTER_PLOT = "scatter.png"
META_EVAL_PLOTS = (*CORRELATION_PLOTS, SCATTER_PLOT)


def draw_plot(res: MetaEvalResult, name: str, path: str | Path) -> Path:
    """The plot called ``name`` (one of :data:`META_EVAL_PLOTS`) of ``res``, written to ``path``."""
    if name == SCATTER_PLOT:
        return plot_scatter(res, path)
    if name not in CORRELATION_PLOTS:
        raise ValueError(f"unknown plot {name!r} (expected one of {', '.join(META_EVAL_PLOTS)})")
    statistic = name.removeprefix("correlation_").removesuffix(".png")
    return plot_correlations(res, path, statistic=statistic)


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    """Lay the figure out once and draw it once. The tight layout's subplot parameters are
    computed by :class:`~matplotlib.layout_engine.TightLayoutEngine` directly, which is what
    ``fig.tight_layout()`` does, without leaving a layout engine on the figure: with one set,
    ``savefig`` lays out every tick and text a second time in a draw that renders nothing
    (a third of the plots' time). No ``bbox_inches="tight"`` either, which would draw the
    whole figure again only to crop a margin that the tight layout already keeps small."""
    from matplotlib.layout_engine import TightLayoutEngine

    TightLayoutEngine().execute(fig)
    from metajudge.run_folder import write_png

    return write_png(path.parent, path.name, fig, dpi=90)


def _points(xs: list[Any], labels: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(human label, metric value) per (pair, label) in pair order, skipping ``None`` on
    either side; built with numpy, not a per-point Python loop."""
    n = min(len(xs), len(labels))
    counts = np.fromiter((len(labs) for labs in labels[:n]), dtype=np.intp, count=n)
    flat = [y for labs in labels[:n] for y in labs]
    has_y = np.fromiter((y is not None for y in flat), dtype=bool, count=len(flat))
    has_x = np.fromiter((v is not None for v in xs[:n]), dtype=bool, count=n)
    x = np.array([0.0 if v is None else v for v in xs[:n]], dtype=float)
    y = np.array([0.0 if v is None else v for v in flat], dtype=float)
    keep = has_y & np.repeat(has_x, counts)
    return y[keep], np.repeat(x, counts)[keep]


def plot_correlations(res: MetaEvalResult, path: str | Path, *, statistic: str = "pearson") -> Path:
    """Correlation per metric on the run's scale (0–1, or ×100 under ``--percent``) with CI
    bars; dashed line = inter-human ceiling."""
    from metajudge.reports.scale import factor, is_percent

    plt = _plt()
    k = factor(is_percent(res.data))
    dims = res.dimensions
    metrics = res.metrics
    fig, axes = plt.subplots(
        1, len(dims), figsize=(max(4.0, 1.0 + 0.7 * len(metrics)) * len(dims), 3.6), squeeze=False
    )
    ceil = {c["dimension"]: c["stats"].get(statistic, {}) for c in res.data["ceiling"]}
    for ax, d in zip(axes[0], dims, strict=True):
        xs = np.arange(len(metrics))
        vals, lo, hi, und = [], [], [], []
        for m in metrics:
            e = res.cell(m, d)["stats"].get(statistic, {})
            v = e.get("value")
            ci = e.get("ci")
            vals.append(np.nan if v is None else v * k)
            lo.append(0.0 if v is None or not ci else (v - ci[0]) * k)
            hi.append(0.0 if v is None or not ci else (ci[1] - v) * k)
            und.append(v is None)
        ax.bar(xs, np.nan_to_num(vals), color=["#cccccc" if u else "#4c72b0" for u in und])
        ax.errorbar(
            xs, np.nan_to_num(vals), yerr=[lo, hi], fmt="none", ecolor="black", capsize=3, lw=1
        )
        for x, u in zip(xs, und, strict=True):
            if u:
                ax.text(x, 0, "undef.", ha="center", va="bottom", fontsize=7, rotation=90)
        cv = ceil.get(d, {}).get("value")
        tops = [v + h for v, h in zip(np.nan_to_num(vals), hi, strict=True)] + (
            [cv * k] if cv is not None else []
        )
        ax.set_ylim(top=max(max(tops, default=0.0), 0.0) * 1.2 + 0.05 * k)
        if cv is not None:
            ax.axhline(cv * k, ls="--", color="#c44e52", lw=1.2, label="inter-human")
            ax.legend(loc="upper left", fontsize=7)
        ax.set_xticks(xs)
        ax.set_xticklabels(metrics, rotation=40, ha="right", fontsize=8)
        how = (
            str(res.data["protocol"].get("correlation_level"))
            if res.data["protocol"].get("correlate") == "pointwise"
            else res.data["protocol"]["normalize"]
        )
        ax.set_title(f"{d} — {statistic}{' ×100' if k == 100 else ''} ({how})", fontsize=9, y=1.0)
        ax.axhline(0, color="black", lw=0.5)
    out = _save(fig, Path(path))
    plt.close(fig)
    return out


def plot_scatter(res: MetaEvalResult, path: str | Path, *, seed: int = 0) -> Path:
    """Normalised metric difference vs human label, one panel per metric × dimension."""
    plt = _plt()
    pts = res.data.get("points") or {}
    dims = res.dimensions
    metrics = res.metrics
    rng = np.random.default_rng(seed)
    fig, axes = plt.subplots(
        len(metrics), len(dims), figsize=(3.0 * len(dims), 2.4 * len(metrics)), squeeze=False
    )
    norm = res.data["protocol"]["normalize"]
    for i, m in enumerate(metrics):
        for j, d in enumerate(dims):
            ax = axes[i][j]
            col = res.cell(m, d).get("column")
            xs = (pts.get("d_norm") or {}).get(col) if col else None
            labels = (pts.get("labels") or {}).get(d)
            if xs is None or labels is None:
                ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
            else:
                X, Y = _points(xs, labels)
                big = ~(np.abs(Y) <= PEARSON_MAX_ABS)
                if big.any():  # (matplotlib cannot place ticks on a range near 1.8e308)
                    X, Y = X[~big], Y[~big]
                    ax.text(
                        0.02,
                        0.98,
                        f"{int(big.sum())} beyond ±{PEARSON_MAX_ABS:.0e} not shown",
                        transform=ax.transAxes,
                        fontsize=6,
                        va="top",
                    )
                ax.scatter(
                    X + rng.uniform(-0.15, 0.15, X.size), Y, s=4, alpha=0.35, color="#4c72b0"
                )
            ax.set_title(f"{m} / {d}", fontsize=8, y=1.0)
            ax.tick_params(labelsize=7)
            if i == len(metrics) - 1:
                ax.set_xlabel("human label", fontsize=8)
            if j == 0:
                resp = pts.get("unit") == "responses"
                ax.set_ylabel("metric score" if resp else f"metric diff ({norm})", fontsize=8)
    out = _save(fig, Path(path))
    plt.close(fig)
    return out
