"""Issue 11: judge fidelity on strong remote backbones — each defect's exact inputs.

Defect 1 (tables cut to 1,920 characters for remote backbones), 3 (negated verdicts), 4 (silent
claim cap), 8 (numbers taken from echoed topics), with a scripted backend standing in for the
model (the formulas and records are what is pinned here).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.base import Request
from metajudge.backends.config import BackendConfig, builtin_configs
from metajudge.backends.context import context_length
from metajudge.data.formats import Input, Table
from metajudge.errors import InputError
from metajudge.metrics.judges.common import table_budget_chars
from metajudge.metrics.judges.mtraig import MTRAIGFaithfulness
from metajudge.metrics.judges.parsers.claims import parse_verdict, verdict_label
from metajudge.metrics.judges.parsers.ratings import parse_matching
from metajudge.metrics.registry import get_metric
from tests.metrics.judges.test_metrics import (
    INP,
    FakeConfig,
    ScriptedBackend,
    _faith_script,
    item,
    text_of,
)

# -- defect 1: context budgets from the backbone ------------------------------------------------


def _paper_tables(n_tables: int, n_rows: int) -> tuple[Table, ...]:
    """Tables the size of MT-RAIG Bench's (paper Table 2: 10.54 rows on average)."""
    return tuple(
        Table(
            f"2019-20 season results of club {t}",
            ("Date", "Opponent", "Venue", "Result", "Attendance", "Scorers"),
            tuple(
                (
                    f"{r + 1} May 2020",
                    f"Opponent FC {r}",
                    "Home",
                    "2-1",
                    "41,213",
                    "Smith 12', Lee 80'",
                )
                for r in range(n_rows)
            ),
        )
        for t in range(n_tables)
    )


def test_gpt4o_mini_budget_is_its_128k_context_not_1920() -> None:
    m = get_metric("mtraig_faithfulness", backbone="openai-gpt-4o-mini")
    assert m.max_table_chars != 1920
    assert m.n_ctx == 128000 and m.max_table_chars == table_budget_chars(128000)
    assert "ctx:128000" in m.signature
    # the paper's top-10 retrieved tables (100 rows) and three 10-row gold tables: nothing cut
    for n_tables in (10, 3):
        inp = Input("q", tables=_paper_tables(n_tables, 10))
        _text, rec = m.tables_text(inp)  # type: ignore[misc]
        assert rec["rows_kept"] == rec["rows_total"] == 10 * n_tables and not rec["truncated"]
    assert m.summary["responses_tables_cut"] == 0


def test_every_builtin_config_states_its_context() -> None:
    assert all(c.n_ctx for c in builtin_configs())


@pytest.fixture()
def models_server() -> Iterator[str]:
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            return None

        def do_GET(self) -> None:
            body = json.dumps(
                {"object": "list", "data": [{"id": "qwen", "max_model_len": 32768}]}
            ).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()


def test_user_config_without_n_ctx_reads_the_server(models_server: str) -> None:
    cfg = BackendConfig(name="vllm", kind="openai", model="qwen", base_url=models_server)
    ctx = context_length(cfg)
    assert ctx.tokens == 32768 and ctx.source == "server"
    dead = cfg.replace(base_url="http://127.0.0.1:9/v1")
    assert context_length(dead, timeout_s=0.5).source == "fallback"


def test_table_cut_is_recorded_per_response_and_counted() -> None:
    def script(r: Request) -> Any:
        t = text_of(r)
        if "verdicts" in t or "claims" in t.lower() and "[ROW" in t:
            return '{"verdicts": ["yes"]}'
        return "1. Sales rose."

    big = Input("q", tables=_paper_tables(3, 10))
    m = MTRAIGFaithfulness(backend=ScriptedBackend(script, config=FakeConfig(n_ctx=2048)))  # type: ignore[arg-type]
    assert m.max_table_chars == 1920
    r_big, r_small = m.score_batch([item("big", inp=big), item("small", inp=INP)])
    assert r_big.details["tables"]["truncated"] and r_big.details["tables"]["budget_chars"] == 1920
    assert not r_small.details["tables"]["truncated"]
    assert m.summary["responses_tables_cut"] == 1 and m.summary["tables_cut_share"] == 0.5


