"""AlpacaEval evaluator configs read as they are (issue 38): ``judge:DIR/configs.yaml``.

The three parsers on hand-written replies give what AlpacaEval's ``completion_parsers.py``
(tatsu-lab/alpaca_eval at cd543a1) gives; the five shipped configs load unchanged and fill
their templates from a pairwise record (scripted backend; the real backbone runs in
test_defined_llm.py)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from metajudge.backends.base import Choice, TokenLogprob
from metajudge.metrics.judges.parsers.alpaca_eval import (
    logprob_parser,
    ranking_parser,
    regex_parser,
)
from metajudge.metrics.registry import get_metric
from tests.metrics.judges.test_metrics import ScriptedBackend

PAIRS = Path(__file__).parents[2] / "fixtures" / "byod" / "pairwise.jsonl"


def _configs() -> Path:
    """``../shared/judge_configs/alpaca_eval`` (beside the data folder, or the repository)."""
    here = [Path(__file__).parents[3].parent / "shared"]
    if os.environ.get("METAJUDGE_DATA_DIR"):
        here.insert(0, Path(os.environ["METAJUDGE_DATA_DIR"]).parent)
    for base in here:
        if (base / "judge_configs" / "alpaca_eval").is_dir():
            return base / "judge_configs" / "alpaca_eval"
    # the configs ship beside the data (CI: ../shared): their absence is a broken checkout, not a
    # reason to pass without running
    pytest.fail(
        f"../shared/judge_configs/alpaca_eval is absent (looked in {[str(b) for b in here]})"
    )


def test_logprob_parser_m_minus_0_1_and_M_minus_2_4() -> None:
    p_m = math.exp(-0.1) / (math.exp(-0.1) + math.exp(-2.4))
    top = [("m", -0.1), ("M", -2.4)]
    assert logprob_parser(top, "m", ["m", "M"], is_binarize=False) == pytest.approx(2 - p_m)
    assert logprob_parser(top, "m", ["m", "M"], is_binarize=True) == 1.0
    assert logprob_parser([("M", -0.1), ("m", -2.4)], "m", ["m", "M"], is_binarize=True) == 2.0
    # tokens match exactly (AlpacaEval's dict lookup): " m" is not "m"; none present: NaN → None
    assert logprob_parser([(" m", -0.1), ("The", -1.0)], "m", ["m", "M"], False) is None
    # only M present: p(m) = 0 → preference 2
    assert logprob_parser([("M", -0.3), ("Both", -1.0)], "m", ["m", "M"], False) == 2.0


def test_ranking_parser() -> None:
    assert ranking_parser("[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]") == 1
    assert ranking_parser("[{'model': 'model_2', 'rank': 1}, {'model': 'model_1', 'rank': 2}]") == 2
    assert ranking_parser("[{'model': 'model_1', 'rank': 3}]") is None  # rank not 1 or 2
    assert ranking_parser("model_1 is better") is None  # not a Python literal
    assert ranking_parser("[{'model': 'model_3', 'rank': 1}]") is None  # model_1 absent
    assert ranking_parser("[{'model': 'a', 'rank': 1}]", model_1_name="a") == 1


def test_regex_parser_one_annotation_per_reply() -> None:
    pats = {1: r"(?:^|\n) ?Output \(a\)", 2: r"(?:^|\n) ?Output \(b\)"}
    assert regex_parser("Output (b)", pats) == 2
    assert regex_parser(" Output (a)\n\nBecause it is concise.", pats) == 1
    assert regex_parser("I prefer Output (a)", pats) is None  # not at a line start
    assert regex_parser("Output (a)\nOutput (b)", pats) is None  # two annotations for one item
    assert regex_parser("", pats) is None


def test_the_five_configs_load_unchanged() -> None:
    from metajudge.metrics.judges.defined import load_definition

    got = {p.parent.name: load_definition(p) for p in sorted(_configs().glob("*/configs.yaml"))}
    assert len(got) == 5
    parsers = {k: d.parse["parser"] for k, d in got.items()}
    assert parsers == {
        "alpaca_eval_clf_gpt4_turbo": "logprob_parser",
        "alpaca_eval_gpt4": "ranking_parser",
        "alpaca_eval_llama3_70b_fn": "ranking_parser",
        "chatgpt": "regex_parser",  # the pairwise annotator's default parser
        "weighted_alpaca_eval_gpt4_turbo": "logprob_parser",
    }
    w = got["weighted_alpaca_eval_gpt4_turbo"]
    assert w.sampling["max_tokens"] == 1 and w.sampling["top_logprobs"] == 5
    assert any("gpt-4-1106-preview" in n for n in w.notes)  # the model is the backbone's


def test_weighted_config_on_a_pair_gives_p_m_as_side_a_confidence() -> None:
    cfg = _configs() / "weighted_alpaca_eval_gpt4_turbo" / "configs.yaml"
    reply = Choice("m", "m", logprobs=(TokenLogprob("m", -0.1, (("m", -0.1), ("M", -2.4))),))
    be = ScriptedBackend(lambda r: reply)
    m = get_metric(f"judge:{cfg}", backend=be)
    from metajudge.data.loading import open_dataset
    from metajudge.metrics.base import iter_responses

    recs = list(open_dataset(None, str(PAIRS)).records)
    res = m.score_batch([r.score_item() for r in iter_responses(recs[:1])])
    p_m = math.exp(-0.1) / (math.exp(-0.1) + math.exp(-2.4))
    assert res[0].score == pytest.approx(p_m) and res[1].score == pytest.approx(1 - p_m)
    sys_msg, user = be.seen[0].messages
    assert sys_msg["role"] == "system" and user["role"] == "user"
    assert f'"output": """{recs[0].a.response}"""' in user["content"]  # output_1 = a
    assert f'"instruction": """{recs[0].input.question}"""' in user["content"]
    assert be.seen[0].max_tokens == 1 and be.seen[0].temperature == 1.0
    assert m.confidence == "logprobs"


def test_ranking_config_reply_parsed_and_failure_counted() -> None:
    cfg = _configs() / "alpaca_eval_llama3_70b_fn" / "configs.yaml"
    replies = iter(["[{'model': 'model_1', 'rank': 2}, {'model': 'model_2', 'rank': 1}]", "huh"])
    m = get_metric(f"judge:{cfg}", backend=ScriptedBackend(lambda r: next(replies)))
    from metajudge.data.loading import open_dataset

    recs = list(open_dataset(None, str(PAIRS)).records)[:2]
    ab = m.judge(recs, order="ab")
    assert ab[0].preferred is not None and int(ab[0].preferred) == 1  # b better
    assert ab[1].preferred is None and ab[1].error == "unparsed"
    assert m.summary["parse_failures"] == 1
