"""Reports: Table 17 layout in Markdown/CSV/JSON/LaTeX, published column, plots, re-rendering."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from metajudge.analyses.metric_vs_human.evaluate import MetaEvalResult, meta_evaluate
from metajudge.data.formats import DatasetCard, Input, PairwiseRecord, Response, Scale
from metajudge.data.registry import Dataset
from metajudge.errors import InputError
from metajudge.reports import tables
from metajudge.reports.published import attach_published, load_published
from metajudge.reports.render import render_all
from metajudge.reports.scale import set_percent


def _result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, published: bool = True, **opts: object
) -> MetaEvalResult:
    rng = np.random.default_rng(0)
    n = 30
    truth = rng.normal(size=n)
    recs = [
        PairwiseRecord(
            id=str(i),
            input=Input(question="q"),
            a=Response("A", "a"),
            b=Response("B", "b"),
            labels={
                d: (
                    float(np.clip(round(t + rng.normal(scale=0.4)), -1, 1)),
                    float(np.clip(round(t + rng.normal(scale=0.4)), -1, 1)),
                )
                for d in ("faithfulness", "completeness")
            },
        )
        for i, t in enumerate(truth)
    ]
    card = DatasetCard(
        name="toy_pub",
        kind="pairwise",
        description="",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=("faithfulness", "completeness"),
        scale=Scale(-1, 1, (-1, 0, 1)),
        annotators=2,
        direction="",
    )
    rows = []
    for m, noise in (("bleu", 1.0), ("my_judge", 0.3)):
        sb = truth + rng.normal(scale=noise, size=n)
        for i in range(n):
            rows.append({"key": f"{i}::a", "metric": m, "score": 0.0, "signature": f"{m}|v:1"})
            rows.append(
                {"key": f"{i}::b", "metric": m, "score": float(sb[i]), "signature": f"{m}|v:1"}
            )
    rows += [
        {"key": f"{i}::{s}", "metric": "flat", "score": 0.5, "signature": "flat|v:0"}
        for i in range(n)
        for s in "ab"
    ]
    bdir = tmp_path / "baselines"
    bdir.mkdir()
    if published:
        (bdir / "published_toy.json").write_text(
            json.dumps(
                {
                    "source": "Toy et al. 2099, Table 1",
                    "dataset": "toy_pub",
                    "protocol": {"normalize": "minmax"},
                    "entries": [
                        {
                            "table": "Table 1",
                            "row": "BLEU",
                            "column": "Faith. Pearson",
                            "metric": "bleu",
                            "dimension": "faithfulness",
                            "statistic": "pearson",
                            "value": 12.34,
                        },
                        {
                            "table": "Table 1",
                            "row": "Human",
                            "column": "Faith. Pearson",
                            "metric": "human",
                            "dimension": "faithfulness",
                            "statistic": "pearson",
                            "value": 80.0,
                        },
                    ],
                }
            )
        )
    monkeypatch.setenv("METAJUDGE_BASELINES_DIR", str(bdir))
    res = meta_evaluate(
        Dataset(card=card, records=recs),
        rows,
        metrics=["bleu", "my_judge", "flat"],
        n_boot=100,
        **opts,
    )
    return attach_published(res, bdir)


def test_markdown_is_table17_layout_with_published_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _result(tmp_path, monkeypatch)
    md = tables.to_markdown(res)
    header = next(line for line in md.splitlines() if line.startswith("| Metric"))
    assert header.split(" | ")[1:5] == [
        "Faithfulness Pearson",
        "Faithfulness Pearson (published)",
        "Faithfulness Spearman",
        "Completeness Pearson",
    ]
    lines = [line for line in md.splitlines() if line.startswith("| ")]
    body = lines[
        : lines.index(next(line for line in lines if line.startswith("| Inter-Human"))) + 1
    ]
    assert body[-1].startswith("| Inter-Human Correlation")  # ceiling is the last row
    bleu = next(line for line in body if line.startswith("| bleu"))
    # one scale (issue 26): correlations on [-1, 1], four decimals; the published 12.34 (x100
    # in its file) beside ours as 0.1234, CI in brackets
    assert "| 0.1234 |" in bleu and "[" in bleu
    assert f"{res.value('bleu', 'faithfulness'):.4f} [" in bleu
    assert "| 0.8000 |" in body[-1]
    assert "normalisation **minmax**" in md and "normalize=minmax" in md
    assert "on [−1, 1]" in md and "×100" not in md
    set_percent(res.data, True)  # --percent: the same numbers x100, two decimals, everywhere
    pct = tables.to_markdown(res)
    bleu100 = next(line for line in pct.splitlines() if line.startswith("| bleu"))
    assert "| 12.34 |" in bleu100
    assert f"{res.value('bleu', 'faithfulness') * 100:.2f} [" in bleu100
    assert "×100" in pct
    set_percent(res.data, False)
    # undefined with its reason, once for the cells it holds for
    assert (
        "- metric difference is constant (0) over all 30 scored pairs (2 metric / dimension "
        "cells: flat / faithfulness, flat / completeness)"
    ) in md
    assert "`bleu`: bleu|v:1" in md  # signatures in the footer
    assert "Toy et al. 2099" in md


def test_csv_json_latex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = _result(tmp_path, monkeypatch)
    rows = list(csv.DictReader(io.StringIO(tables.to_csv(res))))
    assert [r["metric"] for r in rows] == ["bleu", "my_judge", "flat", "Inter-Human Correlation"]
    assert float(rows[0]["faithfulness_pearson"]) == pytest.approx(
        res.value("bleu", "faithfulness"), abs=1e-6
    )
    assert rows[0]["faithfulness_pearson_published"] == "0.123400"
    assert rows[2]["faithfulness_pearson"] == "" and rows[0]["normalize"] == "minmax"
    set_percent(res.data, True)
    rows100 = list(csv.DictReader(io.StringIO(tables.to_csv(res))))
    assert rows100[0]["faithfulness_pearson_published"] == "12.3400"
    assert float(rows100[0]["faithfulness_pearson"]) == pytest.approx(
        res.value("bleu", "faithfulness") * 100, abs=1e-4
    )
    assert "x100" in json.loads(tables.to_json(res))["scale"]
    set_percent(res.data, False)
    long = list(csv.DictReader(io.StringIO(tables.cells_csv(res))))
    assert {r["statistic"] for r in long} == {
        "pearson",
        "spearman",
        "kendall",
        "acc_ties",
        "acc_no_ties",
    }
    doc = json.loads(tables.to_json(res))
    assert doc["protocol"]["normalize"] == "minmax"
    first = doc["table"]["rows"][0]["cells"][0]
    assert first["ci"][0] <= first["value"] <= first["ci"][1]
    from metajudge.reports.latex import latex_table

    tex = latex_table(res)
    assert (
        r"\begin{tabular}{l" in tex and r"\multicolumn" in tex and "Inter-Human Correlation" in tex
    )
    assert r"my\_judge" in tex and "minmax" in tex
    assert tex.count(r"\\") >= 6


def test_render_all_and_report_rerender(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = _result(tmp_path, monkeypatch)
    out = tmp_path / "run"
    out.mkdir()
    res.save(out / "result.json")
    written = render_all(out)
    for name in (
        "table.md",
        "table.csv",
        "cells.csv",
        "table.json",
        "table.tex",
        "correlation_pearson.png",
        "correlation_spearman.png",
        "scatter.png",
    ):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
        assert name in written
    assert (out / "scatter.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "table.md").read_text()
    (out / "table.md").unlink()
    from metajudge.cli import main

    assert main(["report", "render", str(out), "--no-plots"]) == 0
    assert (out / "table.md").read_text() == md  # same numbers: rendered from result.json


def test_report_on_a_folder_without_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from metajudge.cli import main

    assert main(["report", "render", str(tmp_path)]) == 2
    assert "result file not found" in capsys.readouterr().err


def test_published_baselines_in_repo_are_valid() -> None:
    entries = load_published(kind=None)
    by_file: dict[str, int] = {}
    for e in entries:
        by_file[e["file"]] = by_file.get(e["file"], 0) + 1
    assert by_file["published_ragchecker.json"] == 12
    assert by_file["published_mtraig.json"] == 18 + 36 + 4  # Tables 5, 17 and 8
    t17 = {
        (e["metric"], e["dimension"], e["statistic"]): e["value"]
        for e in entries
        if e["table"] == "Table 17"
    }
    assert t17[("mtraig_eval", "completeness", "spearman")] == 68.97
    assert t17[("human", "faithfulness", "pearson")] == 84.81
    t8 = [e for e in entries if e["table"] == "Table 8"]
    assert all(e["kind"] == "backbone_agreement" for e in t8)
    assert not any(e["table"] == "Table 8" for e in load_published())  # default: correlations only


def test_published_validation(tmp_path: Path) -> None:
    (tmp_path / "published_x.json").write_text(
        json.dumps(
            {
                "entries": [
                    {
                        "table": "T",
                        "row": "r",
                        "column": "c",
                        "metric": "m",
                        "dimension": "d",
                        "statistic": "pearson",
                    }
                ]
            }
        )
    )
    with pytest.raises(InputError, match="value"):
        load_published(tmp_path)


def test_tables_name_a_ci_method_that_is_not_the_percentile_bootstrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25 item 4: on 30 pairs the default rule (small_n 20) keeps the percentile
    bootstrap, untagged; with ``small_n=31`` the same cells get Fisher z / Wilson, tagged in
    the Markdown table and named in the CSV's ``ci_method`` column; the footer states the rule."""
    from metajudge.stats import fisher_z_ci

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = _result(tmp_path / "a", monkeypatch)
    small = _result(tmp_path / "b", monkeypatch, small_n=31)
    e = small.cell("my_judge", "faithfulness")["stats"]["pearson"]
    assert (e["ci_method"], e["ci_n"]) == ("Fisher z", 30)
    assert e["ci"] == list(fisher_z_ci(e["value"], 30))
    assert plain.cell("my_judge", "faithfulness")["stats"]["pearson"]["ci_method"] == (
        "percentile bootstrap"
    )
    md_plain, md_small = tables.to_markdown(plain), tables.to_markdown(small)
    assert "(Fisher z)" not in md_plain and "(Fisher z)" in md_small
    assert "CI method: percentile bootstrap from 31 independent units" in md_small
    rows = list(csv.DictReader(io.StringIO(tables.cells_csv(small))))
    acc = next(r for r in rows if r["metric"] == "my_judge" and r["statistic"] == "acc_ties")
    assert acc["ci_method"] == "Wilson score"
