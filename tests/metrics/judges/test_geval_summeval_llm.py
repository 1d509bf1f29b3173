"""G-Eval's SummEval dimensions against the real embedded llama.cpp server (slow)."""

from __future__ import annotations

import pytest

from tests.conftest import Load

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def test_four_dimensions_score_two_summaries(load: Load) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make llama)")
    from metajudge.metrics.base import ScoreItem, iter_responses
    from metajudge.metrics.registry import expand_metrics, get_metric

    ds = load("summeval_ppairs")
    refs = list(iter_responses(ds.records[:2]))
    items = [ScoreItem(r.key, r.response, r.reference, r.input) for r in refs]
    for name in expand_metrics(["geval_summeval"]):
        m = get_metric(name, backbone="smollm2-135m")
        try:
            res = m.score_batch(items)
            summary = m.summary
        finally:
            m.close()
        assert summary["cost"]["calls"] >= 1 and summary["cost"]["errors"] == 0
        hi = 3.0 if name == "geval_fluency" else 5.0
        for r in res:  # a score on the dimension's scale, or a counted failure — never a silent 0
            assert (r.score is not None and 1.0 <= r.score <= hi) or (r.score is None and r.error)
        assert summary["items_scored"] + summary["items_failed"] == len(items) == 2
