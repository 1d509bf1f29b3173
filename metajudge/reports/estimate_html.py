"""``report.html`` of a ``calibrate estimate`` (and ``calibrate plan``) run folder (:mod:`metajudge.reports.html_page`
renders it): the forest plot, the gates, the paired differences and the transport audits.

The payload's ``forest`` (drawn as inline SVG by :func:`metajudge.reports.svg.forest` into the
page's ``lead``, measured by the page's self-test): per system, the calibrated estimate with its CI beside the raw judge mean with its
naive CI, on the label scale, with the system's route (borrowed, weighted by a plan) and level
claim; ``scale`` the label scale. Works from the result as JSON data (``result.json``), so that
``report render DIR --format html`` re-renders it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metajudge.analyses.calibration.plan import plan_advice
from metajudge.reports.card_figures import forest_data, forest_svg
from metajudge.reports.estimate_report import difference_marks, gate_line

ESTIMATE_KIND = "calibrate-estimate"
PLAN_KIND = "calibrate-plan"


def _ci(d: Mapping[str, Any]) -> dict[str, float]:
    return {"v": round(d["value"], 4), "lo": round(d["lo"], 4), "hi": round(d["hi"], 4)}


def _tables(res: Mapping[str, Any]) -> list[dict[str, Any]]:
    systems = [
        [
            s["system"]
            + {"borrowed": " (borrowed)", "ipw": " (weighted by the plan)"}.get(s["route"], ""),
            s["labelled"],
            s["rows"],
            _ci(s),
            _ci(s["judge_mean"]),
            round(s["support"]["outside_share"], 4),
            s["transport"],
            s["level_claim"],
        ]
        for s in res["systems"]
    ]
    out = [
        {
            "title": "Estimates and gates",
            "columns": [
                "system",
                "labelled",
                "rows",
                "calibrated estimate [CI]",
                "raw judge mean [naive CI]",
                "share outside the labelled range",
                "transport",
                "level claim",
            ],
            "rows": systems,
            "nd": 4,
        }
    ]
    if res["differences"]:
        diffs = [
            [f"{d['a']} − {d['b']}", _ci(d), d["p"], d["p_holm"], d["shared_clusters"]]
            + [difference_marks(d)]
            for d in res["differences"]
        ]
        cols = ["A − B", "difference [CI]", "p", "p (Holm)", "shared prompts", ""]
        out.append({"title": "Paired differences (Holm)", "columns": cols, "rows": diffs, "nd": 4})
    if res["transport"]:
        audits = [
            [
                a["system"],
                a["probes"],
                a["clusters"],
                {"v": a["delta"], "lo": a["lo"], "hi": a["hi"]},
            ]
            + [a["verdict"], a["reason"]]
            for a in res["transport"]
        ]
        cols = ["system", "probes", "clusters", "mean residual [CI]", "verdict", "why"]
        margin = res["settings"]["margin"]
        title = f"Transport audits (held-out labelled probes, margin ±{margin:g})"
        out.append({"title": title, "columns": cols, "rows": audits})
    plan = res.get("plan")
    if plan:
        lo, hi = plan["probability_range"]
        rows = [
            ["candidates", plan["candidates"]],
            ["selected and labelled (weighted by 1/probability)", plan["selected_labelled"]],
            ["selected, still unlabelled", plan["selected_unlabelled"]],
            ["labelled though not selected", plan["labelled_not_selected"]],
            ["selection probabilities", f"{lo:.3g} to {hi:.3g}"],
        ]
        title = f"Label plan read back ({plan['file']})"
        out.append({"title": title, "columns": ["", "rows"], "rows": rows})
    return out


def estimate_payload(res: Mapping[str, Any]) -> dict[str, Any]:
    """The page of a ``calibrate estimate`` result (``result.json``'s data)."""
    c = res["calibration"]
    return {
        "kind": ESTIMATE_KIND,
        "title": "Calibrated estimates per system",
        "question": "What is each system's quality on the label scale, from judge scores on "
        "every response and labels on some, and when can the level not be trusted?",
        "protocol": f"{c['method']} ({c['folds']} folds, seed {c['seed']}) on {c['labels']} "
        f"labels in {c['labelled_clusters']} clusters from {', '.join(c['systems_with_labels'])}; "
        f"source {res['source']}",
        "signatures": [],
        "warnings": [*res.get("notes", [])]
        + ([gate_line(res["selection_gate"])] if res.get("selection_gate") else []),
        "tables": _tables(res),
        "forest": forest_data(res),
        "lead": {
            "id": "forest",
            "title": "Forest plot: " + forest_data(res)["title"],
            "svg": forest_svg(res),
        },
        "links": [{"href": "result.json", "text": "the result as JSON"}],
        "items": [],
        "resp": [],
        "views": [],
        "compare": [],
    }


def _plan_tables(res: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    hw = res.get("half_width")
    rows = []
    for s in res["systems"]:
        row = [s["system"], s["labelled_now"], round(s["half_width_now"], 4)]
        if hw is not None:
            row += [plan_advice(s), s["labels_only_needed"]]
        rows.append(row)
    cols = ["system", "labelled now", "half-width now"]
    if hw is not None:
        cols += [f"labels for ±{hw:g} (calibrated)", "labels only"]
    out.append({"title": "Labels needed per system", "columns": cols, "rows": rows, "nd": 4})
    sel = res.get("selection") or {}
    if sel:
        lo, hi = sel["probability_range"]
        rows = [
            ["candidates (unlabelled rows)", sel["candidates"]],
            ["budget", sel["budget"]],
            ["selected by the seeded draw", sel["picked"]],
            ["probabilities", f"{lo:.3g} to {hi:.3g}"],
            ["rule", sel["rule"]],
        ]
        if "predicted_ratio" in sel:
            rows.append(
                ["predicted half-width, active / uniform", round(sel["predicted_ratio"], 3)]
            )
            rows.append(["recommended", sel["recommendation"]])
        title = "Active selection (Zrnic & Candès 2024): feed the file back with --plan"
        out.append({"title": title, "columns": ["", "value"], "rows": rows})
    return out


def plan_payload(res: Mapping[str, Any]) -> dict[str, Any]:
    """The page of a ``calibrate plan`` result (``result.json``'s data)."""
    return {
        "kind": PLAN_KIND,
        "title": "Label plan",
        "question": "How many labels does each system's estimate need, and which items should "
        "be labelled next?",
        "protocol": f"pilot {res['source']}; level {1 - res['alpha']:.0%}",
        "signatures": [],
        "warnings": [],
        "tables": _plan_tables(res),
        "links": [{"href": "result.json", "text": "the result as JSON"}],
        "items": [],
        "resp": [],
        "views": [],
        "compare": [],
    }
