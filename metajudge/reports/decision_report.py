"""The decision report: Markdown that opens with the verdict in one sentence and the numbers
that carry it, then the evidence, every test named with its reference; JSON beside it; the
cost–agreement frontier plot (:func:`plot_frontier`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metajudge.run_folder import write_file, write_png

if TYPE_CHECKING:
    from metajudge.analyses.decide.frontier import Frontier


def _f(v: Any, nd: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def _ci(ci: Any) -> str:
    return "n/a" if not ci or ci[0] is None else f"[{_f(ci[0])}, {_f(ci[1])}]"


def swap_decision_markdown(j: Mapping[str, Any]) -> str:
    """Markdown of a :class:`~metajudge.analyses.decide.swap_decision.SwapDecision` JSON."""
    ni, proto = j["non_inferiority"], j["protocol"]
    out = [
        f"# Decision: can {ni['y']} replace {ni['x']}? ({j['dataset']})",
        "",
        f"**{j['verdict']}**",
        "",
    ]
    out += [
        (
            f"Δ = {_f(ni['delta'])}, {round((1 - ni['alpha']) * 100)}% CI {_ci(ni['ci'])}, "
            f"one-sided bounds [{_f(ni['lower'])}, {_f(ni['upper'])}], margin δ = {ni['margin']}, "
            f"bootstrap p = {_f(ni['p_two_sided'])}, n = {ni['n']}."
        ),
        "",
        "## Agreement with humans",
        "",
        f"Statistic: {proto['statistic']}.",
        "",
        "| judge | agreement | CI | n |",
        "|---|---|---|---|",
    ]
    out += [
        f"| {b} | {_f(a['value'])} | {_ci(a['ci'])} | {a['n']} |" for b, a in j["agreement"].items()
    ]
    d = j["decisions"]
    out += ["", "## Does the swap change conclusions?", ""]
    out.append(
        f"Per-pair decisions: flip rate {_f(d['flip_rate'])} of {d['n_decisive']} pairs both decide; "
        f"Cohen's κ {_f(d['kappa'])} on {d['n_pairs']} pairs."
    )
    lb = j["leaderboard"]
    if lb.get("available"):
        out += ["", "| system | human | " + ni["x"] + " | " + ni["y"] + " |", "|---|---|---|---|"]
        for s, h, x, y in zip(
            lb["systems"], lb["mean_human"], lb["mean_x"], lb["mean_y"], strict=True
        ):
            out.append(f"| {s} | {_f(h)} | {_f(x)} | {_f(y)} |")
        out.append("")
        for k, lab in (
            ("tau_xy", "X vs Y"),
            ("tau_x_human", "X vs humans"),
            ("tau_y_human", "Y vs humans"),
        ):
            out.append(f"- Kendall τ_b {lab}: {_f(lb[k]['value'])} {_ci(lb[k]['ci'])}")
        out.append(
            f"- {len(lb['swapped_pairs'])} of {lb['n_pairs']} system pairs swap order, "
            f"{lb['n_significant_swaps']} significantly (both orderings p < α)"
        )
        for s in lb["swapped_pairs"]:
            out.append(
                f"  - {s['systems'][0]} / {s['systems'][1]}: p_X = {_f(s['p_x'])}, p_Y = {_f(s['p_y'])}"
            )
    else:
        out.append(f"Leaderboard: {lb.get('reason')}")
    if j.get("slices"):
        q = j["slices"]["cochran_q"]
        out += ["", "| slice | Pearson X–Y | CI | inputs | responses | flip rate |"]
        out += ["|---|---|---|---|---|---|"]
        for r in j["slices"]["slices"]:
            out.append(
                f"| {r['slice']} | {_f(r['pearson_xy'])} | {_ci(r['ci'])} | {r['n']} "
                f"| {r.get('n_responses', '')} | {_f(r['flip_rate'])} |"
            )
        out.append(
            f"\nCochran's Q = {_f(q['q'])} (df {q['df']}), p = {_f(q['p'])}, I² = {_f(q['i2'])}."
        )
        if j["slices"].get("method"):
            out.append(f"\n{j['slices']['method']}.")
    if j.get("ppi"):
        out += ["", "## Estimates with the candidate as the judge (PPI)", ""]
        out += ppi_markdown(j["ppi"]).splitlines()[2:]
    out += ["", "## Tests and references", ""] + [f"- {k}: {v}" for k, v in proto["tests"].items()]
    return "\n".join(out) + "\n"


def verdicts_markdown(j: Mapping[str, Any]) -> str:
    """Markdown of a :class:`~metajudge.analyses.decide.verdict_decision.VerdictDecision` JSON."""
    out = [f"# Decision: which released judge? ({j['protocol']})", ""]
    ni = j["against_best"]
    out.append(f"**Best: {j['best']}.** " + " ".join(n.get("sentence", "") for n in ni))
    out += ["", "| rank | judge | accuracy | CI | n |", "|---|---|---|---|---|"]
    out += [
        f"| {r['rank']} | {r['judge']} | {_f(r['accuracy'])} | {_ci(r['ci'])} | {r['n']} |"
        for r in j["ranking"]
    ]
    out += ["", "| vs best | Δ | CI | lower | verdict | McNemar p |", "|---|---|---|---|---|---|"]
    for n, m in zip(ni, j["mcnemar"], strict=True):
        out.append(
            f"| {n['y']} | {_f(n['delta'])} | {_ci(n['ci'])} | {_f(n['lower'])} | {n['verdict']} | {_f(m['p'])} ({m['method']}) |"
        )
    if j.get("frontier"):
        out += frontier_lines(j["frontier"])
    out += [
        "",
        "Tests: paired bootstrap over pairs (Efron 1979), non-inferiority rule (Wellek 2010); McNemar 1947.",
    ]
    return "\n".join(out) + "\n"


def frontier_lines(fr: Mapping[str, Any]) -> list[str]:
    out = ["", f"## Cost against agreement ({fr['cost_unit']})", "", f"Test: {fr['test']}.", ""]
    out += ["| judge | agreement | cost | dominated by |", "|---|---|---|---|"]
    for p in fr["points"]:
        dom = fr["dominated_by"].get(p["name"])
        out.append(
            f"| {p['name']} | {_f(p['agreement'])} | {_f(p['cost'], 4)} | {', '.join(dom) if dom else ('—' if dom is not None else 'not placed')} |"
        )
    out.append(f"\nFrontier (by cost): {', '.join(fr['frontier'])}.")
    out += [f"- note: {n}" for n in fr["notes"]]
    return out


def write_report(
    out_dir: str | Path, stem: str, payload: Mapping[str, Any], markdown: str
) -> list[Path]:
    """Write ``stem.md`` and ``stem.json`` atomically into ``out_dir``."""
    d = Path(out_dir)
    paths = [d / f"{stem}.md", d / f"{stem}.json"]
    write_file(d, paths[0].name, markdown)
    text = json.dumps(payload, indent=1, ensure_ascii=False, allow_nan=False, default=str)
    write_file(d, paths[1].name, text)
    return paths


def plot_decision(j: Mapping[str, Any], path: str | Path) -> Path:
    """Left: Δ with its CI against 0 and −δ; right: system means under X, Y and humans."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ni, lb = j["non_inferiority"], j["leaderboard"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    lo, hi = ni["ci"]
    a.errorbar(
        [ni["delta"]], [0], xerr=[[ni["delta"] - lo], [hi - ni["delta"]]], fmt="o", capsize=4
    )
    a.axvline(0, color="k", lw=0.8)
    a.axvline(-ni["margin"], color="r", ls="--", label=f"−δ = {-ni['margin']:g}")
    a.set_yticks([])
    a.set_xlabel(f"Δ agreement ({ni['y']} − {ni['x']})")
    a.set_title(ni["verdict"], fontsize=9)
    a.legend(fontsize=7)
    if lb.get("available"):
        xs = range(len(lb["systems"]))
        for key, lab in (("mean_human", "humans"), ("mean_x", ni["x"]), ("mean_y", ni["y"])):
            b.plot(xs, lb[key], "o-", label=lab)
        b.set_xticks(list(xs), lb["systems"], rotation=60, fontsize=6)
        b.set_ylabel("system mean score")
        b.legend(fontsize=7)
    else:
        b.axis("off")
    fig.tight_layout()
    out = Path(path)
    write_png(out.parent, out.name, fig, dpi=120)
    plt.close(fig)
    return out


