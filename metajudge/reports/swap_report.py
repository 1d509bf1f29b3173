"""Backbone-swap and judge-diagnostics reports: Markdown, JSON and plots.

Every table names its protocol (the ``protocol.name`` string of
:func:`metajudge.analyses.backbone_swap.backbone_swap`) and every backbone's metric signature.
Plots (matplotlib, Agg backend, imported inside the functions):

- ``agreement_heatmap.png`` — backbone × backbone Pearson of item scores;
- ``human_correlation.png`` — each backbone's human correlation with its CI (and the inter-human
  ceiling where the data has two or more annotators);
- ``reliability.png`` — mean human score per bin of judge score, one line per backbone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metajudge.results import as_data
from metajudge.run_folder import write_file, write_json_file, write_png

if TYPE_CHECKING:
    from metajudge.analyses.backbone_swap import SwapResult
    from metajudge.analyses.judge_biases import DiagnosticsResult


def _f(v: float | None, nd: int = 3) -> str:
    return "–" if v is None else f"{v:.{nd}f}"


def _ci(e: Mapping[str, Any], nd: int = 3) -> str:
    lo, hi = e.get("ci", [None, None])
    return f"{_f(e.get('value'), nd)} [{_f(lo, nd)}, {_f(hi, nd)}]"


def le(h: Mapping[str, Any]) -> str:
    """``≤`` before a bootstrap p at its floor 2/(B + 1) (``p_at_floor``)."""
    return "≤" if h.get("p_at_floor") else ""


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def swap_markdown(result: SwapResult | Mapping[str, Any]) -> str:
    """The backbone-swap report as Markdown (tables in MT-RAIG Table 8 layout, plus verdicts)."""
    res = as_data(result)
    lines = _md_head(res) + _md_agreement(res) + _md_human(res) + _md_tests(res) + _md_runs(res)
    if res.get("diagnostics"):
        lines += ["", diagnostics_markdown(res["diagnostics"], heading="## Judge diagnostics")]
    return "\n".join(lines) + "\n"


def _md_head(res: Mapping[str, Any]) -> list[str]:
    proto = res["protocol"]
    lines = [
        f"# Backbone swap: `{res['metric']}` on `{res['dataset']}` ({res['dimension']})",
        "",
        f"Protocol: `{proto['name']}`  ",
        (
            f"Inputs {res['n']['inputs']}, responses {res['n']['responses']} "
            f"(scored by every backbone: {res['n']['responses_scored_by_all']}), pairs {res['n']['pairs']}.  "
        ),
        f"Decisions: {proto['decisions']}. κ: {proto['kappa']}. α: {proto['alpha']}.  ",
        f"Significance: {proto['significance']}.",
        "",
        "Signatures:",
        "",
    ]
    for bb in res["backbones"]:
        lines.append(
            f"- `{bb}`: `{res['signatures'].get(bb, 'external scores (no signature given)')}`"
        )
    return lines


def _md_agreement(res: Mapping[str, Any]) -> list[str]:
    proto = res["protocol"]
    lines = [
        "",
        "## Agreement between backbones (item scores; MT-RAIG Table 8 layout)",
        "",
        "| X | Y | Pearson [95% CI] | Spearman [95% CI] | κ | κ quadratic | flip rate | disagreement | n pairs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in res["pairs"]:
        lines.append(
            f"| {p['x']} | {p['y']} | {_ci(p['pearson'])} | {_ci(p['spearman'])} | {_f(p['kappa'])} | "
            f"{_f(p['kappa_quadratic'])} | {_f(p['flip_rate']['value'])} (n={p['flip_rate']['n']}) | "
            f"{_f(p['disagreement']['value'])} | {p['n_pairs']} |"
        )
    a = res["alpha"]
    lines += [
        "",
        (
            f"Krippendorff's α across {len(a['backbones'])} backbones: interval (scores) {_f(a['interval_scores'])}, "
            f"ordinal (scores) {_f(a['ordinal_scores'])} on {a['n_responses']} responses; "
            f"ordinal (decisions) {_f(a['ordinal_decisions'])} on {a['n_pairs']} pairs."
        ),
        "",
        f"## Correlation with humans (primary protocol: `{proto['human_protocol']}`)",
        "",
    ]
    return lines


def _md_human(res: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    likert = res["kind"] == "likert"
    if likert:
        lines += [
            "| backbone | grouped Pearson [95% CI] | pooled Pearson [95% CI] | pooled Spearman [95% CI] | pair accuracy | unscored |",
            "|---|---|---|---|---|---|",
        ]
        for bb in res["backbones"]:
            e = res["per_backbone"][bb]
            lines.append(
                f"| {bb} | {_ci(e['grouped_pearson'])} | {_ci(e['pooled_pearson'])} | {_ci(e['pooled_spearman'])} | "
                f"{_f(e['pair_accuracy']['value'])} (n={e['pair_accuracy']['n']}) | {e['unscored']} |"
            )
    else:
        lines += [
            "| backbone | pairs Pearson [95% CI] | pairs Spearman [95% CI] | pair accuracy | unscored |",
            "|---|---|---|---|---|",
        ]
        for bb in res["backbones"]:
            e = res["per_backbone"][bb]
            lines.append(
                f"| {bb} | {_ci(e['pairs_pearson'])} | {_ci(e['pairs_spearman'])} | "
                f"{_f(e['pair_accuracy']['value'])} (n={e['pair_accuracy']['n']}) | {e['unscored']} |"
            )
    c = res["ceiling"]
    lines += [
        "",
        f"Inter-human ceiling: {_ci(c) + ' (' + c['how'] + ')' if c.get('available') else 'n/a — ' + c['reason']}.",
        "",
    ]
    return lines


def _md_tests(res: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Is one backbone significantly worse? (paired tests on the human correlation)",
        "",
        "| X | Y | human X | human Y | Δ (Y − X) [95% CI] | p (bootstrap) | p (Holm) | Williams p |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in res["pairs"]:
        h = p["human_diff"]
        w = h.get("williams", {}).get("p")
        lines.append(
            f"| {p['x']} | {p['y']} | {_f(h['x'])} | {_f(h['y'])} | {_f(h['delta'])} [{_f(h['ci'][0])}, {_f(h['ci'][1])}] | "
            f"{le(h)}{_p(h['p_bootstrap'])} | {le(h)}{_p(h['p_holm'])} | {_p(w)} |"
        )
    f = res["protocol"].get("p_floor")
    if f:
        lines += [
            "",
            f"Bootstrap p: the smallest with {f['n_resamples']} resamples is {f['rule']} = "
            f"{f['floor']:.3g} (shown as ≤); after Holm over {f['n_tests']} pairs, "
            f"{f['holm_floor']:.3g}." + (f" Note: {f['note']}." if f.get("note") else ""),
        ]
    lines += ["", "## Verdicts", ""]
    lines += [f"- {p['verdict']}" for p in res["pairs"]]
    return lines


def _md_runs(res: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    if res.get("runs"):
        lines += [
            "",
            "## Judge runs",
            "",
            "| backbone | responses | unscored | parse failures (rate) | backend calls | cached | prompt tokens | completion tokens | wall s |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for bb, r in res["runs"].items():
            c = r.get("cost", {})
            lines.append(
                f"| {bb} | {r.get('n_items', '–')} | {r.get('unscored', '–')} | {r.get('parse_failures', '–')} "
                f"({_f(r.get('parse_failure_rate'))}) | {c.get('calls', '–')} | {c.get('cached', '–')} | "
                f"{c.get('prompt_tokens', '–')} | {c.get('completion_tokens', '–')} | {_f(r.get('wall_s'), 1)} |"
            )
        errs = {bb: r.get("errors") for bb, r in res["runs"].items() if r.get("errors")}
        if errs:
            lines += [
                "",
                "Unscored responses by reason: "
                + "; ".join(f"{bb}: {e}" for bb, e in errs.items()),
            ]
    return lines


def diagnostics_markdown(
    result: DiagnosticsResult | Mapping[str, Any], *, heading: str = "# Judge diagnostics"
) -> str:
    """Per-backbone bias/variance/cost table (from :mod:`metajudge.analyses.judge_biases`)."""
    diag = as_data(result)
    lines = [heading, ""]
    if diag.get("protocol"):
        lines += [f"Protocol: `{diag['protocol']}`", ""]
    sub = diag.get("subset")
    if sub:
        left = (
            f"; {sub['no_texts']} without both response texts left out"
            if sub.get("no_texts")
            else ""
        )
        lines += [
            f"Subset: {sub['n']} of {sub['N']} {sub['unit']}, {sub['how']} (seed {sub['seed']}){left}",
            "",
        ]
    rows = diag.get("backbones", {})
    lines += [
        (
            "| backbone | n | consistency (both orders) | P(first wins) | P(prefers longer) | humans P(longer) | "
            "accuracy | parse failures | run-to-run SD | tokens in/out | wall s | cost $ |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for bb, d in rows.items():
        pos = d.get("position", {})
        ln = d.get("length", {})
        led = d.get("ledger", {})
        var = d.get("variance", {})
        acc = d.get("accuracy", {})
        lines.append(
            f"| {bb} | {d.get('n', '–')} | {_f(pos.get('consistency'))} | {_f(pos.get('p_first_wins'))} | "
            f"{_f(ln.get('judge_p_longer'))} | {_f(ln.get('human_p_longer'))} | {_f(acc.get('value'))} | "
            f"{_f(d.get('parse_failure_rate'))} | {_f(var.get('mean_sd'))} | "
            f"{led.get('prompt_tokens', '–')}/{led.get('completion_tokens', '–')} | {_f(led.get('wall_s'), 1)} | "
            f"{_f(led.get('cost_usd'), 4)} |"
        )
    rule = next(
        (d["position"].get("consistency_rule") for d in rows.values() if "position" in d), None
    )
    if rule:  # the position-consistency rule and the unparsed pairs it counts, per backbone
        unparsed = ", ".join(f"{bb} {d['position'].get('n_unparsed', 0)}" for bb, d in rows.items())
        lines.append(f"\nConsistency: {rule} (pairs with an unparsed verdict: {unparsed}).")
    for bb, d in rows.items():
        if d.get("signature"):
            lines.append(f"\n`{bb}` signature: `{d['signature']}`")
    lines += _confidence_lines(rows)
    return "\n".join(lines) + "\n"


def _confidence_lines(rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per backbone run with ``--confidence``: its verdicts without probabilities
    (counted, never dropped silently) and where the confidence rows are written."""
    out = []
    for bb, d in rows.items():
        if "confidence_missing" in d:
            out.append(
                f"\n`{bb}` confidence: score rows `confidence_{bb}` (per side, the probability "
                "that it is the better one; `--out`: confidence.jsonl); "
                f"{d['confidence_missing']} judged verdict(s) without probabilities "
                "(their rows carry no score)"
            )
    return out


