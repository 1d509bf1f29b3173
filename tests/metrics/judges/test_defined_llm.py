"""``judge:PATH`` end to end on the real embedded llama.cpp backbone (issue 38; slow tier).

- the two fixture definitions (tests/fixtures/judges/) on seeded subsets of shipped datasets:
  the 1-5 faithfulness rubric (log-probabilities) on ``summeval_ppairs`` through
  ``metrics run``, ``meta-eval`` and ``judge swap`` (smollm2-135m vs gemma3-270m); the pairwise
  preference judge (label probabilities) on ``llmbar`` through ``judge diagnostics`` (position and
  length bias) and ``calibrate selective`` on its confidences;
- AlpacaEval's ``weighted_alpaca_eval_gpt4_turbo`` and ``alpaca_eval_llama3_70b_fn`` unchanged on
  20 seeded pairs of ``llmbar``: parsed preferences, parse-failure rate, agreement with humans;
- the cache: a rerun is served from it, a one-character change misses it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main
from tests.metrics.judges.test_alpaca_eval import _configs

pytestmark = [pytest.mark.slow, pytest.mark.llm]

FIX = Path(__file__).parents[2] / "fixtures" / "judges"
RUBRIC = FIX / "faithfulness_rubric.yaml"
PAIRWISE = FIX / "pairwise_preference.yaml"


def _llama() -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make llama)")


def _subset(load: Any, name: str, n: int, path: Path, seed: int = 0) -> Path:
    """``n`` items of a shipped dataset drawn with ``seed``, written as a dataset file."""
    from metajudge.data.formats import write_jsonl
    from metajudge.data.subsample import select

    ds = load(name)
    write_jsonl(path, select(ds.records, limit=n, seed=seed).records, ds.card)
    return path


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    capsys.readouterr()  # what earlier commands printed
    code = main([*argv, "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_rating_rubric_metrics_run_meta_eval_and_swap(
    load: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _llama()
    # two articles with their 16 summaries each (a swap compares decisions on pairs of them)
    data = _subset(load, "summeval_ppairs", 2, tmp_path / "sub.jsonl")
    name = f"judge:{RUBRIC}"
    scores = tmp_path / "s.jsonl"
    argv = ["metrics", "run", "--input", str(data), "--metrics", name, "-o", str(scores)]
    assert main([*argv, "--quiet"]) == 0
    rows = [json.loads(ln) for ln in scores.read_text().splitlines()]
    scored = [r for r in rows if r["score"] is not None]
    assert scored and all(1.0 <= r["score"] <= 5.0 for r in scored)
    assert all("probs" in r["details"] for r in scored)  # the expected score over 1-5
    argv = ["meta-eval", "--input", str(data), "--metrics", name, "--out", str(tmp_path / "me")]
    assert main([*argv, "--n-boot", "200", "--no-plots", "--quiet", "--no-baselines"]) == 0
    assert name in (tmp_path / "me" / "table.md").read_text()
    argv = ["judge", "swap", "--input", str(data), "--metric", name, "--dimension", "consistency"]
    res = _json(capsys, [*argv, "--backbones", "smollm2-135m,gemma3-270m", "--n-boot", "200"])
    assert set(res["signatures"]) == {"smollm2-135m", "gemma3-270m"}
    # the same definition, two backbones: the digest is shared, the model is not
    digests = {s.split("def:")[1][:12] for s in res["signatures"].values()}
    assert len(digests) == 1


def test_pairwise_judge_diagnostics_and_selective(
    load: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _llama()
    data = _subset(load, "llmbar", 40, tmp_path / "pairs.jsonl")
    argv = ["judge", "diagnostics", "--input", str(data), "--backbones", "smollm2-135m"]
    res = _json(capsys, [*argv, "--metric", f"judge:{PAIRWISE}", "--out", str(tmp_path / "d")])
    bb = res["backbones"]["smollm2-135m"]
    assert {"position", "length", "accuracy"} <= set(bb)
    assert bb["calls"] == 80 and bb["parse_failure_rate"] is not None
    conf = tmp_path / "d" / "confidence.jsonl"
    rows = [json.loads(ln) for ln in conf.read_text().splitlines()]
    assert sum(r["score"] is not None for r in rows) >= 40  # probabilities from the verdict token
    argv = ["calibrate", "selective", "--input", str(data), "--scores", str(conf)]
    sel = _json(capsys, [*argv, "--judge", "confidence_smollm2-135m", "--calibration", "20"])
    assert "confidence_smollm2-135m" in json.dumps(sel)


@pytest.mark.parametrize("config", ["weighted_alpaca_eval_gpt4_turbo", "alpaca_eval_llama3_70b_fn"])
def test_alpaca_eval_configs_unchanged_on_20_pairs(
    config: str, load: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _llama()
    data = _subset(load, "llmbar", 20, tmp_path / "pairs.jsonl")
    cfg = _configs() / config / "configs.yaml"
    argv = ["judge", "diagnostics", "--input", str(data), "--backbones", "smollm2-135m"]
    res = _json(capsys, [*argv, "--metric", f"judge:{cfg}"])
    bb = res["backbones"]["smollm2-135m"]
    assert bb["n"] == 20 and bb["calls"] == 40
    parsed = [v for v in bb["verdicts"] if v["ab"] is not None]
    rate = bb["parse_failure_rate"]
    assert rate == pytest.approx(
        1 - sum(v[o] is not None for v in bb["verdicts"] for o in ("ab", "ba")) / 40
    )
    assert "accuracy" in bb  # agreement with the humans on the parsed verdicts
    print(
        f"{config}: {len(parsed)}/20 parsed (ab), parse-failure rate {rate}, accuracy {bb['accuracy']}"
    )


def test_cache_hit_then_one_character_miss(load: Any, tmp_path: Path) -> None:
    _llama()
    from metajudge.metrics.base import iter_responses
    from metajudge.metrics.registry import get_metric

    ds = load("summeval_summac_consistency")
    items = [r.score_item() for r in iter_responses(ds.records[:3])]
    changed = tmp_path / "changed.yaml"
    changed.write_text(RUBRIC.read_text().replace("fact checker.", "fact checker!"))

    def calls(path: Path) -> tuple[int, list[float | None]]:
        m = get_metric(f"judge:{path}", backbone="smollm2-135m")
        try:
            res = m.score_batch(items)
            return m.summary["cost"]["calls"], [r.score for r in res]
        finally:
            m.close()

    first, scores = calls(RUBRIC)
    again, scores2 = calls(RUBRIC)
    miss, _ = calls(changed)
    assert first == 3 and again == 0 and scores2 == scores
    assert miss == 3
