"""Tables of a meta-evaluation result: Markdown, CSV, JSON and LaTeX.

Layout of MT-RAIG Table 17 (Seo et al. 2025): rows = metrics, columns = dimension × {Pearson,
Spearman}, the last row the inter-human ceiling. Values are on the run's one scale
(:mod:`metajudge.reports.scale`: 0–1 with four decimals, or ×100 with two under ``--percent``);
only the statistics the protocol can fill are columns (:func:`~metajudge.reports.sections.
shown_statistics`). Where a published number exists for the same metric, dimension and
statistic (``baselines/published_*.json`` or ``--published FILE``, see
:mod:`metajudge.reports.published`), a "published" column stands beside ours. The terminal
table, the Markdown and the JSON carry 95% CIs; a footer names the protocol, the metric
signatures and the missing-score counts.

Everything here renders a saved result JSON (``result.json``); nothing is recomputed.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.io import CsvWriter
from metajudge.reports.scale import (
    STAT_LABEL,
    ci_text,
    is_percent,
    num,
    published_value,
    scale_words,
)
from metajudge.reports.sections import (
    _md_intro,
    _md_missing,
    _md_reference,
    _md_table,
    is_pointwise,
    md_comparison_notes,
    md_text,
    protocol_bits,
    shown_statistics,
    small_n_caution,
    undefined_lines,
)

MAIN_STATS: tuple[str, ...] = ("pearson", "spearman")
#: the terminal's table of a pointwise run: the main statistics and Kendall's τ_b (the three a
#: metric paper prints; a pairwise-difference run keeps the two of its reproduced tables)
TERMINAL_STATS: tuple[str, ...] = (*MAIN_STATS, "kendall")
HUMAN_ROW = "Inter-Human Correlation"


def _pub_index(res: MetaEvalResult) -> dict[tuple[str, str, str], dict[str, Any]]:
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in res.data.get("published", []):
        out.setdefault((e["metric"], e["dimension"], e["statistic"]), e)
    return out


def _columns(res: MetaEvalResult, stats: Sequence[str]) -> list[tuple[str, str, bool]]:
    """(dimension, statistic, is_published) per column, in Table 17 order."""
    pub = _pub_index(res)
    cols = []
    for d in res.dimensions:
        for s in shown_statistics(res.data, stats):
            cols.append((d, s, False))
            if any(k[1] == d and k[2] == s for k in pub):
                cols.append((d, s, True))
    return cols


def table_rows(res: MetaEvalResult, stats: Sequence[str] = MAIN_STATS) -> dict[str, Any]:
    """The table as data: header, rows (metric rows then the ceiling row) with values and CIs."""
    pub = _pub_index(res)
    cols = _columns(res, stats)
    header = ["Metric"] + [
        f"{d.capitalize()} {STAT_LABEL[s]}" + (" (published)" if p else "") for d, s, p in cols
    ]
    rows = []
    for m in res.metrics:
        cells = []
        for d, s, p in cols:
            if p:
                e = pub.get((m, d, s))
                cells.append(
                    {
                        "value": None if e is None else published_value(e),
                        "ci": None,
                        "published": e is not None,
                        "source": None if e is None else f"{e['table']}",
                    }
                )
                continue
            ent = res.cell(m, d)["stats"].get(s, {})
            cells.append(_entry_cell(ent))
        rows.append({"metric": m, "cells": cells})
    ceil = {c["dimension"]: c for c in res.data["ceiling"]}
    hcells = []
    for d, s, p in cols:
        if p:
            e = pub.get(("human", d, s))
            hcells.append(
                {
                    "value": None if e is None else published_value(e),
                    "ci": None,
                    "published": e is not None,
                    "source": None if e is None else e["table"],
                }
            )
            continue
        ent = ceil.get(d, {}).get("stats", {}).get(s, {})
        hcells.append(_entry_cell(ent))
    rows.append({"metric": HUMAN_ROW, "cells": hcells, "ceiling": True})
    return {
        "header": header,
        "columns": [{"dimension": d, "statistic": s, "published": p} for d, s, p in cols],
        "rows": rows,
    }


def _entry_cell(ent: dict[str, Any]) -> dict[str, Any]:
    return {
        "value": ent.get("value"),
        "ci": ent.get("ci"),
        "ci_method": ent.get("ci_method"),
        "undefined": ent.get("undefined"),
    }


def ci_method_tag(method: str | None) -> str:
    """How a table names a CI's method: nothing for the percentile bootstrap (the default,
    stated under the table), else a short name (``Fisher z``, ``t``, ``Wilson``, ``no CI, n < 5``)."""
    if not method or method == "percentile bootstrap":
        return ""
    if method.startswith("none"):
        return "no CI, n < 5" if "n < 5" in method else "no CI"
    if method.startswith("Fisher z"):
        return "Fisher z"
    return "t" if method.startswith("Student t") else method.split()[0]


def _cell_text(c: dict[str, Any], *, ci: bool, percent: bool) -> str:
    if c.get("value") is None:
        if c.get("published") is False:
            return ""
        return "undef." if c.get("undefined") else "—"
    t = num(c["value"], percent)
    tag = ci_method_tag(c.get("ci_method"))
    if ci and c.get("ci"):
        t += " " + ci_text(c["ci"], percent)
    if ci and tag:
        t += f" ({tag})"
    return t


def _md_caution(res: MetaEvalResult) -> str:
    caution = small_n_caution(res.data)
    return f"**{caution[0].upper()}{caution[1:]}.**\n\n" if caution else ""


def protocol_line(res: MetaEvalResult) -> str:
    """The settings of a meta-evaluation, in one line (:func:`~metajudge.reports.sections.protocol_bits`)."""
    return "; ".join(protocol_bits(res.data))


def to_markdown(res: MetaEvalResult) -> str:
    """The full Markdown report: main table with CIs, other statistics, missing scores,
    comparisons, and a footer with protocol and signatures."""
    ds = res.data["dataset"]
    parts = [
        f"# Meta-evaluation: {ds['name']}" + (f" ({ds['subset']})" if ds.get("subset") else ""),
        "\n\n",
        _md_intro(res.data),
        _md_caution(res),
        judge_health(res),
        _md_missing(res),
        _stats_table(res, MAIN_STATS),
        _md_other_stats(res),
        _md_undefined(res),
        _md_reference(res),
        _md_comparisons(res),
        _md_published(res),
        "\n---\n\n",
        footer(res),
    ]
    return "".join(parts)


def _stats_table(res: MetaEvalResult, stats: Sequence[str]) -> str:
    t = table_rows(res, stats=stats)
    pct = is_percent(res.data)
    return _md_table(
        t["header"],
        [
            [r["metric"]] + [_cell_text(c, ci=True, percent=pct) for c in r["cells"]]
            for r in t["rows"]
        ],
    )


def _md_other_stats(res: MetaEvalResult) -> str:
    stats = res.data.get("statistics", [])
    others = [s for s in shown_statistics(res.data, stats) if s not in MAIN_STATS]
    if not others:
        return ""
    how = scale_words(is_percent(res.data))
    if not is_pointwise(res.data):
        how += f", normalisation {res.data['protocol']['normalize']}"
    return f"\n## Other statistics ({how})\n\n" + _stats_table(res, others)


def _md_undefined(res: MetaEvalResult) -> str:
    lines = [f"- {md_text(line)}\n" for line in undefined_lines(res.data["cells"])]  # names: text
    out = "\n## Undefined values\n\n" + "".join(lines) if lines else ""
    for c in res.data["ceiling"]:
        if c.get("method") is None:
            why = next(iter(c["stats"].values()))["undefined"] if c["stats"] else "n/a"
            out += f"- inter-human ceiling / {c['dimension']}: {why}\n"
    return out


def _md_comparisons(res: MetaEvalResult) -> str:
    comps = [c for c in res.data.get("comparisons", []) if c.get("diff") is not None]
    if not comps:
        return md_comparison_notes(res.data)
    pct = is_percent(res.data)
    how = f"difference {scale_words(pct)}"
    if not is_pointwise(res.data):
        how += f", normalisation {res.data['protocol']['normalize']}"
    hdr = ["Dimension", "Statistic", "A", "B", "A − B", "95% CI"]
    hdr += ["p boot (Holm)", "p perm (Holm)", "p Williams (Holm)"]
    rows = [
        [
            c["dimension"],
            STAT_LABEL[c["statistic"]],
            c["metric_a"],
            c["metric_b"],
            num(c["diff"], pct),
            ci_text(c.get("ci"), pct),
            _p(c, "p_bootstrap"),
            _p(c, "p_permutation"),
            _p(c, "p_williams"),
        ]
        for c in comps
    ]
    title = f"\n## Metric vs metric ({how}; Holm-adjusted p)\n\n"
    return (
        title
        + md_comparison_notes(res.data, floors=False)
        + "\n"
        + _md_table(hdr, rows)
        + _md_floors(res)
    )


def _md_floors(res: MetaEvalResult) -> str:
    """The resolution of the resampling p-values: their floor, and what Holm makes of it."""
    lines = []
    for test, f in (res.data.get("p_floors") or {}).items():
        what = "bootstrap" if test == "p_bootstrap" else "permutation"
        lines.append(
            f"- p {what}: the smallest p with {f['n_resamples']} resamples is {f['rule']} = "
            f"{f['floor']:.3g} (shown as ≤); after Holm over {f['n_tests']} tests"
            f"{' (' + f['family'] + ')' if f.get('family') else ''}, "
            f"{f['holm_floor']:.3g}."
            + (f" {f['note'][0].upper()}{f['note'][1:]}." if f.get("note") else "")
        )
    return "\n" + "\n".join(lines) + "\n" if lines else ""


def _md_published(res: MetaEvalResult) -> str:
    from metajudge.reports.published import unmatched_line

    lines = [
        f"- {md_text(s)}\n"
        for s in dict.fromkeys(e["source"] for e in res.data.get("published") or [])
    ]
    left = unmatched_line(res.data)
    if left:
        lines.append(f"- {md_text(left)}\n")
    return "\n## Published numbers shown beside ours\n\n" + "".join(lines) if lines else ""


def _p(c: dict[str, Any], k: str) -> str:
    """``p (Holm p)``; ``≤`` where the raw p is the resampling floor (``<test>_at_floor``)."""
    v, h = c.get(k), c.get(k + "_holm")
    if v is None:
        return "—"
    le = "≤" if c.get(k + "_at_floor") else ""
    return f"{le}{v:.3g} ({le}{h:.3g})" if h is not None else f"{le}{v:.3g}"


_WEAK_BACKBONES = ("smollm2-135m", "gemma3-270m")


def judge_health(res: MetaEvalResult) -> str:
    """A caution block for LLM-judge metrics: backbone and parse-failure (unscored) rate per column.

    Empty when no metric of the result is an LLM judge (no ``backbone:`` in its signature).
    """
    lines = []
    weak = False
    for m in res.data["metrics"]:
        for col, sigs in m["signatures"].items():
            backbones = sorted(
                {
                    part.split(":", 1)[1]
                    for s in sigs
                    for part in s.split("|")
                    if part.startswith("backbone:")
                }
            )
            if not backbones:
                continue
            weak |= any(b in _WEAK_BACKBONES for b in backbones)
            miss = m["missing"].get(col, {})
            total = miss.get("responses_total", 0) - miss.get("responses_absent", 0)
            bad = miss.get("responses_unscored", 0)
            rate = f"{bad}/{total} ({100 * bad / total:.1f}%)" if total else "n/a"
            errs = "; ".join(f"{k}×{v}" for k, v in miss.get("errors", {}).items())
            lines.append(
                f"- `{col}` under {', '.join(backbones)}: unparseable / unscored responses {rate}"
                + (f" — {errs}" if errs else "")
            )
    if not lines:
        return ""
    out = "**LLM judges.** Parse failures are counted, never scored; pairs missing a score are handled as the footer says.\n\n"
    out += "\n".join(lines) + "\n\n"
    if weak:
        out += (
            "*The embedded backbones (SmolLM2-135M, Gemma-3-270M) are weak judges: low or negative correlations "
            "with humans are expected and are reported as measured. Point a backbone config at a stronger model "
            "for real studies.*\n\n"
        )
    return out


def footer(res: MetaEvalResult) -> str:
    """Protocol, metric signatures and missing-score counts."""
    p = res.data["protocol"]
    pairwise = not is_pointwise(res.data)
    out = io.StringIO()
    out.write(
        f"**Protocol.** {protocol_line(res)}. "
        + (f"Accuracy: {p['accuracy']}. " if pairwise else "")
        + f"Fisher-z CIs use n = {p['fisher_n']}. "
        f"Metric comparisons: paired bootstrap, permutation test ({p['n_perm']} permutations), Williams test ({p.get('williams_sided', 'two-sided')}; n = {p['williams_n']}); Holm {p['holm']}. "
        + (f"Permutations: {p['permutation']}. " if p.get("permutation") else "")
        + (f"CI row limits: {p['ci_row_limits']}. " if p.get("ci_row_limits") else "")
        + (f"CI method: {p['ci_method']}. " if p.get("ci_method") else "")
        + f"Inter-human ceiling: {p.get('ceiling', 'annotator vs annotator')}. "
        + (
            "Likert data: pairs are every two systems on the same input (label = difference of mean scores)."
            if pairwise
            else ""
        )
        + "\n\n"
    )
    out.write("**Metric signatures and missing scores.**\n\n")
    for m in res.data["metrics"]:
        for col, sigs in m["signatures"].items():
            miss = m["missing"].get(col, {})
            sig = md_text("; ".join(sigs)) if sigs else "(no signature)"
            out.write(
                f"- `{md_text(col).replace('`', ' ')}`: {sig} — responses absent {miss.get('responses_absent', 0)}, unscored {miss.get('responses_unscored', 0)}, "
                + (
                    f"responses without a score {miss.get('pairs_missing', 0)}"
                    if miss.get("unit") == "responses"
                    else f"pairs without a difference {miss.get('pairs_missing', 0)}"
                )
            )
            if miss.get("pairs_missing"):
                out.write(
                    f" (--missing {miss.get('rule', 'median')}: imputed with the median "
                    f"{miss.get('pairs_imputed_median', 0)}, dropped {miss.get('pairs_dropped', 0)})"
                )
            if miss.get("errors"):
                out.write("; errors: " + ", ".join(f"{k!r}×{v}" for k, v in miss["errors"].items()))
            out.write("\n")
    out.write(
        f"\nmetajudge meta-evaluation result schema {res.data['schema']}; computed in {res.data.get('timing_s', 0):.2f} s.\n"
    )
    return out.getvalue()


def to_csv(res: MetaEvalResult) -> str:
    """Wide CSV in the Table 17 layout on the run's scale (two more decimals than the tables),
    with CI bounds and published columns; the columns the protocol fills (no ``normalize`` on a
    pointwise run). ``cells.csv`` is the long file on the raw scale with every column."""
    t = table_rows(res)
    pct = is_percent(res.data)
    pairwise = not is_pointwise(res.data)
    buf = io.StringIO()
    w = CsvWriter(buf, lineterminator="\n")
    header = ["metric"]
    for c in t["columns"]:
        base = f"{c['dimension']}_{c['statistic']}"
        header += (
            [base + "_published"] if c["published"] else [base, base + "_ci_low", base + "_ci_high"]
        )
    w.writerow(header + (["normalize"] if pairwise else []))
    for r in t["rows"]:
        line: list[Any] = [r["metric"]]
        for col, c in zip(t["columns"], r["cells"], strict=True):
            ci = c.get("ci") or [None, None]
            vals = [c.get("value")] if col["published"] else [c.get("value"), *ci]
            line += ["" if v is None else num(v, pct, extra=2) for v in vals]
        w.writerow(line + ([res.data["protocol"]["normalize"]] if pairwise else []))
    return buf.getvalue()


def cells_csv(res: MetaEvalResult) -> str:
    """Long CSV: one line per metric × dimension × statistic, on the raw scale whatever
    ``--percent`` says, and with every column under every protocol (a fixed schema for
    programs: ``n_pairs`` is 0 and ``normalize`` unused on a pointwise run)."""
    buf = io.StringIO()
    w = CsvWriter(buf, lineterminator="\n")
    w.writerow(
        [
            "metric",
            "column",
            "dimension",
            "statistic",
            "value",
            "ci_low",
            "ci_high",
            "fisher_low",
            "fisher_high",
            "n_rows",
            "n_pairs",
            "undefined",
            "normalize",
            "aggregation",
            "grouped",
            "ci_method",
        ]
    )
    p = res.data["protocol"]
    for c in res.data["cells"]:
        for s, e in c["stats"].items():
            ci, fz = e.get("ci") or [None, None], e.get("fisher_ci") or [None, None]
            w.writerow(
                [
                    c["metric"],
                    c.get("column") or "",
                    c["dimension"],
                    s,
                    _n(e.get("value")),
                    _n(ci[0]),
                    _n(ci[1]),
                    _n(fz[0]),
                    _n(fz[1]),
                    c.get("n_rows", 0),
                    c.get("n_pairs", 0),
                    e.get("undefined") or "",
                    p["normalize"],
                    p["aggregation"],
                    p["grouped"],
                    e.get("ci_method") or "",
                ]
            )
    for c in res.data["ceiling"]:
        for s, e in c["stats"].items():
            ci = e.get("ci") or [None, None]
            w.writerow(
                [
                    HUMAN_ROW,
                    c.get("method") or "",
                    c["dimension"],
                    s,
                    _n(e.get("value")),
                    _n(ci[0]),
                    _n(ci[1]),
                    "",
                    "",
                    "",
                    c.get("n_pairs", 0),
                    e.get("undefined") or "",
                    p["normalize"],
                    p["aggregation"],
                    p["grouped"],
                    e.get("ci_method") or "",
                ]
            )
    return buf.getvalue()


def _n(v: float | None) -> str:
    return "" if v is None else repr(float(v))


def to_json(res: MetaEvalResult) -> str:
    """The rendered table (values on the raw scale whatever ``--percent`` says, CIs, published
    values) with protocol and signatures; the columns are the ones the protocol fills."""
    from metajudge.reports.published import unmatched_line

    t = table_rows(res)
    printed = "x100" if is_percent(res.data) else "on the same scale"
    doc = {
        "dataset": res.data["dataset"],
        "protocol": res.data["protocol"],
        "scale": f"correlations in [-1, 1], accuracies in [0, 1] (the printed tables show them {printed})",
        "published_unmatched": unmatched_line(res.data),
        "table": t,
        "signatures": {m["name"]: m["signatures"] for m in res.data["metrics"]},
        "missing": {m["name"]: m["missing"] for m in res.data["metrics"]},
        "published": [  # on the tables' scale, as every rendered table shows them (issue 42)
            {**e, "value": published_value(e), "value_x100": e.get("value")}
            for e in res.data.get("published", [])
        ],
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def ceiling_definition(res: MetaEvalResult) -> str:
    """One line: how the inter-human row is defined (per dimension when they differ)."""
    how = {c["dimension"]: c["method"] for c in res.data["ceiling"] if c.get("method")}
    if not how:
        return ""
    if len(set(how.values())) == 1:
        return f"{HUMAN_ROW}: {next(iter(how.values()))}.\n"
    return f"{HUMAN_ROW}: " + "; ".join(f"{d}: {m}" for d, m in how.items()) + ".\n"


def _terminal_stats(res: MetaEvalResult) -> list[str]:
    """:data:`TERMINAL_STATS` the run computed (pointwise), else :data:`MAIN_STATS`."""
    if not is_pointwise(res.data):
        return list(MAIN_STATS)
    return [s for s in TERMINAL_STATS if s in res.data.get("statistics", [])]


def summary_table(res: MetaEvalResult) -> str:
    """The main table with its CIs, on the run's scale (what ``metajudge meta-eval`` prints):
    missing scores first, then the definition of the inter-human row and any published row
    that matched nothing."""
    from metajudge.reports.published import unmatched_line

    ceiling = ceiling_definition(res)
    left = unmatched_line(res.data)
    return (
        _md_missing(res)
        + _stats_table(res, _terminal_stats(res))
        + ("\n" + ceiling if ceiling else "")
        + (f"\nWarning: {left}.\n" if left else "")
    )
