"""``report.html`` of the ``calibrate`` commands (:mod:`metajudge.reports.html_page` renders it):

- ``calibrate fit``: the held-out measures before/after and the reliability diagram
  (:func:`plot_reliability`, ``reliability.png``, the run folder's file; the judge card draws
  the same bins as inline SVG, :func:`metajudge.reports.svg.reliability_svg_svg`);
- ``calibrate conformal``: coverage and mean width (set size) per method, and each test item's
  interval (prediction set) of the first split in the disagreement browser (view kind
  ``interval``), widest first;
- ``calibrate selective``: :func:`metajudge.reports.selective.selective_payload` and its
  coverage-vs-agreement curve.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

RELIABILITY_FILE = "reliability.png"


def plot_reliability(res: Any, path: str | Path) -> Path:
    """The reliability diagram of a ``calibrate fit`` result: per equal-count bin of the held-out
    rows of the first split, the mean human score (platt: share of label 1) against the mean
    prediction, before (grey) and after (blue) calibration, with the diagonal."""
    from metajudge.reports.plots import _plt, _save

    lo, hi = (0.0, 1.0) if res.method == "platt" else res.calibrator["scale"]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 4.4))
    ax.plot([lo, hi], [lo, hi], ls="--", color="#bbbbbb", lw=1, label="calibrated (diagonal)")
    for tag, colour in (("before", "#888888"), ("after", "#1f6feb")):
        bins = res.reliability.get(tag) or []
        ax.plot(
            [b["pred"] for b in bins],
            [b["outcome"] for b in bins],
            marker="o",
            color=colour,
            label=f"{tag} ({len(bins)} bins)",
        )
    ax.set_xlabel("mean prediction (bin)")
    ax.set_ylabel("share of label 1" if res.method == "platt" else "mean human score")
    ax.set_title(f"Reliability: {res.judge} ({res.method}), held-out rows", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    out = _save(fig, Path(path))
    plt.close(fig)
    return out


def _base(kind: str, title: str, question: str, protocol: str, sigs: list[list[str]]) -> dict:
    return {
        "kind": kind,
        "title": title,
        "question": question,
        "protocol": protocol,
        "signatures": sigs,
        "warnings": [],
        "tables": [],
        "links": [{"href": "result.json", "text": "the result as JSON"}],
        "items": [],
        "resp": [],
        "views": [],
        "compare": [],
    }


def fit_payload(res: Any) -> dict[str, Any]:
    """``calibrate fit``: the held-out table and the reliability bins (the plot is the PNG)."""
    from metajudge.reports.calibration import _protocol

    sig = res.calibrator["judge"]["signature"]
    p = _base(
        "calibrate-fit",
        f"Calibration of {res.judge}: {res.method}",
        f"What does {res.judge}'s output mean on the human scale, and how far off is it on "
        "held-out rows before and after the map?",
        f"{res.n} rows; {_protocol(res.protocol)}; the calibrator's map is fitted on all rows",
        [[res.judge, sig]],
    )
    rows = [
        [k.upper(), _r(v), _r(res.sd.get(f"{k}_before")), _r(res.after.get(k))]
        + [_r(res.sd.get(f"{k}_after"))]
        for k, v in res.before.items()
    ]
    p["tables"].append(
        {
            "title": "Held-out measures (means over the held-out parts)",
            "columns": ["measure", "before", "sd", "after", "sd"],
            "rows": rows,
        }
    )
    rel = res.reliability
    bins = [
        [j + 1, b["n"], _r(b["pred"]), _r(b["outcome"])]
        + ([_r(a["pred"]), _r(a["outcome"])] if a is not None else [None, None])
        for j, (b, a) in enumerate(_zip_longest(rel.get("before", []), rel.get("after", [])))
    ]
    p["tables"].append(
        {
            "title": "Reliability diagram's points (held-out rows of the first split)",
            "columns": ["bin", "n", "prediction before", "human", "prediction after", "human"],
            "rows": bins,
        }
    )
    return p


def _zip_longest(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[Any, Any]]:
    return [(x, b[j] if j < len(b) else None) for j, x in enumerate(a)]


def _r(v: Any, nd: int = 4) -> Any:
    return None if v is None else round(float(v), nd)


def conformal_payload(res: Any, source: str, dataset: Any = None) -> dict[str, Any]:
    """``calibrate conformal`` (intervals or prediction sets): the methods' table and, in the
    browser, each test item's interval / set of the first split (``res.items``)."""
    sets = getattr(res, "kind", "") == "prediction sets"
    what = "prediction sets" if sets else "intervals"
    o, pr = res.options, res.protocol
    p = _base(
        "calibrate-conformal",
        f"Conformal {what} for {res.judge} on {source}",
        f"How uncertain is each verdict of {res.judge}: {what} with coverage "
        f">= {1 - o['alpha']:.3g} on held-out rows?",
        f"alpha={o['alpha']:g} repeats={pr['repeats']} fraction={pr['fraction']:g} "
        f"seed={pr['seed']}",
        [[res.judge, getattr(res, "signature", res.judge)]],
    )
    size = "mean set size" if sets else "mean width"
    key = "size" if sets else "width"
    p["tables"].append(
        {
            "title": f"Coverage and {size} per method (means over the splits)",
            "columns": ["method", "coverage", "sd", size, "sd"],
            "rows": [
                [m["method"], _r(m["coverage"]), _r(m["coverage_sd"]), _r(m[key])]
                + [_r(m[f"{key}_sd"])]
                for m in res.methods
            ],
        }
    )
    if not sets and res.methods:
        p["tables"].append(_by_human_table(res.methods))
    p["warnings"] += list(getattr(res, "notes", []) or [])
    p["warnings"] += list(getattr(res, "warnings", []) or [])
    if res.items:
        _interval_views(p, res.items, sets, dataset)
    return p


