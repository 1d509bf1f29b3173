"""Markdown pieces of a meta-evaluation report that stand on their own: the intro line, the
missing-score lines, the inter-human reference (with each metric beside it when matched), the
columns a protocol can fill (:func:`shown_statistics`) and the table helper :func:`md_table`.
Numbers are printed on the run's one scale (:mod:`metajudge.reports.scale`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metajudge.analyses.metric_vs_human.protocol import AGGREGATION_WORDS
from metajudge.analyses.metric_vs_human.result import MetaEvalResult
from metajudge.reports.scale import is_percent, num, scale_words
from metajudge.stats.intervals import CORRELATIONS


def is_pointwise(data: Mapping[str, Any]) -> bool:
    return data["protocol"].get("correlate") == "pointwise"


def shown_statistics(data: Mapping[str, Any], stats: Sequence[str]) -> list[str]:
    """THE columns a protocol can fill, for every renderer (terminal, ``table.md``, CSV, LaTeX,
    ``report.html``): a pointwise run has no pairs, so no pairwise accuracy column (its cells
    would all be empty; the undefined-values note says why they are absent).

    >>> shown_statistics({"protocol": {"correlate": "pointwise"}}, ["pearson", "acc_ties"])
    ['pearson']
    """
    if is_pointwise(data):
        return [s for s in stats if s in CORRELATIONS]
    return list(stats)


def _md_intro(data: Mapping[str, Any]) -> str:
    p, scale = data["protocol"], scale_words(is_percent(data))
    if p.get("correlate") == "pointwise":
        return (
            f"Pointwise correlation (each response's metric score vs its human score) {scale} at "
            f"level **{p.get('correlation_level')}**; [95% CI]; last row: inter-human reference "
            "(defined below); no pairwise-accuracy columns (the pointwise protocol has no "
            "pairs).\n\n"
        )
    return (
        f"Correlation with human labels {scale}, normalisation **{p['normalize']}**; "
        f"[95% CI]; last row: inter-human ceiling on the same pairs.\n\n"
    )


def _md_reference(res: MetaEvalResult) -> str:
    """The inter-human reference's definition and, when matched, each metric beside it."""
    ceil = [c for c in res.data["ceiling"] if c.get("method")]
    if not ceil:
        return ""
    out = ["\n## Inter-human reference\n\n"]
    out += [f"- {c['dimension']}: {c['method']}\n" for c in ceil]
    matched = [c for c in ceil if c.get("matched")]
    pct = is_percent(res.data)
    if matched:
        out.append(
            "\nMatched: each metric against one annotator at a time (averaged over annotators), "
            f"the comparison the inter-human row makes; {scale_words(pct)}.\n"
        )
        hdr = ["Metric"] + [f"{c['dimension'].capitalize()} Pearson (matched)" for c in matched]
        rows = [
            [m]
            + [num(c["matched"].get(m, {}).get("pearson", {}).get("value"), pct) for c in matched]
            for m in res.metrics
        ]
        rows.append(["Inter-human"] + [num(c["stats"]["pearson"]["value"], pct) for c in matched])
        out.append("\n" + _md_table(hdr, rows))
    return "".join(out)


def missing_lines(res: MetaEvalResult) -> list[str]:
    """One line per score column with imputed or dropped pairs (empty when none is missing)."""
    out = []
    for m in res.data["metrics"]:
        for col, miss in m["missing"].items():
            n_imp, n_drop = miss.get("pairs_imputed_median", 0), miss.get("pairs_dropped", 0)
            total = miss.get("pairs_total") or res.data["dataset"]["n_pairs"]
            unit = miss.get("unit", "pairs")
            if n_imp:
                out.append(f"`{col}`: {n_imp} of {total} {unit} imputed with the median")
            if n_drop:
                out.append(f"`{col}`: {n_drop} of {total} {unit} dropped (no score)")
    return out


def dropped_lines(data: Mapping[str, Any]) -> list[str]:
    """The one warning of the score rows a run dropped for ids its dataset lacks (``run.score_ids``,
    :class:`~metajudge.scores.readers.alignment.IdPolicy`); empty when none was dropped."""
    from metajudge.scores.readers.alignment import dropped_warning

    line = dropped_warning((data.get("run") or {}).get("score_ids"))
    return [line] if line else []


def md_comparison_notes(data: Mapping[str, Any], *, floors: bool = True) -> str:
    """:func:`comparison_lines` as a Markdown paragraph (empty when there is none)."""
    lines = comparison_lines(data, floors=floors)
    if not lines:
        return ""
    return "\n**Metric comparisons**:\n\n" + "".join(f"- {md_text(x)}\n" for x in lines)


