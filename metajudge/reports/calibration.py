"""Markdown of ``calibrate fit | apply | conformal`` (the JSON is the result's ``to_json``)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any


def _dropped(dropped: Mapping[str, int]) -> str:
    parts = [f"{k.replace('_', ' ')}: {v}" for k, v in dropped.items() if v]
    return f"\nLeft out: {', '.join(parts)}.\n" if parts else ""


def _protocol(p: Mapping[str, Any]) -> str:
    if p.get("kind") == "cross-fit":
        return f"{p['folds']}-fold cross-fitting (seed {p['seed']})"
    return (
        f"{p['repeats']} seeded splits (seed {p['seed']}): fit on {p['fraction']:g} of the rows, "
        f"measured on the rest"
    )


def fit_markdown(res: Any, dropped: Mapping[str, int]) -> str:
    """The held-out errors before/after of ``calibrate fit``."""
    lines = [
        f"# Calibration of {res.judge}: {res.method}",
        "",
        *(f"**Warning: {w}.**\n" for w in getattr(res, "warnings", ()) or ()),
        (
            f"{res.n} rows; {_protocol(res.protocol)}; means over the held-out parts "
            "(sd in brackets). The calibrator file's map is fitted on all rows."
        ),
        "",
        "| Measure | Before | After |",
        "|---|---:|---:|",
    ]
    for k, before in res.before.items():
        after = res.after.get(k)
        a = "" if after is None else f"{after:.3f} ({res.sd[k + '_after']:.3f})"
        lines.append(f"| {k.upper()} | {before:.3f} ({res.sd[k + '_before']:.3f}) | {a} |")
    lines.append("")
    if "brier" in res.before and res.method not in ("temperature", "platt"):
        lines.append(
            "Brier/ECE: the judge's distribution against the rounded human score "
            "(the map changes the score, not the distribution)."
        )
    return "\n".join(lines) + "\n" + _dropped(dropped)


def apply_markdown(res: Any, dropped: Mapping[str, int]) -> str:
    """What ``calibrate apply`` did."""
    note = " (in-sample: these are the rows the map was fitted on)" if res.in_sample else ""
    shift = getattr(res, "shift", None)
    if shift:
        note += (
            f". Shift check of the judge's scores against the fitting rows: two-sample "
            f"Kolmogorov-Smirnov D = {shift['ks_statistic']:.3f}, p = {shift['ks_p']:.3g}"
            + (
                f" < {shift['shift_alpha']:g}: shifted, the calibration map may not hold on these rows"
                if shift["shifted"]
                else ""
            )
        )
    return (
        f"# {res.judge} calibrated ({res.method})\n\n{res.n} rows; MAE against the human "
        f"scores {res.mae_before:.3f} -> {res.mae_after:.3f}{note}.\n" + _dropped(dropped)
    )


def _grid_text(grid: Any) -> str:
    if not grid:
        return "a continuous scale: no label grid, no adjustment"
    steps = sorted({round(b - a, 9) for a, b in itertools.pairwise(grid)})
    step = f"step {steps[0]:.3g}" if len(steps) == 1 else "its values"
    return (
        f"ends moved inwards onto the label grid {grid[0]:g}..{grid[-1]:g}, {step}, "
        "every value a human score can take"
    )


def _bin_cells(by_human: Any) -> list[str]:
    return ["" if b["coverage"] is None else f"{b['coverage']:.3f}" for b in by_human]


def conformal_markdown(res: Any, dropped: Mapping[str, int]) -> str:
    """Coverage and width per method of ``calibrate conformal``, with the coverage per
    human-score bin beside each and what each method's guarantee covers."""
    o, p = res.options, res.protocol
    bins = [b["bin"] for b in res.methods[0]["by_human"]] if res.methods else []
    lines = [
        f"# Conformal intervals for {res.judge} (alpha = {o['alpha']:g})",
        "",
        (
            f"{res.n} rows; {p['repeats']} seeded splits (seed {p['seed']}), {p['fraction']:g} "
            f"calibrate, the rest measure; bins {o['bins']} (at least {o['min_bin']} rows), "
            f"isotonic fitted on {o['fit_fraction']:g} of the calibration rows. Intervals are "
            f"clipped to the scale with the ordinal boundary adjustment "
            f"({_grid_text(getattr(res, 'grid', None))})."
        ),
        *(f"\n**Warning**: {w}." for w in getattr(res, "warnings", []) or []),
        "",
        (
            "Coverage is marginal (over all test items); per human-score bin it is pooled over "
            "the splits (the last row: test items per split)."
        ),
        "",
        "| Method | Coverage | Mean width | " + " | ".join(f"Cov. human {b}" for b in bins) + " |",
        "|---|---:|---:|" + "---:|" * len(bins),
    ]
    for m in res.methods:
        lines.append(
            f"| {m['method']} | {m['coverage']:.3f} ({m['coverage_sd']:.3f}) | "
            f"{m['width']:.2f} ({m['width_sd']:.2f}) | "
            + " | ".join(_bin_cells(m["by_human"]))
            + " |"
        )
    if res.methods:
        n = [f"{b['n']:.1f}" for b in res.methods[0]["by_human"]]
        lines.append("| test items per split | | | " + " | ".join(n) + " |")
    if res.chosen:
        picks = ", ".join(f"{k} {v}" for k, v in sorted(res.chosen.items(), key=lambda kv: -kv[1]))
        lines += ["", f"auto chose (on the calibration rows): {picks}."]
    lines += ["", "What each guarantee covers (none is conditional on the human score):", ""]
    lines += [f"- {m['method']}: {m['guarantee']}." for m in res.methods if m.get("guarantee")]
    return "\n".join(lines + _target_lines(res.target, bins)) + "\n" + _dropped(dropped)