# -- defect 3: verdicts with negation and hedging -----------------------------------------------

CORPUS = Path(__file__).parents[2] / "fixtures" / "verdict_corpus.jsonl"


def _corpus() -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in CORPUS.read_text(encoding="utf-8").splitlines() if ln]


def test_verdict_corpus_is_large_and_covers_every_style() -> None:
    rows = _corpus()
    assert len(rows) >= 200
    assert {r["label"] for r in rows} == {"supported", "not_supported", "partially", None}
    assert {"short", "reasoning", "json", "markdown", "negation", "hedge", "refusal"} <= {
        r["style"] for r in rows
    }


def test_verdict_parser_reads_every_corpus_reply() -> None:
    wrong = [(r["text"], r["label"], verdict_label(r["text"])) for r in _corpus()]
    wrong = [w for w in wrong if w[1] != w[2]]
    assert wrong == []


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("The claim is not accurate.", 0),
        ("The claim is not entirely correct.", 0),
        ("The claim is not fully supported by the tables.", 0),
        ("Partially faithful.", 0),
        ("The tables do not support the claim.", 0),
        ("The claim is inaccurate.", 0),
    ],
)
def test_issue_negations_are_not_faithful(reply: str, value: int) -> None:
    assert parse_verdict(reply) == value


def test_three_negated_verdicts_give_two_thirds_and_partial_is_configurable() -> None:
    replies = ["Yes.", "Yes, the claim is supported.", "The claim is not accurate."]

    def run(partial: float, last: str) -> float | None:
        answers = iter([*replies[:2], last])
        m = MTRAIGFaithfulness(
            mode="per_claim",
            constrained=False,
            partial=partial,
            backend=ScriptedBackend(_faith_script(lambda r: next(answers))),  # type: ignore[arg-type]
        )
        return m.score_batch([item("a")])[0].score

    assert run(0.0, replies[2]) == pytest.approx(2 / 3)
    assert run(0.0, "Partially faithful.") == pytest.approx(2 / 3)
    assert run(0.5, "Partially faithful.") == pytest.approx(2.5 / 3)
    with pytest.raises(InputError):
        MTRAIGFaithfulness(partial=0.3, backend=ScriptedBackend(lambda r: ""))  # type: ignore[arg-type]


# -- defect 4: no silent caps ------------------------------------------------------------------


def _claims_script(n: int, n_yes: int, dup: bool = False) -> Any:
    claims = "\n".join(f"{i}. Claim number {i} holds." for i in range(1, n + 1))
    if dup:
        claims += "\n" + f"{n + 1}. Claim number 1 holds."

    def script(r: Request) -> Any:
        t = text_of(r)
        if "atomic claims" in t or "atomic-level claims" in t:
            return claims
        k = t.count("Claim number")
        return json.dumps({"verdicts": ["yes"] * min(k, n_yes) + ["no"] * max(0, k - n_yes)})

    return script


def test_25_claims_20_supported_is_point_8_on_a_remote_backbone() -> None:
    be = ScriptedBackend(_claims_script(25, 20), config=FakeConfig(kind="openai"))
    m = MTRAIGFaithfulness(mode="batched", backend=be)  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    assert r.score == pytest.approx(0.8) and len(r.details["claims"]) == 25
    assert r.details["decomposition_truncated"] is False and r.details["claims_capped"] == 0
    assert "claims:none" in m.signature


def test_claim_cap_on_small_backbones_is_recorded_and_counted() -> None:
    m = MTRAIGFaithfulness(backend=ScriptedBackend(_claims_script(25, 20)))  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    assert len(r.details["claims"]) == 20 and r.score == pytest.approx(1.0)
    assert r.details["decomposition_truncated"] is True and r.details["claims_capped"] == 5
    assert r.details["claims_parsed"] == 25
    assert m.summary["responses_affected"] == {"claims_capped": 1}
    assert "claims:20" in m.signature


def test_exact_duplicate_claims_are_recorded() -> None:
    be = ScriptedBackend(_claims_script(3, 3, dup=True), config=FakeConfig(kind="openai"))
    m = MTRAIGFaithfulness(backend=be)  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    assert r.details["duplicate_claims"] == ["Claim number 1 holds."]
    assert len(r.details["claims"]) == 3 and r.details["claims_parsed"] == 4
    assert m.summary["responses_affected"] == {"duplicates_removed": 1}


