"""``conformal_judge_sheng2025`` as a built-in dataset: its records, its released judges as
columns (the expected rating, the distribution kept in ``details``), the 4omini files' rows
aligned to the records by their expert means."""

from __future__ import annotations

import csv
from pathlib import Path

from metajudge.cli import main
from metajudge.scores.spec import gather_scores

NAME = "conformal_judge_sheng2025"


def test_records_follow_summeval_ppairs(load) -> None:  # type: ignore[no-untyped-def]
    ds = load(NAME)
    assert len(ds.records) == 1600 and (ds.records[17].id, ds.records[17].system) == ("A1", "S1")
    ppairs = {(r.id, r.system): r for r in load("summeval_ppairs").records}
    for r in ds.records:
        p = ppairs[(r.id, r.system)]
        for dim in ds.card.dimensions:
            assert abs(r.scores[dim][0] - sum(p.scores[dim]) / len(p.scores[dim])) < 1e-6


def test_judge_columns_are_aligned_expected_ratings(load, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    ds = load(NAME)
    rows = gather_scores(ds, ["shipped:sheng.4omini_fluency,sheng.qwen_fluency"], data_dir=data_dir)
    assert len(rows) == 3200
    by_key = {r.id + "::" + r.system: r for r in ds.records}
    lines = list(csv.reader((data_dir / NAME / "summeval" / "4omini_fluency.csv").open()))
    moved = 0
    for row in rows:
        d = row["details"]
        assert abs(sum(d["probs"]) - 1) < 1e-9 and d["values"] == [1, 2, 3, 4, 5]
        assert abs(row["score"] - sum(p * v for p, v in zip(d["probs"], d["values"]))) < 1e-9
        if row["metric"] == "sheng.4omini_fluency":  # the file row's human score is the record's
            assert float(lines[d["line"] - 1][-1]) == by_key[row["key"]].scores["fluency"][0]
            moved += d["line"] - 2 != ds.records.index(by_key[row["key"]])
    assert moved > 1000  # the 4omini files are in another document order


def test_data_show_and_meta_eval_see_it(data_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["data", "show", "--dataset", NAME]) == 0
    assert "sheng.<model>_<dimension>" in capsys.readouterr().out
    argv = [
        "meta-eval",
        "--dataset",
        NAME,
        "--scores",
        "shipped:sheng.qwen_relevance",
        "--protocol",
        "pointwise",
    ]
    assert (
        main(
            [
                *argv,
                "--level",
                "global",
                "--n-boot",
                "50",
                "--no-plots",
                "--paths-only",
                "--out",
                str(tmp_path / "m"),
            ]
        )
        == 0
    )
    assert "sheng.qwen_relevance" in (tmp_path / "m" / "table.md").read_text()
