"""The ``make demo`` report (Markdown): the metric table on all RAGChecker pairs, the LLM judges
on a seeded subset, the backbone swap, the ledger. Renders a
:class:`~metajudge.pipeline.demo.DemoResult`; nothing is recomputed."""

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
    """``r = 0.123 [-0.400, 0.600] (n=6 pairs)``, or why there is no value."""
    if c.get("pearson") is None:
        return f"r undefined ({c.get('undefined') or 'too few pairs'})"
    ci = c.get("ci")
    band = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else " [no CI]"
    return f"r = {c['pearson']:.3f}{band} (n={c.get('n_pairs')} pairs)"


def run_lines(run: Any) -> list[str]:
    """One line per human dimension of a judge run: correlation, CI, parse failures, cost."""
    name = JUDGE_NAMES.get(run.metric, run.metric)
    cost = (
        f"parse failures {run.parse_failures}/{run.parse_attempts} ({run.parse_failure_rate:.1%}), "
        f"unscored {run.unscored}/{run.n_responses}, calls {run.calls}, cache hits {run.cache_hits}, "
        f"tokens {run.prompt_tokens} prompt + {run.completion_tokens} completion, {run.wall_s:.1f} s"
    )
    if run.context_cut:
        cost += f"; context cut to fit on {run.context_cut}/{run.n_responses} responses"
    out = [f"{name} [{run.backbone}] — {cost}"]
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
    """Each backbone's correlation with humans in the swap, with its run's cost."""
    out = []
    for bb in swap.get("backbones", []):
        e = swap["per_backbone"][bb]
        pe = e.get("pairs_pearson") or e.get("pooled_pearson") or {}
        ci = pe.get("ci") or [None, None]
        r = (swap.get("runs") or {}).get(bb, {})
        c = r.get("cost") or {}
        out.append(
            f"    {bb} vs human {swap['dimension']}: Pearson {_f(pe.get('value'))} "
            f"[{_f(ci[0])}, {_f(ci[1])}]; parse failures {r.get('parse_failures', 0)}/"
            f"{r.get('parse_attempts', 0)} ({r.get('parse_failure_rate', 0.0):.1%}), unscored "
            f"{e.get('unscored')}, calls {c.get('calls', 0)}, cache hits {c.get('cached', 0)}, "
            f"tokens {c.get('prompt_tokens', 0)} prompt + {c.get('completion_tokens', 0)} "
            f"completion, {r.get('wall_s', 0.0):.1f} s"
        )
    return out


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
    from metajudge.metaeval.result import MetaEvalResult
    from metajudge.reports import tables
    from metajudge.reports.render import RESULT_FILE

    path = Path(lexical_run) / RESULT_FILE
    if not path.is_file():
        return [f"(no lexical run at {path})", ""]
    res = MetaEvalResult.load(path)
    return [
        "## 1. Metrics vs humans: BLEU, ROUGE-L, METEOR, BERTScore on all RAGChecker pairs",
        "",
        tables.protocol_line(res),
        "",
        tables.summary_table(res),
        "",
        f"Full report: {Path(lexical_run) / 'report.html'}",
        "",
    ]


def demo_markdown(result: Any, *, lexical_run: str | Path | None = None) -> str:
    """The whole demo report as Markdown."""
    from metajudge.reports.swap_report import swap_markdown

    o = result.options
    lines = ["# metajudge demo", ""] + _lexical_section(lexical_run)
    lines += [
        "## 2. LLM judges vs humans on a seeded subset (embedded backbones)",
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
        "## 3. Backbone swap",
        "",
        swap_markdown(result.swap).replace("# Backbone swap", "### Backbone swap", 1),
        "",
        f"Judge section wall time: {result.wall_s:.1f} s.",
        "",
    ]
    return "\n".join(lines)
