"""The disagreement browser's item views (reports/html_items.py), built in bulk: per-record values
as the one-at-a-time definitions give them."""

from __future__ import annotations

import itertools

import numpy as np

from metajudge.data.formats import Input, LikertRecord, PairwiseRecord, Response
from metajudge.reports.html_items import Items, likert_view, pair_view, shown_units

INP = Input(question="q")


def test_pair_view_values_per_pair() -> None:
    recs = [
        PairwiseRecord("p1", INP, Response("x", "a"), Response("y", "b"), {"o": (1.0, None, 2.0)}),
        PairwiseRecord("p2", INP, Response("x", "a"), Response("y", "b"), {"o": (-1.0, 1.0)}),
        PairwiseRecord("p3", INP, Response("x", "a"), Response("y", "b"), {"o": (None,)}),
    ]
    scores = {"p1::a": 0.2, "p1::b": 0.7, "p2::a": 0.9, "p2::b": 0.1, "p3::a": 0.5}
    items = Items()
    rows = {r["i"]: r for r in pair_view("m", recs, "o", scores, items=items, half_width=2)["rows"]}
    assert (rows[0]["h"], rows[0]["l"], rows[0]["w"], rows[0]["s"]) == (1.5, [1.0, None, 2.0], 0, 0)
    assert (rows[1]["h"], rows[1]["w"], rows[1]["s"]) == (0.0, 0, 1)  # tie in mean, signs split
    assert rows[2]["m"] is None and rows[2]["h"] is None and rows[2]["g"] is None  # no b score
    assert abs(rows[0]["m"] - 0.5) < 1e-12 and abs(rows[1]["m"] + 0.8) < 1e-12
    assert [rows[i]["r"] for i in range(3)] == [[0, 1], [2, 3], [4, 5]]
    items.attach_scores([{"key": "p1::b", "metric": "m", "score": float("nan")}])
    assert items.resp[1]["sc"] == {"m": None}  # a non-finite score is shown as none


def test_likert_view_keeps_a_zero_score() -> None:
    recs = [
        LikertRecord("i1", INP, "s1", "r", {"o": (1.0, 2.0, 3.0)}),
        LikertRecord("i1", INP, "s2", "r", {"o": (5.0, 5.0)}),
        LikertRecord("i2", INP, "s1", "r", {"o": (1.0, 5.0)}),
    ]
    scores = {"i1::s1": 0.0, "i1::s2": 1.0, "i2::s1": 0.5}  # BLEU 0 is a score, not a gap
    rows = likert_view("m", recs, "o", scores, items=Items(), lo=1.0, hi=5.0)["rows"]
    by = {r["i"] * 10 + r["r"][0]: r for r in rows}
    r0 = by[0]
    assert (r0["m"], r0["n"], r0["h"], r0["g"], r0["w"], r0["s"]) == (
        0.0,
        1.0,
        2.0,
        1.0,
        0,
        1,
    )  # 1..3 spans half of 1..5
    assert (by[1]["n"], by[1]["g"]) == (5.0, 0.0)
    assert (by[12]["n"], by[12]["h"], by[12]["s"]) == (3.0, 3.0, 1)  # 1 and 5: split raters
    assert np.isclose(by[12]["g"], 0.0)


def _pairs(n: int) -> tuple[list[PairwiseRecord], dict[str, float]]:
    """``n`` seeded pairs; every fifth one repeats the one before (same scores and labels: a tie)."""
    rng = np.random.default_rng(7)
    recs, scores = [], {}
    for i in range(n):
        src = i - 1 if i % 5 == 4 else i
        lab = (float(rng.integers(-2, 3)), float(rng.integers(-2, 3)))
        recs.append(PairwiseRecord(f"p{i}", INP, Response("x", "a"), Response("y", "b"), {}))
        if src == i:
            scores[f"p{i}::a"], scores[f"p{i}::b"] = float(rng.random()), float(rng.random())
        else:
            lab = tuple(recs[src].labels["o"])
            scores[f"p{i}::a"], scores[f"p{i}::b"] = scores[f"p{src}::a"], scores[f"p{src}::b"]
        recs[-1].labels["o"] = lab
    return recs, scores


