"""Pairwise judge (parsing, order mapping, failure counting) and the bias diagnostics."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from metajudge.analyses.judge_biases import (
    accuracy_vs_humans,
    length_bias,
    position_bias,
    run_to_run_variance,
)
from metajudge.backends.base import BackendError, Choice, Completion, Request
from metajudge.data.formats import Input, PairwiseRecord, Response
from metajudge.metrics.judges.pairwise import (
    PairwiseJudge,
    PairwiseVerdict,
    parse_pairwise,
)
from metajudge.stats.decisions import Pref, to_pref, unswap

A, B, T = Pref.A, Pref.B, Pref.TIE


class _ScriptedBackend:
    """Answers from a script, for testing parsing and failure handling only (no model)."""

    name = "scripted"
    model_id = "scripted@0"

    def __init__(self, answers: Sequence[str | BackendError], *, chat: bool = True) -> None:
        self.answers = list(answers)
        self.config = SimpleNamespace(chat=chat, n_ctx=2048, grammar_param=None)
        self.requests: list[Request] = []

    def complete(self, requests: Sequence[Request]) -> list[Completion | BackendError]:
        out: list[Completion | BackendError] = []
        for r in requests:
            self.requests.append(r)
            a = self.answers.pop(0)
            out.append(
                a
                if isinstance(a, BackendError)
                else Completion(
                    choices=(Choice(text=a, raw_text=a),), prompt_tokens=10, completion_tokens=1
                )
            )
        return out

    def close(self) -> None:
        return None


def _rec(
    i: int, label: float, la: str = "short", lb: str = "a much longer answer"
) -> PairwiseRecord:
    return PairwiseRecord(
        str(i), Input("q?"), Response("x", la), Response("y", lb), {"preference": (label,)}
    )


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("A", "A"),
        (" B.", "B"),
        ("Response (b) is better", "B"),
        ("**A**", "A"),
        ("tie", "tie"),
        ("Neither is better; equally good", "tie"),
        ("A vs B: unclear", None),
        ("", None),
        ("Good question!", None),
    ],
)
def test_parse_pairwise(text: str, want: str | None) -> None:
    assert parse_pairwise(text) == to_pref(want)


def test_order_mapping() -> None:
    assert [unswap(d, "ab") for d in (A, B, T, None)] == [A, B, T, None]
    assert [unswap(d, "ba") for d in (A, B, T, None)] == [B, A, T, None]


def test_judge_counts_failures_and_shows_swapped_order() -> None:
    be = _ScriptedBackend(["A", "I am not sure", BackendError("HTTP 500", status=500)])
    j = PairwiseJudge(backbone="scripted", backend=be, constrained=False)
    recs = [_rec(0, 1.0, "alpha text", "beta text"), _rec(1, -1.0), _rec(2, 0.0)]
    vs = j.judge(recs, order="ba")
    assert [v.preferred for v in vs] == [B, None, None]
    assert vs[1].error == "unparsed" and vs[2].error is not None and "HTTP 500" in vs[2].error
    # order ba shows b first
    first_prompt = be.requests[0].messages[0]["content"]  # type: ignore[index]
    assert first_prompt.index("beta text") < first_prompt.index("alpha text")
    s = j.summary
    assert (s["calls"], s["parse_failures"], s["backend_errors"]) == (3, 1, 1)
    assert "constrained:0" in j.signature and "prompt:" in j.signature


def test_base_model_gets_completion_prompt_and_text_required() -> None:
    be = _ScriptedBackend([" B"], chat=False)
    j = PairwiseJudge(backbone="scripted", backend=be, constrained=False)
    assert j.variant == "small"
    [v] = j.judge([_rec(0, 1.0)])
    assert (
        v.preferred == B
        and be.requests[0].prompt is not None
        and be.requests[0].prompt.endswith("Better response:")
    )
    from metajudge.errors import InputError

    with pytest.raises(InputError, match="no response text"):
        j.judge(
            [
                PairwiseRecord(
                    "9", Input("q"), Response("x", None), Response("y", "r"), {"preference": (1.0,)}
                )
            ]
        )


def _v(i: int, order: str, dec: str | None) -> PairwiseVerdict:
    p = to_pref(dec)
    return PairwiseVerdict(str(i), order, p, unswap(p, order))  # type: ignore[arg-type]


def test_position_bias_always_first_is_fully_inconsistent() -> None:
    ab = [_v(i, "ab", "A") for i in range(10)]
    ba = [_v(i, "ba", "A") for i in range(10)]
    d = position_bias(ab, ba)
    assert d["consistency"] == 0.0 and d["p_first_wins"] == 1.0 and d["n_decisive"] == 20
    fair = position_bias([_v(i, "ab", "A") for i in range(4)], [_v(i, "ba", "B") for i in range(4)])
    assert fair["consistency"] == 1.0 and fair["p_first_wins"] == 0.5


def test_unparsed_verdicts_count_as_inconsistent_and_the_rule_is_stated() -> None:
    from metajudge.reports.swap_report import diagnostics_markdown
    from metajudge.stats.decisions import CONSISTENCY_RULE

    ab = [_v(0, "ab", "A"), _v(1, "ab", "A"), _v(2, "ab", None)]
    ba = [_v(0, "ba", "B"), _v(1, "ba", "A"), _v(2, "ba", "B")]
    d = position_bias(ab, ba)
    # pair 0 consistent, pair 1 not, pair 2 unparsed in one order: 1 of 3 (dropping it: 1 of 2)
    assert (d["consistency"], d["n_both_orders"], d["n_unparsed"]) == (0.333333, 3, 1)
    assert d["consistency_rule"] == CONSISTENCY_RULE
    md = diagnostics_markdown({"dataset": "x", "backbones": {"bb": {"position": d}}})
    assert f"Consistency: {CONSISTENCY_RULE} (pairs with an unparsed verdict: bb 1)." in md


def test_length_bias_and_accuracy_policies() -> None:
    recs = [_rec(0, 1.0), _rec(1, 1.0), _rec(2, -1.0), _rec(3, 0.0)]  # b is always the longer one
    lb = length_bias(recs, [B, B, B, B], dimension="preference")
    assert lb["judge_p_longer"] == 1.0 and lb["human_p_longer"] == pytest.approx(2 / 3, abs=1e-6)
    pref = [B, T, B, None]
    assert accuracy_vs_humans(recs, pref, dimension="preference", policy="exclude_human_ties")[
        "value"
    ] == pytest.approx(1 / 3, abs=1e-6)
    assert accuracy_vs_humans(recs, pref, dimension="preference", policy="half_credit")[
        "value"
    ] == pytest.approx(0.5)
    three = accuracy_vs_humans(recs, pref, dimension="preference", policy="three_way")
    assert three["value"] == pytest.approx(0.25) and three["unparsed"] == 1 and three["n"] == 4


def test_run_to_run_variance() -> None:
    assert run_to_run_variance([[A, B], [A, B], [A, B]])["mean_sd"] == 0.0
    v = run_to_run_variance([[A, B], [B, B]])
    assert v["agreement"] == 0.5 and v["mean_sd"] > 0
    assert run_to_run_variance([[A]])["mean_sd"] is None


@pytest.mark.slow
@pytest.mark.llm
def test_position_bias_on_pandalm_with_embedded_chat_backbone(data_dir: Path) -> None:
    from metajudge.runs.judge_diagnostics import run_judge_diagnostics

    diag = run_judge_diagnostics("pandalm_testset", ["smollm2-135m"], limit=8, data_dir=data_dir)
    d = diag["backbones"]["smollm2-135m"]
    assert d["n"] == 8 and d["calls"] == 16
    assert d["parse_failure_rate"] == 0.0  # constrained by the grammar
    assert 0.0 <= d["position"]["consistency"] <= 1.0 and d["position"]["n_decisive"] + sum(
        o["p_tie"] * 8 for o in d["position"]["per_order"].values()
    ) == pytest.approx(16)
    assert d["signature"].startswith("pairwise_judge|backbone:smollm2-135m|model:smollm2-135m@")


def test_sampled_requests_get_independent_seeds_greedy_keeps_run_seed() -> None:
    be = _ScriptedBackend(["A"] * 6)
    j = PairwiseJudge(backbone="scripted", backend=be, constrained=False, seed=5)
    recs = [_rec(i, 1.0) for i in range(3)]
    j.judge(recs)
    j.judge(recs, seed=7, temperature=0.7)
    greedy, sampled = be.requests[:3], be.requests[3:]
    assert {r.seed for r in greedy} == {5} and all(r.temperature == 0.0 for r in greedy)
    assert len({r.seed for r in sampled}) == 3 and all(r.temperature == 0.7 for r in sampled)


def test_judge_diagnostics_is_a_judge_command(capsys: pytest.CaptureFixture[str]) -> None:
    from metajudge.cli import main

    assert main(["judge", "diagnostics", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--input FILE" in out and "usage: metajudge judge diagnostics" in out
    assert main(["--help"]) == 0
    top = capsys.readouterr().out
    assert "judge diagnostics" in top and "judge-diagnostics" not in top
    assert main(["judge-diagnostics", "--help"]) == 2  # the old name, removed in 0.3.0


def test_judge_diagnostics_on_a_user_file_with_a_scripted_backend(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from metajudge.data.formats import DatasetCard, Scale, write_jsonl
    from metajudge.runs.judge_diagnostics import run_judge_diagnostics

    card = DatasetCard(
        name="my_pairs",
        kind="pairwise",
        description="",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=("preference",),
        scale=Scale(-1, 1),
        annotators=1,
        direction="positive = b better",
    )
    f = tmp_path / "pairs.jsonl"
    write_jsonl(f, [_rec(i, 1.0 if i % 2 else -1.0) for i in range(4)], card=card)
    be = _ScriptedBackend(["A", "B", "A", "B", "B", "A", "B", "A"])
    diag = run_judge_diagnostics(
        None, ["scripted"], input_file=f, judge_options={"backend": be, "constrained": False}
    )
    assert diag["dataset"] == "my_pairs" and diag["n_pairs"] == 4
    assert diag.to_pandas()["backbone"].tolist() == ["scripted"]
    assert len(be.requests) == 8  # every pair in both orders


def test_cli_judge_diagnostics_runs_the_pipeline(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    from metajudge.cli import main
    from metajudge.data.formats import DatasetCard, Scale, write_jsonl

    card = DatasetCard(
        name="my_pairs",
        kind="likert",
        description="",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=("preference",),
        scale=Scale(1, 5),
        annotators=1,
        direction="",
    )
    f = tmp_path / "likert.jsonl"
    from metajudge.data.formats import LikertRecord

    recs = [
        LikertRecord(
            id=str(i), input=Input("q"), system="s", response="r", scores={"preference": (3.0,)}
        )
        for i in range(3)
    ]
    write_jsonl(f, recs, card=card)
    rc = main(["judge", "diagnostics", "--input", str(f), "--backbones", "x", "--format", "json"])
    assert rc == 2 and "need a pairwise dataset" in capsys.readouterr().err
