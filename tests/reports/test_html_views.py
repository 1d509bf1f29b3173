"""The disagreement browser's item views (reports/html_run.py), built in bulk: per-record values
as the one-at-a-time definitions give them."""

from __future__ import annotations

import numpy as np

from metajudge.data.formats import Input, LikertRecord, PairwiseRecord, Response
from metajudge.reports.html_run import Items, likert_view, pair_view

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