def _by_id(view: dict, items: Items) -> list[tuple]:
    """A view's rows with the record id in place of the (page-specific) item/response indices."""
    return [
        (items.items[r["i"]]["id"], r["m"], r["n"], r["h"], r["g"], r["w"], r["s"])
        for r in view["rows"]
    ]


def test_a_view_larger_than_the_cap_shows_the_largest_gaps() -> None:
    """50 pairs, cap 12: exactly the first 12 of the uncapped ranking (largest gap first, tied
    pairs in record order), only their inputs and responses stored, and the cut recorded."""
    recs, scores = _pairs(50)
    full_items, items = Items(), Items()
    full = pair_view("m", recs, "o", scores, items=full_items, half_width=2)
    cut = pair_view("m", recs, "o", scores, items=items, half_width=2, cap=12)
    assert "cut" not in full and "total" not in full and len(full["rows"]) == 50
    assert _by_id(cut, items) == _by_id(full, full_items)[:12]
    gaps = [r["g"] for r in full["rows"]]
    assert gaps == sorted(gaps, reverse=True)  # no pair lacks a gap here
    assert min(r["g"] for r in cut["rows"]) >= max(gaps[12:])
    ties = [(a[0], b[0]) for a, b in itertools.pairwise(_by_id(full, full_items)) if a[1:] == b[1:]]
    assert ties and all(int(a[1:]) < int(b[1:]) for a, b in ties)  # ties in record order
    shown = {x[0] for x in _by_id(cut, items)}
    assert [it["id"] for it in items.items] == [r.id for r in recs if r.id in shown]
    assert len(items.resp) == 24 and (cut["total"], cut["cap"]) == (50, 12)
    assert cut["cut"].startswith("showing 12 of 50 pairs: the 12 with the largest gap")


def test_a_cap_sorts_only_the_units_it_can_show() -> None:
    """Gaps with many ties at the cut and NaNs (no gap: last): every cap gives the first
    ``cap`` units of the full ranking, largest gap first and ties in record order."""
    g = np.random.default_rng(3).integers(0, 4, 400).astype(float)
    g[::7] = np.nan
    full = np.argsort(-np.where(np.isfinite(g), g, -1.0), kind="stable")
    assert list(shown_units(g, None)) == list(full) == list(shown_units(g, 0))
    for cap in (1, 2, 57, 58, 100, 399, 400, 1000):
        assert list(shown_units(g, cap)) == list(full[:cap]), cap
    assert list(shown_units(np.full(5, np.nan), 2)) == [0, 1]


def test_a_capped_likert_view_and_a_cap_the_view_fits() -> None:
    recs = [LikertRecord(f"i{k}", INP, f"s{k}", "r", {"o": (float(k % 5 + 1),)}) for k in range(30)]
    scores = {f"i{k}::s{k}": float((k * 7) % 11) for k in range(30)}
    full_items, items = Items(), Items()
    full = likert_view("m", recs, "o", scores, items=full_items, lo=1.0, hi=5.0)
    cut = likert_view("m", recs, "o", scores, items=items, lo=1.0, hi=5.0, cap=5)
    assert _by_id(cut, items) == _by_id(full, full_items)[:5] and len(items.resp) == 5
    assert cut["cut"].startswith("showing 5 of 30 responses") and cut["total"] == 30
    same = likert_view("m", recs, "o", scores, items=Items(), lo=1.0, hi=5.0, cap=30)
    assert same == full  # a cap the view fits changes nothing


def test_the_command_line_states_the_browser_cap() -> None:
    """``--browser-cap``'s help names the default the page uses (the CLI imports no numpy)."""
    from metajudge.cli import build_parser
    from metajudge.cli.grammar import parser_at
    from metajudge.reports.html_items import BROWSER_CAP

    for cmd in ("meta-eval", "report render"):
        sub = parser_at(build_parser(), cmd)
        (act,) = [a for a in sub._actions if a.dest == "browser_cap"]
        assert f"default {BROWSER_CAP}:" in act.help and act.default is None
