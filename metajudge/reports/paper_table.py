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
from metajudge.analyses.metric_vs_human.trivial import is_trivial
from metajudge.reports.latex import _tex
from metajudge.reports.scale import STAT_LABEL
from metajudge.reports.sections import aggregation_words

CI_STYLES: tuple[str, ...] = ("ci", "pm", "none")
#: ``--mark``: ``best`` bolds the best metric of each column and every metric not
#: significantly worse than it (the WMT and FRANK convention)
MARK_STYLES: tuple[str, ...] = ("best",)
#: the level a mark is stated against
ALPHA = 0.05
#: the test behind every mark: the paired bootstrap, Holm-adjusted within its family
MARK_TEST = "p_bootstrap_holm"
#: the marks against the ``--compare-to`` metric
MARKS: dict[str, str] = {"better": r"$^\dagger$", "worse": r"$^\ddagger$"}


def subset_label(res: MetaEvalResult) -> str:
    """A column group's title: the run's subset, else ``All``."""
    run = res.data.get("run") or {}
    return str(res.data["dataset"].get("subset") or run.get("subset") or "All")


def _cell(res: MetaEvalResult, metric: str, dim: str) -> dict[str, Any] | None:
    for c in res.data["cells"]:
        if c["metric"] == metric and c["dimension"] == dim:
            return c
    return None


def comparison(res: MetaEvalResult, a: str, b: str, dim: str, stat: str) -> dict[str, Any] | None:
    """The run's comparison of ``a`` and ``b`` (either order) on ``dim`` and ``stat``; None when
    the run holds none."""
    for c in res.data.get("comparisons", []):
        if (
            c["dimension"] == dim
            and c["statistic"] == stat
            and {c["metric_a"], c["metric_b"]} == {a, b}
        ):
            return c
    return None


def _significant(res: MetaEvalResult, a: str, b: str, dim: str, stat: str) -> bool | None:
    """Whether ``a`` and ``b`` differ (:data:`MARK_TEST` Holm-adjusted p < :data:`ALPHA`); None
    when the run holds no such comparison."""
    c = comparison(res, a, b, dim, stat)
    p = None if c is None else c.get(MARK_TEST)
    return None if p is None else p < ALPHA


def _stat_value(res: MetaEvalResult, metric: str, dim: str, stat: str) -> float | None:
    c = _cell(res, metric, dim)
    v = (c["stats"].get(stat) or {}).get("value") if c else None
    return None if v is None else float(v)


def ref_mark(res: MetaEvalResult, ref: str, metric: str, dim: str, stat: str) -> str:
    """``$^\\dagger$`` where ``metric`` is significantly better than ``ref``, ``$^\\ddagger$``
    where significantly worse, else nothing (better: the higher correlation)."""
    if metric == ref or not _significant(res, ref, metric, dim, stat):
        return ""
    v, r = _stat_value(res, metric, dim, stat), _stat_value(res, ref, dim, stat)
    if v is None or r is None or v == r:
        return ""
    return MARKS["better"] if v > r else MARKS["worse"]


def best_set(res: MetaEvalResult, metrics: Sequence[str], dim: str, stat: str) -> set[str]:
    """The best metric of a column (the highest value; trivial baselines are rows, not
    candidates) and every metric not significantly worse than it by :data:`MARK_TEST` (a
    metric the run did not compare with the best is not in the set)."""
    values = {m: _stat_value(res, m, dim, stat) for m in metrics if not is_trivial(m)}
    known = {m: v for m, v in values.items() if v is not None and math.isfinite(v)}
    if not known:
        return set()
    best = max(known, key=lambda m: known[m])
    return {best} | {
        m for m in known if m != best and _significant(res, best, m, dim, stat) is False
    }


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
    mark: str | None = None,
) -> str:
    """The LaTeX table of ``results`` (one column group each, titled by its subset) on
    ``dimension`` (default: the first run's first). ``style``: ``ci`` (value [lo, hi]), ``pm``
    (value ± half the CI's width) or ``none``; ``reference``: $^\\dagger$ / $^\\ddagger$ where
    a metric is significantly better / worse than it; ``mark="best"``: bold for the best metric
    of each column and every metric not significantly worse than it. The caption names the test
    and its Holm family, and says where the resamples cannot reach significance."""
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
    bold = {
        (id(r), s): best_set(r, metrics, dim, s) if mark == "best" else set()
        for r in results
        for s in statistics
    }
    for m in metrics:
        cells = []
        for r in results:
            c = _cell(r, m, dim)
            for s in statistics:
                text = _value(c["stats"].get(s) if c else None, style, digits)
                if m in bold[(id(r), s)]:
                    text = rf"\textbf{{{text}}}"
                cells.append(text + (ref_mark(r, reference, m, dim, s) if reference else ""))
        lines.append(_tex(m) + " & " + " & ".join(cells) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_caption(results, dim, style, reference, mark)}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _caption(
    results: Sequence[MetaEvalResult], dim: str, style: str, ref: str | None, mark: str | None
) -> str:
    p = results[0].data["protocol"]
    control = (p.get("control") or {}).get("field")
    what = f"Partial correlation (controlling for {_tex(control)})" if control else "Correlation"
    ci = {"ci": "; [95\\% CI]", "pm": "; $\\pm$ half the 95\\% CI", "none": ""}[style]
    unit = _tex(str(p.get("bootstrap_unit", "item")).split(":")[0].split(",")[0])
    return (
        f"{what} of each metric with the human {_tex(dim)} labels of "
        f"{_tex(results[0].data['dataset']['name'])}; aggregation "
        f"{_tex(aggregation_words(p).replace('_', ' '))}{ci} (bootstrap over {unit}, "
        f"{p.get('n_boot')} resamples){_marks_words(results, dim, ref, mark)}."
    )


def _marks_words(
    results: Sequence[MetaEvalResult], dim: str, ref: str | None, mark: str | None
) -> str:
    """What the marks mean, the test behind them and its Holm family; where the resamples
    cannot reach :data:`ALPHA` after Holm, that no mark can appear and how many would."""
    if not ref and mark != "best":
        return ""
    said = []
    if ref:
        said.append(
            f"{MARKS['better']} / {MARKS['worse']}: significantly better / worse than {_tex(ref)}"
        )
    if mark == "best":
        said.append("bold: the best metric of the column and every metric not significantly worse")
    sizes = sorted(
        {
            sum(
                1
                for c in r.data.get("comparisons", [])
                if c["dimension"] == dim and c["statistic"] == s
            )
            for r in results
            for s in ("pearson", "spearman")
        }
        - {0}
    )
    counts = " or ".join(map(str, sizes)) or "no"
    family = f"Holm within each dimension and statistic, {counts} tests"
    text = "; " + "; ".join(said) + f" (paired bootstrap, {family}, p $<$ {ALPHA})"
    floors = [f for r in results if (f := (r.data.get("p_floors") or {}).get("p_bootstrap"))]
    blocked = [f for f in floors if f["holm_floor"] > ALPHA]
    if blocked:
        f = max(blocked, key=lambda f: f["holm_floor"])
        need = f.get("needed") or math.floor(2 * f["n_tests"] / ALPHA)  # the bootstrap's 2/(B+1)
        text += (
            f"; with {f['n_resamples']} resamples no difference can be significant (Holm cannot "
            f"fall below {f['holm_floor']:.3g})"
            + f": {need} resamples would allow it"
            + (", so no metric is marked" if ref else "")
            + (" and every metric is in bold" if mark == "best" else "")
        )
    return text
