"""The judge card's pictures (inline SVG, :mod:`metajudge.reports.svg`), each drawn from
numbers card.json already holds: one function per picture, each returning a :data:`Figure`
(``{"id", "title", "svg", "reason"}``: ``svg`` None and ``reason`` one line where the card has
no data for it).

* :func:`risk_coverage_figure` — selective part: the curve, the guarantee, the chosen threshold;
* :func:`reliability_figure` — calibration part: the reliability diagram before and after;
* :func:`confusion_figure` — categorical agreement (binary, categorical judges): the matrix;
* :func:`forest_figure` — estimate part: calibrated estimate beside the raw judge mean;
* :func:`width_by_bin_figure` — conformal part (intervals): mean width per human-score bin.

:func:`card_figures` gives all five in the card's order; :func:`lead_figure` the one that
carries the card's decision (shown on the first screen beside the verdict).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from metajudge.reports import svg

Figure = dict[str, Any]


def _result(card: Mapping[str, Any], part: str) -> Mapping[str, Any] | None:
    p = card["parts"].get(part) or {}
    return p.get("result") if p.get("status") == "ok" else None


def _absent(id_: str, title: str, reason: str) -> Figure:
    return {"id": id_, "title": title, "svg": None, "reason": reason}


def natural_key(name: str) -> list[Any]:
    """Sort key that orders numbers inside names by value.

    >>> sorted(["S10", "S2", "S1"], key=natural_key)
    ['S1', 'S2', 'S10']
    """
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name) if t]


def _part_reason(card: Mapping[str, Any], part: str) -> str:
    p = card["parts"].get(part) or {}
    return "part not run: " + str(p.get("reason") or "not run")


def risk_coverage_figure(card: Mapping[str, Any]) -> Figure:
    """Agreement of the judge's most confident share against that share; the guaranteed level
    1 − α dashed; the operating point (mean share kept and agreement over the splits) marked."""
    id_, title = "risk-coverage", "Where may it be trusted? Share kept against agreement"
    r = _result(card, "selective")
    if r is None:
        return _absent(id_, title, _part_reason(card, "selective"))
    curve = (r.get("curves") or {}).get(card["judge"]) or next(
        iter((r.get("curves") or {}).values()), None
    )
    if not curve:
        return _absent(id_, title, "the selective result holds no curve")
    c = r["configs"][0]
    thr = (c.get("threshold_mean") or [None])[0]
    chosen = None
    label = "no threshold reached the guarantee"
    if c.get("agreement_mean") is not None and c.get("coverage_mean"):
        chosen = (c["coverage_mean"], c["agreement_mean"])
        at = "" if thr is None else f"confidence ≥ {thr:.3f}: "
        label = f"{at}{c['coverage_mean']:.0%} kept"
    level = 1 - r["alpha"]
    text = svg.risk_coverage(
        curve,
        level,
        chosen,
        chosen_label=label,
        title=f"{card['judge']}: agreement with humans of its most confident share of the "
        f"items; guarantee ≥ {level:.2f} with probability ≥ {1 - r['delta']:.2f}",
    )
    return {"id": id_, "title": title, "svg": text, "reason": ""}


def reliability_figure(card: Mapping[str, Any]) -> Figure:
    """The reliability diagram of the calibration part (held-out rows), before and after."""
    id_, title = "reliability", "Calibration: reliability diagram (held-out rows)"
    r = _result(card, "calibration")
    if r is None:
        return _absent(id_, title, _part_reason(card, "calibration"))
    rel = r.get("reliability") or {}
    pts = {k: [(b["pred"], b["outcome"]) for b in rel.get(k) or []] for k in ("before", "after")}
    if not pts["before"] and not pts["after"]:
        return _absent(id_, title, "the calibration result holds no reliability bins")
    platt = r.get("method") == "platt"
    scale = (0.0, 1.0) if platt else tuple(r["calibrator"]["scale"])
    text = svg.reliability_svg(
        pts["before"],
        pts["after"],
        scale,  # type: ignore[arg-type]
        ylabel="share of label 1" if platt else "mean human score",
        title=f"Reliability of {card['judge']} ({r['method']}), held-out rows",
    )
    return {"id": id_, "title": title, "svg": text, "reason": ""}


def _judge_row(card: Mapping[str, Any]) -> Mapping[str, Any] | None:
    r = _result(card, "agreement") or {}
    if r.get("kind") != "categorical":
        return None
    return next((x for x in r.get("rows", []) if x["metric"] == card["judge"]), None)


def confusion_figure(card: Mapping[str, Any]) -> Figure:
    """Human label against the judge's verdict (binary and categorical judges)."""
    id_, title = "confusion", "Which errors does it make? Confusion matrix"
    if _result(card, "agreement") is None:
        return _absent(id_, title, _part_reason(card, "agreement"))
    row = _judge_row(card)
    if row is None or not row.get("confusion"):
        return _absent(id_, title, "labels are not categories (a confusion matrix needs verdicts)")
    labels, cm = list(row["labels"]), row["confusion"]
    # a label no human and no judge used is a row and a column of zeros: left out
    keep = [i for i in range(len(labels)) if sum(cm[i]) or sum(r[i] for r in cm)]
    text = svg.confusion_svg(
        [labels[i] for i in keep],
        [[cm[i][j] for j in keep] for i in keep],
        title=f"{card['judge']}: human label (rows) against the judge's verdict (columns), "
        f"{row['n']} items",
    )
    return {"id": id_, "title": title, "svg": text, "reason": ""}