# -- defect 8: topic matching takes no numbers out of echoed topics ------------------------------


def test_matching_ignores_numbers_in_echoed_topic_text() -> None:
    text = "Matched topic subset of A: 9. Top 10 home games.\nMatched topic subset of B: [2]"
    m = parse_matching(text, 10, 3)
    assert m is not None and m.matched_a == (9,) and m.matched_b == (2,)
    listed = "Matched topic subset of A:\n1. Record attendance.\n9. Top 10 home games.\n\nMatched topic subset of B: 1, 2 and 3"
    m = parse_matching(listed, 10, 3)
    assert m is not None and m.matched_a == (1, 9) and m.matched_b == (1, 2, 3)


# -- defect 5: geval scores each dimension with its own prompt -----------------------------------


def test_geval_is_a_family_one_prompt_per_dimension() -> None:
    from metajudge.metrics.registry import expand_metrics, metric_info
    from metajudge.scores.readers.rows import metric_for_dimension

    assert expand_metrics(["geval"]) == ["geval_faithfulness", "geval_completeness"]
    with pytest.raises(InputError, match="family"):
        get_metric("geval")
    faith, comp = (get_metric(n) for n in expand_metrics(["geval"]))
    assert (faith.dimension, comp.dimension) == ("faithfulness", "completeness")
    assert faith.prompt("geval_faithfulness").text != comp.prompt("geval_completeness").text
    assert comp.tasks != faith.tasks or "dim:completeness" in comp.signature
    cols = expand_metrics(["geval"])  # the score rows a run writes for --metrics geval
    assert metric_for_dimension("geval", "completeness", cols) == "geval_completeness"
    assert metric_for_dimension("geval", "faithfulness", cols) == "geval_faithfulness"
    assert metric_info("geval")["signature"] == "family:geval_faithfulness+geval_completeness"


def test_score_dataset_scores_a_family_as_its_members(monkeypatch: pytest.MonkeyPatch) -> None:
    from metajudge.metrics import registry
    from metajudge.metrics.judges.geval import GEval
    from metajudge.metrics.registry import register, register_family
    from metajudge.scores.scoring import score_dataset

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # test entries vanish

    register("fam_test_faith", "metajudge.metrics.lexical:RougeL")
    register("fam_test_comp", "metajudge.metrics.lexical:BLEU")
    register_family("fam_test", ("fam_test_faith", "fam_test_comp"))
    from metajudge.data.formats import LikertRecord

    rec = LikertRecord(
        "i1",
        Input("q", reference="Sales rose from 10 to 15."),
        "s1",
        "Sales rose from 10 to 15 units.",
        {},
    )
    rows = score_dataset([rec], ["fam_test"], progress=False)
    assert sorted({r["metric"] for r in rows}) == ["fam_test_comp", "fam_test_faith"]
    assert isinstance(get_metric("geval_completeness"), GEval)


# -- issue 11 "Done when": the signature shows context, claim cap and parser version -------------


def test_judge_signatures_show_context_claim_cap_and_parser() -> None:
    from metajudge.metrics.judges.parsers.ratings import PARSER_VERSION

    assert PARSER_VERSION != "judges-1"
    for name in ("mtraig_faithfulness", "mtraig_completeness", "geval_completeness"):
        sig = get_metric(name, backbone="openai-gpt-4o-mini").signature
        assert "ctx:128000" in sig and "claims:none" in sig and f"parser:{PARSER_VERSION}" in sig
    assert "claims:20" in get_metric("mtraig_faithfulness", backbone="smollm2-135m").signature


# -- defect 2: the MuDABench fast path decides only unambiguous cases, digit-wise ---------------


@pytest.mark.parametrize(
    ("pred", "gold", "decided"),
    [("7.96", "7.9", 1), ("12.38", "12.34", 1), ("14.39", "14.4", 0), ("18.02", "18.02%", None)],
)
def test_issue_fast_path_inputs(pred: str, gold: str, decided: int | None) -> None:
    from metajudge.metrics.numeric import fast_path

    got = fast_path(pred, gold)
    assert (got[0] if got else None) == decided


