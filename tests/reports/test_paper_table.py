"""issue 42: the paper table (LaTeX booktabs, subsets as column groups, CIs or ±, a mark where a
metric differs from the reference metric), from run folders through ``report render --latex``
against hand-written expected files, and in one step from ``meta-eval --subsets a,b,all``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metajudge.cli import main

FIX = Path(__file__).parents[1] / "fixtures" / "paper_table"


def _latex(capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    argv = ["report", "render", str(FIX / "cnndm"), str(FIX / "xsum"), "--latex", *extra]
    assert main(argv) == 0
    return capsys.readouterr().out


def test_latex_with_cis_and_marks_matches_the_hand_written_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = _latex(capsys, "--compare-to", "bertscore_p")
    assert got == (FIX / "expected_ci.tex").read_text(encoding="utf-8")


def test_latex_plus_minus_style_matches_the_hand_written_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = _latex(capsys, "--ci-style", "pm")
    assert got == (FIX / "expected_pm.tex").read_text(encoding="utf-8")


def test_several_folders_need_latex(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "render", str(FIX / "cnndm"), str(FIX / "xsum")]) == 2
    assert "several run folders need --latex" in capsys.readouterr().err


@pytest.mark.slow
def test_meta_eval_subsets_writes_the_three_group_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "paper"
    argv = ["meta-eval", "--dataset", "lftqa_eval", "--subsets", "fetaqa,qtsumm,all",
            "--scores", "shipped", "--metrics", "bleu,rouge,bertscore", "--protocol", "pointwise",
            "--control", "system", "--compare-to", "bertscore", "--no-baselines",
            "--no-plots", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    tex = (out / "paper_table.tex").read_text(encoding="utf-8")
    assert tex in printed
    assert (
        r"\multicolumn{2}{c}{fetaqa} & \multicolumn{2}{c}{qtsumm} & \multicolumn{2}{c}{All}" in tex
    )
    assert "Partial correlation (controlling for system)" in tex and r"\toprule" in tex
    dim = "faithfulness"
    for name in ("fetaqa", "qtsumm", "all"):
        res = json.loads((out / name / "result.json").read_text(encoding="utf-8"))
        assert res["run"]["subset"] == (None if name == "all" else name)
        (cell,) = [c for c in res["cells"] if c["metric"] == "bleu" and c["dimension"] == dim]
        v = cell["stats"]["pearson"]["value"]
        assert f"{v:.2f}".replace("-", "$-$") in tex
        assert {c["metric_a"] for c in res["comparisons"]} == {"bertscore"}  # m - 1 tests
        assert {c["metric_b"] for c in res["comparisons"]} == {"bleu", "rouge"}
    row = next(line for line in tex.splitlines() if line.startswith("bleu &"))
    assert len(re.findall(r"\[", row)) == 6  # a CI in each of the 3 x 2 cells
    # the worked example of docs/metric-tables.md is this run's table, mark for mark
    doc = (Path(__file__).parents[2] / "docs" / "metric-tables.md").read_text(encoding="utf-8")
    shown = doc.split("<!-- paper-table -->\n```latex\n", 1)[1].split("```", 1)[0]
    assert shown == tex
    assert r"$^\dagger$" in tex