def write_swap_report(
    result: SwapResult | Mapping[str, Any], out_dir: str | Path, *, plots: bool = True
) -> dict[str, Path]:
    """Write ``swap.md``, ``swap.json`` and (``plots=True``) the three PNGs; returns the paths."""
    res = as_data(result)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / "swap.md", "json": out / "swap.json"}
    write_file(out, "swap.md", swap_markdown(res))
    write_json_file(out, "swap.json", res, indent=2, ensure_ascii=False)
    if plots:
        paths.update(plot_swap(res, out))
    return paths


def _save(fig: Any, path: Path) -> None:
    write_png(path.parent, path.name, fig, dpi=120, bbox_inches="tight")


def plot_swap(result: SwapResult | Mapping[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """The heatmap, the human-correlation bar chart and the reliability plot."""
    res = as_data(result)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    out = Path(out_dir)
    bbs: Sequence[str] = res["backbones"]
    short = [b if len(b) <= 18 else b[:16] + "…" for b in bbs]
    k = len(bbs)
    mat = np.eye(k)
    for p in res["pairs"]:
        i, j = bbs.index(p["x"]), bbs.index(p["y"])
        v = p["pearson"]["value"]
        mat[i, j] = mat[j, i] = np.nan if v is None else v
    paths: dict[str, Path] = {}

    fig, ax = plt.subplots(figsize=(1.6 * k + 2, 1.4 * k + 1.5))
    im = ax.imshow(mat, vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(k), short, rotation=30, ha="right")
    ax.set_yticks(range(k), short)
    for i in range(k):
        for j in range(k):
            ax.text(
                j, i, "–" if np.isnan(mat[i, j]) else f"{mat[i, j]:.2f}", ha="center", va="center"
            )
    fig.colorbar(im, ax=ax, label="Pearson r (item scores)")
    ax.set_title(f"{res['metric']} on {res['dataset']}: backbone agreement")
    paths["heatmap"] = out / "agreement_heatmap.png"
    _save(fig, paths["heatmap"])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(1.3 * k + 3, 3.5))
    vals = [res["per_backbone"][b]["human"]["value"] for b in bbs]
    cis = [res["per_backbone"][b]["human"]["ci"] for b in bbs]
    v = np.array([np.nan if x is None else x for x in vals])
    lo = np.array([np.nan if c[0] is None else c[0] for c in cis])
    hi = np.array([np.nan if c[1] is None else c[1] for c in cis])
    ax.bar(range(k), v, yerr=np.vstack([v - lo, hi - v]), capsize=5, color="#4C72B0")
    ax.set_xticks(range(k), short, rotation=20, ha="right")
    ceiling = res["ceiling"]
    if ceiling.get("available") and ceiling.get("value") is not None:
        ax.axhline(ceiling["value"], ls="--", color="gray", label="inter-human ceiling")
        ax.legend()
    ax.set_ylabel(f"human correlation ({res['protocol']['human_protocol']})")
    ax.set_title("Correlation with humans per backbone (95% CI)")
    paths["human_bars"] = out / "human_correlation.png"
    _save(fig, paths["human_bars"])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for b, s in zip(bbs, short, strict=True):
        rel = res["reliability"][b]
        ax.plot(rel["judge_mean"], rel["human_mean"], marker="o", label=s)
    ax.set_xlabel(
        "judge score (bin mean)"
        if res["kind"] == "likert"
        else "judge difference s(b) − s(a) (bin mean)"
    )
    ax.set_ylabel("mean human score" if res["kind"] == "likert" else "mean human label")
    ax.set_title("Judge score vs human score")
    ax.legend(fontsize=8)
    paths["reliability"] = out / "reliability.png"
    _save(fig, paths["reliability"])
    plt.close(fig)
    return paths


def write_diagnostics_report(
    result: DiagnosticsResult | Mapping[str, Any], out_dir: str | Path
) -> dict[str, Path]:
    """Write ``diagnostics.md`` and ``diagnostics.json``; with ``--confidence``, the verdicts'
    probabilities as score rows in ``confidence.jsonl`` (one metric per backbone), which are left
    out of ``diagnostics.json``."""
    diag = dict(as_data(result))
    diag["backbones"] = {k: dict(v) for k, v in diag.get("backbones", {}).items()}
    conf = [r for b in diag["backbones"].values() for r in b.pop("confidence_rows", [])]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / "diagnostics.md", "json": out / "diagnostics.json"}
    write_file(out, "diagnostics.md", diagnostics_markdown(diag))
    write_json_file(out, "diagnostics.json", diag, indent=2, ensure_ascii=False)
    if conf:
        from metajudge.scores.scoring import write_scores

        paths["confidence"] = out / "confidence.jsonl"
        write_scores(paths["confidence"], conf)
    return paths
