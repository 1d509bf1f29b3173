"""``judge:PATH`` is a metric name wherever one is taken (issue 38): ``metrics run``,
``meta-eval --metrics``, ``matrix run``, ``judge diagnostics --metric``, ``judge swap
--metric``, and its pairwise probabilities as the confidence column of ``calibrate selective``.

The backend is scripted (a deterministic reply per prompt, through the real response cache's
wrapper is not needed here: the commands' own paths are under test); the real llama.cpp
backbone runs the same commands in tests/metrics/judges/test_defined_llm.py."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.base import Choice, Request, TokenLogprob
from metajudge.cli import main
from tests.metrics.judges.test_metrics import ScriptedBackend

FIX = Path(__file__).parents[1] / "fixtures"
RUBRIC = FIX / "judges" / "faithfulness_rubric.yaml"
PAIRWISE = FIX / "judges" / "pairwise_preference.yaml"
GRADED = FIX / "byod" / "graded.jsonl"
PAIRS = FIX / "byod" / "pairwise.jsonl"


def _reply(r: Request) -> Choice:
    """A reply whose probabilities depend on the prompt (so the scores vary across items)."""
    text = json.dumps(r.to_dict(), sort_keys=True)
    u = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2**32
    if r.grammar and '"A"' in r.grammar:
        probs = {"A": 0.1 + 0.8 * u, "B": 0.9 - 0.8 * u, "tie": 0.05}
    else:
        probs = {"3": 0.2, "4": 0.3 + 0.5 * u, "5": 0.5 - 0.5 * u + 0.01}
    top = tuple((t, math.log(p)) for t, p in sorted(probs.items(), key=lambda kv: -kv[1]))
    return Choice(top[0][0], top[0][0], logprobs=(TokenLogprob(top[0][0], top[0][1], top),))


class _Scripted(ScriptedBackend):
    def complete(self, requests: Any, on_result: Any = None) -> Any:  # the cache's callback
        out = super().complete(requests)
        for i, o in enumerate(out if on_result is not None else ()):
            on_result(i, o)
        return out


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[ScriptedBackend]:
    """Every backend the commands build is a scripted one behind the response cache (as
    get_backend builds them); the scripted ones are listed, to count the calls."""
    import metajudge.backends.registry as reg
    from metajudge.backends.cache import ResponseCache
    from metajudge.backends.cached import CachedBackend

    made: list[ScriptedBackend] = []

    def build(name: str = "", **kw: Any) -> Any:
        made.append(_Scripted(_reply, name=name))
        return CachedBackend(made[-1], ResponseCache(tmp_path / "cache.sqlite"))

    monkeypatch.setattr(reg, "get_backend", build)
    return made


def test_metrics_run_and_meta_eval(
    tmp_path: Path, scripted: list[ScriptedBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"judge:{RUBRIC}"
    out = tmp_path / "s.jsonl"
    assert (
        main(
            ["metrics", "run", "--input", str(GRADED), "--metrics", name, "-o", str(out), "--quiet"]
        )
        == 0
    )
    rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert len(rows) == 12 and all(r["metric"] == name and 3 <= r["score"] <= 5 for r in rows)
    assert rows[0]["signature"].startswith("judge:faithfulness-rubric|backbone:smollm2-135m|")
    capsys.readouterr()
    argv = ["meta-eval", "--input", str(GRADED), "--metrics", name, "--out", str(tmp_path / "me")]
    assert main([*argv, "--n-boot", "50", "--no-plots", "--quiet", "--no-baselines"]) == 0
    res = json.loads((tmp_path / "me" / "result.json").read_text())
    assert name in json.dumps(res)


def test_pairwise_definition_diagnostics_and_selective(
    tmp_path: Path, scripted: list[ScriptedBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"judge:{PAIRWISE}"
    argv = ["judge", "diagnostics", "--input", str(PAIRS), "--backbones", "smollm2-135m"]
    assert main([*argv, "--metric", name, "--out", str(tmp_path / "d"), "--format", "json"]) == 0
    diag = json.loads(capsys.readouterr().out)
    bb = diag["backbones"]["smollm2-135m"]
    assert bb["signature"].startswith("judge:pairwise-preference|")
    assert {"position", "length", "accuracy"} <= set(bb) and bb["parse_failures"] == 0
    conf = tmp_path / "d" / "confidence.jsonl"
    assert conf.is_file()  # the verdicts' p(a better) / p(b better): a confidence column
    argv = ["calibrate", "selective", "--input", str(PAIRS), "--scores", f"{conf}"]
    code = main([*argv, "--judge", "confidence_smollm2-135m", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "confidence_smollm2-135m" in out.out


def test_judge_swap_over_two_backbones(
    tmp_path: Path, scripted: list[ScriptedBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"judge:{RUBRIC}"
    argv = ["judge", "swap", "--input", str(GRADED), "--metric", name, "--dimension", "coherence"]
    assert (
        main(
            [*argv, "--backbones", "smollm2-135m,gemma3-270m", "--format", "json", "--n-boot", "50"]
        )
        == 0
    )
    res = json.loads(capsys.readouterr().out)
    assert set(res["signatures"]) == {"smollm2-135m", "gemma3-270m"}
    assert all("def:" in s for s in res["signatures"].values())


def test_diagnostics_refuse_a_rating_definition(
    scripted: list[ScriptedBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["judge", "diagnostics", "--input", str(PAIRS), "--backbones", "smollm2-135m"]
    assert main([*argv, "--metric", f"judge:{RUBRIC}"]) == 2
    assert "is a rating judge, not pairwise" in capsys.readouterr().err
    assert not scripted  # refused before any backend was built


@pytest.mark.parametrize(("definition", "data"), [(RUBRIC, GRADED), (PAIRWISE, PAIRS)])
def test_matrix_run_cell(
    definition: Path,
    data: Path,
    tmp_path: Path,
    scripted: list[ScriptedBackend],
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"judge:{definition}"
    argv = ["matrix", "run", "--metric", name, "--input", str(data), "--n-boot", "50"]
    assert main([*argv, "--out", str(tmp_path / "m"), "--format", "json", "--quiet"]) == 0
    cell = json.loads((tmp_path / "m" / "cell.json").read_text())
    assert cell["metric"] == name and cell["results"]


def test_two_definitions_compared_by_judge_swap(
    tmp_path: Path, scripted: list[ScriptedBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge variant is (definition, backbone): the old rubric on smollm2-135m against a new
    one on the same backbone, through the swap report (paired test, verdict) and the decision
    (non-inferiority at a margin)."""
    new = tmp_path / "new.yaml"
    new.write_text(PAIRWISE.read_text().replace("follows the instruction better", "is better"))
    y = f"judge:{new}@smollm2-135m"
    base = ["judge", "swap", "--input", str(PAIRS), "--metric", f"judge:{PAIRWISE}"]
    base += ["--backbones", f"smollm2-135m,{y}", "--n-boot", "50"]
    assert main([*base, "--out", str(tmp_path / "sw"), "--format", "json"]) == 0
    capsys.readouterr()
    md = (tmp_path / "sw" / "swap.md").read_text()
    assert "paired tests" in md and "## Verdicts" in md and f"{y} agrees with smollm2-135m" in md
    sigs = json.loads((tmp_path / "sw" / "swap.json").read_text())["signatures"]
    assert sigs["smollm2-135m"].split("def:")[1][:12] != sigs[y].split("def:")[1][:12]
    assert main([*base, "--x", "smollm2-135m", "--y", y, "--out", str(tmp_path / "dec")]) == 0
    decision = (tmp_path / "dec" / "decision.md").read_text()
    assert "non_inferiority" in decision and y in decision


