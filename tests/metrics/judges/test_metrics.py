"""Judge metrics with a scripted backend: aggregation formulas and failure handling only.

The scripted backend stands in for the model so that these tests pin what the metrics do with
given judge outputs (formulas, counted parse failures, errors, no silent zeros). Real model
outputs are tested in test_judges_parsers.py and end-to-end in test_judges_e2e.py.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.base import BackendError, Choice, Completion, Request, TokenLogprob
from metajudge.data.formats import Input, Table
from metajudge.metrics.base import ScoreItem
from metajudge.metrics.judges.equivalence import AnswerEquivalence
from metajudge.metrics.judges.geval import GEval
from metajudge.metrics.judges.mtraig import MTRAIGCompleteness, MTRAIGFaithfulness


@dataclass
class FakeConfig:
    chat: bool = True
    n_ctx: int = 4096
    grammar_param: str | None = "grammar"
    kind: str = "embedded"


@dataclass
class ScriptedBackend:
    """Answers each request with ``script(request)``: a text, a list of texts (n samples), a
    ``Choice`` or a ``BackendError``; records the requests."""

    script: Callable[[Request], Any]
    config: FakeConfig = field(default_factory=FakeConfig)
    name: str = "scripted"
    seen: list[Request] = field(default_factory=list)

    @property
    def model_id(self) -> str:
        return "scripted-model@0"

    def complete(self, requests: Sequence[Request]) -> list[Completion | BackendError]:
        out: list[Completion | BackendError] = []
        for r in requests:
            self.seen.append(r)
            got = self.script(r)
            if isinstance(got, BackendError):
                out.append(got)
                continue
            items = got if isinstance(got, list) else [got]
            choices = tuple(
                c
                if isinstance(c, Choice)
                else Choice(text=str(c), raw_text=str(c), finish_reason="stop")
                for c in items
            )
            out.append(
                Completion(
                    choices=choices, prompt_tokens=100, completion_tokens=5, model="scripted"
                )
            )
        return out

    def close(self) -> None:
        return None


def text_of(r: Request) -> str:
    return r.messages[0]["content"] if r.messages else (r.prompt or "")


TABLE = Table("Sales", ("Year", "Units"), (("2020", "10"), ("2021", "15")))
INP = Input("How did sales change?", reference="Sales rose from 10 to 15.", tables=(TABLE,))


def item(
    key: str,
    response: str | None = "Sales rose from 10 units to 15 units.",
    inp: Input | None = INP,
) -> ScoreItem:
    return ScoreItem(key, response, inp.reference if inp else None, inp)


# -- G-Eval ---------------------------------------------------------------------------------------


def test_geval_logprobs_expected_score_and_failures() -> None:
    def script(r: Request) -> Any:
        assert r.logprobs and r.grammar == "root ::= [1-5]" and r.max_tokens == 1
        if "BROKEN" in text_of(r):
            return Choice("x", "x", "length", (TokenLogprob("x", -0.1),))
        top = ((" 4", math.log(0.5)), (" 5", math.log(0.3)), ("The", math.log(0.2)))
        return Choice(" 4", " 4", "length", (TokenLogprob(" 4", math.log(0.5), top),))

    m = GEval("faithfulness", mode="logprobs", backend=ScriptedBackend(script))  # type: ignore[arg-type]
    res = m.score_batch([item("a"), item("b", "BROKEN answer"), item("c", "")])
    assert res[0].score == pytest.approx((4 * 0.5 + 5 * 0.3) / 0.8)
    assert res[0].details["probs"]["4"] == pytest.approx(0.625)
    assert (
        res[1].score is None
        and res[1].error == "unparseable judge output"
        and res[1].details["parse_failures"] == 1
    )
    assert res[2].score is None and res[2].error == "empty response"
    assert m.summary["parse_failures"] == 1 and m.summary["parse_attempts"] == 2
    assert (
        m.signature.startswith("geval|backbone:")
        and "mode:logprobs" in m.signature
        and "prompts:" in m.signature
    )


def test_geval_samples_mean_of_parsed_only() -> None:
    be = ScriptedBackend(lambda r: ["4", "2", "nonsense", "5"])
    m = GEval("completeness", mode="samples", n=4, temperature=2.0, constrained=False, backend=be)  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    assert be.seen[0].n == 4 and be.seen[0].temperature == 2.0
    assert r.score == pytest.approx(11 / 3) and r.details["samples"] == [4.0, 2.0, None, 5.0]
    assert r.details["parse_failures"] == 1 and m.summary["parse_failure_rate"] == 0.25


def test_geval_greedy_all_unparseable_is_none_not_zero() -> None:
    m = GEval(
        mode="greedy", constrained=False, backend=ScriptedBackend(lambda r: "Faithfulness (1–5)")
    )  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    assert r.score is None and r.details["parse_failures"] == 1


def test_geval_backend_error_and_no_tables() -> None:
    m = GEval(mode="greedy", backend=ScriptedBackend(lambda r: BackendError("HTTP 500")))  # type: ignore[arg-type]
    r1, r2 = m.score_batch([item("a"), item("b", inp=Input("q"))])
    assert r1.score is None and "HTTP 500" in (r1.error or "")
    assert r2.score is None and "no tables" in (r2.error or "")


def test_base_model_gets_completion_requests() -> None:
    be = ScriptedBackend(lambda r: "3", config=FakeConfig(chat=False))
    m = GEval(mode="greedy", backend=be)  # type: ignore[arg-type]
    m.score_batch([item("a")])
    assert be.seen[0].prompt is not None and be.seen[0].messages is None and m.variant == "small"
    assert (
        be.seen[0].grammar == 'root ::= " "? [1-5]' and be.seen[0].max_tokens == 2
    )  # " 4" is two tokens


# -- MT-RAIG faithfulness --------------------------------------------------------------------------


def _faith_script(
    verdicts: str | list[str] | BackendError = '{"verdicts": ["yes", "no", "yes"]}',
) -> Callable[[Request], Any]:
    def script(r: Request) -> Any:
        t = text_of(r)
        if "atomic claims" in t:  # decomposition
            if "NOCLAIM" in t:
                return "None"
            if "GARBLE" in t:
                return ""
            return " Sales were 10 in 2020.\n2. Sales were 15 in 2021.\n3. Sales doubled."
        return verdicts(r) if callable(verdicts) else verdicts

    return script


def test_faithfulness_batched_mean_of_verdicts() -> None:
    be = ScriptedBackend(_faith_script())
    m = MTRAIGFaithfulness(mode="batched", backend=be)  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    assert r.score == pytest.approx(2 / 3)
    assert r.details["claims"] == [
        "Sales were 10 in 2020.",
        "Sales were 15 in 2021.",
        "Sales doubled.",
    ]
    assert r.details["verdicts"] == [1.0, 0.0, 1.0]
    verify = be.seen[-1]
    assert (
        verify.json_schema is not None
        and verify.json_schema["properties"]["verdicts"]["maxItems"] == 3
    )
    assert "[TITLE] Sales [HEADER] Year | Units [ROW 1]" in text_of(verify)
    assert "[ROW" not in text_of(be.seen[0])  # the decomposer sees schemas only
    assert m.stage_stats["decompose"]["calls"] == 1 and m.stage_stats["verify"]["calls"] == 1


def test_faithfulness_per_claim_one_call_per_claim_with_samples() -> None:
    answers = iter([["Yes", "No"], ["No", "garbled"], ["Yes", "Yes"]])
    be = ScriptedBackend(_faith_script(lambda r: next(answers)))  # type: ignore[arg-type]
    m = MTRAIGFaithfulness(mode="per_claim", n=2, temperature=1.0, constrained=False, backend=be)  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    assert len(be.seen) == 4 and all(q.n == 2 for q in be.seen[1:])
    assert r.details["verdicts"] == [0.5, 0.0, 1.0] and r.score == pytest.approx(0.5)
    assert r.details["parse_failures"] == 1


def test_faithfulness_truncated_batched_json_counts_missing_claims() -> None:
    m = MTRAIGFaithfulness(
        mode="batched", backend=ScriptedBackend(_faith_script('{"verdicts": ["no", "yes"'))
    )  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    # the unparsed third claim stays in |C|: the response is unscored (issue 25 item 2) ...
    assert r.details["verdicts"] == [0.0, 1.0, None] and r.details["parse_failures"] == 1
    assert r.score is None and r.error == "1 of 3 claim verdicts unparseable (unparsed=unscored)"
    assert m.summary["items_failed"] == 1 and m.summary["parse_failures"] == 1
    # ... or, when the user names it, counted as unsupported: 1/3, not 1/2
    m = MTRAIGFaithfulness(
        mode="batched",
        unparsed="unsupported",
        backend=ScriptedBackend(_faith_script('{"verdicts": ["no", "yes"')),  # type: ignore[arg-type]
    )
    [r] = m.score_batch([item("a")])
    assert r.score == pytest.approx(1 / 3) and r.details["claims_unparsed"] == 1


def test_faithfulness_no_claims_option_and_failures() -> None:
    items = [item("none", "NOCLAIM"), item("garbled", "GARBLE"), item("bad", "fine")]
    be = ScriptedBackend(_faith_script("I am not sure."))
    zero = MTRAIGFaithfulness(backend=be)  # type: ignore[arg-type]
    r0, r1, r2 = zero.score_batch(items)
    assert r0.score == 0.0 and r0.details["no_claims"] is True  # our default (the paper is silent)
    assert r1.score is None and r1.error == "unparseable decomposition"
    assert (
        r2.score is None
        and r2.error == "no claim verdict could be parsed"
        and r2.details["parse_failures"] == 3
    )
    none = MTRAIGFaithfulness(no_claims="none", backend=be)  # type: ignore[arg-type]
    assert none.score_batch([items[0]])[0].score is None
    assert "no_claims:none" in none.signature and "no_claims:zero" in zero.signature


# -- MT-RAIG completeness --------------------------------------------------------------------------


def test_completeness_precision_recall_f1() -> None:
    def script(r: Request) -> Any:
        t = text_of(r)
        if "Topic set A" in t:
            return '{"matched_a": [1, 3, 9], "matched_b": [2]}'
        if "Insight: Sales rose from 10 to 15." in t:  # the reference
            return " Change in sales.\n2. Sales in 2020.\n3. Sales in 2021.\n4. Trend."
        return " Sales growth.\n2. Sales in 2021."

    m = MTRAIGCompleteness(backend=ScriptedBackend(script))  # type: ignore[arg-type]
    [r] = m.score_batch([item("a")])
    p, rc = 1 / 2, 2 / 4
    assert (
        r.details["precision"] == p
        and r.details["recall"] == rc
        and r.details["invalid_indices"] == 1
    )
    assert r.score == pytest.approx(2 * p * rc / (p + rc))


def test_completeness_needs_reference_and_counts_bad_matching() -> None:
    def script(r: Request) -> Any:
        return "Both sets are similar." if "Topic set A" in text_of(r) else " A topic.\n2. Another."

    m = MTRAIGCompleteness(structured=False, backend=ScriptedBackend(script))  # type: ignore[arg-type]
    r1, r2 = m.score_batch([item("a"), item("b", inp=Input("q"))])
    assert r1.score is None and r1.error == "unparseable topic matching"
    assert r2.score is None and "reference" in (r2.error or "")


# -- answer equivalence ----------------------------------------------------------------------------


def test_equivalence_fast_path_share_and_llm() -> None:
    be = ScriptedBackend(lambda r: '{"equivalent": true, "rationale": "Same company."}')
    m = AnswerEquivalence(backend=be)  # type: ignore[arg-type]
    items = [
        # digit-wise equal under MuDABench's rule (0.125 vs 12.5% would go to the LLM: percent on
        # one side only)
        ScoreItem("1", "The rate was 12.58%.", "The rate was 12.5%.", Input("q")),
        ScoreItem("2", "The rate was 13.5%.", "The rate was 12.5%.", Input("q")),
        ScoreItem("3", "Top company: [WOOF]", "The top company is [WOOF].", Input("q")),
        ScoreItem("4", "", "x", Input("q")),
    ]
    r = m.score_batch(items)
    assert [x.score for x in r] == [1.0, 0.0, 1.0, 0.0]
    assert [x.details["decided_by"] for x in r] == ["fast_path", "fast_path", "llm", "empty"]
    assert len(be.seen) == 1 and be.seen[0].json_schema is not None
    assert m.summary["fast_path_share"] == pytest.approx(2 / 3, abs=1e-4)


def test_equivalence_unparseable_is_none() -> None:
    m = AnswerEquivalence(fast_path=False, backend=ScriptedBackend(lambda r: "Hmm."))  # type: ignore[arg-type]
    [r] = m.score_batch([ScoreItem("1", "a", "b", Input("q"))])
    assert (
        r.score is None and m.summary["parse_failures"] == 1 and m.summary["fast_path_share"] == 0.0
    )


# -- MuDABench judging -----------------------------------------------------------------------------


def test_mudabench_judging_aggregates(data_dir: Path, tmp_path: Path) -> None:
    from metajudge.data.benchmarks import load_mudabench
    from metajudge.metrics.judges.mudabench_judge import judge_mudabench, read_predictions

    qs = load_mudabench("complex", data_dir)[:3]
    pred = tmp_path / "pred.jsonl"
    lines = [
        {"question_id": qs[0].question_id, "answer": qs[0].final_answer},  # exact: fast path 1
        {"question_id": qs[1].question_id, "answer": "I do not know."},
        {"index": qs[2].index, "answer": "unparseable please", "facts": ["f"]},
    ]
    pred.write_text(
        "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8"
    )

    def script(r: Request) -> Any:
        t = text_of(r)
        n = (
            r.json_schema["properties"]["facts"]["maxItems"]
            if r.json_schema and "facts" in r.json_schema["properties"]
            else 0
        )
        if "Gold facts" in t:
            if "unparseable please" in t:
                return "no idea"
            return json.dumps({"facts": ["covered"] * n, "extra_wrong": 0})
        return '{"equivalent": false, "rationale": "different"}'

    res = judge_mudabench(
        read_predictions(pred),
        variant="complex",
        data_dir=data_dir,
        backend=ScriptedBackend(script),
    )  # type: ignore[arg-type]
    assert res["n_predictions"] == 3 and res["unjudged"] == 1
    agg = res["aggregate"]
    # over |Q| = 3: the unparseable fact labels of the third question count P = 0, not left out
    assert agg["n"] == 3 and agg["unparsed_process"] == 1 and agg["unparsed_final"] == 0
    assert agg["final_accuracy"] == pytest.approx(1 / 3)
    assert agg["process_accuracy"] == pytest.approx(2 / 3)
    assert agg["full_accuracy"] == pytest.approx(1 / 3)
    assert res["questions"][2]["unparsed"] == ["facts"]
    assert res["equivalence"]["fast_path_decided"] == 1


def test_read_predictions_errors_name_line_and_field(tmp_path: Path) -> None:
    from metajudge.errors import InputError
    from metajudge.metrics.judges.mudabench_judge import read_predictions

    p = tmp_path / "p.jsonl"
    p.write_text('{"question_id": "q", "answer": "x"}\n{"question_id": "q2"}\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_predictions(p)
    assert e.value.line == 2 and e.value.field == "answer"


def test_client_counts_a_shared_completion_once() -> None:
    from metajudge.metrics.judges.engine import JudgeClient

    one = Completion(choices=(Choice("a", "a"),), prompt_tokens=10, completion_tokens=1)
    two = Completion(choices=(Choice("b", "b"),), prompt_tokens=20, completion_tokens=2)
    hit = Completion(
        choices=(Choice("c", "c"),), prompt_tokens=30, completion_tokens=3, cached=True
    )

    @dataclass
    class Dedup:  # the cache wrapper answers identical requests of a batch with one object
        config: FakeConfig = field(default_factory=FakeConfig)

        def complete(self, requests: Sequence[Request]) -> list[Completion | BackendError]:
            return [one, one, two, hit, BackendError("x")]

    c = JudgeClient("scripted", backend=Dedup())  # type: ignore[arg-type]
    c.run([c.request("p")] * 5)
    s = c.stats
    assert (s.requests, s.calls, s.cached, s.errors, s.prompt_tokens, s.completion_tokens) == (
        5,
        2,
        2,
        1,
        30,
        3,
    )
    assert s.processed_known is False and s.processed_prompt_tokens == 30  # no server log: = sent


def test_one_default_prompt_variant_rule_for_every_judge() -> None:
    from metajudge.metrics.judges.pairwise import PairwiseJudge

    for cfg, want in (
        (FakeConfig(kind="embedded"), "small"),
        (FakeConfig(kind="openai"), "paper"),
        (FakeConfig(kind="openai", chat=False), "small"),
    ):
        be = ScriptedBackend(lambda r: "3", config=cfg)
        assert GEval(backend=be).variant == want  # type: ignore[arg-type]
        assert PairwiseJudge(backend=be).variant == want  # type: ignore[arg-type]


def test_cli_vocabulary_without_old_spellings() -> None:
    from metajudge.cli import build_parser

    p = build_parser()
    b = p.parse_args(["judge", "mudabench", "--predictions", "x", "--subset", "complex", "-o", "f"])
    assert (b.subset, b.output) == ("complex", "f")
    s = p.parse_args(
        ["metrics", "run", "--dataset", "d", "--metrics", "bleu", "-o", "f", "--quiet"]
    )
    assert s.quiet is True and s.reference_field is None
    assert p.parse_args(["metrics", "list", "--format", "json"]).format == "json"
    for old in (
        ["judge", "mudabench", "--predictions", "x", "--variant", "complex"],
        ["metrics", "list", "--json"],
        ["cache", "export", "old.jsonl"],
    ):
        with pytest.raises(SystemExit):
            p.parse_args(old)
    assert p.parse_args(["cache", "export", "-o", "new.jsonl"]).output == "new.jsonl"
    helptext = p._subparsers._group_actions[0].choices["judge"].format_help()  # type: ignore[union-attr]
    assert "mudabench" in helptext


# -- issue 25 item 3: accuracies over |Q|; the judge's extra wrong facts enter E ------------------


def _predictions(tmp_path: Path, data_dir: Path, answers: list[str], facts: Any = None) -> Any:
    from metajudge.data.benchmarks import load_mudabench
    from metajudge.metrics.judges.mudabench_judge import read_predictions

    qs = load_mudabench("complex", data_dir)[: len(answers)]
    pred = tmp_path / "pred.jsonl"
    rows = [
        {"question_id": q.question_id, "answer": a, **({"facts": facts} if facts else {})}
        for q, a in zip(qs, answers, strict=True)
    ]
    pred.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    return read_predictions(pred), qs


def test_three_predictions_one_garbled_verdict_is_two_thirds(
    data_dir: Path, tmp_path: Path
) -> None:
    from metajudge.metrics.judges.mudabench_judge import judge_mudabench

    preds, _ = _predictions(tmp_path, data_dir, ["answer one", "answer two", "answer three"])

    def script(r: Request) -> Any:
        if "answer three" in text_of(r):
            return "garbled"
        return '{"equivalent": true, "rationale": "same"}'

    res = judge_mudabench(
        preds,
        variant="complex",
        fast_path=False,
        process=False,
        data_dir=data_dir,
        backend=ScriptedBackend(script),  # type: ignore[arg-type]
    )
    agg = res["aggregate"]
    assert agg["final_accuracy"] == pytest.approx(2 / 3)  # not 1.0 over the 2 parsed
    assert agg["n"] == 3 and agg["unparsed_final"] == 1 and res["unjudged"] == 1
    assert res["equivalence"]["parse_failures"] == 1
    from metajudge.cli.judge import accuracy_text

    assert accuracy_text(agg, "final_accuracy") == (
        "0.6667  (over |Q| = 3; 1 unparsed verdict counted not correct)"
    )


def test_a_hallucinated_extracted_fact_lowers_process_accuracy(
    data_dir: Path, tmp_path: Path
) -> None:
    from metajudge.metrics.judges.mudabench_judge import FactCoverageJudge, judge_mudabench

    preds, qs = _predictions(tmp_path, data_dir, ["x"], facts=["Revenue was 9.9 billion."])
    n = len(qs[0].gold_facts)
    seen: list[Request] = []

    def script(r: Request) -> Any:
        if "Gold facts" in text_of(r):
            seen.append(r)
            return json.dumps({"facts": ["covered"] * n, "extra_wrong": 1})
        return '{"equivalent": true, "rationale": "same"}'

    res = judge_mudabench(
        preds,
        variant="complex",
        fast_path=False,
        data_dir=data_dir,
        backend=ScriptedBackend(script),  # type: ignore[arg-type]
    )
    agg = res["aggregate"]
    # C = 1, E = 1/n: P = min(1, 1 - 1/n), and full accuracy needs P = 1
    assert agg["process_accuracy"] == pytest.approx(1 - 1 / n) and agg["full_accuracy"] == 0.0
    assert res["questions"][0]["facts_details"]["extra_wrong"] == 1
    schema = seen[0].json_schema
    assert schema is not None and schema["required"] == ["facts", "extra_wrong"]
    assert "extra_wrong" in text_of(seen[0])
    # the registry judge: two gold facts covered and one extra wrong fact -> 1/2; no count -> unscored
    two = Input("q", documents=("A earned 5.", "B earned 8."))
    for reply, want in (
        ('{"facts": ["covered", "covered"], "extra_wrong": 1}', 0.5),
        ('{"facts": ["covered", "covered"], "extra_wrong": 0}', 1.0),
        ('{"facts": ["covered", "covered"]}', None),
    ):
        judge = FactCoverageJudge(backend=ScriptedBackend(lambda r, t=reply: t))  # type: ignore[arg-type]
        [got] = judge.score_batch(
            [ScoreItem("a", "A earned 5, B earned 8, C earned 3.", None, two)]
        )
        assert got.score == want, reply