def _md_missing(res: MetaEvalResult) -> str:
    from metajudge.scores.readers.alignment import other_subsets_line

    dropped = "".join(f"**Dropped score rows**: {md_text(x)}.\n\n" for x in dropped_lines(res.data))
    aside = other_subsets_line((res.data.get("run") or {}).get("score_ids"))
    dropped += f"Score rows: {md_text(aside)}.\n\n" if aside else ""
    lines = missing_lines(res)
    if not lines:
        return dropped
    rule = res.data["protocol"].get("missing")
    head = f"**Missing scores** (--missing {rule}):\n\n"
    return dropped + head + "".join(f"- {x}\n" for x in lines) + "\n"


def md_cell(x: object) -> str:
    """THE Markdown table cell: ``|`` escaped (it would split the row), line breaks made
    spaces, ``<`` and ``>`` written as entities (a name like ``<img onerror=...>`` stays text).

    >>> md_cell("a|b<img src=x onerror=alert(1)>")
    'a\\\\|b&lt;img src=x onerror=alert(1)&gt;'
    """
    return md_text(x).replace("|", "\\|")


def md_text(x: object) -> str:
    """Markdown text outside a table: one line, ``<`` and ``>`` as entities (no raw HTML)."""
    s = str(x).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return s.replace("<", "&lt;").replace(">", "&gt;")


def md_row(cells: Sequence[object]) -> str:
    """One Markdown table row of :func:`md_cell` cells."""
    return "| " + " | ".join(md_cell(x) for x in cells) + " |"


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = md_row(header) + "\n"
    out += "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|\n"
    for r in rows:
        out += md_row(r) + "\n"
    return out


def undefined_lines(cells: Sequence[dict[str, Any]], *, show: int = 3) -> list[str]:
    """One line per distinct reason a statistic is undefined, with how many metric / dimension
    cells it holds for and the first ``show`` of them: a pointwise run of 11 metrics on two
    dimensions gives one "pairwise accuracy needs pairs" line, not 22.

    >>> cells = [{"metric": m, "dimension": "d", "stats": {"acc": {"undefined": "no pairs"}}}
    ...          for m in ("bleu", "rouge_l", "meteor", "bertscore")]
    >>> undefined_lines(cells)
    ['no pairs (4 metric / dimension cells: bleu / d, rouge_l / d, meteor / d, and 1 more)']
    """
    where: dict[str, list[str]] = {}
    for c in cells:
        for e in c["stats"].values():
            why = e.get("undefined") if e else None
            if not why or e.get("not_applicable"):  # not a column of the protocol
                continue
            cell = f"{c['metric']} / {c['dimension']}"
            if cell not in where.setdefault(why, []):
                where[why].append(cell)
    out = []
    for why, at in where.items():
        if len(at) == 1:
            out.append(f"{at[0]}: {why}")
            continue
        more = f", and {len(at) - show} more" if len(at) > show else ""
        out.append(f"{why} ({len(at)} metric / dimension cells: {', '.join(at[:show])}{more})")
    return out


def aggregation_words(p: Mapping[str, Any]) -> str:
    """The protocol's aggregation rule with what it does, e.g. ``mode-else-mean (the label most
    annotators agree on …, else the annotators' mean)``: the header, signature and caption say it."""
    rule = p["aggregation"]
    return f"{rule} ({AGGREGATION_WORDS.get(rule, rule)})"


def aggregation_note(data: Mapping[str, Any]) -> str | None:
    """A pointwise run on several annotators that correlates every annotator's label as its own
    row (``per_annotator``, the default) says so before its table, with the rules that
    aggregate instead; None otherwise."""
    p, n = data["protocol"], int(data["dataset"].get("annotators", 1))
    if p.get("correlate") != "pointwise" or p["aggregation"] != "per_annotator" or n < 2:
        return None
    return (
        f"note: {n} annotators per response, aggregation=per_annotator: each annotator's label "
        "is its own row (no aggregation); --aggregation mean|median|majority|mode-else-mean "
        "correlates one label per response instead"
    )


