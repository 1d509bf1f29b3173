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
    got = _latex(capsys, "--table", "ci=pm")
    assert got == (FIX / "expected_pm.tex").read_text(encoding="utf-8")


def test_mark_best_bolds_the_best_and_those_not_significantly_worse(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """issue 64: bold = the best of a column and every metric not significantly worse; dagger /
    double dagger = significantly better / worse than the --compare-to metric."""
    got = _latex(capsys, "--compare-to", "bertscore_p", "--table", "mark=best,ci=none")
    assert got == (FIX / "expected_best.tex").read_text(encoding="utf-8")
    better = _latex(capsys, "--compare-to", "bleu", "--table", "ci=none")
    row = next(line for line in better.splitlines() if line.startswith("bertscore"))
    assert row == r"bertscore\_p & 0.44$^\dagger$ & 0.37$^\dagger$ & 0.13 & 0.12$^\dagger$ \\"


def test_a_caption_never_promises_marks_the_resamples_cannot_give() -> None:
    from metajudge.analyses.metric_vs_human.result import MetaEvalResult
    from metajudge.reports.paper_table import paper_table
    from metajudge.stats import PFloor

    res = [MetaEvalResult.load(FIX / name / "result.json") for name in ("cnndm", "xsum")]
    floor = PFloor.bootstrap(50, 2, "per dimension and statistic").to_dict(0.05)
    res[0].data["p_floors"] = {"p_bootstrap": floor}
    tex = paper_table(res, reference="bertscore_p", mark="best")
    assert floor["holm_floor"] == pytest.approx(4 / 51) and floor["needed"] == 80
    said = "with 50 resamples no difference can be significant (Holm cannot fall below 0.0784)"
    assert said + ": 80 resamples would allow it" in tex
    assert "so no metric is marked and every metric is in bold" in tex


@pytest.mark.slow
def test_hanna_paper_table_with_mark_best_at_a_stated_resample_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 64: HANNA, three metrics, 2000 resamples: bold where a metric is the best of its
    column or not significantly worse (Holm within the dimension and statistic), as the caption
    says; the marks agree with result.json's comparisons."""
    out = tmp_path / "paper"
    argv = ["meta-eval", "--dataset", "hanna", "--subsets", "all", "--scores", "shipped",
            "--metrics", "hanna.bleu,hanna.meteor,hanna.bertscore_f1", "--protocol", "pointwise",
            "--aggregation", "mean", "--table", "mark=best", "--n-boot", "2000", "--no-baselines",
            "--no-plots", "--quiet", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    tex = (out / "paper_table.tex").read_text(encoding="utf-8")
    assert "2000 resamples); bold: the best metric of the column and every metric not " in tex
    assert (
        "(paired bootstrap, Holm within each dimension and statistic, 3 tests, p $<$ 0.05)" in tex
    )
    res = json.loads((out / "all" / "result.json").read_text(encoding="utf-8"))
    rows = {
        line.split(" & ")[0]: line.split(" & ")[1:]
        for line in tex.splitlines()
        if line.startswith("hanna.")
    }
    bold_cells = 0
    for d, dim in enumerate(res["dataset"]["dimensions"]):  # every dimension, in order
        for k, stat in enumerate(("pearson", "spearman")):
            values = {
                c["metric"]: c["stats"][stat]["value"]
                for c in res["cells"]
                if c["dimension"] == dim
            }
            best = max(values, key=values.__getitem__)
            for m in values:
                comp = [c for c in res["comparisons"] if c["dimension"] == dim and c["statistic"] == stat
                        and {c["metric_a"], c["metric_b"]} == {best, m}]  # fmt: skip
                bold = m == best or comp[0]["p_bootstrap_holm"] >= 0.05
                shown = rows[m.replace("_", "\\_")][2 * d + k].startswith(r"\textbf{")
                assert shown == bold, (m, dim, stat)
                bold_cells += bold
    assert 12 <= bold_cells < 36  # the best of each of the 12 columns, not every metric


def test_four_dimensions_by_two_levels_match_the_hand_written_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """issue 64: run folders at two levels: a column group per dimension, a sub-group per level,
    rows in the order and under the names of --table names=FILE, decimals=3."""
    lv = FIX / "levels"
    argv = ["report", "render", str(lv / "item"), str(lv / "system"), "--latex", "--table",
            f"ci=none,decimals=3,names={lv / 'names.tsv'}"]  # fmt: skip
    assert main(argv) == 0
    assert capsys.readouterr().out == (FIX / "expected_levels.tex").read_text(encoding="utf-8")


def test_metric_names_json_and_unknown_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lv = FIX / "levels"
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"rouge_1": "R-1", "bartscore": "BART"}), encoding="utf-8")
    argv = ["report", "render", str(lv / "item"), "--latex", "--table", f"names={names}"]
    assert main([*argv, "--dimension", "fluency"]) == 0
    rows = [line.split(" & ")[0] for line in capsys.readouterr().out.splitlines() if " & " in line]
    assert rows[-2:] == ["R-1", "BART"]  # the file's order, only its rows
    names.write_text(json.dumps({"rouge_l": "R-L"}), encoding="utf-8")
    assert main(argv) == 2
    assert "no run has the column(s) rouge_l" in capsys.readouterr().err


