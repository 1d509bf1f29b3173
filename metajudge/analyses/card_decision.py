"""A judge card's decision and gate: measures read from its parts, one sentence built from
stated rules, and ``--require EXPR`` checked against the measures.

:func:`measures` reads the figures a requirement may name from a card's parts (a part absent or
withheld gives no measure). :func:`decide` walks :data:`DECISION_RULES` in order; the first that holds
gives the sentence; every rule and its outcome is kept (``card.json``: ``decision``).
:func:`check_requirements` evaluates ``NAME OP VALUE`` (``agreement>=0.8``, ``alt-test=pass``,
``kappa.lower>=0.6``): ``pass``, ``fail``, or ``unmeasurable`` (the card has no such measure on
this data). An unknown name is refused before anything runs (:func:`parse_requirement`).
Nothing is rendered.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metajudge.errors import InputError

#: what a requirement may name, and what it is
MEASURES = {
    "agreement": "the headline agreement: accuracy of verdicts, else the correlation shown",
    "agreement.lower": "its CI's lower bound",
    "agreement.upper": "its CI's upper bound",
    "kappa": "Cohen's κ of verdicts",
    "kappa.lower": "its CI's lower bound",
    "accuracy": "accuracy of verdicts",
    "accuracy.lower": "its CI's lower bound",
    "tpr": "true-positive rate of a binary judge",
    "tpr.lower": "its Wilson lower bound",
    "tnr": "true-negative rate of a binary judge",
    "tnr.lower": "its Wilson lower bound",
    "alt-test": "pass or fail",
    "selective.kept": "the median share kept at the card's risk",
    "selective.agreement": "the agreement on the kept items",
    "conformal.width": "the narrowest covering conformal interval's mean width",
    "conformal.size": "the narrowest covering prediction set's mean size",
}
OPS: Mapping[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "!=": operator.ne,
    "==": operator.eq,
    ">": operator.gt,
    "<": operator.lt,
    "=": operator.eq,
}
_EXPR = re.compile(r"^\s*([a-z][a-z0-9_.-]*)\s*(>=|<=|!=|==|>|<|=)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Requirement:
    text: str
    name: str
    op: str
    value: float | str


def parse_requirement(text: str) -> Requirement:
    """``NAME OP VALUE`` (module docstring); an unknown name or a bad form is an InputError."""
    m = _EXPR.match(text)
    if not m:
        raise InputError(
            f"expected NAME OP VALUE (e.g. agreement>=0.8), got {text!r}", field="--require"
        )
    name, op, raw = m.groups()
    if name not in MEASURES:
        known = ", ".join(MEASURES)
        raise InputError(f"unknown measure {name!r} (known: {known})", field="--require")
    if name == "alt-test":
        if raw not in ("pass", "fail") or op not in ("=", "==", "!="):
            raise InputError("alt-test takes =pass, =fail or !=pass", field="--require")
        return Requirement(text, name, op, raw)
    try:
        return Requirement(text, name, op, float(raw))
    except ValueError:
        raise InputError(f"{name} compares with a number, got {raw!r}", field="--require") from None


def _ok(card: Mapping[str, Any], part: str) -> Mapping[str, Any] | None:
    p = card["parts"].get(part) or {}
    if p.get("status") != "ok" or p.get("withheld"):
        return None
    return p.get("result")


def _put(out: dict[str, Any], name: str, v: Any, ci: Sequence[Any] | None = None) -> None:
    if isinstance(v, int | float) and math.isfinite(v):
        out[name] = float(v)
        if ci and all(isinstance(x, int | float) and math.isfinite(x) for x in ci):
            out[f"{name}.lower"], out[f"{name}.upper"] = float(ci[0]), float(ci[1])


def measures(card: Mapping[str, Any], headline: tuple[Any, Any]) -> dict[str, Any]:
    """The card's measures (:data:`MEASURES`); ``headline``: (statistic, {v, lo, hi}) of the
    agreement as the card shows it."""
    from metajudge.analyses.card_needs import best_conformal

    out: dict[str, Any] = {}
    est = headline[1]
    if _ok(card, "agreement") is not None and est:
        _put(out, "agreement", est["v"], (est["lo"], est["hi"]))
    r = _ok(card, "agreement") or {}
    for row in [x for x in r.get("rows", []) if x["metric"] == card["judge"]][:1]:
        _put(out, "accuracy", row["accuracy"], row["ci"]["accuracy"])
        _put(out, "kappa", row["cohen_kappa"], row["ci"]["cohen_kappa"])
    v = _ok(card, "verdicts")
    if v:
        _put(out, "tpr", v["tpr"]["value"], (v["tpr"]["lo"], v["tpr"]["hi"]))
        _put(out, "tnr", v["tnr"]["value"], (v["tnr"]["lo"], v["tnr"]["hi"]))
    a = _ok(card, "alt_test")
    if a:
        llm = [x for x in a["llms"] if x["llm"] == card["judge"]] or a["llms"][:1]
        out["alt-test"] = "pass" if llm[0]["passed"] else "fail"
    s = _ok(card, "selective")
    if s:
        c = s["configs"][0]
        _put(out, "selective.kept", c.get("coverage_median", c["coverage_mean"]))
        _put(out, "selective.agreement", c["agreement_mean"])
    c = _ok(card, "conformal")
    best = best_conformal(c) if c else None
    if best:
        _put(
            out,
            "conformal.width" if "width" in best else "conformal.size",
            best.get("width", best.get("size")),
        )
    return {k: v for k, v in out.items() if k in MEASURES}


def check_requirements(
    reqs: Sequence[Requirement], have: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Each requirement's outcome against the card's measures ``have``."""
    out = []
    for q in reqs:
        v = have.get(q.name)
        if v is None:
            status = "unmeasurable"
        else:
            status = "pass" if OPS[q.op](v, q.value) else "fail"
        out.append({"require": q.text, "measure": q.name, "value": v, "status": status})
    return out


