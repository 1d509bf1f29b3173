"""inspect_ai end to end (issue 39, slow tier): a small task on a shipped dataset, graded by
inspect_ai's ``model_graded_qa`` scorer whose grader is the embedded backbone (the llama.cpp
server's OpenAI-compatible endpoint), its log read by ``meta-eval --scores``, the grader's
explanations in report.html."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from metajudge.cli import main
from tests.scores.test_frameworks import page_explanations

pytestmark = pytest.mark.slow
FIX = Path(__file__).resolve().parents[1] / "fixtures" / "frameworks"


def _labels(data_dir: Path, out: Path, n_items: int) -> Path:
    """The first ``n_items`` items of SummEval-SummaC consistency (one summary each) as canonical
    JSONL."""
    from metajudge.data.loading import open_dataset

    ds = open_dataset("summeval_summac_consistency", None, data_dir=data_dir)
    ids = list(dict.fromkeys(r.id for r in ds.records))[:n_items]
    recs = [r for r in ds.records if r.id in ids]
    lines = [json.dumps({"card": ds.card.to_dict()})]
    lines += [json.dumps(r.to_dict()) for r in recs]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_inspect_task_graded_by_the_embedded_backbone_read_by_meta_eval(
    data_dir: Path, tmp_path: Path
) -> None:
    pytest.importorskip("inspect_ai")
    pytest.importorskip("llama_cpp")
    sys.path.insert(0, str(FIX))
    from make_inspect_log import make_log  # the fixture's own maker

    labels = _labels(data_dir, tmp_path / "labels.jsonl", 4)
    log = make_log(labels, tmp_path / "logs", epochs=1)
    from inspect_ai.log import read_eval_log

    samples = read_eval_log(str(log)).samples or []
    assert len(samples) == 4  # one summary per item
    # a grade is a letter; a reply the grader left without one is NaN (a missing score, dropped)
    graded = [s for s in samples if isinstance(s.scores["model_graded_qa"].value, str)]
    assert graded, "the embedded grader graded none of the 4 samples"
    explanation = graded[0].scores["model_graded_qa"].explanation
    out = tmp_path / "run"
    argv = ["meta-eval", "--input", str(labels), "--scores", str(log), "--out", str(out)]
    assert main([*argv, "--no-plots", "--n-boot", "200"]) == 0
    res = json.loads((out / "result.json").read_text(encoding="utf-8"))
    cell = next(c for c in res["cells"] if c["metric"] == "model_graded_qa")
    assert cell["n_responses"] == len(graded)  # pointwise drops missing scores (issue 42)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert explanation in page_explanations(page)