@pytest.mark.slow
def test_meta_eval_levels_writes_every_dimension_by_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 64: one command, two levels, every dimension of HANNA (6) in one paper_table.tex."""
    out = tmp_path / "paper"
    argv = ["meta-eval", "--dataset", "hanna", "--levels", "item,system", "--scores", "shipped",
            "--metrics", "hanna.bleu,hanna.bertscore_f1", "--protocol", "pointwise",
            "--aggregation", "mean", "--n-boot", "100", "--no-baselines", "--no-plots", "--quiet",
            "--table", "decimals=3", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    tex = (out / "paper_table.tex").read_text(encoding="utf-8")
    levels = {n: json.loads((out / n / "result.json").read_text(encoding="utf-8")) for n in ("item", "system")}  # fmt: skip
    dims = levels["item"]["dataset"]["dimensions"]
    assert len(dims) == 6 and r"\begin{tabular}{l" + "r" * 24 + "}" in tex
    assert r"\multicolumn{2}{c}{Item} & \multicolumn{2}{c}{System}" in tex
    assert {n: r["protocol"]["correlation_level"] for n, r in levels.items()} == {"item": "item", "system": "system"}  # fmt: skip
    row = next(line for line in tex.splitlines() if line.startswith("hanna.bleu &")).split(" & ")
    for k, dim in enumerate(dims):
        for j, name in enumerate(("item", "system")):
            (cell,) = [c for c in levels[name]["cells"] if c["metric"] == "hanna.bleu" and c["dimension"] == dim]  # fmt: skip
            v = cell["stats"]["pearson"]["value"]
            assert row[1 + 4 * k + 2 * j].startswith(f"{v:.3f}".replace("-", "$-$")), (dim, name)


@pytest.mark.parametrize(
    "spec, said",
    [
        ("decimals=0", "decimals=0: a whole number >= 1"),
        ("ci=wide", "ci=wide: choose ci or pm or none"),
        ("mark=worst", "mark=worst: choose best"),
        ("digits=3", "with the keys ci, decimals, mark, names"),
        ("decimals=2,decimals=3", "got 'decimals=3'"),
    ],
)
def test_a_bad_table_spec_is_refused_naming_the_option(
    spec: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--table SPEC (issue 61: one option for the paper table's layout) is checked by argparse,
    before any work."""
    assert main(["report", "render", str(FIX / "cnndm"), "--latex", "--table", spec]) == 2
    err = capsys.readouterr().err
    assert "--table" in err and said in err


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
    assert len(re.findall(r"\[", row)) == 12  # a CI in each of the 2 dimensions x 3 x 2 cells
    # the worked example of docs/metric-tables.md is this run's table, mark for mark
    doc = (Path(__file__).parents[2] / "docs" / "metric-tables.md").read_text(encoding="utf-8")
    shown = doc.split("<!-- paper-table -->\n```latex\n", 1)[1].split("```", 1)[0]
    assert shown == tex
    assert r"$^\dagger$" in tex
