"""The ``make demo`` judges' report (Markdown and one HTML page): the LLM judges on a seeded
subset first, the backbone swap, the ledger, then the lexical metrics' table on all RAGChecker
pairs. Costs say "served from the cache" on a rerun, parse failures appear where a parser ran. Renders a
:class:`~metajudge.runs.demo.DemoResult`; nothing is recomputed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

CAUTION = (
    "Caution: the embedded backbones (SmolLM2-135M, Gemma-3-270M) are weak judges and these "
    "subsets are tiny; the correlations and CIs below show what metajudge measures, not how "
    "good LLM judges are. Point a backbone config at a stronger model for real studies."
)
JUDGE_NAMES = {
    "geval_faithfulness": "G-Eval faithfulness",
    "geval_completeness": "G-Eval completeness",
    "answer_equivalence": "Answer equivalence",
    "mtraig_faithfulness": "MT-RAIG Eval faithfulness",
    "mtraig_completeness": "MT-RAIG Eval completeness",
}


def _f(v: float | None, nd: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{nd}f}"


def corr_text(c: Mapping[str, Any]) -> str:
    """``r = 0.123 [-0.400, 0.600] Fisher z (n=6 pairs)``, or why there is no value: the CI
    with its method (``no CI (n < 5)`` below 5 pairs)."""
    if c.get("pearson") is None:
        return f"r undefined ({c.get('undefined') or 'too few pairs'})"
    ci, method = c.get("ci"), c.get("ci_method")
    if ci:
        band = f" [{ci[0]:.3f}, {ci[1]:.3f}]" + (f" {method}" if method else "")
    elif method and method.startswith("none"):
        band = f" no CI ({method[len('none ') :].strip('()')})"
    else:
        band = " [no CI]"
    return f"r = {c['pearson']:.3f}{band} (n={c.get('n_pairs')} pairs)"


def parse_text(attempts: int, failures: int) -> str:
    """``parse failures 1/11 (9.1%)`` where a parser read replies; empty where none did (a
    judge whose replies need no parsing, or every reply served from the cache)."""
    if not attempts:
        return ""
    return f"parse failures {failures}/{attempts} ({failures / attempts:.1%})"


def cost_text(calls: int, cached: int, prompt: int, completion: int, wall_s: float | None) -> str:
    """What a run cost: its calls, tokens and time; on a rerun whose every reply came from the
    response cache, ``served from the cache (N replies)`` instead of 0 calls and 0 tokens."""
    if not calls and cached:
        return f"served from the cache ({cached} replies)"
    wall = "" if wall_s is None else f", {wall_s:.1f} s"
    return f"calls {calls}, cache hits {cached}, tokens {prompt} prompt + {completion} completion{wall}"


def run_lines(run: Any) -> list[str]:
    """One line per human dimension of a judge run: correlation, CI, parse failures, cost."""
    name = JUDGE_NAMES.get(run.metric, run.metric)
    bits = [
        parse_text(run.parse_attempts, run.parse_failures),
        f"unscored {run.unscored}/{run.n_responses}",
        cost_text(run.calls, run.cache_hits, run.prompt_tokens, run.completion_tokens, run.wall_s),
    ]
    cost = ", ".join(b for b in bits if b)
    if run.context_cut:
        cost += f"; context cut to fit on {run.context_cut}/{run.n_responses} responses"
    out = [f"{name} [{run.backbone}] — {cost}"]
    if run.note:
        out.append(f"    {run.note}")
    for c in run.correlations:
        out.append(f"    vs human {c['dimension']}: Pearson {corr_text(c)}")
    return out


def swap_line(swap: Mapping[str, Any]) -> str:
    """The backbone-swap agreement line (first backbone pair)."""
    if not swap.get("pairs"):
        return "Backbone-swap agreement: n/a (no backbone pair)"
    p = swap["pairs"][0]
    pe = p["pearson"]
    ci = pe.get("ci") or [None, None]
    return (
        f"Backbone-swap agreement ({swap['metric']}, {p['x']} vs {p['y']}): "
        f"Pearson {_f(pe.get('value'))} [{_f(ci[0])}, {_f(ci[1])}], Cohen's κ {_f(p['kappa'])}, "
        f"flip rate {_f(p['flip_rate']['value'])} (n={p['flip_rate']['n']} pairs)"
    )


def swap_human_lines(swap: Mapping[str, Any]) -> list[str]:
    """Each backbone's correlation with humans in the swap, with its run's cost (and its note:
    where it ran, e.g. alongside the first backbone's sections)."""
    out = []
    for bb in swap.get("backbones", []):
        e = swap["per_backbone"][bb]
        pe = e.get("pairs_pearson") or e.get("pooled_pearson") or {}
        r = (swap.get("runs") or {}).get(bb, {})
        c = r.get("cost") or {}
        bits = [
            parse_text(r.get("parse_attempts", 0), r.get("parse_failures", 0)),
            f"unscored {e.get('unscored')}",
            cost_text(
                c.get("calls", 0),
                c.get("cached", 0),
                c.get("prompt_tokens", 0),
                c.get("completion_tokens", 0),
                r.get("wall_s", 0.0),
            ),
        ]
        out.append(
            f"    {bb} vs human {swap['dimension']}: Pearson {estimate_text(pe)}; "
            + ", ".join(b for b in bits if b)
        )
        if r.get("note"):
            out.append(f"      ({r['note']})")
    return out


def estimate_text(e: Mapping[str, Any]) -> str:
    """``0.501 [-1.000, 1.000]`` with its CI method where the result names one; ``no CI
    (n < 5)`` where it has none."""
    ci = e.get("ci") or [None, None]
    method = e.get("ci_method")
    if ci[0] is None and e.get("value") is not None:
        why = method[len("none ") :].strip("()") if method and method.startswith("none") else ""
        return f"{_f(e.get('value'))} no CI" + (f" ({why})" if why else "")
    tag = f" {method}" if method and "percentile" not in method else ""
    return f"{_f(e.get('value'))} [{_f(ci[0])}, {_f(ci[1])}]{tag}"


def ledger_line(ledger: Mapping[str, int]) -> str:
    return (
        f"Ledger (judge section): {ledger.get('calls', 0)} LLM calls, "
        f"{ledger.get('cached', 0)} served from the cache, {ledger.get('errors', 0)} errors, "
        f"{ledger.get('prompt_tokens', 0)} prompt + {ledger.get('completion_tokens', 0)} "
        "completion tokens"
    )


def subset_lines(result: Any) -> list[str]:
    out = []
    for d in result.subsets.values():
        out.append(
            f"- `{d['dataset']}`: n = {d['n']} of {d['of']} labelled pairs ({d['records']} in all), drawn {d['how']} "
            f"(seed {result.options.seed}); context: {d['context']}; ids {', '.join(d['ids'])}"
        )
    return out


def judge_text(result: Any) -> list[str]:
    """What the demo prints and the report holds for the judge section (plain lines)."""
    lines = [CAUTION]
    for run in result.runs:
        lines += run_lines(run)
    lines.append(swap_line(result.swap))
    lines += swap_human_lines(result.swap)
    lines.append(ledger_line(result.ledger))
    return lines


def _lexical_section(lexical_run: str | Path | None) -> list[str]:
    if lexical_run is None:
        return []
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult
    from metajudge.reports import tables
    from metajudge.reports.render import RESULT_FILE

    path = Path(lexical_run) / RESULT_FILE
    if not path.is_file():
        return [f"(no lexical run at {path})", ""]
    res = MetaEvalResult.load(path)
    return [
        "## 3. Metrics vs humans: BLEU, ROUGE-L, METEOR, BERTScore on all RAGChecker pairs",
        "",
        tables.protocol_line(res),
        "",
        tables.summary_table(res),
        "",
        f"Full report: {Path(lexical_run) / 'report.html'}",
        "",
    ]


def demo_markdown(result: Any, *, lexical_run: str | Path | None = None) -> str:
    """The whole demo report as Markdown: the judges first, the backbone swap, then the
    lexical metrics' table."""
    from metajudge.reports.swap_report import swap_markdown

    o = result.options
    lines = ["# metajudge demo: a judges' report", ""]
    lines += [
        "## 1. LLM judges vs humans on a seeded subset (embedded backbones)",
        "",
        (
            f"Judges run under `{o.backbones[0]}`; G-Eval reads at most {o.context_chars} "
            "characters of context. Subsets:"
        ),
        "",
        *subset_lines(result),
        "",
        "```text",
        *judge_text(result),
        "```",
        "",
        (
            "Per-section meta-evaluation tables: `ragchecker_judges/table.md`, "
            "`table_qa_mtraig/table.md` (HTML: `report.html` in each folder)."
        ),
        "",
        "## 2. Backbone swap",
        "",
        swap_markdown(result.swap).replace("# Backbone swap", "### Backbone swap", 1),
        "",
        f"Judge section wall time: {result.wall_s:.1f} s.",
        "",
    ]
    return "\n".join(lines + _lexical_section(lexical_run))


# ---------------------------------------------------------------------------------------------
# The demo's HTML page (the one report ``make demo`` ends with)

HTML_LINKS = (
    (
        "ragchecker_judges/report.html",
        "G-Eval and answer equivalence vs humans (RAGChecker subset)",
    ),
    ("table_qa_mtraig/report.html", "MT-RAIG Eval vs humans (table-QA subset)"),
    ("swap/report.html", "Backbone swap (per-backbone rankings and flips)"),
    ("report.md", "This report as Markdown"),
    ("demo.json", "All numbers as JSON"),
)


#: the cost columns of the demo page's judge tables (parse failures: "–" where no parser ran)
COST_COLUMNS = ["parse failures", "unscored", "cost"]


def _judge_table(result: Any) -> dict[str, Any]:
    from metajudge.reports.html_page import est

    rows = []
    for run in result.runs:
        cost = [
            parse_text(run.parse_attempts, run.parse_failures).removeprefix("parse failures ")
            or None,
            f"{run.unscored}/{run.n_responses}",
            cost_text(
                run.calls, run.cache_hits, run.prompt_tokens, run.completion_tokens, run.wall_s
            ),
        ]
        for c in run.correlations:
            e = {"value": c.get("pearson"), "ci": c.get("ci"), "ci_method": c.get("ci_method")}
            rows.append(
                [JUDGE_NAMES.get(run.metric, run.metric), run.backbone, c["dimension"]]
                + [est(e) if c.get("pearson") is not None else c.get("undefined"), c.get("n_pairs")]
                + cost
            )
    return {
        "title": f"LLM judges vs humans on the seeded subsets (under {result.options.backbones[0]})",
        "columns": ["judge", "backbone", "human dimension", "Pearson (95% CI)", "n pairs"]
        + COST_COLUMNS,
        "rows": rows,
        "refs": [],
    }


def _swap_tables(swap: Mapping[str, Any]) -> list[dict[str, Any]]:
    from metajudge.reports.html_page import est, swap_overview

    if not swap.get("pairs"):
        return []
    rows = []
    for bb in swap.get("backbones", []):
        e = swap["per_backbone"][bb]
        r = (swap.get("runs") or {}).get(bb, {})
        c = r.get("cost") or {}
        parse = parse_text(r.get("parse_attempts", 0), r.get("parse_failures", 0))
        cost = cost_text(
            c.get("calls", 0),
            c.get("cached", 0),
            c.get("prompt_tokens", 0),
            c.get("completion_tokens", 0),
            r.get("wall_s"),
        )
        rows.append(
            [bb, est(e.get("pairs_pearson") or e.get("pooled_pearson"))]
            + [parse.removeprefix("parse failures ") or None, e.get("unscored"), cost]
        )
    per = {
        "title": f"Backbone swap: {swap['metric']} vs human {swap['dimension']} per backbone",
        "columns": ["backbone", "Pearson (95% CI)", *COST_COLUMNS],
        "rows": rows,
        "refs": [],
    }
    agree = swap_overview(swap)["tables"][1]
    agree["title"] = "Backbone-swap agreement: " + agree["title"]
    return [per, agree]


def _lexical_html(lexical_run: str | Path | None, out: Path) -> tuple[list[Any], list[Any]]:
    """The lexical run's main table and the link to its page (relative to ``out``)."""
    import os

    from metajudge.reports.html_page import meta_overview
    from metajudge.reports.render import RESULT_FILE

    if lexical_run is None or not (Path(lexical_run) / RESULT_FILE).is_file():
        return [], []
    import json

    data = json.loads((Path(lexical_run) / RESULT_FILE).read_text(encoding="utf-8"))
    table = meta_overview(data)["tables"][0]
    table["title"] = "Metrics vs humans on all pairs: " + table["title"]
    href = os.path.relpath(Path(lexical_run) / "report.html", out)
    return [table], [{"href": Path(href).as_posix(), "text": "Metric table's own page"}]


def demo_payload(result: Any, out: Path, *, lexical_run: str | Path | None = None) -> dict:
    """The page payload (see :mod:`metajudge.reports.html_page`): metric table, judges, swap,
    caution and links to the section pages; no per-item data (the section pages hold it)."""
    from metajudge.reports.html_page import weak_judge_warnings

    lexical, lex_links = _lexical_html(lexical_run, out)
    tables = [_judge_table(result), *_swap_tables(result.swap), *lexical]
    links = [{"href": h, "text": t} for h, t in HTML_LINKS if (out / h).is_file()] + lex_links
    warnings = [CAUTION, *weak_judge_warnings(result.options.backbones)]
    warnings += [
        f"{JUDGE_NAMES.get(r.metric, r.metric)}: context cut to fit on {r.context_cut}/"
        f"{r.n_responses} responses"
        for r in result.runs
        if r.context_cut
    ]
    sigs = [[bb, s] for bb, s in (result.swap.get("signatures") or {}).items()]
    return {
        "kind": "demo",
        "title": "metajudge demo: metrics and LLM judges vs humans, and a backbone swap",
        "question": "How well do BLEU, ROUGE-L, METEOR, BERTScore and the LLM judges (G-Eval, "
        "answer equivalence, MT-RAIG Eval) agree with the human labels, and does a judge keep "
        "its verdicts when its backbone changes?",
        "protocol": " | ".join(
            [s.lstrip("- ").replace("`", "") for s in subset_lines(result)]
            + [ledger_line(result.ledger), f"judge section wall time {result.wall_s:.1f} s"]
        ),
        "signatures": sigs,
        "warnings": warnings,
        "tables": tables,
        "links": links,
        "items": [],
        "resp": [],
        "views": [],
        "compare": [],
    }


def write_demo_html(result: Any, out: str | Path, *, lexical_run: str | Path | None = None) -> Path:
    """``<out>/report.html``: the demo's one page (:func:`demo_payload`)."""
    from metajudge.reports.html_page import write_page

    return write_page(out, demo_payload(result, Path(out), lexical_run=lexical_run))
