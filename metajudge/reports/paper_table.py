"""The paper table: several meta-evaluation runs (subsets) as column groups of one LaTeX
(booktabs) table, each value with its CI or ± half-width, and a mark where a metric differs
significantly from a reference metric (the run's comparisons, Holm-adjusted).

FRANK's Table 4 layout: metrics as rows; per subset (CNN/DM | XSum | All) a column group of
Pearson and Spearman. ``meta-eval --subsets a,b,all`` writes it after the runs;
``report render DIR [DIR ...] --latex`` builds it from run folders.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.analyses.metric_vs_human.levels import LEVEL_NAMES
from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.analyses.metric_vs_human.trivial import is_trivial
from metajudge.errors import InputError
from metajudge.reports.latex import _tex
from metajudge.reports.scale import STAT_LABEL
from metajudge.reports.sections import aggregation_words

CI_STYLES: tuple[str, ...] = ("ci", "pm", "none")
#: ``--table mark=best`` bolds the best metric of each column and every metric not
#: significantly worse than it (the WMT and FRANK convention)
MARK_STYLES: tuple[str, ...] = ("best",)
#: the level a mark is stated against
ALPHA = 0.05
#: the test behind every mark: the paired bootstrap, Holm-adjusted within its family
MARK_TEST = "p_bootstrap_holm"
#: the marks against the ``--compare-to`` metric
MARKS: dict[str, str] = {"better": r"$^\dagger$", "worse": r"$^\ddagger$"}
#: a run's title where the runs' levels differ
LEVEL_TITLES: dict[str, str] = {
    "global": "Global",
    "item": "Item",
    "system-grouped": "System-grouped",
    "system": "System",
}


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


def run_label(res: MetaEvalResult, results: Sequence[MetaEvalResult]) -> str:
    """A run's title among ``results``: its level where the runs' levels differ, its subset
    where theirs do (both where both do), else its subset (:func:`subset_label`)."""
    levels = {_level(r) for r in results}
    subsets = {subset_label(r) for r in results}
    parts = [subset_label(res)] if len(subsets) > 1 or len(levels) == 1 else []
    if len(levels) > 1:
        parts.append(LEVEL_TITLES.get(_level(res), _level(res)))
    return ", ".join(parts)


def _level(res: MetaEvalResult) -> str:
    p = res.data["protocol"]
    return str(p.get("correlation_level") or ("item" if p.get("grouped") else "global"))


def _header(
    results: Sequence[MetaEvalResult], dims: Sequence[str], statistics: Sequence[str]
) -> list[str]:
    """The header lines: one dimension: a group per run, then the statistics (FRANK's layout);
    several: a group per dimension, a sub-group per run (where there are several), then the
    statistics; a ``cmidrule`` under every group."""
    labels = [_tex(run_label(r, results)) for r in results]
    ns = len(statistics)
    if len(dims) == 1:
        tiers = [[(label, ns) for label in labels]]
    else:
        tiers = [[(_tex(d), ns * len(results)) for d in dims]]
        if len(results) > 1:
            tiers.append([(label, ns) for _ in dims for label in labels])
    lines = []
    for i, tier in enumerate(tiers):
        head = " & ".join(rf"\multicolumn{{{n}}}{{c}}{{{label}}}" for label, n in tier)
        lines.append(("Metric" if i == 0 else "") + f" & {head} \\\\")
        pos, rules = 2, []
        for _, n in tier:
            rules.append(rf"\cmidrule(lr){{{pos}-{pos + n - 1}}}")
            pos += n
        lines.append(" ".join(rules))
    n_cols = len(dims) * len(results)
    lines.append(
        " & " + " & ".join(STAT_LABEL[s] for _ in range(n_cols) for s in statistics) + r" \\"
    )
    return lines


#: ``--table KEY=VALUE[,KEY=VALUE...]`` (``meta-eval --subsets/--levels``, ``report render
#: --latex``): each key -> the :func:`metajudge.runs.report.paper_of` keyword it sets
TABLE_KEYS: dict[str, str] = {
    "ci": "style",  # ci (value [lo, hi], default), pm (value ± half the CI) or none
    "decimals": "digits",  # decimals of every value and CI (default 2)
    "mark": "mark",  # best: bold the best metric of each column and those not worse
    "names": "names_file",  # the rows, in order: JSON object or COLUMN<TAB>NAME per line
}


def table_spec(text: str) -> dict[str, Any]:
    """The paper table's settings of one ``--table`` value, as :func:`metajudge.runs.report.
    paper_of` keywords: ``ci=ci|pm|none``, ``decimals=N`` (N >= 1), ``mark=best``,
    ``names=FILE``, comma-separated, each at most once.

    >>> table_spec("decimals=3,mark=best,names=rows.tsv")
    {'digits': 3, 'mark': 'best', 'names_file': 'rows.tsv'}
    """
    out: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or key not in TABLE_KEYS or not value or TABLE_KEYS[key] in out:
            raise InputError(
                f"expected KEY=VALUE pairs with the keys {', '.join(TABLE_KEYS)} (each once), "
                f"got {part!r}",
                field="--table",
            )
        out[TABLE_KEYS[key]] = _table_value(key, value)
    return out


def _table_value(key: str, value: str) -> Any:
    """One ``--table`` value checked (:func:`table_spec`)."""
    allowed = {"ci": CI_STYLES, "mark": MARK_STYLES}.get(key)
    if allowed is not None and value not in allowed:
        raise InputError(f"{key}={value}: choose {' or '.join(allowed)}", field="--table")
    if key == "decimals":
        if not value.isdigit() or int(value) < 1:
            raise InputError(f"decimals={value}: a whole number >= 1", field="--table")
        return int(value)
    return value


def read_metric_names(path: str | Path, metrics: Sequence[str]) -> dict[str, str]:
    """The rows of ``--table names=FILE``, in the file's order: column → display name, from a
    JSON object or one ``COLUMN<TAB>NAME`` per line (blank lines and ``#`` comments skipped).
    A column no run has is an error naming it."""
    text = Path(path).read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        names = {str(k): str(v) for k, v in json.loads(text).items()}
    else:
        names = {}
        for no, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            col, tab, name = line.partition("\t")
            if not tab or not col.strip() or not name.strip():
                raise InputError(
                    f"{path}:{no}: expected COLUMN<TAB>NAME, got {line!r}", field="--table names"
                )
            names[col.strip()] = name.strip()
    unknown = [c for c in names if c not in metrics]
    if unknown:
        raise InputError(
            f"{path}: no run has the column(s) {', '.join(unknown)} (the runs have "
            f"{', '.join(metrics)})",
            field="--table names",
        )
    return names


def paper_table(
    results: Sequence[MetaEvalResult],
    *,
    dimension: str | None = None,
    statistics: Sequence[str] = ("pearson", "spearman"),
    style: str = "ci",
    reference: str | None = None,
    digits: int = 2,
    mark: str | None = None,
    names: Mapping[str, str] | None = None,
) -> str:
    """The LaTeX table of ``results`` on ``dimension`` (None: every dimension of the first run).
    One dimension: a column group per run (titled by its subset, or its level where the runs'
    levels differ); several: a group per dimension, a sub-group per run. ``style``: ``ci``
    (value [lo, hi]), ``pm`` (value ± half the CI's width) or ``none``; ``digits``: decimals;
    ``reference``: $^\\dagger$ / $^\\ddagger$ where a metric is significantly better / worse
    than it; ``mark="best"``: bold for the best metric of each column and every metric not
    significantly worse than it; ``names``: the rows, in order, as column → display name
    (None: every metric under its own name). The caption names the aggregation, the test and
    its Holm family, and says where the resamples cannot reach significance."""
    dims = [dimension] if dimension else list(results[0].data["dataset"]["dimensions"])
    metrics = list(dict.fromkeys(m["name"] for r in results for m in r.data["metrics"]))
    rows = dict(names) if names is not None else {m: m for m in metrics}
    cols = [(r, d, s) for d in dims for r in results for s in statistics]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{l" + "r" * len(cols) + "}",
        r"\toprule",
        *_header(results, dims, statistics),
        r"\midrule",
    ]
    bold = {
        (id(r), d, s): best_set(r, list(rows), d, s) if mark == "best" else set()
        for r, d, s in cols
    }
    for m, shown in rows.items():
        cells = []
        for r, d, s in cols:
            c = _cell(r, m, d)
            text = _value(c["stats"].get(s) if c else None, style, digits)
            if m in bold[(id(r), d, s)]:
                text = rf"\textbf{{{text}}}"
            cells.append(text + (ref_mark(r, reference, m, d, s) if reference else ""))
        lines.append(_tex(shown) + " & " + " & ".join(cells) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{_caption(results, dims, style, reference, mark)}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _caption(
    results: Sequence[MetaEvalResult],
    dims: Sequence[str],
    style: str,
    ref: str | None,
    mark: str | None,
) -> str:
    p = results[0].data["protocol"]
    control = (p.get("control") or {}).get("field")
    what = f"Partial correlation (controlling for {_tex(control)})" if control else "Correlation"
    ci = {"ci": "; [95\\% CI]", "pm": "; $\\pm$ half the 95\\% CI", "none": ""}[style]
    unit = _tex(str(p.get("bootstrap_unit", "item")).split(":")[0].split(",")[0])
    return (
        f"{what} of each metric with the human {_tex(', '.join(dims))} labels of "
        f"{_tex(results[0].data['dataset']['name'])}; aggregation "
        f"{_tex(aggregation_words(p).replace('_', ' '))}{ci} (bootstrap over {unit}, "
        f"{p.get('n_boot')} resamples){_levels_words(results)}"
        f"{_marks_words(results, dims, ref, mark)}."
    )


def _levels_words(results: Sequence[MetaEvalResult]) -> str:
    """Where the runs' levels differ, what each level correlates."""
    levels = list(dict.fromkeys(_level(r) for r in results))
    if len(levels) < 2:
        return ""
    return "; " + "; ".join(
        f"{LEVEL_TITLES.get(lv, lv)}: {_tex(LEVEL_NAMES.get(lv, lv))}" for lv in levels
    )


def _marks_words(
    results: Sequence[MetaEvalResult], dims: Sequence[str], ref: str | None, mark: str | None
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
                if c["dimension"] == d and c["statistic"] == s
            )
            for r in results
            for d in dims
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
