"""Retrieval metrics: hand-computed cases (T2-RAGBench MRR@3/R@1/R@3, MT-RAIG P/R/F1@k)."""

from __future__ import annotations

import pytest

from metajudge.errors import InputError
from metajudge.metrics.retrieval import (
    f1_at_k,
    hit_at_k,
    mrr_at_k,
    precision_at_k,
    recall_at_k,
    retrieval_report,
)

RANKED = ["d3", "d1", "d7", "d2", "d9"]
GOLD = {"d1", "d2"}


def test_hand_computed_single_query() -> None:
    # first relevant (d1) at rank 2
    assert mrr_at_k(GOLD, RANKED, k=3) == pytest.approx(1 / 2)
    assert mrr_at_k(GOLD, RANKED, k=1) == 0.0
    assert mrr_at_k({"d2"}, RANKED, k=3) == 0.0  # rank 4 > 3
    assert mrr_at_k({"d2"}, RANKED, k=5) == pytest.approx(1 / 4)
    assert recall_at_k(GOLD, RANKED, k=1) == 0.0
    assert recall_at_k(GOLD, RANKED, k=3) == pytest.approx(1 / 2)
    assert recall_at_k(GOLD, RANKED, k=5) == pytest.approx(1.0)
    assert precision_at_k(GOLD, RANKED, k=2) == pytest.approx(1 / 2)
    assert precision_at_k(GOLD, RANKED, k=5) == pytest.approx(2 / 5)
    assert precision_at_k(GOLD, RANKED, k=10) == pytest.approx(
        2 / 10
    )  # denominator k, not len(ranked)
    # P@3 = 1/3, R@3 = 1/2 -> F1 = 2*(1/6)/(5/6) = 0.4
    assert f1_at_k(GOLD, RANKED, k=3) == pytest.approx(0.4)
    assert f1_at_k(GOLD, RANKED, k=1) == 0.0
    assert hit_at_k(GOLD, RANKED, k=1) == 0.0 and hit_at_k(GOLD, RANKED, k=2) == 1.0


def test_duplicates_keep_first_rank() -> None:
    assert precision_at_k({"a"}, ["a", "a", "b"], k=2) == pytest.approx(1 / 2)
    assert mrr_at_k({"b"}, ["a", "a", "b"], k=2) == pytest.approx(1 / 2)


def test_t2ragbench_recipe_equivalence() -> None:
    """score_mrr in the T2-RAGBench card takes the rank of the relevant document."""

    def score_mrr(ranks: list[int], k: int = 3) -> float:
        return sum(1.0 / r if r <= k else 0.0 for r in ranks) / len(ranks)

    golds = [{"g"}] * 4
    rankeds = [["g", "x", "y"], ["x", "g", "y"], ["x", "y", "g"], ["x", "y", "z", "g"]]
    rep = retrieval_report(golds, rankeds, ks=(1, 3))
    assert rep["mrr@3"] == pytest.approx(score_mrr([1, 2, 3, 4]))
    assert rep["recall@1"] == pytest.approx(1 / 4) and rep["recall@3"] == pytest.approx(3 / 4)
    assert rep["n"] == 4


def test_report_mtraig_ks() -> None:
    golds = [{"a", "b"}, {"c"}]
    rankeds = [["a", "x", "b"] + [f"n{i}" for i in range(20)], ["x"] * 1 + ["c"]]
    rep = retrieval_report(golds, rankeds, ks=(2, 5, 10, 20))
    # query 1: P@2 = 1/2, query 2: P@2 = 1/2 -> 0.5 ; R@2 = (1/2 + 1)/2
    assert rep["precision@2"] == pytest.approx(0.5)
    assert rep["recall@2"] == pytest.approx(0.75)
    assert rep["precision@20"] == pytest.approx((2 / 20 + 1 / 20) / 2)
    assert set(rep) >= {
        f"{m}@{k}" for m in ("mrr", "recall", "precision", "f1", "hit") for k in (2, 5, 10, 20)
    }


def test_bad_input() -> None:
    with pytest.raises(InputError, match="empty"):
        recall_at_k(set(), ["a"], k=1)
    with pytest.raises(InputError, match="positive integer"):
        mrr_at_k({"a"}, ["a"], k=0)
    with pytest.raises(InputError, match="positive integer"):
        mrr_at_k({"a"}, ["a"], k=True)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="single string"):
        mrr_at_k("abc", ["a"], k=1)
    with pytest.raises(InputError, match="sequence"):
        mrr_at_k({"a"}, "abc", k=1)
    with pytest.raises(InputError, match="2 gold sets but 1 rankings"):
        retrieval_report([{"a"}, {"b"}], [["a"]])
    with pytest.raises(InputError, match="query q2"):
        retrieval_report([{"a"}, set()], [["a"], ["b"]], ids=["q1", "q2"])
    with pytest.raises(InputError, match="unknown retrieval metric"):
        retrieval_report([{"a"}], [["a"]], metrics=("ndcg",))


def test_f1_reported_both_as_query_mean_and_corpus_form() -> None:
    """Issue 11 defect 7: MT-RAIG Table 19 is consistent with 2·mean(P)·mean(R)/(mean(P)+mean(R))."""
    golds = [{"a"}, {"b", "c", "d"}]
    rankeds = [["a", "x"], ["b", "y"]]
    rep = retrieval_report(golds, rankeds, ks=(2,))
    p, r = rep["precision@2"], rep["recall@2"]  # (0.5 + 0.5) / 2, (1 + 1/3) / 2
    assert rep["f1@2"] == pytest.approx((2 / 3 + 0.4) / 2)  # per-query mean
    assert rep["f1_corpus@2"] == pytest.approx(2 * p * r / (p + r))
    assert rep["f1_corpus@2"] != pytest.approx(rep["f1@2"])
    only = retrieval_report(golds, rankeds, ks=(2,), metrics=("f1",))
    assert set(only) == {
        "f1@2",
        "f1_corpus@2",
        "n",
        "duplicate_ids",
        "queries_with_duplicates",
        "signature",
    }


def test_duplicate_ids_are_deduplicated_said_and_counted() -> None:
    """Issue 25 item 10: a repeated retrieved id takes no rank and counts once; the report's
    signature says so and counts the repeats."""
    golds = [{"b"}, {"a"}, {"c"}]
    rankeds = [["a", "a", "b"], ["a", "a", "a"], ["c", "x"]]
    rep = retrieval_report(golds, rankeds, ks=(2,))
    # query 1: b is second after the repeat is dropped (MRR 1/2, not 0); query 2: a counts once
    assert rep["mrr@2"] == pytest.approx((1 / 2 + 1 + 1) / 3)
    assert rep["precision@2"] == pytest.approx((1 / 2 + 1 / 2 + 1 / 2) / 3)
    assert rep["duplicate_ids"] == 3 and rep["queries_with_duplicates"] == 2
    assert "dedup:first" in rep["signature"]
