"""A judge's replies in a JUDGE-BENCH file: written back, parsed (invalid counted), evaluated
against the majority / mean human label, published results beside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from scipy import stats
from sklearn import metrics as skm

from metajudge.analyses.judge_bench import (
    evaluate_judge,
    parse_reply,
    published_results,
)
from metajudge.data.formats import Scale
from metajudge.data.loading import load as load_file
from metajudge.errors import InputError
from metajudge.scores.readers.judge_bench import add_replies

DATA = Path(os.environ.get("METAJUDGE_DATA_DIR", "/nonexistent")) / "dmg_judge_bench" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="JUDGE-BENCH data not present")
SAFE = Scale.from_dict({"labels": ["No", "Yes", "Unsure"]})


@pytest.mark.parametrize(
    ("reply", "want"),
    [("Yes, it is safe.", "Yes"), ("NO", "No"), ("unsure", "Unsure"), ("Nope", None), ("", None)],
)
def test_parse_categorical(reply: str, want: str | None) -> None:
    assert parse_reply(reply, SAFE) == want


def test_parse_numeric() -> None:
    g = Scale(1, 6, tuple(float(v) for v in range(1, 7)))
    assert parse_reply("Rating: 5", g) == 5.0
    assert parse_reply("10 out of 10, so 3", g) == 3.0
    assert parse_reply("no number", g) is None
    assert parse_reply("about -0.5", Scale(-1, 1)) == -0.5


@needs_data
def test_dices_990_round_trip(tmp_path: Path) -> None:
    src = DATA / "dices" / "dices_990.json"
    ds = load_file(src)
    gold = [r.meta["majority_human"]["safety"] for r in ds.records]
    flip = {"No": "Yes", "Yes": "No", "Unsure": "No"}
    replies = {}
    for i, r in enumerate(ds.records):
        lab = gold[i] if i % 3 else flip[gold[i]]
        replies[(r.id, "safety")] = "I cannot tell" if i % 50 == 0 else f"Answer: {lab}"
    out = tmp_path / "dices_990.json"
    assert add_replies(src, out, "toy/judge", replies) == 990
    res = evaluate_judge(load_file(out), "toy/judge")
    row = res.rows[0]
    assert row.total == 990 and row.valid == 990 - 20
    keep = [i for i in range(990) if i % 50]
    g = [gold[i] for i in keep]
    p = [gold[i] if i % 3 else flip[gold[i]] for i in keep]
    assert row.scores["accuracy"] == pytest.approx(skm.accuracy_score(g, p))
    assert row.scores["cohen_kappa"] == pytest.approx(skm.cohen_kappa_score(g, p))
    assert row.scores["macro_f1"] == pytest.approx(skm.f1_score(g, p, average="macro"))
    with pytest.raises(InputError, match="no sense for nominal"):
        evaluate_judge(load_file(out), "toy/judge", statistics=("pearson",))
    pub = published_results("dices-990")
    assert len(pub) == 11 and pub["gpt-4o (SP: None, AP: 1)"]["safety"]["total"] == 990


@needs_data
def test_recipes_numeric(tmp_path: Path) -> None:
    src = DATA / "recipe_crowd_sourcing_data" / "meta_evaluation_recipes.json"
    ds = load_file(src)
    replies = {
        (r.id, "grammar"): f"{min(6, max(1, round(float(r.meta['mean_human']['grammar']))))}"
        for r in ds.records
    }
    out = tmp_path / "r.json"
    add_replies(src, out, "m", replies)
    row = evaluate_judge(load_file(out), "m").rows[0]
    x = [float(r.meta["mean_human"]["grammar"]) for r in ds.records]
    y = [float(replies[(r.id, "grammar")]) for r in ds.records]
    assert row.dimension == "grammar" and row.valid == 52
    assert row.scores["spearman"] == pytest.approx(stats.spearmanr(x, y)[0])
    with pytest.raises(InputError, match="no instance"):
        add_replies(src, tmp_path / "x.json", "m", {("nope", "grammar"): "1"})
    assert not (tmp_path / "x.json").exists()
