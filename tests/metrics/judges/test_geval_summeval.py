"""G-Eval on SummEval's four dimensions (Liu et al. 2023): prompts, form filling, the family, the
summary-level protocol and the paper's Table 1 beside ours. A scripted backend stands in for
the model (test_judges_metrics.py); the real server is exercised in test_geval_summeval_llm.py.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metajudge.analyses.metric_vs_human.protocol import Protocol
from metajudge.backends.base import Choice, Request, TokenLogprob
from metajudge.data.formats import Input
from metajudge.metrics.base import ScoreItem
from metajudge.metrics.judges.geval import SUMMARY_DIMENSIONS, GEval
from metajudge.metrics.judges.parsers.ratings import parse_score
from metajudge.metrics.judges.prompts import load_prompt
from metajudge.metrics.registry import expand_metrics, family_row, get_metric, metric_info
from tests.conftest import Load
from tests.metrics.judges.test_metrics import ScriptedBackend, text_of

ARTICLE = "The council voted on Monday to build a bridge. Work starts in May."
INP = Input("Summarize the news article.", context=ARTICLE)
DIMS = ("coherence", "consistency", "fluency", "relevance")


def summary(key: str, text: str | None = "The council approved a bridge.") -> ScoreItem:
    return ScoreItem(key, text, None, INP)


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("variant", ["paper", "small"])
def test_prompt_renders_each_dimension(dim: str, variant: str) -> None:
    p = load_prompt(f"geval_{dim}", variant)
    want = ("summary",) if dim == "fluency" else ("document", "summary")
    assert p.placeholders() == want
    text = p.render(document=ARTICLE, summary="SUMMARY-X")
    assert "SUMMARY-X" in text and (dim == "fluency") == (ARTICLE not in text)
    top = 3 if dim == "fluency" else 5
    if variant == "paper":  # G-Eval form: criteria, steps, form filling on the dimension's scale
        assert "Evaluation Criteria:" in text and "Evaluation Steps:" in text
        assert text.endswith(f"- {dim.capitalize()} (1-{top}):")
        assert "Fabbri et al., 2021" in text
    else:
        assert text.endswith(f"{dim.capitalize()}:")


def _greedy(reply: str) -> ScriptedBackend:
    return ScriptedBackend(lambda r: reply)


def test_requests_carry_the_article_and_the_dimension_scale() -> None:
    seen: list[Request] = []

    def script(r: Request) -> Any:
        seen.append(r)
        return Choice(" 2", " 2", "length", (TokenLogprob(" 2", 0.0),))

    for dim in DIMS:
        m = GEval(dim, mode="logprobs", variant="paper", backend=ScriptedBackend(script))  # type: ignore[arg-type]
        [res] = m.score_batch([summary("a")])
        assert res.score == 2.0 and m.range == (1.0, 3.0 if dim == "fluency" else 5.0)
        r = seen[-1]
        assert r.grammar == f"root ::= [1-{3 if dim == 'fluency' else 5}]"
        assert (ARTICLE in text_of(r)) == (dim != "fluency")
        if dim != "fluency":  # the document's cut is recorded per row (here: none)
            assert res.details["document"]["truncated"] is False
    assert SUMMARY_DIMENSIONS == DIMS


def test_long_article_cut_is_recorded() -> None:
    long = Input("q", context="word " * 5000)
    m = GEval("coherence", mode="greedy", max_table_chars=1000, backend=_greedy("4"))  # type: ignore[arg-type]
    [res] = m.score_batch([ScoreItem("a", "s", None, long)])
    assert res.score == 4.0 and res.details["document"]["truncated"] is True
    assert m.summary["responses_tables_cut"] == 1


def test_form_filling_parse_and_failures_recorded_never_zero() -> None:
    assert parse_score("Coherence (1-5): 4", label="coherence") == 4.0
    assert parse_score("- Fluency (1-3): 2", 1, 3, label="fluency") == 2.0
    assert parse_score("Fluency: 5", 1, 3, label="fluency") is None  # off the 1-3 scale
    assert parse_score("Relevance: 3", label=None) is None  # the default labels stay as they were
    for reply, dim, want in (
        ("Consistency: 5", "consistency", 5.0),
        ("Fluency (1-3): 3", "fluency", 3.0),
        ("Fluency: 4", "fluency", None),
        ("I cannot rate this.", "relevance", None),
    ):
        m = GEval(dim, mode="greedy", constrained=False, backend=_greedy(reply))  # type: ignore[arg-type]
        [res] = m.score_batch([summary("a")])
        assert res.score == want
        if want is None:
            assert res.error == "unparseable judge output" and res.details["parse_failures"] == 1
            assert m.summary["items_failed"] == 1
    m = GEval("coherence", mode="greedy", backend=_greedy("4"))  # type: ignore[arg-type]
    res = m.score_batch([ScoreItem("a", "s", None, Input("q")), summary("b", "")])
    assert [r.score for r in res] == [None, None]
    assert (
        res[0].error.startswith("input has no source document") and res[1].error == "empty response"
    )


def test_fluency_logprobs_normalised_over_one_to_three() -> None:
    top = (
        (" 3", math.log(0.4)),
        (" 2", math.log(0.2)),
        (" 5", math.log(0.3)),
        ("x", math.log(0.1)),
    )

    def script(r: Request) -> Any:
        return Choice(" 3", " 3", "length", (TokenLogprob(" 3", math.log(0.4), top),))

    m = GEval("fluency", mode="logprobs", backend=ScriptedBackend(script))  # type: ignore[arg-type]
    [res] = m.score_batch([summary("a")])
    assert res.score == pytest.approx((3 * 0.4 + 2 * 0.2) / 0.6)
    assert set(res.details["probs"]) == {"1", "2", "3"}


def test_registry_family_and_row() -> None:
    members = ["geval_coherence", "geval_consistency", "geval_fluency", "geval_relevance"]
    assert expand_metrics(["geval_summeval"]) == members
    assert expand_metrics(["geval"]) == ["geval_faithfulness", "geval_completeness"]
    assert (
        family_row("geval_summeval") == "geval" and family_row("geval_fluency") == "geval_fluency"
    )
    assert metric_info("geval_summeval")["signature"] == "family:" + "+".join(members)
    m = get_metric("geval_fluency", backbone="smollm2-135m")
    try:
        assert "dim:fluency" in m.signature and m.range == (1.0, 3.0) and not m.needs_reference
    finally:
        m.close()


def _summeval_rows(ds: Any, seed: int = 0) -> list[dict[str, Any]]:
    """Integer scores (ties, some constant documents) loosely tied to the humans."""
    from metajudge.scores.readers.rows import make_row

    rng = np.random.default_rng(seed)
    rows = []
    for d in DIMS:
        for r in ds.records:
            s = float(np.clip(round(r.scores[d][0] + rng.normal(0, 1.2)), 1, 5))
            rows.append(
                make_row(
                    item=r.id,
                    system=r.system,
                    side=None,
                    metric=f"geval_{d}",
                    score=s,
                    signature="t",
                )
            )
    return rows


def _geval_rule(ds: Any, rows: list[dict[str, Any]], dim: str) -> tuple[float, float, int]:
    """nlpyang/geval meta_eval_summeval.py: per document Spearman and Kendall (scipy's tau-b),
    documents with constant human or metric scores skipped, the mean over the rest."""
    from scipy.stats import kendalltau, spearmanr

    sc = {(r["item"], r["system"]): r["score"] for r in rows if r["metric"] == f"geval_{dim}"}
    pred, hum = defaultdict(list), defaultdict(list)
    for r in ds.records:
        pred[r.id].append(sc[(r.id, r.system)])
        hum[r.id].append(r.scores[dim][0])
    kept = [d for d in pred if len(set(pred[d])) > 1 and len(set(hum[d])) > 1]
    rho = float(np.mean([spearmanr(pred[d], hum[d])[0] for d in kept]))
    tau = float(np.mean([kendalltau(pred[d], hum[d])[0] for d in kept]))
    return rho, tau, len(kept)


def test_summary_level_protocol_is_the_geval_papers(load: Load) -> None:
    import metajudge as mj

    ds = load("summeval_ppairs")
    assert len({r.id for r in ds.records}) == 100 and len(ds.records) == 1600
    rows = _summeval_rows(ds)
    res = mj.meta_evaluate(
        ds, rows, correlate="pointwise", level="item", statistics=("spearman", "kendall"), n_boot=0
    )
    assert [m["name"] for m in res.data["metrics"]] == ["geval"]
    skipped = 0
    for d in DIMS:
        rho, tau, kept = _geval_rule(ds, rows, d)
        stats = res.cell("geval", d)["stats"]
        assert stats["spearman"]["value"] == pytest.approx(rho, abs=1e-12)
        assert stats["kendall"]["value"] == pytest.approx(tau, abs=1e-12)
        skipped += 100 - kept
    assert skipped > 0  # the skip rule was exercised
    assert res.data["protocol"]["correlation_level"] == "item"


def test_level_keyword_numeric_is_still_the_ci_level(load: Load) -> None:
    import metajudge as mj

    ds = load("summeval_ppairs")
    rows = _summeval_rows(ds)
    res = mj.meta_evaluate(ds, rows, correlate="pointwise", level=0.9, n_boot=0)
    assert (
        res.data["protocol"]["correlation_level"] == "global"
        and res.data["protocol"]["level"] == 0.9
    )


def test_published_table1_attached_beside_ours(load: Load) -> None:
    import metajudge as mj
    from metajudge.reports.published import attach_published, load_published
    from metajudge.reports.tables import table_rows, to_markdown

    pub = [e for e in load_published() if e["file"] == "published_geval.json"]
    g4 = {(e["dimension"], e["statistic"]): e["value"] for e in pub if e["row"] == "G-EVAL-4"}
    assert g4[("average", "spearman")] == 51.4 and g4[("average", "kendall")] == 41.8
    assert g4[("coherence", "spearman")] == 58.2 and g4[("consistency", "spearman")] == 50.7
    assert len(g4) == 10
    ds = load("summeval_ppairs")
    res = mj.meta_evaluate(
        ds,
        _summeval_rows(ds),
        correlate="pointwise",
        level="item",
        statistics=("spearman", "kendall"),
        n_boot=0,
    )
    attach_published(res)
    attached = res.data["published"]
    assert {e["metric"] for e in attached} == {"geval"} and len(attached) == 8  # no AVG column
    t = table_rows(res, ("spearman", "kendall"))
    assert "Coherence Spearman (published)" in t["header"]
    row = next(r for r in t["rows"] if r["metric"] == "geval")
    cells = dict(zip(t["header"][1:], row["cells"], strict=True))
    assert cells["Relevance Spearman (published)"]["value"] == pytest.approx(0.547)
    assert cells["Fluency Kendall τb (published)"]["value"] == pytest.approx(0.455)
    assert "Liu et al. 2023" in to_markdown(res)
    # a pairwise-difference run of the same scores is another protocol: nothing attached
    other = mj.meta_evaluate(ds, _summeval_rows(ds), correlate="pointwise", n_boot=0)
    assert attach_published(other).data["published"] == []


def test_meta_eval_run_reads_the_family_into_one_row(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data_dir: Path, load: Load
) -> None:
    """``--metrics geval_summeval``: scored as the four members, read into the row ``geval``."""
    from metajudge.data.source import DataSource
    from metajudge.runs import meta_eval
    from metajudge.scores import scoring

    ds = load("summeval_ppairs")
    rows = _summeval_rows(ds)

    def fake_score(dataset: Any, names: Any, **kw: Any) -> list[dict[str, Any]]:
        return [r for r in rows if r["metric"] in names]

    monkeypatch.setattr(scoring, "score_dataset", fake_score)
    res, _ = meta_eval.run_meta_eval(
        DataSource(dataset="summeval_ppairs", data_dir=data_dir),
        out_dir=tmp_path,
        metrics=["geval_summeval"],
        plots=False,
        progress=False,
        baselines=False,
        protocol=Protocol(correlate="pointwise", level="item", n_boot=0),
    )
    assert [m["name"] for m in res.data["metrics"]] == ["geval"]
    assert res.cell("geval", "fluency")["column"] == "geval_fluency"
    assert len(res.data["published"]) == 8  # the four dimensions x Spearman, Kendall