def forest_figure(card: Mapping[str, Any]) -> Figure:
    """Per system, the calibrated estimate beside the raw judge mean, with their CIs (the
    forest plot of ``calibrate estimate``'s page, :func:`~metajudge.reports.estimate_html.
    forest_svg`)."""
    id_, title = "forest", "What are the systems worth? Calibrated estimate against raw judge mean"
    r = _result(card, "estimate")
    if r is None:
        return _absent(id_, title, _part_reason(card, "estimate"))
    if not all(
        s.get("value") is not None and s["judge_mean"].get("lo") is not None for s in r["systems"]
    ):
        return _absent(id_, title, "a system has no estimate or no CI")
    return {"id": id_, "title": title, "svg": forest_svg(r, id_="fig-forest"), "reason": ""}


def width_by_bin_figure(card: Mapping[str, Any]) -> Figure:
    """The conformal interval's mean width per human-score bin (the narrowest method that
    reached the target), the whole scale dashed; each bin's coverage written below it."""
    id_, title = "width-by-bin", "How wide are its errors? Interval width per human-score bin"
    r = _result(card, "conformal")
    if r is None:
        return _absent(id_, title, _part_reason(card, "conformal"))
    from metajudge.analyses.card_needs import best_conformal

    m = best_conformal(r)
    if m is None or "width" not in m:
        return _absent(id_, title, "prediction sets of classes: no interval width per bin")
    bins = m.get("by_human") or []
    if not bins or all("width" not in b for b in bins):
        return _absent(id_, title, "the conformal result holds no width per human-score bin")
    lo, hi = _scale(card, r)
    notes = [
        [] if b.get("coverage") is None else [f"coverage {b['coverage']:.2f}", f"n {b['n']:.0f}"]
        for b in bins
    ]
    text = svg.bars_by_bin(
        [b["bin"] for b in bins],
        [b.get("width") for b in bins],
        notes,
        ymax=hi - lo,
        ylabel="mean interval width",
        ref=(hi - lo, f"whole scale {hi - lo:g}"),
        title=f"{card['judge']} ({m['method']}): mean width of the "
        f"{1 - r['options']['alpha']:.0%} interval per human-score bin",
    )
    return {"id": id_, "title": title, "svg": text, "reason": ""}


def _scale(card: Mapping[str, Any], conformal: Mapping[str, Any]) -> tuple[float, float]:
    """The label scale: the conformal result's, else the estimate's or calibration's, else
    the widest width seen."""
    for part, key in (("conformal", "scale"), ("estimate", "scale")):
        r = conformal if part == "conformal" else _result(card, part)
        if r and r.get(key):
            return float(r[key][0]), float(r[key][1])
    cal = _result(card, "calibration")
    if cal and (cal.get("calibrator") or {}).get("scale"):
        lo, hi = cal["calibrator"]["scale"]
        return float(lo), float(hi)
    widest = max(m["width"] for m in conformal["methods"])
    return 0.0, float(widest)


#: the pictures in the card's order
FIGURES: tuple[Callable[[Mapping[str, Any]], Figure], ...] = (
    risk_coverage_figure,
    confusion_figure,
    forest_figure,
    width_by_bin_figure,
    reliability_figure,
)


def card_figures(card: Mapping[str, Any]) -> list[Figure]:
    """Every picture of the card (drawn, or absent with its one-line reason)."""
    return [f(card) for f in FIGURES]


def lead_figure(figures: list[Figure], card: Mapping[str, Any]) -> Figure | None:
    """The picture that carries the decision: the one the decision names
    (``card["decision"]["figure"]``), else the first drawn in :data:`FIGURES` order (where to
    trust it, its errors by class, the systems, the width of its errors, its calibration)."""
    named = (
        (card.get("decision") or {}).get("figure")
        if isinstance(card.get("decision"), dict)
        else None
    )
    drawn = [f for f in figures if f["svg"]]
    return next((f for f in drawn if f["id"] == named), drawn[0] if drawn else None)


def _rounded(d: Mapping[str, Any]) -> dict[str, float]:
    return {"v": round(d["value"], 4), "lo": round(d["lo"], 4), "hi": round(d["hi"], 4)}


def forest_data(res: Mapping[str, Any]) -> dict[str, Any]:
    """An estimate result's forest plot as data (the estimate page's payload ``forest``): per
    system the calibrated estimate and the raw judge mean with their CIs, the route and claim."""
    rows = [
        {
            "system": s["system"],
            "route": s["route"],
            "cal": _rounded(s),
            "raw": _rounded(s["judge_mean"]),
            "claim": s["level_claim"],
        }
        for s in res["systems"]
    ]
    conf = round(100 * (1 - res["settings"]["alpha"]))
    return {
        "title": f"Calibrated estimate [{conf}% CI] beside the raw judge mean [naive {conf}% CI]",
        "scale": list(res["scale"]),
        "rows": rows,
    }


def forest_svg(res: Mapping[str, Any], *, id_: str = "forest") -> str:
    """The forest plot of an estimate result as inline SVG (:func:`metajudge.reports.svg.
    forest`), systems in natural order (S0, S1, S2 … S10); the card draws the same."""
    f = forest_data(res)
    rows = [
        svg.ForestRow(
            system=r["system"],
            label=r["system"]
            + {"borrowed": " (borrowed)", "ipw": " (plan-weighted)"}.get(r["route"], ""),
            cal=(r["cal"]["v"], r["cal"]["lo"], r["cal"]["hi"]),
            raw=(r["raw"]["v"], r["raw"]["lo"], r["raw"]["hi"]),
            refused=r["claim"] != "ok",
        )
        for r in sorted(f["rows"], key=lambda r: natural_key(r["system"]))
    ]
    return svg.forest(rows, (f["scale"][0], f["scale"][1]), title=f["title"], id_=id_)