def exit_code(outcomes: Sequence[Mapping[str, Any]]) -> int:
    """2 when a requirement cannot be measured, else 3 when one fails, else 0."""
    states = {o["status"] for o in outcomes}
    return 2 if "unmeasurable" in states else 3 if "fail" in states else 0


#: the rules, in order: the first that holds gives the card's sentence
DECISION_RULES = (
    "no-agreement: the agreement with humans cannot be measured -> no decision",
    "alt-test-pass: the Alt-Test passes -> use it in place of the annotators",
    "selective-keeps: selective judging keeps items at the risk -> use with escalation",
    "accepts-wrong: a binary judge accepts >= 20% of wrong answers -> use with care",
    "alt-test-fail: the Alt-Test fails -> do not replace the annotators",
    "default: none of the above -> a signal beside human labels",
)
ACCEPTS_WRONG = 0.2


def _sentences(card: Mapping[str, Any], have: Mapping[str, Any]) -> list[str | None]:
    """Each rule's sentence where it holds (None where not), in :data:`DECISION_RULES` order."""
    sel, ver = _ok(card, "selective"), _ok(card, "verdicts")
    a = card["parts"].get("agreement") or {}
    why = a.get("withheld") or a.get("reason") or "no agreement"
    out: list[str | None] = [None if "agreement" in have else f"No decision: {why}"]
    out.append(
        "Use it in place of the annotators: the Alt-Test passes"
        if have.get("alt-test") == "pass"
        else None
    )
    kept = have.get("selective.kept")
    if sel and kept:
        c = sel["configs"][0]
        out.append(
            f"Use with escalation: keep verdicts with confidence >= {c['threshold_mean'][0]:.4g} — "
            f"about {kept:.0%} of the items, agreement there >= {1 - sel['alpha']:.2f} with "
            f"probability {1 - sel['delta']:.2f}; send the rest to humans"
        )
    else:
        out.append(None)
    aw = (ver or {}).get("accepts_wrong", {}).get("value")
    out.append(
        f"Use with care: it accepts {aw:.0%} of the {ver['negative']} answers; report pass rates "
        "corrected for its errors (Rogan–Gladen), not its own"
        if ver and aw is not None and aw >= ACCEPTS_WRONG
        else None
    )
    out.append(
        "Do not replace the annotators: the Alt-Test fails; use it as a signal beside human labels"
        if have.get("alt-test") == "fail"
        else None
    )
    lo, hi = have.get("agreement.lower"), have.get("agreement.upper")
    ci = f" [{lo:.3f}, {hi:.3f}]" if lo is not None else ""
    out.append(
        f"Use as a signal beside human labels: agreement {have.get('agreement', math.nan):.3f}"
        f"{ci}; no rule here grants replacing the annotators"
    )
    return out


def _refused(card: Mapping[str, Any]) -> str:
    e = _ok(card, "estimate")
    bad = [s for s in (e or {}).get("systems", []) if s["level_claim"] != "ok"]
    if not bad:
        return ""
    names = ", ".join(f"{s['system']} ({s['level_claim'].removeprefix('refused: ')})" for s in bad)
    return f"; its system levels are refused for {names}"


def decide(card: Mapping[str, Any], have: Mapping[str, Any]) -> dict[str, Any]:
    """The card's sentence (the first rule of :data:`DECISION_RULES` that holds) and every rule's
    outcome."""
    said = _sentences(card, have)
    first = next(i for i, s in enumerate(said) if s)
    rules = [{"rule": r, "holds": s is not None} for r, s in zip(DECISION_RULES, said, strict=True)]
    return {
        "sentence": f"{said[first]}{_refused(card)}.",
        "rule": DECISION_RULES[first],
        "rules": rules,
    }
