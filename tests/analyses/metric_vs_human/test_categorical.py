"""Categorical meta-evaluation: `meta-eval` on categorical / binary datasets (issues 12, 13)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from metajudge.cli import main
from metajudge.stats.classification import categorical_scores, confusion_scores, majority_label
from tests.conftest import Load

ROOT = Path(__file__).resolve().parents[3]
FX = ROOT / "tests" / "fixtures" / "byod"
CAT, JUDGE = FX / "categorical.jsonl", FX / "categorical_judge.csv"
DATA = Path(os.environ.get("METAJUDGE_DATA_DIR", "")) / "dmg_judge_bench"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="needs $METAJUDGE_DATA_DIR")


def test_confusion_scores_equal_the_tested_functions() -> None:
    rng = np.random.default_rng(3)
    labels = ["a", "b", "c"]
    for _ in range(20):
        g = list(rng.choice(labels, 40))
        p = list(rng.choice(labels[:2], 40))
        cs = categorical_scores(g, p, labels)
        got = confusion_scores(np.array(cs.confusion))
        assert got["accuracy"] == pytest.approx(cs.accuracy)
        assert got["cohen_kappa"] == pytest.approx(cs.cohen_kappa)
        assert got["macro_f1"] == pytest.approx(cs.macro_f1)


def test_majority_ties_are_none() -> None:
    assert majority_label(["Yes", "Yes", "No"]) == "Yes"
    assert majority_label(["Yes", "No", None]) is None
    assert majority_label([None, None]) is None


def _run(tmp: Path, *extra: str, scores: Path = JUDGE) -> tuple[int, Path]:
    out = tmp / "eval"
    argv = ["meta-eval", "--input", str(CAT), "--scores", str(scores), "--out", str(out)]
    return main([*argv, *extra, "--n-boot", "200"]), out


def test_fixture_meta_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _run(tmp_path)
    assert rc == 0
    res = json.loads((out / "result.json").read_text())
    assert res["kind"] == "categorical"
    (row,) = res["rows"]
    assert (row["n"], row["invalid"]) == (8, 0)
    assert row["accuracy"] == pytest.approx(0.75)
    assert row["macro_f1"] == pytest.approx((0.8 + 0 + 8 / 9) / 3)
    assert row["confusion"] == [[2, 1, 0], [0, 0, 1], [0, 0, 4]]
    lo, hi = row["ci"]["accuracy"]
    assert lo <= 0.75 <= hi
    ref = row["reference"]
    assert ref["alpha_level"] == "nominal" and ref["annotators"] == 3
    text = capsys.readouterr().out
    assert "Cohen κ" in text and "Confusion matrix" in text and "0.5875 (nominal)" in text
    assert main(["report", "render", str(out), "--format", "csv"]) == 0
    assert "judge,safe,8,0,0.75" in capsys.readouterr().out


@pytest.mark.parametrize(
    "flags",
    [
        ("--normalize", "minmax"),
        ("--protocol", "pairwise-difference"),
        ("--aggregation", "mean"),
        ("--level", "item"),
        ("--tie-band", "0.1"),
    ],
)
def test_nonsense_options_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]
) -> None:
    rc, out = _run(tmp_path, *flags)
    assert rc != 0 and not (out / "result.json").exists()
    err = capsys.readouterr().err
    assert flags[0] in err and "make(s) no sense for categorical labels" in err


def test_numeric_scores_refused_codes_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    num = tmp_path / "num.csv"
    num.write_text("item,system,rouge\nchat1,bot,0.4\nchat2,bot,0.9\n")
    rc, _ = _run(tmp_path, scores=num)
    assert rc != 0 and "holds numeric scores" in capsys.readouterr().err
    codes = tmp_path / "codes.csv"  # No=0, Unsure=1, Yes=2; chat8 a label off the scale
    rows = ["chat1,bot,2", "chat2,bot,0", "chat3,bot,2", "chat4,bot,1", "chat5,bot,2"]
    codes.write_text("item,system,j\n" + "\n".join(rows) + "\nchat6,bot,2\nchat7,bot,0\n")
    lab = tmp_path / "lab.csv"
    lab.write_text(JUDGE.read_text().replace("chat8,bot,Yes", "chat8,bot,Maybe"))
    rc, out = _run(tmp_path, scores=codes)
    assert rc == 0
    row = json.loads((out / "result.json").read_text())["rows"][0]
    assert (row["n"], row["invalid"]) == (7, 1)  # chat8 has no row: counted, not guessed
    rc, out = _run(tmp_path, scores=lab)
    row = json.loads((out / "result.json").read_text())["rows"][0]
    assert rc == 0 and (row["n"], row["invalid"]) == (7, 1)


def test_to_pandas(tmp_path: Path) -> None:
    from metajudge.analyses.metric_vs_human.categorical import (
        CategoricalOptions,
        categorical_meta_evaluate,
    )
    from metajudge.data.loading import load as load_file
    from metajudge.scores.files import read_scores

    ds = load_file(CAT)
    rows = read_scores(JUDGE, ds.records, labels=True)
    res = categorical_meta_evaluate(ds, rows, CategoricalOptions(n_boot=50))
    df = res.to_pandas()
    assert list(df["metric"]) == ["judge"] and df["accuracy"].iloc[0] == pytest.approx(0.75)
    assert res.to_dict()["kind"] == "categorical"


@needs_data
@pytest.mark.parametrize("how", ["dataset", "input"])
def test_dices_990_meta_eval(
    load: Load, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """DICES-990 through meta-eval: κ, accuracy, macro-F1 and the published α 0.1432."""
    ds = load("dmg_judge_bench", subset="dices-990")
    first = tmp_path / "first.jsonl"  # a stand-in judge: the first annotator's label
    with first.open("w") as fh:
        for r in ds.records:
            lab = next(v for v in r.scores["safety"] if v is not None)
            fh.write(json.dumps({"item": r.id, "system": r.system, "metric": "r1", "score": lab}))
            fh.write("\n")
    src = (
        ["--dataset", "dmg_judge_bench", "--subset", "dices-990"]
        if how == "dataset"
        else ["--input", str(DATA / "data" / "dices" / "dices_990.json")]
    )
    out = tmp_path / "eval"
    argv = ["meta-eval", *src, "--scores", str(first), "--out", str(out), "--n-boot", "100"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "0.1432 (nominal) | 0.1432" in text
    row = json.loads((out / "result.json").read_text())["rows"][0]
    assert row["n"] == 990 and row["invalid"] == 0
    assert row["reference"]["alpha"] == pytest.approx(0.1432, abs=5e-5)
    assert 0 < row["cohen_kappa"] < 1 and 0 < row["accuracy"] < 1 and 0 < row["macro_f1"] < 1
    assert main([*argv[:-4], "--out", str(out), "--normalize", "sign"]) != 0


def test_binary_dataset_with_a_tie(tmp_path: Path) -> None:
    """A binary card goes through the same path; a 1–1 tie has no majority and is counted."""
    card = {
        "name": "bin",
        "kind": "binary",
        "dimensions": ["ok"],
        "scale": {"labels": ["no", "yes"]},
    }
    recs = [
        {"id": "a", "input": {"question": "q"}, "system": "s", "response": "r", "scores": {"ok": s}}
        for s in (["yes", "yes"], ["no", "no"], ["yes", "no"])
    ]
    for i, r in enumerate(recs):
        r["id"] = f"i{i}"
    data = tmp_path / "bin.jsonl"
    data.write_text("\n".join(json.dumps(x) for x in [{"card": card}, *recs]) + "\n")
    labels = tmp_path / "j.csv"
    labels.write_text("item,system,j\ni0,s,yes\ni1,s,yes\ni2,s,no\n")
    out = tmp_path / "eval"
    argv = ["meta-eval", "--input", str(data), "--scores", str(labels), "--out", str(out)]
    assert main([*argv, "--n-boot", "10"]) == 0
    res = json.loads((out / "result.json").read_text())
    assert res["label_kind"] == "binary" and res["gold"]["ok"]["ties"] == 1
    (row,) = res["rows"]
    assert (row["n"], row["accuracy"], row["confusion"]) == (2, 0.5, [[0, 1], [0, 1]])
