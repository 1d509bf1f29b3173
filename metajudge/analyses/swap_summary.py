"""The one-sentence verdict of a backbone pair: agreement, flips, and the human-correlation test."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _fmt(v: float | None, nd: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{nd}f}"


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def verdict_line(pair: Mapping[str, Any], *, level: float = 0.95, alpha: float = 0.05) -> str:
    """One sentence stating the evidence for one backbone pair (Y compared with X)."""
    x, y = pair["x"], pair["y"]
    r, rho = pair["pearson"], pair["spearman"]
    hd = pair["human_diff"]
    ci = hd["ci"]
    p_holm = hd.get("p_holm")
    if hd["delta"] is None or p_holm is None:
        judgement = "the difference in human correlation cannot be tested"
    elif p_holm < alpha:
        judgement = f"{y} is significantly {'worse' if hd['delta'] < 0 else 'better'} than {x} against humans"
    else:
        judgement = f"no significant difference against humans at α = {alpha}"
    pct = round(level * 100)
    rel = "≤" if hd.get("p_at_floor") else "="  # at the bootstrap's floor 2/(B + 1): at most
    return (
        f"{y} agrees with {x} at r = {_fmt(r['value'])} [{_fmt(r['ci'][0])}, {_fmt(r['ci'][1])}], "
        f"ρ = {_fmt(rho['value'])} [{_fmt(rho['ci'][0])}, {_fmt(rho['ci'][1])}]; "
        f"κ_q = {_fmt(pair['kappa_quadratic'])}, flips {_fmt((pair['flip_rate']['value'] or 0) * 100, 1)}% of "
        f"{pair['flip_rate']['n']} pairs both decide; its human correlation ({hd['protocol']}) is "
        f"{_fmt(hd['y'])} vs {_fmt(hd['x'])} (Δ = {_fmt(hd['delta'])}, {pct}% CI [{_fmt(ci[0])}, {_fmt(ci[1])}], "
        f"p {rel} {_fmt_p(hd['p_bootstrap'])}, Holm p {rel} {_fmt_p(p_holm)}): {judgement}."
    )
