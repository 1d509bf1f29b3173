"""The paper table: several meta-evaluation runs (subsets) as column groups of one LaTeX
(booktabs) table, each value with its CI or ± half-width, and a mark where a metric differs
significantly from a reference metric (the run's comparisons, Holm-adjusted).

FRANK's Table 4 layout: metrics as rows; per subset (CNN/DM | XSum | All) a column group of
Pearson and Spearman. ``meta-eval --subsets a,b,all`` writes it after the runs;
``report render DIR [DIR ...] --latex`` builds it from run folders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.reports.latex import _tex
from metajudge.reports.scale import STAT_LABEL
from metajudge.reports.sections import aggregation_words

CI_STYLES: tuple[str, ...] = ("ci", "pm", "none")
#: the level a mark is stated against
ALPHA = 0.05


def subset_label(res: MetaEvalResult) -> str:
    """A column group's title: the run's subset, else ``All``."""
    run = res.data.get("run") or {}
    return str(res.data["dataset"].get("subset") or run.get("subset") or "All")


def _cell(res: MetaEvalResult, metric: str, dim: str) -> dict[str, Any] | None:
    for c in res.data["cells"]:
        if c["metric"] == metric and c["dimension"] == dim:
            return c
    return None


def _differs(res: MetaEvalResult, ref: str, metric: str, dim: str, stat: str) -> bool | None:
    """Whether ``metric`` differs from ``ref`` (Holm-adjusted paired-bootstrap p < ALPHA);
    None when the run holds no such comparison."""
    for c in res.data.get("comparisons", []):
        if c["dimension"] != dim or c["statistic"] != stat:
            continue
        if {c["metric_a"], c["metric_b"]} == {ref, metric}:
            p = c.get("p_bootstrap_holm")
            return None if p is None else p < ALPHA
    return None


def _fmt(v: float, digits: int) -> str:
    """``v`` to ``digits`` decimals, LaTeX's minus; no sign on a value that rounds to zero.

    >>> _fmt(-0.004, 2), _fmt(-0.25, 2)
    ('0.00', '$-$0.25')
    """
    text = f"{v:.{digits}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "$-$")


def _value(entry: dict[str, Any] | None, style: str, digits: int) -> str:
    if not entry or entry.get("value") is None:
        return "--"
    v = float(entry["value"])
    ci = entry.get("ci")
    text = _fmt(v, digits)
    if style == "none" or not ci or not all(math.isfinite(float(b)) for b in ci):
        return text
    if style == "pm":
        half = (float(ci[1]) - float(ci[0])) / 2 + 1e-12  # a half at the last digit rounds up
        return f"{text} $\\pm$ {half:.{digits}f}"
    return f"{text} [{_fmt(float(ci[0]), digits)}, {_fmt(float(ci[1]), digits)}]"


def paper_table(
    results: Sequence[MetaEvalResult],
    *,
    dimension: str | None = None,
    statistics: Sequence[str] = ("pearson", "spearman"),
    style: str = "ci",
    reference: str | None = None,
    digits: int = 2,
) -> str:
    """The LaTeX table of ``results`` (one column group each, titled by its subset) on
    ``dimension`` (default: the first run's first). ``style``: ``ci`` (value [lo, hi]), ``pm``
    (value ± half the CI's width) or ``none``; ``reference``: mark with $^\\dagger$ each metric
    whose difference from it is significant after Holm (paired bootstrap, p < 0.05)."""
    first = results[0].data
    dim = dimension or first["dataset"]["dimensions"][0]
    metrics = list(dict.fromkeys(m["name"] for r in results for m in r.data["metrics"]))
    ncol = len(statistics)
    head = " & ".join(rf"\multicolumn{{{ncol}}}{{c}}{{{_tex(subset_label(r))}}}" for r in results)
    rules = " ".join(
        rf"\cmidrule(lr){{{2 + i * ncol}-{1 + (i + 1) * ncol}}}" for i in range(len(results))
    )
    stat_row = " & ".join(STAT_LABEL[s] for _ in results for s in statistics)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{l" + "r" * (ncol * len(results)) + "}",
        r"\toprule",
        f"Metric & {head} \\\\",
        rules,
        f" & {stat_row} \\\\",
        r"\midrule",
    ]
    for m in metrics:
        cells = []
        for r in results:
            c = _cell(r, m, dim)
            for s in statistics:
                text = _value(c["stats"].get(s) if c else None, style, digits)
                if reference and m != reference and _differs(r, reference, m, dim, s):
                    text += r"$^\dagger$"
                cells.append(text)
        lines.append(_tex(m) + " & " + " & ".join(cells) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_caption(results, dim, style, reference)}}}",
    ]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _caption(results: Sequence[MetaEvalResult], dim: str, style: str, ref: str | None) -> str:
    p = results[0].data["protocol"]
    control = (p.get("control") or {}).get("field")
    what = f"Partial correlation (controlling for {_tex(control)})" if control else "Correlation"
    ci = {"ci": "; [95\\% CI]", "pm": "; $\\pm$ half the 95\\% CI", "none": ""}[style]
    unit = _tex(str(p.get("bootstrap_unit", "item")).split(":")[0].split(",")[0])
    mark = (
        f"; $^\\dagger$: differs from {_tex(ref)} (paired bootstrap, Holm-adjusted p $<$ {ALPHA})"
        if ref
        else ""
    )
    return (
        f"{what} of each metric with the human {_tex(dim)} labels of "
        f"{_tex(results[0].data['dataset']['name'])}; aggregation "
        f"{_tex(aggregation_words(p).replace('_', ' '))}{ci} (bootstrap over {unit}, "
        f"{p.get('n_boot')} resamples){mark}."
    )
