"""``metajudge data export --pairs`` (issue 26 item 4): a canonical pairwise file from graded data, through
the CLI on ``tests/fixtures/byod/graded.jsonl`` (six inputs, two systems, three raters)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

GRADED = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"


def _pairs(tmp_path: Path, *extra: str) -> tuple[Path, str]:
    out = tmp_path / "pairs.jsonl"
    assert main(["data", "export", "--pairs", "--input", str(GRADED), "-o", str(out), *extra]) == 0
    return out, str(out)


def _lines(path: Path) -> tuple[dict, dict[str, dict]]:
    rows = [json.loads(ln) for ln in path.read_text().splitlines()]
    return rows[0]["card"], {r["id"]: r for r in rows[1:]}


def test_pairs_label_is_the_difference_of_human_means_with_the_tie_band(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = _pairs(tmp_path, "--tie-band", "0.7")
    said = capsys.readouterr().out
    assert "wrote 6 pairs from 6 inputs of byod_summaries" in said
    assert "tie band 0.7; ties: coherence 2, relevance 1" in said
    card, recs = _lines(out)
    assert card["kind"] == "pairwise" and card["scale"] == {"min": -4.0, "max": 4.0}
    assert "tie band 0.7" in card["notes"] and card["annotators"] == 1
    p = recs["news1::abstractive|extractive"]
    assert (p["a"]["system"], p["b"]["system"]) == ("abstractive", "extractive")
    # coherence: extractive [3, 4, 3], abstractive [5, 4, 5] -> 10/3 - 14/3
    assert p["labels"]["coherence"][0] == pytest.approx(10 / 3 - 14 / 3)
    assert p["meta"] == {"item_id": "news1", "from": "likert", "tie_band": 0.7}
    news6 = recs["news6::abstractive|extractive"]["labels"]
    assert news6["coherence"] == [0.0]  # |-2/3| <= 0.7: a tie
    assert news6["relevance"][0] == pytest.approx(-5 / 6)  # outside the band: kept
    assert main(["data", "validate", str(out)]) == 0
    assert "OK" in capsys.readouterr().out


def test_default_tie_band_is_stated_and_pairwise_input_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = _pairs(tmp_path)
    assert "tie band 0;" in capsys.readouterr().out
    card, recs = _lines(out)
    assert "tie band 0:" in card["notes"] and "tie_band" not in next(iter(recs.values()))["meta"]
    again = tmp_path / "again.jsonl"
    assert main(["data", "export", "--pairs", "--input", str(out), "-o", str(again)]) == 2
    assert "it is pairwise already" in capsys.readouterr().err and not again.exists()


def test_pairs_are_what_judge_diagnostics_judges(tmp_path: Path) -> None:
    """The file loads as judge diagnostics loads it (pairwise, both response texts)."""
    from metajudge.data.loading import open_dataset
    from metajudge.runs.judge_diagnostics import diagnostics_pairs

    out, _ = _pairs(tmp_path)
    ds = open_dataset(None, out)
    pairs, subset = diagnostics_pairs(ds.records, limit=100, seed=0)
    assert ds.card.kind == "pairwise" and len(pairs) == 6 and subset["no_texts"] == 0


@pytest.mark.slow
@pytest.mark.llm
def test_pairs_run_through_judge_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``judge diagnostics`` on the built file with the embedded smollm2-135m (2 pairs)."""
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] not installed")
    _, out = _pairs(tmp_path)
    argv = ["judge", "diagnostics", "--input", out, "--backbones", "smollm2-135m"]
    assert main([*argv, "--limit", "2", "--format", "json"]) == 0
    diag = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert diag["n_pairs"] == 2 and diag["subset"]["N"] == 6
    assert diag["backbones"]["smollm2-135m"]["n"] == 2
    # --confidence logprobs: the verdicts' probabilities as score rows, one per side
    run = tmp_path / "diag"
    assert main([*argv, "--limit", "2", "--confidence", "logprobs", "--out", str(run)]) == 0
    rows = [json.loads(ln) for ln in (run / "confidence.jsonl").read_text("utf-8").splitlines()]
    assert len(rows) == 4 and {r["metric"] for r in rows} == {"confidence_smollm2-135m"}
    for a, b in zip(rows[::2], rows[1::2]):  # side a, side b of one pair
        assert (a["side"], b["side"], a["item"]) == ("a", "b", b["item"])
        if a["score"] is None:  # no probabilities: counted, both rows unscored with the reason
            assert b["score"] is None and a["error"] == "no verdict probabilities"
        else:
            assert 0.0 <= a["score"] <= 1.0 and a["score"] + b["score"] == pytest.approx(1.0)
    md = (run / "diagnostics.md").read_text("utf-8")
    assert "judged verdict(s) without probabilities" in md