def drift_markdown(j: Mapping[str, Any], sentence: str) -> str:
    """Markdown of a :class:`~metajudge.analyses.decide.drift.DriftResult` JSON: verdict first."""
    c, s, mc = j.get("change") or {}, j["shift"], j["mcnemar"]
    g = j["gate"]
    out = [f"# Drift: {j['after']} vs {j['before']}", "", f"**{sentence}**", ""]
    out += ["| statistic | value | CI | n | threshold |", "|---|---|---|---|---|"]
    out.append(
        f"| change rate (\\|Δscore\\| > {c.get('tolerance', 0)}) | {_f(c.get('value'))} | "
        f"{_ci(c.get('ci'))} | {c.get('n')} | > {g['max_change_rate']} fails |"
    )
    out.append(
        f"| mean shift (after − before) | {_f(s['value'])} | {_ci(s['ci'])} | {s['n']} | "
        f"Wilcoxon p {_f(s.get('p'))} < {g['alpha']} and \\|shift\\| > {g['max_shift'] or 0} fails |"
    )
    out.append(
        f"| flip rate (decided pairs) | {_f(j['flip_rate'])} | | {j['n_decisive']} | "
        f"> {g['max_flip_rate']} fails |"
    )
    dc = j.get("decision_change") or {}
    out.append(
        f"| decision change rate (ties incl.) | {_f(dc.get('value'))} | | {dc.get('n')} | — |"
    )
    out.append(f"| Cohen's κ (decisions) | {_f(j['kappa'])} | | {j['n_pairs']} | — |")
    out.append(
        f"| McNemar ({mc['method']}) | p = {_f(mc['p'])} | | {mc['n']} | p < {g['alpha']} fails |"
    )
    out += [
        "",
        (
            f"Gate rule {j.get('rule')}: fail when any threshold is crossed "
            "(metajudge/analyses/decide/drift.py)."
        ),
        "",
        (
            "Tests: percentile bootstrap over items (Efron 1979); Wilcoxon signed-rank (Wilcoxon "
            "1945); Cohen's κ (Cohen 1960); McNemar 1947."
        ),
    ]
    return "\n".join(out) + "\n"