def protocol_bits(data: Mapping[str, Any]) -> list[str]:
    """The settings of a meta-evaluation ``result.json``, each once: protocol, level and
    aggregation first, then only the options that apply to that protocol (a pointwise run has no
    normalisation, tie band or pairs). The terminal, ``table.md`` and ``report.html`` all print
    these (issue 26: the HTML line omitted the protocol and showed pairwise-only settings)."""
    p, ds = data["protocol"], data["dataset"]
    name = ds["name"] + (f":{ds['subset']}" if ds.get("subset") else "")
    correlate = p.get("correlate", "pairwise-difference")
    level = p.get("correlation_level", "item" if p["grouped"] else "global")
    bits = [f"dataset {name}", f"protocol={correlate} at level {level}"]
    if "level_name" in p:
        bits.append(f"level: {p['level_name']}; missing cells: {p['missing_cells']}")
    bits.append(f"aggregation={aggregation_words(p)}")
    if correlate == "pointwise":
        bits.append(f"missing={p.get('missing', 'drop')} (a response without a score)")
        bits += control_bits(p)
        bits.append(
            f"{ds.get('n_responses', '?')} responses, {ds['n_items']} items, "
            f"{ds['annotators']} label(s) per response"
        )
    else:
        grouped = p["grouped"]
        bits += [
            f"normalize={p['normalize']}",
            f"grouped={'yes (' + str(p.get('grouped_unit')) + ' level, per input then averaged)' if grouped else 'no'}",
            f"epsilon={p['epsilon']}",
            f"missing={p.get('missing', 'median' if p['normalize'] == 'minmax' else 'drop')}",
            f"{ds['n_pairs']} pairs, {ds['n_items']} items, {ds['annotators']} label(s) per pair",
        ]
    within = " within every system (values and comparisons)" if level == "system-grouped" else ""
    left = (data.get("run") or {}).get("unlabelled_left_out")
    if left:
        bits.append(f"the labelled subset: {left} records without human labels left out")
    bits.append(
        f"bootstrap {p['n_boot']} resamples of items{within} (seed {p['seed']}), "
        f"{int(p['level'] * 100)}% {ci_methods_words(data)}"
    )
    return bits


def ci_methods_words(data: Mapping[str, Any]) -> str:
    """The CI methods the cells use, as the header says them: ``percentile CIs`` when every CI
    is the percentile bootstrap; else each method with its count of values (e.g. a system-level
    run's few systems: ``CIs by method: Fisher z (Pearson) 32, …; named per value``)."""
    counts: dict[str, int] = {}
    for c in data.get("cells", []):
        for e in (c.get("stats") or {}).values():
            if isinstance(e, Mapping) and e.get("ci_method"):
                counts[e["ci_method"]] = counts.get(e["ci_method"], 0) + 1
    if set(counts) <= {"percentile bootstrap"}:
        return "percentile CIs"
    shown = ", ".join(f"{m} {n}" for m, n in sorted(counts.items(), key=lambda kv: -kv[1]))
    return f"CIs by method: {shown} (named per value)"


def comparison_lines(data: Mapping[str, Any], *, floors: bool = True) -> list[str]:
    """What a reader must know of the metric-vs-metric tests, for the terminal, ``table.md``
    and ``report.html`` alike: that they were skipped (and how to lift the cap), that they test
    one reference only, and when Holm over the resamples cannot reach significance (with the
    resamples needed). Empty when every pair was tested and can be significant."""
    p = data["protocol"]
    scope = str(p.get("comparison_scope") or "")
    out = []
    if scope.startswith("skipped"):
        out.append(f"metric-vs-metric comparisons {scope}")
    elif scope.startswith("each metric against"):
        out.append(f"metric-vs-metric comparisons: {scope}")
    for test, f in (data.get("p_floors") or {}).items() if floors else ():
        if f.get("note"):
            what = "bootstrap" if test == "p_bootstrap" else "permutation"
            out.append(f"{what} p-values: {f['note']}")
    return out


def control_bits(p: Mapping[str, Any]) -> list[str]:
    """The partial-correlation settings of a ``--control`` run (none without one)."""
    c = p.get("control")
    if not c:
        return []
    line = (
        f"partial correlation controlling for {c['describe']}: Pearson = "
        f"{c['pearson_definition']}, Spearman = {c['spearman_definition']}; residuals "
        f"{c['residuals']}; Kendall and the inter-human reference are not controlled"
    )
    return [line]


#: fewest independent units (items, or systems at a system level) before a table carries a
#: caution: correlations on fewer are coarse and their CIs wide (issue 26)
CAUTION_ITEMS = 20
CAUTION_SYSTEMS = 8


def small_n_caution(data: Mapping[str, Any]) -> str | None:
    """A one-line caution when a meta-evaluation rests on few independent units: fewer than
    :data:`CAUTION_ITEMS` items, or fewer than :data:`CAUTION_SYSTEMS` systems at a system
    level (the units each value's CI counts, ``ci_n``; else the dataset's items)."""
    p, ds = data["protocol"], data["dataset"]
    level = str(p.get("correlation_level", "item" if p.get("grouped") else "global"))
    units = [
        e["ci_n"]
        for c in data["cells"]
        for e in c["stats"].values()
        if e and e.get("value") is not None and e.get("ci_n") is not None
    ]
    n = min(units) if units else ds.get("n_items")
    if n is None:
        return None
    if level.startswith("system"):
        least, what = CAUTION_SYSTEMS, "systems"
    elif p.get("correlate") == "pointwise" and level == "global":
        least, what = CAUTION_ITEMS, "responses"  # what a pooled pointwise CI counts
    else:
        least, what = CAUTION_ITEMS, "items"
    if n >= least:
        return None
    return (
        f"caution: only {n} independent {what} at level {level} (fewer than {least}): "
        "correlations on so few units are coarse, and their CIs are wide (each value names its "
        "CI method)"
    )
