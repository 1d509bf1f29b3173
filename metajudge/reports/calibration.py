"""Markdown of ``calibrate fit | apply | conformal`` (the JSON is the result's ``to_json``)."""

from __future__ import annotations

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
    return (
        f"# {res.judge} calibrated ({res.method})\n\n{res.n} rows; MAE against the human "
        f"scores {res.mae_before:.3f} -> {res.mae_after:.3f}{note}.\n" + _dropped(dropped)
    )


def conformal_markdown(res: Any, dropped: Mapping[str, int]) -> str:
    """Coverage and width per method of ``calibrate conformal``."""
    o, p = res.options, res.protocol
    lines = [
        f"# Conformal intervals for {res.judge} (alpha = {o['alpha']:g})",
        "",
        (
            f"{res.n} rows; {p['repeats']} seeded splits (seed {p['seed']}), {p['fraction']:g} "
            f"calibrate, the rest measure; bins {o['bins']} (at least {o['min_bin']} rows), "
            f"isotonic fitted on {o['fit_fraction']:g} of the calibration rows. Intervals are "
            "clipped to the scale with the ordinal boundary adjustment."
        ),
        "",
        "| Method | Coverage | Mean width |",
        "|---|---:|---:|",
    ]
    for m in res.methods:
        lines.append(
            f"| {m['method']} | {m['coverage']:.3f} ({m['coverage_sd']:.3f}) | "
            f"{m['width']:.2f} ({m['width_sd']:.2f}) |"
        )
    if res.chosen:
        picks = ", ".join(f"{k} {v}" for k, v in sorted(res.chosen.items(), key=lambda kv: -kv[1]))
        lines += ["", f"auto chose (on the calibration rows): {picks}."]
    t = res.target
    if t:
        lines += [
            "",
            f"## Target {t['source']} ({t['n']} rows; calibrated on all rows above)",
            "",
            f"KS two-sample test of the judge scores: D = {t['ks_statistic']:.3f}, "
            f"p = {t['ks_p']:.3g}" + (f". **Warning**: {t['warning']}" if t["warning"] else ""),
            "",
            "| Method | Used | Coverage | Mean width |",
            "|---|---|---:|---:|",
        ]
        lines += [
            f"| {m['method']} | {m['used']} | {m['coverage']:.3f} | {m['width']:.2f} |"
            for m in t["methods"]
        ]
    return "\n".join(lines) + "\n" + _dropped(dropped)


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


def _svg_reliability(rel: Mapping[str, Any], lo: float, hi: float) -> str:
    """An inline SVG reliability diagram: mean human score against mean prediction per bin,
    before (grey) and after (blue) calibration, with the diagonal."""
    from html import escape

    size, pad = 360, 40

    def xy(x: float, y: float) -> tuple[float, float]:
        span = (hi - lo) or 1.0
        return pad + (x - lo) / span * (size - 2 * pad), size - pad - (y - lo) / span * (
            size - 2 * pad
        )

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" role="img">']
    (x0, y0), (x1, y1) = xy(lo, lo), xy(hi, hi)
    parts.append(
        f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" stroke="#bbb" stroke-dasharray="4"/>'
    )
    for tag, colour in (("before", "#888"), ("after", "#1f6feb")):
        pts = [xy(b["pred"], b["outcome"]) for b in rel.get(tag, [])]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{escape(tag)}</title></circle>'
            for x, y in pts
        ]
    parts.append(
        f'<text x="{size / 2}" y="{size - 8}" text-anchor="middle" font-size="12">mean prediction</text>'
    )
    parts.append(
        f'<text x="12" y="{size / 2}" font-size="12" transform="rotate(-90 12 {size / 2})" text-anchor="middle">mean human score</text>'
    )
    return "".join(parts) + "</svg>"


def fit_html(res: Any) -> str:
    """A self-contained page: the held-out table and the reliability diagram (first split)."""
    from html import escape

    lo, hi = res.calibrator["scale"] if res.method != "platt" else (0.0, 1.0)
    rows = "".join(
        f"<tr><td>{escape(k.upper())}</td><td>{v:.3f}</td><td>{'' if res.after.get(k) is None else format(res.after[k], '.3f')}</td></tr>"
        for k, v in res.before.items()
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>Calibration of {escape(res.judge)}</title></head>"
        f"<body><h1>Calibration of {escape(res.judge)}: {escape(res.method)}</h1>"
        f"<p>{res.n} rows; {escape(_protocol(res.protocol))}.</p>"
        f"<table><tr><th>Measure</th><th>Before</th><th>After</th></tr>{rows}</table>"
        "<h2>Reliability diagram (held-out rows of the first split; grey: before, blue: after)</h2>"
        f"{_svg_reliability(res.reliability, float(lo), float(hi))}</body></html>\n"
    )