def ppi_markdown(j: Mapping[str, Any]) -> str:
    """The PPI section: PPI++ beside human-only and judge-only (and Rogan–Gladen), verdict first."""
    p, h = j["ppi"], j["human_only"]
    pct = round((1 - j["alpha"]) * 100)
    width = (
        f"the width of {_f(j['effective_n'], 1)} human labels (ESS gain {_f(j['ess_gain'], 2)}×, "
        if j.get("ess_gain") is not None
        else "too few labels for an ESS gain ("
    )
    lead = (
        f"**PPI++ {_f(p['value'])} {_ci([p['lo'], p['hi']])} with {j['n']} human labels and "
        f"{j['N']} judge-only units: {width}λ̂ = {_f(j['lam'])}).**"
    )
    if j.get("method") == "rogan-gladen":
        rg = j["rogan_gladen"]
        lead = (
            f"**Rogan–Gladen {_f(rg['value'])} {_ci([rg['lo'], rg['hi']])}: the judge's pass rate "
            f"on {j['N']} judge-only units corrected by its TPR and TNR on {j['n']} human "
            f"labels.** PPI++ beside it: {_f(p['value'])} {_ci([p['lo'], p['hi']])}."
        )
    out = [
        f"# Prediction-powered estimate: {j['target']} ({j['dataset']}, judge {j['judge']})",
        "",
        *(f"**Warning: {w}.**\n" for w in j.get("warnings") or ()),
        lead,
        "",
        f"| method | estimate | {pct}% CI | covers full-data human mean {_f(j['full_human_mean'])} |",
        "|---|---|---|---|",
    ]
    ests = [j["ppi"], j["human_only"], j["judge_only"]]
    if j.get("rogan_gladen"):
        ests.append(j["rogan_gladen"])
    for e in ests:
        cov = j["covers_full"].get(e["method"])
        out.append(f"| {e['method']} | {_f(e['value'])} | {_ci([e['lo'], e['hi']])} | {cov} |")
    out += [
        "",
        (
            f"Human-only: {_f(h['value'])} from the {j['n']} labelled units alone. Judge-only: the "
            "judge's mean over all units (biased whenever the judge is). "
            f"{j['n_unscored']} units the judge left unscored were dropped; critical value {j['critical']}; "
            f"two-sided {pct}% intervals."
            + (
                f" Clipped to the scale [{_f(j['scale'][0])}, {_f(j['scale'][1])}]: "
                f"{', '.join(j['clipped'])}."
                if j.get("clipped")
                else ""
            )
        ),
        "",
        (
            "Tests: PPI++ with power-tuned λ (Angelopoulos, Duchi & Zrnic 2023, arXiv 2311.01453); "
            "Rogan–Gladen correction (Rogan & Gladen 1978) with a percentile bootstrap (Efron 1979)."
        ),
    ]
    return "\n".join(out) + "\n"


