"""The judge card's verdict, Markdown and page (``metajudge judge card``).

:func:`verdict` reads the parts' results (:mod:`metajudge.runs.judge_card`) into a few lines:
may the judge replace the annotators (Alt-Test), its agreement beside the inter-human reference,
where it may be trusted (selective judging), how wide its errors are (conformal), and the
calibrated system estimates beside its raw means. Nothing is computed here: each number is read
from the result of the command that printed it. :func:`card_html` renders the page with the
report template (:mod:`metajudge.reports.html_page`): the verdict table first, the evidence
tables after it, then the meta-eval run's tables and its disagreement browser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.analyses.card_needs import best_conformal

#: what each part answers, as the card names it
TITLES = {
    "agreement": "Agreement with humans (meta-eval)",
    "verdicts": "What does it pass? (TPR, TNR, corrected pass rates)",
    "disagreements": "Where does it disagree? (items, with the judge's explanation)",
    "alt_test": "May it replace the annotators? (decide alt-test)",
    "selective": "Where may it be trusted? (calibrate selective)",
    "conformal": "How wide are its errors? (calibrate conformal)",
    "calibration": "Calibration: reliability, ECE (calibrate fit)",
    "estimate": "What are the systems worth? (calibrate estimate)",
    "biases": "Position and length bias (judge diagnostics)",
    "self_preference": "Self-preference (judge self-preference)",
}


def judge_title(card: Mapping[str, Any]) -> str:
    """How the card names its judge: a definition's ``name`` (``name``, for a ``judge:PATH``
    judge, whose path stays in ``judge`` and the signature), else the judge's column or metric."""
    return str(card.get("name") or card["judge"])


def _finite(v: Any) -> bool:
    import math

    return isinstance(v, int | float) and math.isfinite(v)


def _f(v: Any, nd: int = 3) -> str:
    return "–" if v is None else f"{v:.{nd}f}"


def _ci(v: Any, ci: Sequence[Any] | None, nd: int = 3) -> str:
    if v is None:
        return "undefined"
    return f"{_f(v, nd)} [{_f(ci[0], nd)}, {_f(ci[1], nd)}]" if ci else _f(v, nd)


def _result(card: Mapping[str, Any], part: str) -> Mapping[str, Any] | None:
    p = card["parts"].get(part) or {}
    return p.get("result") if p.get("status") == "ok" else None


def _why(card: Mapping[str, Any], part: str) -> str:
    return "absent: " + str((card["parts"].get(part) or {}).get("reason", "not run"))


def _withheld(card: Mapping[str, Any], part: str) -> str | None:
    """The row of a part that ran but gives no answer: why, and what would give one."""
    p = card["parts"].get(part) or {}
    if not p.get("withheld"):
        return None
    labels = card["labels"]["labelled"]
    return f"no answer: {p['withheld']} ({labels} labels; label more items to measure it)"


def how_run(part: Mapping[str, Any]) -> str:
    """The command that prints a part's numbers, or the analysis the card ran itself."""
    return part.get("command") or f"computed by the card ({part.get('by')})"


def part_warnings(card: Mapping[str, Any], part: str) -> list[str]:
    """The warnings of a part's result, shown beside its row."""
    p = card["parts"].get(part) or {}
    return [str(w) for w in (p.get("result") or {}).get("warnings") or ()]


def _alt_test(card: Mapping[str, Any]) -> str:
    r = _result(card, "alt_test")
    if r is None:
        return _why(card, "alt_test")
    (llm,) = [x for x in r["llms"] if x["llm"] == card["judge"]] or r["llms"][:1]
    word = "yes" if llm["passed"] else "no"
    return (
        f"{word}: winning rate {llm['winning_rate']:.2f} (passes at >= 0.5), advantage "
        f"probability {llm['advantage_probability']:.2f}, ε = {r['epsilon']:g}, "
        f"{llm['n_items']} items, {len(llm['annotators'])} annotators"
    )


def _agreement_result(card: Mapping[str, Any]) -> Any:
    """The agreement part's result as a :class:`MetaEvalResult` (None when absent)."""
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult

    r = _result(card, "agreement")
    return None if r is None else MetaEvalResult(dict(r))


