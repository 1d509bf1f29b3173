"""`metajudge metrics show` and the options in `metrics list --format json` (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main


def test_metrics_show_rouge_l_lists_variant_with_its_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metrics", "show", "rouge_l", "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    opts = {o["name"]: o for o in info["options"]}
    assert opts["variant"]["choices"] == ["rougeL", "rouge1", "rouge2", "rougeLsum"]
    assert opts["variant"]["default"] == "rougeL"
    assert opts["variant"]["signature"] == "variant:rougeL -> variant:rouge1"
    assert opts["use_stemmer"]["type"] == "bool"
    assert opts["use_stemmer"]["signature"] == "stem:yes -> stem:no"
    assert info["needs"] == ["response", "reference"]
    assert main(["metrics", "show", "rouge_l"]) == 0
    md = capsys.readouterr().out
    assert "| variant | 'rougeL' \\| 'rouge1' \\| 'rouge2' \\| 'rougeLsum' | 'rougeL' |" in md


def test_metrics_show_names_bertscores_model_and_registry_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metrics", "show", "bertscore", "--format", "json"]) == 0
    opts = {o["name"]: o for o in json.loads(capsys.readouterr().out)["options"]}
    assert opts["model"]["default"] == "all-MiniLM-L6-v2"  # the registry's default, not roberta
    assert opts["idf"]["signature"] == "idf:no -> idf:yes"
    assert opts["batch_size"]["range"] == ">= 0"


def test_metrics_list_json_carries_every_metrics_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metrics", "list", "--format", "json"]) == 0
    by = {i["name"]: i for i in json.loads(capsys.readouterr().out)}
    assert {o["name"] for o in by["rouge_l"]["options"]} == {"use_stemmer", "variant"}
    assert all("options" in i for i in by.values() if not i.get("unavailable"))
    geval = {o["name"]: o for o in by["geval_faithfulness"]["options"]}
    assert geval["mode"]["choices"] == ["logprobs", "samples", "greedy"]


def test_metrics_show_unknown_metric_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "show", "rouge_9"]) == 2
    assert "unknown metric 'rouge_9'" in capsys.readouterr().err


def test_score_with_the_rouge_variant_option(tmp_path: Path) -> None:
    """`--option rouge_l.variant=rouge1` was "unknown option"; it scores ROUGE-1 now."""
    from rouge_score import rouge_scorer

    from metajudge.scores.files import read_scores

    card = {
        "name": "tiny",
        "kind": "likert",
        "dimensions": ["quality"],
        "scale": {"min": 1, "max": 5},
    }
    rec = {
        "id": "r1",
        "input": {"question": "q", "reference": "the cat sat on the mat"},
        "system": "s",
        "response": "a cat sat on a mat",
        "scores": {"quality": [3]},
    }
    src = tmp_path / "tiny.jsonl"
    src.write_text(json.dumps({"card": card}) + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    out = tmp_path / "scores.jsonl"
    args = ["metrics", "run", "--input", str(src), "--metrics", "rouge_l", "-o", str(out)]
    assert main([*args, "--option", "rouge_l.variant=rouge1"]) == 0
    (row,) = read_scores(out)
    want = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(
        "the cat sat on the mat", "a cat sat on a mat"
    )["rouge1"]
    assert row["score"] == pytest.approx(want.fmeasure, abs=1e-12)
    assert "variant:rouge1" in row["signature"]


def test_metrics_show_bleu_prints_no_library_warning(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """issue 42: the option table's probe of effective_order=False made sacrebleu advise on
    stderr; the advice concerns the probe, not the user's setting."""
    assert main(["metrics", "show", "bleu"]) == 0
    out = capsys.readouterr()
    assert "effective_order" in out.out  # the option is listed
    assert "recommended" not in out.err and "recommended" not in caplog.text
