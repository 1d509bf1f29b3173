"""docs/judges.md's recipe for two prompts on a pointwise dataset (issue 62), run as written:
``metrics run`` scores both definitions into one file whose columns are ``judge:PATH``, then
``judge card`` takes each column by that name (``--judge judge:PATH``: the colon is no
``PATH:COL`` split) and writes a card per prompt, titled with the definition's ``name``, and the
comparison page with the paired tests. Fast tier: the scripted backend; slow tier: the embedded
llama.cpp backbone."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from metajudge.cli import main
from tests.cli.test_defined_judge_commands import RUBRIC, scripted  # noqa: F401

DOC = Path(__file__).resolve().parents[2] / "docs" / "judges.md"


def _recipe() -> list[list[str]]:
    """The commands of the docs' block that follows 'On a pointwise dataset', one argv each."""
    text = DOC.read_text(encoding="utf-8").split("On a pointwise dataset", 1)[1]
    block = text.split("```bash", 1)[1].split("```", 1)[0]
    joined = re.sub(r"\\\n\s*", " ", block)
    return [shlex.split(ln)[1:] for ln in joined.splitlines() if ln.startswith("metajudge ")]


def _definitions(folder: Path) -> None:
    """The recipe's two prompts: the fixture rubric and a variant with its own name."""
    v1 = RUBRIC.read_text(encoding="utf-8")
    (folder / "faithfulness.yaml").write_text(v1, encoding="utf-8")
    v2 = v1.replace("name: faithfulness-rubric", "name: faithfulness-strict").replace(
        "You are a careful fact checker.", "You are a strict fact checker."
    )
    assert v2 != v1
    (folder / "faithfulness_v2.yaml").write_text(v2, encoding="utf-8")


def _run_recipe(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch, data: Path | None = None
) -> Path:
    """The recipe's commands through the CLI in ``tmp_path``; ``data``: a file of the dataset's
    records in place of ``--dataset summeval_summac_consistency`` (a small draw of it)."""
    _definitions(tmp_path)
    monkeypatch.chdir(tmp_path)  # the recipe names judge:faithfulness.yaml and runs/ relatively
    steps = _recipe()
    assert [s[:2] for s in steps] == [["metrics", "run"], ["judge", "card"]]
    for argv in steps:
        if data is not None:
            at = argv.index("--dataset")
            argv = [*argv[:at], "--input", str(data), *argv[at + 2 :]]
        assert main([*argv, "--data-dir", str(data_dir)]) == 0, argv
    return tmp_path / "runs"


def _check(runs: Path, dataset: str = "summeval_summac_consistency") -> dict:
    rows = [json.loads(ln) for ln in (runs / "prompts.jsonl").read_text().splitlines()]
    assert {r["metric"] for r in rows} == {"judge:faithfulness.yaml", "judge:faithfulness_v2.yaml"}
    doc = json.loads((runs / "prompts" / "cards.json").read_text(encoding="utf-8"))
    assert len(doc["cards"]) == 2
    cards = [
        json.loads((runs / "prompts" / link).with_name("card.json").read_text(encoding="utf-8"))
        for link in doc["cards"]
    ]
    assert [c["judge"] for c in cards] == ["judge:faithfulness.yaml", "judge:faithfulness_v2.yaml"]
    assert [c["name"] for c in cards] == ["faithfulness-rubric", "faithfulness-strict"]
    for c, link in zip(cards, doc["cards"], strict=True):
        assert c["parts"]["agreement"]["status"] == "ok"
        page = (runs / "prompts" / link).read_text(encoding="utf-8")
        assert f"<title>Judge card: {c['name']} on {dataset}</title>" in page
    tests = doc["tests"]
    assert tests["status"] == "ok", tests
    (comp,) = [c for c in tests["result"]["comparisons"] if c["statistic"] == "pearson"]
    assert {comp["metric_a"], comp["metric_b"]} == {c["judge"] for c in cards}
    assert comp.get("p_williams_holm") is not None and comp.get("p_bootstrap_holm") is not None
    board = (runs / "prompts" / "cards.html").read_text(encoding="utf-8")
    assert "faithfulness-strict" in board and "Paired tests between the judges" in board
    return doc


def test_two_prompts_on_a_pointwise_dataset_as_documented(
    tmp_path: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    scripted,  # noqa: F811
) -> None:
    runs = _run_recipe(tmp_path, data_dir, monkeypatch)
    _check(runs)
    assert scripted  # the scripted backend answered: no model was loaded


@pytest.mark.slow
@pytest.mark.llm
def test_two_prompts_on_the_embedded_backbone(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same recipe on smollm2-135m (the definitions' backbone) through llama.cpp, on a
    seeded draw of 12 of the dataset's 100 summaries (the --limit rule) to keep it short."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make llama)")
    from metajudge.runs.demo import draw_subset

    monkeypatch.setenv("METAJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    name = "summeval_summac_consistency"
    data, _ = draw_subset(name, 12, 0, tmp_path / "draw", data_dir=data_dir)
    runs = _run_recipe(tmp_path, data_dir, monkeypatch, data)
    doc = _check(runs, f"{name}_demo")
    sig = json.loads((runs / "prompts" / doc["cards"][0]).with_name("card.json").read_text())
    assert "smollm2-135m" in " ".join(sig["signature"]["judge_signatures"])
