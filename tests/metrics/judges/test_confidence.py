"""Judge confidence as data with a scripted backend (parsing and failure handling only): the
pairwise judge's p(a better) / p(b better) / p(tie) from the verdict token's log-probabilities,
sample-based confidence (the shares of n sampled verdicts), answer equivalence's binary verdict
probability; what is kept in details and what is counted when none can be read."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from metajudge.backends.base import Choice, Request, TokenLogprob
from metajudge.data.formats import Input, PairwiseRecord, Response
from metajudge.errors import InputError
from metajudge.metrics.judges.equivalence import AnswerEquivalence
from metajudge.metrics.judges.pairwise import PairwiseJudge
from metajudge.stats.decisions import Pref
from tests.metrics.judges.test_metrics import ScriptedBackend, item, text_of


def _rec(i: int) -> PairwiseRecord:
    return PairwiseRecord(
        f"p{i}",
        Input(f"question {i}"),
        Response("x", f"first answer {i}"),
        Response("y", f"second answer {i}"),
        {"preference": (1,)},
    )


def _verdict_choice(top: list[tuple[str, float]]) -> Choice:
    tok, lp = top[0]
    return Choice(
        tok,
        tok,
        "stop",
        (TokenLogprob(tok, math.log(lp), tuple((t, math.log(p)) for t, p in top)),),
    )


def test_pairwise_logprobs_give_side_probabilities() -> None:
    def script(r: Request) -> Any:
        assert r.logprobs and r.top_logprobs == 10
        if "question 2" in text_of(r):
            return Choice("A", "A", "stop", (TokenLogprob("Hmm", -0.1),))  # no class token
        # the response shown first gets 0.6, the second 0.3, tie 0.05 (0.05 elsewhere)
        return _verdict_choice([(" A", 0.6), ("B", 0.3), (" tie", 0.05), (" The", 0.05)])

    j = PairwiseJudge(
        backbone="scripted",
        backend=ScriptedBackend(script),
        constrained=False,
        confidence="logprobs",
    )
    ab = j.judge([_rec(0), _rec(1), _rec(2)], order="ab")
    ba = j.judge([_rec(0)], order="ba")
    p = ab[0].details["probs"]
    assert p["a"] == pytest.approx(0.6 / 0.95) and p["b"] == pytest.approx(0.3 / 0.95)
    assert p["tie"] == pytest.approx(0.05 / 0.95) and sum(p.values()) == pytest.approx(1.0)
    assert ab[0].details["confidence"] == "logprobs"
    assert ab[0].details["probability_mass"] == pytest.approx(0.95)
    # order b-first: "A" names b, so the sides swap
    assert ba[0].details["probs"]["b"] == pytest.approx(0.6 / 0.95)
    assert ab[2].details["confidence"] is None and "probs" not in ab[2].details
    assert ab[2].preferred == Pref.A  # the verdict itself still parsed
    assert j.summary["confidence_missing"] == 1 and j.summary["confidence"] == "logprobs"
    assert "conf:logprobs" in j.signature


def test_sample_confidence_is_the_share_of_sampled_verdicts() -> None:
    answers = iter(["A", "A", "B", "nonsense"] * 2)

    def script(r: Request) -> Any:
        assert r.temperature == 0.7 and not r.logprobs
        return next(answers)

    j = PairwiseJudge(
        backbone="scripted",
        backend=ScriptedBackend(script),
        constrained=False,
        confidence="samples",
        n_samples=4,
        temperature=0.7,
    )
    (v,) = j.judge([_rec(0)], order="ab")
    assert v.preferred == Pref.A and v.details["confidence"] == "samples"
    assert v.details["probs"] == {"a": pytest.approx(2 / 3), "b": pytest.approx(1 / 3), "tie": 0.0}
    assert v.details["n_samples"] == 4 and v.details["probability_mass"] == 0.75
    assert j.calls == 4 and j.parse_failures == 1 and "conf:samples" in j.signature
    with pytest.raises(InputError) as e:
        PairwiseJudge(backbone="scripted", backend=ScriptedBackend(script), confidence="samples")
    assert e.value.field == "n_samples"  # greedy samples would all agree


def test_signature_unchanged_without_confidence() -> None:
    be = ScriptedBackend(lambda r: "A")
    plain = PairwiseJudge(backbone="scripted", backend=be, constrained=False)
    assert "conf:" not in plain.signature
    (v,) = plain.judge([_rec(0)])
    assert "probs" not in v.details and "confidence" not in plain.summary
    assert not be.seen[0].logprobs


def test_equivalence_keeps_the_binary_verdict_probability() -> None:
    def script(r: Request) -> Any:
        assert r.logprobs
        head = [
            TokenLogprob('{"', -0.01),
            TokenLogprob("equivalent", -0.01),
            TokenLogprob('":', -0.01),
        ]
        if "BROKEN" in text_of(r):
            return Choice('{"equivalent": true', '{"equivalent": true', "stop", tuple(head))
        verdict = TokenLogprob(
            " true", math.log(0.8), ((" true", math.log(0.8)), (" false", math.log(0.15)))
        )
        text = '{"equivalent": true, "rationale": "same"}'
        return Choice(text, text, "stop", (*head, verdict))

    m = AnswerEquivalence(backend=ScriptedBackend(script), fast_path=False, confidence="logprobs")  # type: ignore[arg-type]
    ok, broken = m.score_batch([item("k1"), item("k2", "BROKEN answer")])
    assert ok.score == 1.0 and ok.details["confidence"] == "logprobs"
    assert ok.details["probs"] == {"1": pytest.approx(0.8 / 0.95), "0": pytest.approx(0.15 / 0.95)}
    assert broken.score == 1.0 and broken.details["confidence"] is None
    assert m.summary["confidence_missing"] == 1 and "conf:logprobs" in m.signature
    with pytest.raises(InputError):
        AnswerEquivalence(backend=ScriptedBackend(script), confidence="samples")  # type: ignore[arg-type]


def test_equivalence_probabilities_read_as_the_binary_labels(load) -> None:  # type: ignore[no-untyped-def]
    """Score rows carrying answer equivalence's ``details.probs`` ({"1", "0"}) are a confidence
    column of a binary dataset (labels False / True): prediction sets and selective judging."""
    from metajudge.analyses.calibration.verdict_sets import calibrate_sets, verdict_table
    from metajudge.analyses.selective import judge_columns

    ds = load("judging_the_judges_thakur2024")
    recs = ds.records[:200]
    rows = []
    for n, r in enumerate(recs):
        p1 = 0.9 if (r.scores["correct"][0] == "True") == (n % 5 != 0) else 0.1
        det = {"probs": {"1": p1, "0": 1 - p1}, "confidence": "logprobs"}
        rows.append({"key": f"{r.id}::{r.system}", "item": r.id, "metric": "eq", "details": det})
    t = verdict_table(ds, rows)
    assert t.classes == ("False", "True") and len(t) == 200
    res = calibrate_sets(t, repeats=5)
    assert all(m["coverage"] >= 0.8 for m in res.methods)
    sd = judge_columns(ds, rows, ["eq"])
    agree = sum(p == h for p, h in zip(sd.judges[0].pred, sd.human, strict=True)) / len(sd.human)
    assert agree == pytest.approx(0.8)  # every fifth verdict is wrong by construction


def test_pairwise_confidence_rows_feed_calibrate(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The scripted judge's p(a / b / tie) written as score rows is a confidence column that
    ``calibrate selective`` and ``calibrate conformal`` read through ``--scores FILE``."""
    import json

    from metajudge.analyses.judge_biases import DiagnosticsResult
    from metajudge.cli import main
    from metajudge.data.loading import load
    from metajudge.reports.swap_report import write_diagnostics_report
    from metajudge.runs.judge_diagnostics import diagnose_backbone
    from tests.analyses.test_selective import write_pairs

    data, _, _ = write_pairs(tmp_path, n=120)
    ds = load(data)
    human = {r.id: r.labels["preference"][0] for r in ds.records}

    def script(r: Request) -> Any:
        n = int(re.findall(r"Instruction: q(\d+)\b", text_of(r))[-1])
        right = "B" if human[f"p{n}"] > 0 else "A"
        wrong = "A" if right == "B" else "B"
        sure = n % 4 != 0  # a quarter of the verdicts unsure and wrong
        top = [(right, 0.9), (wrong, 0.08)] if sure else [(wrong, 0.5), (right, 0.4)]
        return _verdict_choice([*top, ("tie", 0.02)])

    j = PairwiseJudge(
        backbone="scripted",
        backend=ScriptedBackend(script),
        constrained=False,
        confidence="logprobs",
    )
    # what `judge diagnostics --confidence logprobs --out DIR` runs and writes
    diag = DiagnosticsResult(dataset="t", dimension="preference", n_pairs=120, protocol="p")
    diag.backbones["judge"] = diagnose_backbone(
        j, list(ds.records), dimension="preference", confidence_metric="judge_conf"
    )
    paths = write_diagnostics_report(diag, tmp_path / "diag")
    scores = paths["confidence"]
    rows = [json.loads(ln) for ln in scores.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 240 and all(r["details"]["renormalised"] for r in rows)
    assert "confidence_rows" not in paths["json"].read_text(encoding="utf-8")
    assert "0 judged verdict(s) without probabilities" in paths["markdown"].read_text("utf-8")
    base = ["--input", str(data), "--scores", str(scores)]
    assert (
        main(
            [
                "calibrate",
                "selective",
                *base,
                "--judge",
                "judge_conf",
                "--risk",
                "0.1",
                "--format",
                "json",
            ]
        )
        == 0
    )
    (cfg,) = json.loads(capsys.readouterr().out)["configs"]
    assert cfg["coverage_mean"] == pytest.approx(0.75, abs=0.1) and cfg["agreement_mean"] == 1.0
    assert main(["calibrate", "conformal", *base, "--repeats", "5", "--format", "json"]) == 0
    sets = json.loads(capsys.readouterr().out)
    assert sets["classes"] == ["a", "b"] and all(m["coverage"] >= 0.85 for m in sets["methods"])
