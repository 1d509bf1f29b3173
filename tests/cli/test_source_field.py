"""``--source-field FIELD`` (issue 26 item 3): the record field a reference-free judge reads as
its source, named by the user; the ``n/a`` reason of a source-less dataset names the option.

The graded fixture with its articles moved from ``input.context`` to ``meta.article``: the
matrix says why G-Eval's SummEval judges do not apply and names ``--source-field``;
``judge export-batch`` (the requests ``metrics run`` would send, no model call) sends none without
the option and one per response, each holding its article, with ``--source-field meta.article``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

GRADED = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"  # 12 responses


def _without_context(tmp_path: Path) -> tuple[Path, list[str]]:
    lines = GRADED.read_text().splitlines()
    out, articles = [lines[0]], []
    for ln in lines[1:]:
        d = json.loads(ln)
        articles.append(d["input"].pop("context"))
        d.setdefault("meta", {})["article"] = articles[-1]
        out.append(json.dumps(d))
    path = tmp_path / "nosrc.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path, articles


def test_na_reason_names_the_option_without_the_typo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _without_context(tmp_path)
    assert main(["matrix", "list", "--add-dataset", str(path), "--format", "json"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    (cell,) = [
        c for c in cells if c["metric"] == "geval_consistency" and c["dataset"] == "byod_summaries"
    ]
    assert cell["status"].startswith("n/a: no source document or context (")
    assert "--source-field FIELD" in cell["status"] and "no a " not in cell["status"]


def test_source_field_gives_the_judge_its_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, articles = _without_context(tmp_path)
    argv = ["judge", "export-batch", "--input", str(path), "--metrics", "geval_consistency"]
    assert main([*argv, "-o", str(tmp_path / "none.jsonl"), "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["n_new"] == 0  # no source: nothing to ask
    out = tmp_path / "batch.jsonl"
    assert main([*argv, "-o", str(out), "--quiet", "--source-field", "meta.article"]) == 0
    assert json.loads(capsys.readouterr().out)["n_new"] == 12
    prompts = [
        json.loads(ln)["body"]["messages"][0]["content"] for ln in out.read_text().splitlines()
    ]
    assert all(any(a in p for a in articles) for p in prompts)
    assert {a for a in articles if any(a in p for p in prompts)} == set(articles)


def test_unknown_source_field_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = _without_context(tmp_path)
    argv = [
        "metrics",
        "run",
        "--input",
        str(path),
        "--metrics",
        "bleu",
        "-o",
        str(tmp_path / "s.jsonl"),
    ]
    assert main([*argv, "--source-field", "meta.nope"]) == 2
    assert "no record has the field 'meta.nope'" in capsys.readouterr().err