def _cells(card: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    res = _agreement_result(card)
    return [] if res is None else res.cells_of(card["judge"], card.get("dimension"))


def stat_label(statistic: str) -> str:
    """How the card names an agreement statistic (``pearson``: Pearson)."""
    from metajudge.reports.scale import STAT_LABEL

    return STAT_LABEL.get(statistic, statistic)


def _agreement(card: Mapping[str, Any], statistic: str = "pearson") -> str:
    r = _result(card, "agreement")
    if r is None:
        return _why(card, "agreement")
    if _withheld(card, "agreement"):
        return str(_withheld(card, "agreement"))
    if r.get("kind") == "categorical":
        (row,) = [x for x in r["rows"] if x["metric"] == card["judge"]][:1] or [None]
        if row is None:
            return "absent: no row of the judge"
        ref = row.get("reference") or {}
        if not _finite(ref.get("judge_kappa")):
            n_ann = card.get("annotators") or 1
            return (
                f"accuracy {_ci(row['accuracy'], row['ci']['accuracy'])}, Cohen κ "
                f"{_ci(row['cohen_kappa'], row['ci']['cohen_kappa'])} on {row['n']} items; "
                f"inter-human ceiling undefined ({n_ann} label per item: no second annotator)"
            )
        return (
            f"accuracy {_ci(row['accuracy'], row['ci']['accuracy'])}, Cohen κ "
            f"{_ci(row['cohen_kappa'], row['ci']['cohen_kappa'])} on {row['n']} items; "
            f"against the others' majority the judge's κ is {_f(ref.get('judge_kappa'))}, "
            f"an annotator's {_f(ref.get('annotator_kappa'))} (inter-human ceiling; "
            f"Krippendorff α {_f(ref.get('alpha'))})"
        )
    out = []
    res = _agreement_result(card)
    for c in _cells(card)[:1]:
        s = c["stats"][statistic]
        cs = res.ceiling_stat(c["dimension"], statistic)
        human = (
            _ci(cs.get("value"), cs.get("ci"))
            if cs.get("value") is not None
            else f"undefined ({cs.get('undefined') or 'no inter-human reference'})"
        )
        out.append(
            f"{stat_label(statistic)} {_ci(s['value'], s['ci'])} on {c['dimension']} "
            f"({c['n_rows']} rows, "
            f"{c['n_items']} items); inter-human ceiling: {human}"
        )
    return "; ".join(out) or "absent: no cell of the judge"


def _pct(r: Mapping[str, Any]) -> str:
    """A Wilson rate: "52% [45%, 59%] (93 of 178)"."""
    if r["value"] is None:
        return "undefined (none labelled)"
    return f"{r['value']:.0%} [{r['lo']:.0%}, {r['hi']:.0%}] ({r['k']} of {r['n']})"


def _pass_rate(p: Mapping[str, Any]) -> str:
    rg, ppi = p["rogan_gladen"], p.get("ppi")
    text = f"{p['scope']}: judge {_f(p['judge']['value'])}, corrected (Rogan–Gladen) "
    text += _ci(rg["value"], (rg["lo"], rg["hi"]))
    if ppi:
        text += f", PPI++ {_ci(ppi['value'], (ppi['lo'], ppi['hi']))}"
    if p["human"]["value"] is not None:
        text += f", humans {_f(p['human']['value'])} ({p['labelled']} labelled)"
    if p.get("excess") is not None and abs(p["excess"]) >= 0.005:
        word = "high" if p["excess"] > 0 else "low"
        text += f" — the judge's pass rate is {abs(p['excess']):.2f} too {word}"
    return text


def _verdicts(card: Mapping[str, Any]) -> str:
    r = _result(card, "verdicts")
    if r is None:
        return _why(card, "verdicts")
    head = (
        f"says {r['positive']} to {_pct(r['tpr'])} of the answers humans label "
        f"{r['positive']} (TPR) and {r['negative']} to {_pct(r['tnr'])} of those they label "
        f"{r['negative']} (TNR): accepts {_pct(r['accepts_wrong'])} of the {r['negative']} "
        "answers; pass rate, "
    )
    return head + "; ".join(_pass_rate(p) for p in r["pass_rates"])


def _selective(card: Mapping[str, Any]) -> str:
    r = _result(card, "selective")
    if r is None:
        return _why(card, "selective")
    c = r["configs"][0]
    thr = c["threshold_mean"][0]
    n = r["repeats"]
    if c["agreement_mean"] is None:
        return (
            f"no threshold passed in any of {n} calibration/test splits: the judge keeps nothing "
            f"at agreement >= {1 - r['alpha']:.2f} (all items: {_f(c['raw_agreement_mean'])})"
        )
    q = c.get("coverage_quartiles") or (None, None)
    spread = (
        f"median {c['coverage_median']:.1%} of the items kept (IQR {q[0]:.1%}–{q[1]:.1%}, mean "
        f"{c['coverage_mean']:.1%}) over {n} splits, {c['splits_empty']} of {n} keep nothing"
        if n > 1 and q[0] is not None
        else f"{c['coverage_mean']:.1%} of the items kept (one split)"
    )
    viol = c.get("population_violation_share")
    pop = "" if viol is None else f"; population violation rate {viol:.3f}"
    return (
        f"keep verdicts with confidence >= {_f(thr, 4)}: {spread}; agreement there "
        f"{_f(c['agreement_mean'])} (all items: {_f(c['raw_agreement_mean'])}); guaranteed "
        f">= {1 - r['alpha']:.2f} with probability >= {1 - r['delta']:.2f}{pop} "
        f"(promised <= {r['delta']:g})"
    )


def _conformal(card: Mapping[str, Any]) -> str:
    r = _result(card, "conformal")
    if r is None:
        return _why(card, "conformal")
    if _withheld(card, "conformal"):
        return str(_withheld(card, "conformal"))
    m = best_conformal(r)
    if m is None:
        return "no method"
    target = 1 - r["options"]["alpha"]
    if "width" in m:
        bins = ", ".join(_f(b.get("coverage"), 2) for b in m.get("by_human", []))
        return (
            f"{m['method']}: mean interval width {m['width']:.2f} at coverage "
            f"{m['coverage']:.3f} (target {target:.2f}); per human-score bin: {bins}"
        )
    return (
        f"{m['method']}: mean set size {m['size']:.3f} at coverage {m['coverage']:.3f} "
        f"(target {target:.2f}); {m['singleton']:.1%} singletons"
    )


#: above this many systems the verdict summarises them (the forest plot and the table list each)
LISTED_SYSTEMS = 4


def _transport(s: Mapping[str, Any]) -> str:
    t = s["transport"]
    return t if isinstance(t, str) else str(t.get("verdict"))


def _estimate(card: Mapping[str, Any]) -> str:
    from metajudge.reports.card_figures import natural_key

    r = _result(card, "estimate")
    if r is None:
        return _why(card, "estimate")
    systems = sorted(r["systems"], key=lambda s: natural_key(s["system"]))
    if len(systems) > LISTED_SYSTEMS:
        return _estimate_summary(systems)
    parts = []
    withheld = (card["parts"]["estimate"] or {}).get("withheld_systems") or {}
    for s in systems:
        if s["system"] in withheld:
            parts.append(f"{s['system']}: no answer ({withheld[s['system']]})")
            continue
        gate = f" (level claim {s['level_claim']}; transport {_transport(s)})"
        parts.append(
            f"{s['system']} {_ci(s['value'], (s['lo'], s['hi']))} vs raw "
            f"{_f(s['judge_mean']['value'])}{gate}"
        )
    return "; ".join(parts)


def _estimate_summary(systems: Sequence[Mapping[str, Any]]) -> str:
    """Many systems in a few words: how many, the range of the calibrated estimates and of the
    raw means, the systems refused and the transport verdicts (each system: the forest plot)."""
    vals = [s["value"] for s in systems if s["value"] is not None]
    raw = [s["judge_mean"]["value"] for s in systems if s["judge_mean"]["value"] is not None]
    refused = [s["system"] for s in systems if s["level_claim"] != "ok"]
    transport = sorted({_transport(s) for s in systems})
    span = f"calibrated {_f(min(vals))} to {_f(max(vals))}" if vals else "no calibrated value"
    return (
        f"{len(systems)} systems: {span} (raw judge means {_f(min(raw, default=None))} to "
        f"{_f(max(raw, default=None))}); level claim refused for "
        + (", ".join(refused) if refused else "none")
        + f"; transport {', '.join(transport)}; each system in the forest plot and the table"
    )


def _binary(card: Mapping[str, Any]) -> bool:
    return card.get("label_kind") == "binary"


def verdict(card: Mapping[str, Any], statistic: str = "pearson") -> list[dict[str, str]]:
    """The card's verdict lines: [{question, answer}], each read from one part's result;
    ``statistic``: the agreement statistic shown."""
    rows = [
        ("May it replace the annotators?", "alt_test", _alt_test(card)),
        ("Agreement with humans", "agreement", _agreement(card, statistic)),
        *([("What does it pass?", "verdicts", _verdicts(card))] if _binary(card) else []),
        ("Where may it be trusted?", "selective", _selective(card)),
        ("How wide are its errors?", "conformal", _conformal(card)),
        ("What are the systems worth?", "estimate", _estimate(card)),
    ]
    return [
        {"question": q, "part": part, "answer": a, "warnings": part_warnings(card, part)}
        for q, part, a in rows
    ]


def card_markdown(card: Mapping[str, Any]) -> str:
    """The card as printed: the verdict, then what each part is (ran or absent, and why)."""
    sig = card["signature"]
    lines = [
        f"# Judge card: {judge_title(card)} on {card['dataset']}",
        "",
        f"Labels: {card['labels']['labelled']} of {card['labels']['records']} records labelled"
        + (" (partial labels)" if card["labels"]["partial"] else "")
        + f"; data sha256 {sig['data_sha256'][:12]}, judge {sig['judge_definition_sha256'][:12]}, "
        f"metajudge {sig['metajudge_version']}",
        "",
        *([f"**Decision:** {card['decision']['sentence']}", ""] if card.get("decision") else []),
        "| question | answer |",
        "|---|---|",
    ]
    lines += [f"| {v['question']} | {v['answer']} |" for v in card["verdict"]]
    warned = [(v["question"], w) for v in card["verdict"] for w in v.get("warnings") or ()]
    lines += ["", *(f"- warning ({q}): {w}" for q, w in warned)] if warned else []
    reqs = card.get("requirements") or []
    lines += ["", *(f"- require {r['require']}: {r['status']} ({r['value']})" for r in reqs)]
    lines += ["", "## Evidence", "", "| part | status | command or reason |", "|---|---|---|"]
    for name, p in card["parts"].items():
        how = f"`{how_run(p)}`" if p["status"] == "ok" else p["reason"]
        lines.append(f"| {TITLES[name]} | {p['status']} | {how} |")
    return "\n".join(lines) + "\n"


def _table(title: str, columns: list[str], rows: list[list[Any]], note: str = "") -> dict:
    return {"title": title, "columns": columns, "rows": rows, "refs": [], "note": note}


def _est(v: Any, lo: Any, hi: Any) -> Any:
    return {"v": v, "lo": lo, "hi": hi} if v is not None else None


def _conformal_table(r: Mapping[str, Any]) -> dict:
    if "width" not in r["methods"][0]:
        cols = ["method", "coverage", "mean set size", "empty", "singleton", "all classes"]
        rows = [
            [m["method"], m["coverage"], m["size"], m["empty"], m["singleton"], m["full"]]
            for m in r["methods"]
        ]
        return _table("Conformal prediction sets", cols, rows)
    bins = [b.get("bin", str(i)) for i, b in enumerate(r["methods"][0].get("by_human", []))]
    cols = ["method", "coverage", "mean width", *(f"coverage, human {b}" for b in bins)]
    rows = [
        [
            m["method"],
            m["coverage"],
            m["width"],
            *(b.get("coverage") for b in m.get("by_human", [])),
        ]
        for m in r["methods"]
    ]
    note = f"target coverage {1 - r['options']['alpha']:.2f}; marginal guarantee, per-bin shown"
    return _table("Conformal intervals: widths and per-bin coverage", cols, rows, note)


def _disagreement_table(r: Mapping[str, Any]) -> dict:
    """The disagreeing items, with the judge's explanation."""
    cols = ["item", "system", "human", "judge", "the judge's explanation", "response"]
    rows = [
        [x["id"], x["system"], x["human"], x["judge"], x["explanation"] or "–", x["response"]]
        for x in r["items"]
    ]
    note = (
        f"{r['disagree']} of {r['judged']} judged items disagree ({r['explained']} with an "
        f"explanation); {r['listed']} listed"
    )
    return _table("Disagreements with the humans", cols, rows, note)


def _evidence_tables(card: Mapping[str, Any]) -> list[dict]:
    from metajudge.reports.card_figures import natural_key

    out = []
    r = _result(card, "disagreements")
    if r is not None:
        out.append(_disagreement_table(r))
    r = _result(card, "conformal")
    if r is not None:
        out.append(_conformal_table(r))
    r = _result(card, "calibration")
    if r is not None:
        b, a = r["before"], r["after"]
        rows = [[k.upper(), b.get(k), a.get(k)] for k in ("mae", "rmse", "brier", "ece")]
        out.append(
            _table(f"Calibration ({r['method']}, held out)", ["measure", "before", "after"], rows)
        )
    r = _result(card, "selective")
    if r is not None:
        (curve,) = list(r["curves"].values())[:1] or [[]]
        rows = [[c[0], c[1]] for c in curve]
        out.append(_table("Agreement of the most confident share", ["coverage", "agreement"], rows))
    r = _result(card, "estimate")
    if r is not None:
        rows = [
            [
                s["system"],
                s["labelled"],
                s["rows"],
                _est(s["value"], s["lo"], s["hi"]),
                _est(
                    s["judge_mean"]["value"], s["judge_mean"].get("lo"), s["judge_mean"].get("hi")
                ),
                s["support"].get("outside_share"),
                _transport(s),
                s["level_claim"],
            ]
            for s in sorted(r["systems"], key=lambda s: natural_key(s["system"]))
        ]
        cols = ["system", "labelled", "rows", "calibrated", "raw judge mean", "outside support"]
        out.append(_table("Calibrated system estimates", [*cols, "transport", "level claim"], rows))
    r = _result(card, "alt_test")
    if r is not None:
        rows = [
            [
                a["annotator"],
                a["n_items"],
                a["llm_win_rate"],
                a["human_win_rate"],
                a["p"],
                a["beaten"],
            ]
            for llm in r["llms"]
            for a in llm["annotators"]
        ]
        cols = ["annotator", "items", "LLM wins", "human wins", "p", "beaten"]
        out.append(_table(f"Alt-Test per annotator (ε = {r['epsilon']:g})", cols, rows))
    return out


def _cost_table(card: Mapping[str, Any]) -> dict:
    r = _result(card, "agreement") or {}
    rows = []
    for m in r.get("metrics", []):
        for col, miss in (m.get("missing") or {}).items():
            if col == card["judge"] or m["name"] == card["judge"]:
                errs = sum((miss.get("errors") or {}).values())
                rows.append(
                    [col, miss.get("responses_total"), miss.get("responses_unscored"), errs]
                )
    note = (
        "released scores: no model calls by this card" if not card["signature"]["backbone"] else ""
    )
    return _table(
        "Parse failures and cost", ["column", "responses", "unscored", "errors"], rows, note
    )


def card_tables(card: Mapping[str, Any]) -> list[dict]:
    """The card's own tables: the verdict, the evidence, parse failures, the absent parts."""
    verdict_rows = [
        [v["question"], v["answer"], "; ".join(v.get("warnings") or ()) or "–"]
        for v in card["verdict"]
    ]
    cols = ["question", "answer", "warnings"]
    tables = [_table(f"Verdict: {judge_title(card)}", cols, verdict_rows)]
    tables += _evidence_tables(card)
    tables.append(_cost_table(card))
    absent = [[TITLES[n], p["reason"]] for n, p in card["parts"].items() if p["status"] != "ok"]
    ran = [
        [TITLES[n], how_run(p), "; ".join(part_warnings(card, n)) or "–"]
        for n, p in card["parts"].items()
        if p["status"] == "ok"
    ]
    tables.append(_table("Parts absent, and why", ["part", "why"], absent))
    tables.append(
        _table(
            "Parts run: the command that prints the same numbers",
            ["part", "command", "warnings"],
            ran,
        )
    )
    return tables


def decision_text(card: Mapping[str, Any]) -> str | None:
    """The card's decision sentence (``card["decision"]``: a sentence, or a mapping whose
    ``sentence`` it is), None where the card has none."""
    d = card.get("decision")
    if isinstance(d, Mapping):
        d = d.get("sentence") or d.get("text")
    return str(d) if d else None


def add_figures(payload: dict[str, Any], card: Mapping[str, Any]) -> None:
    """The card's pictures into the page's payload: the decision first, then the verdict table
    beside the picture that carries the decision (:func:`~metajudge.reports.card_figures.
    lead_figure`), the other pictures (or why there is none) after the tables."""
    from metajudge.reports.card_figures import card_figures, lead_figure

    figures = card_figures(card)
    lead = lead_figure(figures, card)
    payload["decision"] = decision_text(card)
    payload["lead"] = lead
    payload["lead_tables"] = 1
    payload["figures"] = [f for f in figures if f is not lead]


def card_html(
    card: Mapping[str, Any], stage: Path, dataset: Any, page: Mapping[str, Any] | None = None
) -> str:
    """card.html: the decision, the verdict beside the picture that carries it, the evidence,
    the other pictures, then the meta-eval run's tables and its disagreement browser
    (``stage/meta_eval``; ``page``: the payload of that run's report.html, built as it was
    written, else built here). Every picture is inline SVG drawn from card.json."""
    from metajudge.reports.html_page import render_page
    from metajudge.reports.html_run import result_payload

    if page:
        payload = dict(page)
    elif (stage / "meta_eval" / "result.json").is_file():
        payload = result_payload(stage / "meta_eval", None, dataset)
    else:  # no meta-eval (a CJE folder's card): the card's own tables only
        payload = {"tables": [], "signatures": [], "warnings": [], "links": [], "items": []}
        payload |= {"resp": [], "views": [], "compare": [], "protocol": ""}
    payload["kind"] = "card"
    name = judge_title(card)
    payload["title"] = f"Judge card: {name} on {card['dataset']}"
    payload["question"] = (
        f"May {name} be used on {card['dataset']}, where, and what are the systems worth?"
    )
    payload["tables"] = card_tables(card) + list(payload.get("tables", []))
    sig = card["signature"]
    payload["signatures"] = [
        ["data sha256", sig["data_sha256"]],
        ["judge definition sha256", sig["judge_definition_sha256"]],
        ["backbone", str(sig["backbone"])],
        ["metajudge", sig["metajudge_version"]],
        *list(payload.get("signatures", [])),
    ]
    add_figures(payload, card)
    return render_page(payload, [])


def headline(card: Mapping[str, Any], statistic: str = "pearson") -> tuple[str, Any]:
    """The card's agreement figure: (statistic, {v, lo, hi}): accuracy of categorical labels,
    else ``statistic`` (Pearson) of the judge's first cell."""
    r = _result(card, "agreement") or {}
    if r.get("kind") == "categorical":
        for row in r.get("rows", []):
            if row["metric"] == card["judge"]:
                lo, hi = row["ci"]["accuracy"]
                return "accuracy", _est(row["accuracy"], lo, hi)
        return "accuracy", None
    for c in _cells(card)[:1]:
        s = c["stats"][statistic]
        return stat_label(statistic), _est(s["value"], *(s["ci"] or (None, None)))
    return stat_label(statistic), None


def _alt_cell(card: Mapping[str, Any]) -> str:
    """The Alt-Test in words: passes or fails, its winning rate as the share of annotators
    the judge beats."""
    alt = _result(card, "alt_test")
    if alt is None:
        return "absent"
    (llm,) = [x for x in alt["llms"] if x["llm"] == card["judge"]] or alt["llms"][:1]
    n = len(llm["annotators"])
    word = "passes" if llm["passed"] else "fails"
    return f"{word}: beats {llm['winning_rate']:.0%} of {n} annotators"


def _systems_cell(card: Mapping[str, Any]) -> str:
    from metajudge.reports.card_figures import natural_key

    r = _result(card, "estimate")
    if r is None:
        return "absent"
    names = sorted((s["system"] for s in r["systems"]), key=natural_key)
    refused = [s for s in r["systems"] if s["level_claim"] != "ok"]
    span = names[0] if len(names) == 1 else f"{names[0]} … {names[-1]}"
    return f"{len(names)} systems ({span}); level refused for {len(refused)}"


def _board_row(card: Mapping[str, Any]) -> list[Any]:
    stat, est = headline(card)
    sel = _result(card, "selective")
    cfg = sel["configs"][0] if sel else None
    conf = _result(card, "conformal")
    withheld = (card["parts"].get("conformal") or {}).get("withheld")
    best = best_conformal(conf) if conf and not withheld else None
    return [
        judge_title(card),
        decision_text(card) or "–",
        card["dataset"] + (f" / {card['dimension']}" if card.get("dimension") else ""),
        stat,
        est,
        _alt_cell(card),
        cfg.get("coverage_median", cfg["coverage_mean"]) if cfg else None,
        cfg["agreement_mean"] if cfg else None,
        best.get("width") if best else None,
        best.get("size") if best else None,
        _systems_cell(card),
    ]


#: the board's columns, each in one unit
BOARD_COLUMNS = [
    "judge",
    "use it? (decision)",
    "data",
    "statistic",
    "agreement (95% CI)",
    "Alt-Test (passes beating ≥ 50% of the annotators)",
    "selective: median share of items kept (0–1)",
    "selective: agreement on the kept (0–1)",
    "conformal: interval width (label points)",
    "conformal: set size (classes)",
    "system estimates",
]


def _label_tests_table(tests: Mapping[str, Any]) -> dict:
    """McNemar between label judges: accuracies, the discordant counts, p (Holm)."""
    rows = [
        [
            c["metric_a"],
            c["metric_b"],
            c["n"],
            c["value_a"],
            c["value_b"],
            f"{c['only_a_right']} / {c['only_b_right']}",
            c["test"],
            f"{c['p']:.3g}",
            f"{c['p_holm']:.3g}",
        ]
        for c in tests["result"]["comparisons"]
    ]
    cols = ["a", "b", "items", "accuracy a", "accuracy b", "only a right / only b right"]
    cols += ["test", "p", "p (Holm)"]
    return _table("Paired tests between the judges", cols, rows, tests["result"]["answer"])


def _tests_table(tests: Mapping[str, Any]) -> dict:
    if tests.get("status") != "ok":
        return _table("Paired tests between the judges", ["why absent"], [[tests.get("reason")]])
    if "by" in tests:
        return _label_tests_table(tests)
    rows = [
        [
            c["dimension"],
            c["statistic"],
            c["metric_a"],
            c["metric_b"],
            _est(c["diff"], *(c.get("ci") or (None, None))),
            c.get("p_williams_holm"),
            c.get("p_bootstrap_holm"),
            c.get("p_permutation_holm"),
        ]
        for c in tests["result"]["comparisons"]
    ]
    cols = ["dimension", "statistic", "a", "b", "a − b (95% CI)", "p Williams (Holm)"]
    cols += ["p bootstrap (Holm)", "p permutation (Holm)"]
    note = "; ".join(x for x in (tests["result"].get("answer"), tests.get("command")) if x)
    return _table("Paired tests between the judges", cols, rows, note)


def cards_html(
    cards: Sequence[Mapping[str, Any]], links: Sequence[str], tests: Mapping[str, Any]
) -> str:
    """The comparison page: one row per card (the evaluator-leaderboard view, CIs beside each
    figure), the paired tests, and a link to each card."""
    from metajudge.reports.html_page import render_page

    payload = {
        "kind": "cards",
        "title": f"Judge cards: {len(cards)} judges",
        "question": "Which judge may be used, where, and how do they compare?",
        "protocol": "; ".join(
            f"{judge_title(c)}: seed {c['settings']['seed']}, {c['settings']['n_boot']} resamples"
            for c in cards
        ),
        "signatures": [[c["judge"], c["signature"]["judge_definition_sha256"]] for c in cards],
        "decision": (tests.get("result") or {}).get("answer"),  # which judge, and is it significant
        "warnings": [],
        "tables": [
            _table("Judges side by side", BOARD_COLUMNS, [_board_row(c) for c in cards]),
            _tests_table(tests),
        ],
        "links": [{"href": h, "text": f"card of {judge_title(c)}"} for h, c in zip(links, cards)],
        "items": [],
        "resp": [],
        "views": [],
        "compare": [],
    }
    return render_page(payload, [])


def _cell(v: Any) -> str:
    if isinstance(v, dict):
        return _ci(v["v"], (v["lo"], v["hi"]))
    if isinstance(v, float):
        return _f(v)
    return "–" if v is None else str(v)


def board_markdown(cards: Sequence[Mapping[str, Any]], tests: Mapping[str, Any]) -> str:
    """The comparison as printed: one row per card, then the paired tests (or why none)."""
    lines = [f"# Judge cards: {len(cards)} judges", "", "| " + " | ".join(BOARD_COLUMNS) + " |"]
    lines.append("|" + "---|" * len(BOARD_COLUMNS))
    lines += ["| " + " | ".join(_cell(v) for v in _board_row(c)) + " |" for c in cards]
    t = _tests_table(tests)
    said = (tests.get("result") or {}).get("answer")
    lines += ["", f"**Which judge?** {said}"] if said else []
    lines += ["", f"## {t['title']}", "", "| " + " | ".join(t["columns"]) + " |"]
    lines.append("|" + "---|" * len(t["columns"]))
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in t["rows"]]
    return "\n".join(lines) + "\n"
