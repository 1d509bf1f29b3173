"""Markdown of ``calibrate estimate`` and ``calibrate plan`` (the JSON is the result's
``to_json``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from metajudge.analyses.calibration.plan import plan_advice


def _ci(d: Mapping[str, Any], digits: int = 4) -> str:
    return f"{d['value']:.{digits}f} [{d['lo']:.{digits}f}, {d['hi']:.{digits}f}]"


def _p(p: float | None) -> str:
    return "—" if p is None or math.isnan(p) else (f"{p:.2g}" if p < 0.001 else f"{p:.3f}")


def _systems(res: Any) -> list[str]:
    conf = round(100 * (1 - res.settings["alpha"]))
    head = (
        f"| System | Labelled / rows | Calibrated estimate [{conf}% CI] | Raw judge mean "
        f"[naive {conf}% CI] | Outside labelled range | Transport | Level claim |"
    )
    lines = [
        head,
        "|---|---:|---|---|---:|---|---|",
    ]
    for s in res.systems:
        route = {"borrowed": " (borrowed)", "ipw": " (weighted by the plan)"}.get(s["route"], "")
        lines.append(
            f"| {s['system']}{route} | {s['labelled']} / {s['rows']} | {_ci(s)} | "
            f"{_ci(s['judge_mean'])} | {s['support']['outside_share']:.1%} | {s['transport']} | "
            f"{s['level_claim']} |"
        )
    rg = [s for s in res.systems if "rogan_gladen" in s]
    if rg:
        lines += ["", f"Binary judge: Rogan–Gladen pass rate [{conf}% bootstrap CI]", ""]
        lines += [f"- {s['system']}: {_ci(s['rogan_gladen'])}" for s in rg]
    return lines


def difference_marks(d: Mapping[str, Any]) -> str:
    """What a paired difference rests on: transport assumed, a side's level claim refused."""
    marks = ["assumes transport"] if d["conditional_on_transport"] else []
    if d.get("level_refused"):
        marks.append(f"level refused: {', '.join(d['level_refused'])}")
    return "; ".join(marks)


def _differences(res: Any) -> list[str]:
    if not res.differences:
        return []
    lines = [
        "",
        "## Paired differences (by prompt; Holm over all pairs)",
        "",
        "| A − B | Difference [CI] | p | p (Holm) | Shared prompts | |",
        "|---|---|---:|---:|---:|---|",
    ]
    for d in res.differences:
        cond = difference_marks(d)
        lines.append(
            f"| {d['a']} − {d['b']} | {_ci(d)} | {_p(d['p'])} | {_p(d['p_holm'])} | "
            f"{d['shared_clusters']} | {cond} |"
        )
    return lines


def _transport(res: Any) -> list[str]:
    if not res.transport:
        return []
    lines = [
        "",
        f"## Transport audit (held-out labelled probes, margin ±{res.settings['margin']:g})",
        "",
        "| System | Probes (clusters) | Mean residual [CI] | Verdict | Why |",
        "|---|---:|---|---|---|",
    ]
    for a in res.transport:
        d = {"value": a["delta"], "lo": a["lo"], "hi": a["hi"]}
        lines.append(
            f"| {a['system']} | {a['probes']} ({a['clusters']}) | {_ci(d, 3)} | "
            f"**{a['verdict']}** | {a['reason']} |"
        )
    return lines


def gate_line(g: Mapping[str, Any]) -> str:
    """The selection gate (:func:`~metajudge.analyses.calibration.estimate.selection_gate`) in
    a sentence."""
    if g["flagged"]:
        return f"Selection gate: FLAGGED: {g['warning']}."
    return (
        f"Selection gate: passed (labelled rows' judge-score mean {g['labelled_mean']:.4g} "
        f"against all rows' {g['all_mean']:.4g}, z = {g['z']:.2f}, p = {_p(g['p'])} ≥ "
        f"{g['alpha']:g}): no sign that the labels were chosen by outcome."
    )


def _gate(res: Any) -> list[str]:
    g = getattr(res, "selection_gate", None)
    return [] if not g else ["", gate_line(g)]


def estimate_markdown(res: Any) -> str:
    """The estimates, the gates, the differences and the transport audits."""
    c = res.calibration
    lo, hi = c["judge_range_labelled"]
    intro = (
        f"Calibration: {c['method']} ({c['folds']} folds, seed {c['seed']}) on {c['labels']} "
        f"labels in {c['labelled_clusters']} clusters, from {', '.join(c['systems_with_labels'])}; "
        f"labelled judge scores span [{lo:g}, {hi:g}]. Estimates on the label scale "
        f"[{res.scale[0]:g}, {res.scale[1]:g}]; CIs include the calibration's uncertainty."
    )
    lines = [
        "# Calibrated estimates",
        "",
        intro,
        "",
        *_systems(res),
        *_gate(res),
        *_differences(res),
        *_transport(res),
    ]
    if res.notes:
        lines += ["", *[f"Note: {n}." for n in res.notes]]
    return "\n".join(lines) + "\n"


def label_plan_markdown(res: Any) -> str:
    """Labels needed per system, and the active selection."""
    lines = ["# Label plan", ""]
    if res.half_width is not None:
        lines += [
            (
                f"Labels for a {1 - res.alpha:.0%} CI half-width of {res.half_width:g} (from the "
                "pilot: the rows and labels given):"
            ),
            "",
            (
                "| System | Labelled now | Half-width now | Labels needed (calibrated) | "
                "Labels needed (labels only) |"
            ),
            "|---|---:|---:|---:|---:|",
        ]
        for s in res.systems:
            need = plan_advice(s)
            lines.append(
                f"| {s['system']} | {s['labelled_now']} | {s['half_width_now']:.4f} | {need} | "
                f"{s['labels_only_needed']} |"
            )
    sel = res.selection
    if sel:
        lo, hi = sel["probability_range"]
        if "predicted_ratio" in sel:
            lines += [
                "",
                (
                    "Predicted half-width of active against uniform labelling (from the pilot): "
                    f"{sel['predicted_ratio']:.3f}; recommended: {sel['recommendation']}."
                ),
            ]
        lines += [
            "",
            (
                f"{'Uniform selection' if sel['mix'] == 1.0 else 'Active selection (Zrnic & Candès 2024)'}: "
                f"{sel['candidates']} unlabelled rows, "
                f"budget {sel['budget']:g} labels; probabilities from {lo:.3g} to {hi:.3g} ({sel['rule']}). "
                f"A seeded draw selected {sel['picked']}: label those and weight each by 1/probability."
            ),
        ]
    return "\n".join(lines) + "\n"