def test_percent_on_one_side_goes_to_the_llm() -> None:
    from metajudge.metrics.base import ScoreItem
    from metajudge.metrics.judges.equivalence import AnswerEquivalence

    be = ScriptedBackend(lambda r: '{"equivalent": true, "rationale": "Same value."}')
    m = AnswerEquivalence(backend=be)  # type: ignore[arg-type]
    items = [ScoreItem(str(i), p, g, Input("q")) for i, (p, g) in enumerate(
        [("7.96", "7.9"), ("12.38", "12.34"), ("14.39", "14.4"), ("18.02", "18.02%")]
    )]  # fmt: skip
    r = m.score_batch(items)
    assert [x.score for x in r] == [1.0, 1.0, 0.0, 1.0]
    assert [x.details["decided_by"] for x in r] == ["fast_path"] * 3 + ["llm"]
    assert len(be.seen) == 1 and m.summary["fast_path_share"] == pytest.approx(0.75)


def test_score_summary_counts_the_responses_affected_by_cuts() -> None:
    from metajudge.scores.scoring import summarize

    rows = [
        {"metric": "m", "score": 0.5, "signature": "s", "details": {"tables": {"truncated": True}}},
        {"metric": "m", "score": 1.0, "signature": "s", "details": {"claims_capped": 5}},
        {"metric": "m", "score": 1.0, "signature": "s", "details": {}},
        {"metric": "m", "score": None, "signature": "s", "details": None},
    ]
    [s] = summarize(rows)
    assert s["affected"] == {"tables_cut": 1, "items_capped": 1}
    assert s["affected_share"] == {"tables_cut": 0.25, "items_capped": 0.25}


# -- issue 25 item 2: the paper's procedure by default; an unparsed verdict never leaves |C| ------

PAPER_VERIFY_HEAD = "[Instruction]\n\nYou will be given multiple tables and a claim."


@pytest.mark.parametrize("kind", ["embedded", "openai"])
def test_default_is_per_claim_with_the_papers_prompt_for_every_backbone(kind: str) -> None:
    answers = iter(["Yes", "No", "Yes"])

    def script(r: Request) -> Any:
        if "atomic claims" in text_of(r) or "atomic-level claims" in text_of(r):
            return "1. Sales were 10 in 2020.\n2. Sales were 15 in 2021.\n3. Sales doubled."
        return next(answers)

    be = ScriptedBackend(script, config=FakeConfig(kind=kind))
    m = MTRAIGFaithfulness(backend=be)  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    verify = be.seen[1:]
    assert len(verify) == 3 and all(text_of(q).startswith(PAPER_VERIFY_HEAD) for q in verify)
    assert r.score == pytest.approx(2 / 3)
    assert "|mode:per_claim|ver_prompt:paper|unparsed:unscored|" in m.signature
    batched = MTRAIGFaithfulness(mode="batched", backend=be)  # type: ignore[arg-type]
    assert "|mode:batched|ver_prompt:batched|unparsed:unscored|" in batched.signature


def test_yes_no_garbled_is_unscored_unless_unparsed_is_unsupported() -> None:
    def run(**kw: Any) -> tuple[Any, MTRAIGFaithfulness]:
        answers = iter(["Yes", "No", "garbled"])
        m = MTRAIGFaithfulness(
            constrained=False,
            backend=ScriptedBackend(_faith_script(lambda r: next(answers))),  # type: ignore[arg-type]
            **kw,
        )
        [r] = m.score_batch([item("a")])
        return r, m

    r, m = run()
    assert r.score is None and r.details["verdicts"] == [1.0, 0.0, None]
    assert r.error == "1 of 3 claim verdicts unparseable (unparsed=unscored)"
    assert m.summary["items_failed"] == 1 and m.summary["items_scored"] == 0
    assert m.summary["parse_failures"] == 1 and r.details["parse_failures"] == 1
    r, m = run(unparsed="unsupported")
    assert r.score == pytest.approx(1 / 3) and r.details["claims_unparsed"] == 1
    assert m.summary["parse_failures"] == 1 and "unparsed:unsupported" in m.signature
    with pytest.raises(InputError, match="unparsed"):
        MTRAIGFaithfulness(unparsed="drop", backend=ScriptedBackend(lambda r: ""))  # type: ignore[arg-type]
