"""MuDABench aggregates from per-question verdicts (final, process RAG / cell-wise, full)."""

from __future__ import annotations

import pytest

from metajudge.errors import InputError
from metajudge.metrics.mudabench import (
    FactVerdict,
    QuestionVerdict,
    aggregate,
    cell_counts,
    question_scores,
)


def F(*statuses: str) -> tuple[FactVerdict, ...]:
    return tuple(FactVerdict(f"fact{i}", s) for i, s in enumerate(statuses))  # type: ignore[arg-type]


def test_hand_computed_aggregate() -> None:
    vs = [
        QuestionVerdict("q1", 1, F("covered", "covered")),  # C=1, E=0, P=1, full=1
        QuestionVerdict(
            "q2", 1, F("covered", "missing", "wrong", "covered")
        ),  # C=1/2, E=1/2, P=1/2
        QuestionVerdict("q3", 0, F("covered", "covered")),  # P=1 but T=0
        QuestionVerdict(
            "q4", 1, F("covered", "covered", "covered", "covered"), extra_wrong=1
        ),  # C=1, E=1/4 -> P=3/4
    ]
    r = aggregate(vs)
    assert r["n"] == 4
    assert r["final_accuracy"] == pytest.approx(3 / 4)
    assert r["process_accuracy"] == pytest.approx((1 + 0.5 + 1 + 0.75) / 4)
    assert r["full_accuracy"] == pytest.approx(1 / 4)
    assert r["process_accuracy_cellwise"] is None and r["full_accuracy_cellwise"] is None
    q4 = question_scores(vs[3])
    assert q4 == {
        "final": 1.0,
        "coverage": 1.0,
        "error": 0.25,
        "process": 0.75,
        "process_cellwise": None,
    }


def test_error_share_is_capped_at_one() -> None:
    v = QuestionVerdict("q", 1, F("missing"), extra_wrong=3)
    assert question_scores(v)["error"] == 1.0 and question_scores(v)["process"] == 0.0


def test_cellwise_variant() -> None:
    gold = [
        {"ticker": "AAA", "year": 2021, "revenue": "1,234", "ceo": "Ann Lee"},
        {"ticker": "BBB", "year": 2021, "revenue": "7.5", "ceo": "Bo Chen"},
        {"ticker": "CCC", "year": 2021, "revenue": "3", "ceo": "Cy Diaz"},
    ]
    pred = [
        {"ticker": "aaa", "year": "2021", "revenue": "1234.0", "ceo": " ann  LEE "},  # both match
        {"ticker": "BBB", "year": 2021, "revenue": "7.6", "ceo": "Bo Chen"},  # 1 of 2
        {
            "ticker": "DDD",
            "year": 2021,
            "revenue": "3",
            "ceo": "Cy Diaz",
        },  # not aligned: CCC gets 0
    ]
    c, t = cell_counts(gold, pred, key_columns=["ticker", "year"])
    assert (c, t) == (3, 6)
    vs = [
        QuestionVerdict("q1", 1, cells_correct=c, cells_total=t),
        QuestionVerdict("q2", 1, cells_correct=4, cells_total=4),
    ]
    r = aggregate(vs)
    assert r["process_accuracy_cellwise"] == pytest.approx((0.5 + 1) / 2)
    assert r["full_accuracy_cellwise"] == pytest.approx(1 / 2)
    assert r["process_accuracy"] is None and r["full_accuracy"] is None
    with pytest.raises(InputError, match="lacks key"):
        cell_counts(gold, [{"ticker": "AAA"}], key_columns=["ticker", "year"])
    with pytest.raises(InputError, match="repeats key"):
        cell_counts(gold + gold[:1], pred, key_columns=["ticker", "year"])


def test_round_trip_dict() -> None:
    v = QuestionVerdict(
        "q1", 1, F("covered", "wrong"), extra_wrong=2, cells_correct=1, cells_total=3
    )
    assert QuestionVerdict.from_dict(v.to_dict()) == v


def test_bad_verdicts() -> None:
    with pytest.raises(InputError, match="final must be 0 or 1"):
        aggregate([QuestionVerdict("q", 2, F("covered"))])
    with pytest.raises(InputError, match="final must be 0 or 1"):
        aggregate([QuestionVerdict("q", 0.5, F("covered"))])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="status"):
        aggregate([QuestionVerdict("q", 1, (FactVerdict("x", "half"),))])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="duplicate question id"):
        aggregate([QuestionVerdict("q", 1, F("covered")), QuestionVerdict("q", 1, F("covered"))])
    with pytest.raises(InputError, match="cannot mix"):
        aggregate([QuestionVerdict("q1", 1, F("covered")), QuestionVerdict("q2", 1)])
    with pytest.raises(InputError, match="no verdicts"):
        aggregate([])
    with pytest.raises(InputError, match="cells_correct"):
        aggregate([QuestionVerdict("q", 1, cells_correct=5, cells_total=3)])
    with pytest.raises(InputError, match="both"):
        aggregate([QuestionVerdict("q", 1, cells_correct=1)])


def test_unparsed_verdicts_stay_in_q_as_not_correct() -> None:
    """Issue 25 item 3: 3 predictions, 1 garbled final verdict -> 2/3 (the card's 1/|Q|), not 1.0."""
    vs = [
        QuestionVerdict("q1", 1, F("covered")),
        QuestionVerdict("q2", 1, F("covered")),
        QuestionVerdict("q3", 0, F("covered"), unparsed=("final",)),
    ]
    r = aggregate(vs)
    assert r["n"] == 3 and r["final_accuracy"] == pytest.approx(2 / 3)
    assert (r["unparsed_final"], r["unparsed_process"], r["unparsed_any"]) == (1, 0, 1)
    assert r["full_accuracy"] == pytest.approx(2 / 3) and r["process_accuracy"] == 1.0
    r = aggregate([vs[0], QuestionVerdict("q2", 1, (), unparsed=("facts",))])
    assert r["process_accuracy"] == 0.5 and r["full_accuracy"] == 0.5 and r["unparsed_process"] == 1
    assert question_scores(QuestionVerdict("q", 1, (), unparsed=("facts",)))["process"] == 0.0
    with pytest.raises(InputError, match="counts 0"):
        aggregate([QuestionVerdict("q", 1, F("covered"), unparsed=("final",))])


def test_a_hallucinated_fact_lowers_process_accuracy() -> None:
    """min(C, 1 - E) with E counting an extra wrong fact: 2 gold facts covered + 1 hallucinated."""
    r = aggregate([QuestionVerdict("q", 1, F("covered", "covered"), extra_wrong=1)])
    assert r["process_accuracy"] == 0.5 and r["full_accuracy"] == 0.0
    assert aggregate([QuestionVerdict("q", 1, F("covered", "covered"))])["process_accuracy"] == 1.0