def _target_lines(t: Any, bins: list[str]) -> list[str]:
    if not t:
        return []
    lines = [
        "",
        f"## Target {t['source']} ({t['n']} rows; calibrated on all rows above)",
        "",
        f"KS two-sample test of the judge scores: D = {t['ks_statistic']:.3f}, "
        f"p = {t['ks_p']:.3g}" + (f". **Warning**: {t['warning']}" if t["warning"] else ""),
        "",
        "| Method | Used | Coverage | Mean width | "
        + " | ".join(f"Cov. human {b}" for b in bins)
        + " |",
        "|---|---|---:|---:|" + "---:|" * len(bins),
    ]
    lines += [
        f"| {m['method']} | {m['used']} | {m['coverage']:.3f} | {m['width']:.2f} | "
        + " | ".join(_bin_cells(m["by_human"]))
        + " |"
        for m in t["methods"]
    ]
    return lines


_SET_HOW = {
    "lac": "lac: every class with 1 - p <= q (a set may be empty)",
    "aps": "aps: adaptive prediction sets, randomised (the mass of the classes more probable "
    "than a class plus a seeded uniform draw times its own, <= q; a set may be empty)",
}


def sets_markdown(res: Any) -> str:
    """Coverage and mean set size per method of ``calibrate conformal`` on verdicts."""
    p = res.protocol
    a = res.options["alpha"]
    lines = [
        f"# Conformal prediction sets for {res.judge} (alpha = {a:g})",
        "",
        (
            f"{res.n} units of {res.source}, classes {', '.join(res.classes)}; {p['repeats']} "
            f"seeded splits (seed {p['seed']}), {p['fraction']:g} calibrate, the rest measure. "
            f"Split conformal on the judge's class probabilities; target coverage {1 - a:.3g}. "
            + "; ".join(_SET_HOW[m["method"]] for m in res.methods)
            + "."
        ),
        "",
        "| Method | Coverage | Mean set size | Empty | Singleton | All classes | Mean q |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in res.methods:
        lines.append(
            f"| {m['method']} | {m['coverage']:.3f} ({m['coverage_sd']:.3f}) | "
            f"{m['size']:.3f} ({m['size_sd']:.3f}) | {m['empty']:.1%} | {m['singleton']:.1%} | "
            f"{m['full']:.1%} | {m['q']:.4f} |"
        )
    if res.notes:
        lines += ["", *(f"- {n}" for n in res.notes)]
    return "\n".join(lines) + "\n"