def _by_human_table(methods: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per method: the coverage per human-score bin (pooled over the splits) and what its
    guarantee covers; the last row: test items per split in each bin."""
    bins = [b["bin"] for b in methods[0]["by_human"]]
    rows = [
        [m["method"], *(_r(b["coverage"]) for b in m["by_human"]), m.get("guarantee", "")]
        for m in methods
    ]
    rows.append(["test items per split", *(_r(b["n"], 1) for b in methods[0]["by_human"]), ""])
    return {
        "title": "Coverage per human-score bin (no method targets it: every guarantee is "
        "marginal, binned ones also per bin of the judge's score)",
        "columns": ["method", *(f"human {b}" for b in bins), "what the guarantee covers"],
        "rows": rows,
    }


def _interval_views(
    p: dict[str, Any], rows: Sequence[Mapping[str, Any]], sets: bool, dataset: Any
) -> None:
    """One browser view per method: its test items, widest interval (largest set) first."""
    from metajudge.reports.html_items import Items

    items = Items()
    recs = _records(dataset)
    bare: dict[str, int] = {}  # rows of a file without records: one browser item per row id
    views: dict[str, list[dict[str, Any]]] = {}
    for it in rows:
        i, rr, labels = _item(items, recs, bare, str(it["id"]))
        lo_hi = (it["set"] or "(empty)") if sets else f"[{it['lo']:g}, {it['hi']:g}]"
        views.setdefault(str(it["method"]), []).append(
            {"i": i, "r": rr, "m": it["judge"], "n": lo_hi, "h": it["human"]}
            | {"g": it["size"] if sets else _r(it["width"]), "l": labels}
            | {"w": int(not it["covered"]), "s": 0}
        )
    how = (
        "prediction-set size, largest first ('human outside' = the human class is not in the set)"
        if sets
        else "interval width, widest first ('human outside' = the human score is not in it)"
    )
    dim = "verdict" if sets else "rating"
    for name, vrows in views.items():
        vrows.sort(key=lambda r: -float(r["g"]))
        v = {"name": name, "dim": dim, "kind": "interval", "set": sets, "how": how}
        p["views"].append(v | {"rows": vrows})
    p.update(items=items.items, resp=items.resp)
    if not recs:
        p["warnings"].append(
            "the input holds no texts (a rating-distribution file): the browser shows row ids"
        )


def _records(dataset: Any) -> dict[str, Any]:
    """The dataset's records by unit (a pair's id; a response's ``id::system``)."""
    if dataset is None:
        return {}
    from metajudge.data.formats import PairwiseRecord, response_key

    out = {}
    for r in dataset.records:
        out[r.id if isinstance(r, PairwiseRecord) else response_key(r.id, r.system)] = r
    return out


def _item(
    items: Any, recs: Mapping[str, Any], bare: dict[str, int], unit: str
) -> tuple[int, list[int], list[Any]]:
    """The browser indices of ``unit``: its record's, or a bare row id (no texts, kept once in
    ``bare``)."""
    from metajudge.data.formats import PairwiseRecord

    rec = recs.get(unit)
    if rec is not None:
        i, rr = items.add(rec)
        by_dim = rec.labels if isinstance(rec, PairwiseRecord) else rec.scores
        return i, rr, list(next(iter(by_dim.values()), ()))
    if unit not in bare:
        bare[unit] = len(items.items)
        items.items.append(
            {"id": unit, "sub": "", "q": None, "ctx": None, "ref": None, "tables": [], "docs": []}
        )
    return bare[unit], [], []
