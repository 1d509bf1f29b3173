"""Judges end-to-end against the real embedded llama.cpp server (slow; needs llama-cpp-python)."""

from __future__ import annotations

import pytest

from tests.conftest import Load

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def _llama() -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make llama)")


def test_judges_on_a_real_item_and_cached_rerun(load: Load) -> None:
    _llama()
    from metajudge.metrics.base import ScoreItem, iter_responses
    from metajudge.metrics.registry import get_metric

    ds = load("lftqa_mitigation_pradhumant")
    refs = list(iter_responses(ds.records[:1]))
    items = [ScoreItem(r.key, r.response, r.reference, r.input) for r in refs]
    first: dict[str, list[float | None]] = {}
    for name, lo, hi in (
        ("geval_faithfulness", 1.0, 5.0),
        ("mtraig_faithfulness", 0.0, 1.0),
        ("mtraig_completeness", 0.0, 1.0),
    ):
        m = get_metric(name, backbone="smollm2-135m")
        try:
            res = m.score_batch(items)
            cost = m.summary["cost"]
        finally:
            m.close()
        assert cost["calls"] >= 1 and cost["errors"] == 0
        for (
            r
        ) in res:  # a real number in range, or a counted failure with its reason — never a silent 0
            assert (r.score is not None and lo <= r.score <= hi) or (r.score is None and r.error)
        first[name] = [r.score for r in res]
        m2 = get_metric(name, backbone="smollm2-135m")
        try:
            again = m2.score_batch(items)
            assert m2.summary["cost"]["calls"] == 0  # served from the cache
        finally:
            m2.close()
        assert [r.score for r in again] == first[name]


def test_equivalence_on_gemma_base_model() -> None:
    _llama()
    from metajudge.data.formats import Input
    from metajudge.metrics.base import ScoreItem
    from metajudge.metrics.judges.equivalence import AnswerEquivalence

    m = AnswerEquivalence(backbone="gemma3-270m", fast_path=False)
    try:
        [r] = m.score_batch(
            [
                ScoreItem(
                    "1",
                    "Growth was 0.125.",
                    "The growth rate was 12.5%.",
                    Input("What was the growth rate?"),
                )
            ]
        )
    finally:
        m.close()
    assert m.variant == "small"
    assert r.score in (0.0, 1.0) or (r.score is None and r.error)