def test_alt_test_with_the_definition_as_llm_annotator(
    tmp_path: Path, scripted: list[ScriptedBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"judge:{RUBRIC}"
    argv = ["decide", "alt-test", "--input", str(GRADED), "--metric", name, "--min-items", "5"]
    assert main([*argv, "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    text = json.dumps(res)
    assert name in text and "annotator_1" in text and "winning_rate" in text
    assert len(scripted) == 1 and len(scripted[0].seen) == 12  # every response judged once


def test_alt_test_of_the_definition_on_a_subset(
    tmp_path: Path, scripted: list[ScriptedBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--subset`` with ``--metric``: the labelled dataset's subset, as every command reads it
    (the judge card's Alt-Test part names it on its command line)."""
    lines = GRADED.read_text(encoding="utf-8").splitlines()
    recs = [json.loads(ln) for ln in lines[1:]]
    for r in recs:
        r["meta"] = {"subset": "first" if r["id"] in ("news1", "news2", "news3") else "rest"}
    data = tmp_path / "graded_subsets.jsonl"
    data.write_text("\n".join([lines[0], *map(json.dumps, recs)]) + "\n", encoding="utf-8")
    name = f"judge:{RUBRIC}"
    argv = ["decide", "alt-test", "--input", str(data), "--metric", name, "--subset", "first"]
    assert main([*argv, "--min-items", "3", "--format", "json"]) == 0
    assert "winning_rate" in capsys.readouterr().out
    assert len(scripted) == 1 and len(scripted[0].seen) == 6  # the subset's responses only


def test_option_of_a_defined_judge(
    tmp_path: Path, scripted: list[ScriptedBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"judge:{RUBRIC}"
    out = tmp_path / "s.jsonl"
    argv = ["metrics", "run", "--input", str(GRADED), "--metrics", name, "-o", str(out)]
    assert main([*argv, "--option", f"{name}.max_chars=400", "--quiet"]) == 0
    rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert "|chars:400|" in rows[0]["signature"]