def plot_frontier(fr: Frontier, path: str | Path, *, title: str = "") -> Path:
    """Scatter of cost (log) against agreement; frontier joined, dominated judges marked ×."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    placed = [p for p in fr.points if p.name not in fr.unplaced]
    by = {p.name: p for p in placed}
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for p in placed:
        dom = bool(fr.dominated_by[p.name])
        c = max(p.cost or 0.0, 1e-3)
        ax.scatter(c, p.agreement, marker="x" if dom else "o", color="grey" if dom else "C0")
        ax.annotate(p.name, (c, p.agreement), fontsize=6, alpha=0.6 if dom else 1.0)
    env, best = [], -math.inf  # the plain Pareto envelope (each step more agreement)
    for p in (by[n] for n in fr.frontier):
        if p.agreement > best:
            env.append(p)
            best = p.agreement
    ax.plot([max(p.cost or 0.0, 1e-3) for p in env], [p.agreement for p in env], "-", color="C0")
    ax.set_xscale("log")
    ax.set_xlabel(f"cost ({fr.cost_unit}; log scale)")
    ax.set_ylabel("agreement with humans")
    ax.set_title(
        title
        or "cost vs agreement: o frontier, x dominated (cheaper-or-equal and significantly better exists)",
        fontsize=8,
    )
    fig.tight_layout()
    out = Path(path)
    write_png(out.parent, out.name, fig, dpi=120)
    plt.close(fig)
    return out


def alt_test_markdown(j: Mapping[str, Any], sentence: str) -> str:
    """The Alt-Test report: the verdict, one row per LLM, then each LLM's per-annotator table;
    names (LLMs, annotators) written as every Markdown report writes them
    (:func:`~metajudge.reports.sections.md_cell`, :func:`~metajudge.reports.sections.md_text`)."""
    from metajudge.reports.sections import md_row, md_text

    lines = [
        "# The Alternative Annotator Test",
        "",
        md_text(sentence),
        "",
        (
            f"Settings: scoring {j['scoring']} ({j['label_type']} labels), ε = {j['epsilon']:g}, "
            f"Benjamini–Yekutieli q = {j['q']:g}; items with >= {j['min_annotators']} annotators "
            f"({j['n_items']} kept), annotators with >= {j['min_items']} items. "
            f"Null labels skipped: {j['dropped']['null_labels']}."
        ),
        "",
        "| LLM | winning rate | advantage probability | passes | items |",
        "|---|---|---|---|---|",
    ]
    for r in j["llms"]:
        rate, adv = _f(r["winning_rate"], 2), _f(r["advantage_probability"], 2)
        passed = "yes" if r["passed"] else "no"
        lines.append(md_row([r["llm"], rate, adv, passed, r["n_items"]]))
    for r in j["llms"]:
        d = j["dropped"]["by_llm"].get(r["llm"], {})
        below = ", ".join(d.get("annotators_below_min_items") or []) or "none"
        lines += [
            "",
            f"## {md_text(r['llm'])}",
            "",
            (
                f"Dropped: {d.get('items_without_llm_label', 0)} items without its label, "
                f"{d.get('items_below_min_annotators', 0)} with too few annotators, "
                f"{d.get('llm_items_without_human_label', 0)} LLM labels of items no human "
                f"labelled; annotators below the minimum: {md_text(below)}."
            ),
            "",
            "| annotator | items | LLM wins (ρ_f) | human wins (ρ_h) | t | p | beaten |",
            "|---|---|---|---|---|---|---|",
        ]
        for a in r["annotators"]:
            cells = [a["annotator"], a["n_items"], _f(a["llm_win_rate"]), _f(a["human_win_rate"])]
            cells += [_f(a["t"], 2), _f(a["p"], 4), "yes" if a["beaten"] else "no"]
            lines.append(md_row(cells))
    return "\n".join(lines) + "\n"
