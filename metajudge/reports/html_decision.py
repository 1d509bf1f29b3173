"""The overview of a backbone decision's ``report.html`` (``metajudge decide swap --out DIR``).

Renders ``decision.json`` (written by :mod:`metajudge.reports.decision_report`) as the payload
of :mod:`metajudge.reports.html_page`: the verdict, the agreement with humans per backbone, the
non-inferiority test, the system leaderboard under both backbones and the per-slice agreement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metajudge.reports.html_page import _r, est, weak_judge_warnings


def _ni_table(ni: Mapping[str, Any]) -> dict[str, Any]:
    delta = {"value": ni.get("delta"), "ci": ni.get("ci")}
    row = [ni.get("x"), ni.get("y"), ni.get("statistic"), _r(ni.get("a_x")), _r(ni.get("a_y"))]
    row += [est(delta), _r(ni.get("lower")), _r(ni.get("upper")), ni.get("margin")]
    row += [ni.get("alpha"), _r(ni.get("p_two_sided")), ni.get("n"), ni.get("verdict")]
    row += [_r(ni.get("labels_needed"), 1), _r(ni.get("additional_labels"), 1)]
    return {
        "title": "Non-inferiority of Y against X (Δ = agreement(Y) − agreement(X), 95% CI)",
        "columns": ["X", "Y", "statistic", "agreement X", "agreement Y", "Δ", "lower bound"]
        + ["upper bound", "margin δ", "α", "bootstrap p", "n", "verdict", "labels needed"]
        + ["more labels"],
        "rows": [row],
        "refs": [],
    }


def _leaderboard(lb: Mapping[str, Any], x: str, y: str) -> list[dict[str, Any]]:
    if not lb.get("available"):
        return []
    cols = zip(lb["systems"], lb["mean_human"], lb["mean_x"], lb["mean_y"], strict=True)
    taus = [
        [f"Kendall τ_b {a} vs {b}", None, None, est(lb.get(k))]
        for k, a, b in (
            ("tau_xy", x, y),
            ("tau_x_human", x, "humans"),
            ("tau_y_human", y, "humans"),
        )
    ]
    return [
        {
            "title": f"System means under both backbones ({lb.get('n_significant_swaps')} of "
            f"{lb.get('n_pairs')} system pairs swap order significantly)",
            "columns": ["system", "human", x, y],
            "rows": [[s, _r(h), _r(a), _r(b)] for s, h, a, b in cols],
            "refs": taus,
        }
    ]


def _slices(sl: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = [
        [s["slice"], est({"value": s.get("pearson_xy"), "ci": s.get("ci")}), s.get("n")]
        + [_r(s.get("flip_rate")), s.get("n_decisive")]
        for s in sl.get("slices") or []
    ]
    if not rows:
        return []
    q = sl.get("cochran_q") or {}
    return [
        {
            "title": f"Agreement X–Y per slice (Cochran's Q {_r(q.get('q'))}, p {_r(q.get('p'))}, "
            f"I² {_r(q.get('i2'))})",
            "columns": ["slice", "Pearson X–Y", "inputs", "flip rate", "decisive pairs"],
            "rows": rows,
            "refs": [],
        }
    ]


def decision_overview(d: Mapping[str, Any]) -> dict[str, Any]:
    """Question, protocol, verdict and tables of a ``decision.json``."""
    ni = d["non_inferiority"]
    x, y = ni["x"], ni["y"]
    agree = [[bb, est(e), e.get("n")] for bb, e in (d.get("agreement") or {}).items()]
    dec = d.get("decisions") or {}
    proto = d.get("protocol") or {}
    warnings = [f"Verdict: {d['verdict']}"] + weak_judge_warnings([x, y])
    return {
        "kind": "decision",
        "title": f"Backbone decision: can {y} replace {x}? ({d['dataset']})",
        "question": f"Can the judge run under {y} replace the one under {x} on {d['dataset']} "
        f"without losing more than δ = {ni.get('margin')} of agreement with the humans?",
        "protocol": " | ".join(f"{k}: {v}" for k, v in proto.items() if not isinstance(v, dict)),
        "signatures": [[k, v] for k, v in (proto.get("tests") or {}).items()],
        "warnings": warnings,
        "tables": [
            {
                "title": f"Agreement with humans per backbone ({ni.get('statistic')}; 95% CI); "
                f"decisions: flip rate {_r(dec.get('flip_rate'))} of {dec.get('n_decisive')} "
                f"pairs both decide, Cohen's κ {_r(dec.get('kappa'))} on {dec.get('n_pairs')}",
                "columns": ["backbone", "agreement", "n"],
                "rows": agree,
                "refs": [],
            },
            _ni_table(ni),
            *_leaderboard(d.get("leaderboard") or {}, x, y),
            *_slices(d.get("slices") or {}),
        ],
    }


def alt_test_overview(j: Mapping[str, Any], sentence: str) -> dict[str, Any]:
    """``report.html`` of ``decide alt-test --out``: the verdict sentence, one row per LLM and
    each LLM's per-annotator table (the tables of ``alt_test.md``)."""
    llms = [
        [r["llm"], _r(r["winning_rate"]), _r(r["advantage_probability"])]
        + ["yes" if r["passed"] else "no", r["n_items"]]
        for r in j["llms"]
    ]
    tables = [
        {
            "title": "Per LLM (passes: winning rate >= 0.5)",
            "columns": ["LLM", "winning rate", "advantage probability", "passes", "items"],
            "rows": llms,
            "refs": [],
        }
    ]
    for r in j["llms"]:
        rows = [
            [a["annotator"], a["n_items"], _r(a["llm_win_rate"]), _r(a["human_win_rate"])]
            + [_r(a["t"]), _r(a["p"]), "yes" if a["beaten"] else "no"]
            for a in r["annotators"]
        ]
        tables.append(
            {
                "title": f"{r['llm']}: per annotator (leave one out; beaten = H0 rejected after "
                "Benjamini–Yekutieli)",
                "columns": ["annotator", "items", "LLM wins (ρ_f)", "human wins (ρ_h)", "t", "p"]
                + ["beaten"],
                "rows": rows,
                "refs": [],
            }
        )
    src = j.get("source") or "these annotations"
    return {
        "kind": "alt-test",
        "title": f"The Alternative Annotator Test: {src}",
        "question": f"May each LLM replace the human annotators of {src}? (Calderon, Reichart "
        "& Dror, ACL 2025)",
        "protocol": f"scoring={j['scoring']} ({j['label_type']} labels) epsilon={j['epsilon']:g} "
        f"q={j['q']:g} min_annotators={j['min_annotators']} min_items={j['min_items']} "
        f"items_kept={j['n_items']} null_labels={j['dropped']['null_labels']}",
        "signatures": [],
        "warnings": [f"Verdict: {sentence}"],
        "tables": tables,
        "links": [
            {"href": "alt_test.md", "text": "the decision report (Markdown)"},
            {"href": "alt_test.json", "text": "the result as JSON"},
        ],
        "items": [],
        "resp": [],
        "views": [],
        "compare": [],
    }
