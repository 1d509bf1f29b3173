"""``metajudge calibrate conformal`` on verdicts: split-conformal prediction sets (LAC, randomised
APS) from the class probabilities of the three released judges of ``trust_or_escalate_jung2025``
(pairwise, p(a better) / p(b better)), on a categorical dataset with ``details.probs``, and bad
input (exit 2, the field named)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from metajudge.cli import main
from metajudge.stats.calibration import prediction_sets, set_scores

TOE = "trust_or_escalate_jung2025"
JUDGES = ("gpt-4-turbo", "gpt-3.5-turbo", "mistral-7b-instruct")
CMD = ["calibrate", "conformal", "--dataset", TOE]
ROOT = Path(__file__).resolve().parents[2]
# measured: the share of empty aps sets of gpt-4-turbo (seed 0, 50 splits, alpha 0.1)
APS_EMPTY = "1.2%"
# measured, seed 0, 50 seeded 250/250 splits: (coverage, mean set size) at alpha 0.1
PINNED = {
    ("gpt-4-turbo", "lac"): (0.905, 1.266),
    ("gpt-4-turbo", "aps"): (0.905, 1.297),
    ("gpt-3.5-turbo", "lac"): (0.909, 1.350),
    ("gpt-3.5-turbo", "aps"): (0.902, 1.416),
    ("mistral-7b-instruct", "lac"): (0.907, 1.347),
    ("mistral-7b-instruct", "aps"): (0.904, 1.413),
}


def _json(capsys, argv: list[str]) -> dict:  # type: ignore[no-untyped-def]
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_sets_cover_on_the_released_judges(capsys) -> None:  # type: ignore[no-untyped-def]
    for judge in JUDGES:
        r = _json(capsys, [*CMD, "--scores", f"shipped:{judge}"])
        assert r["kind"] == "prediction sets" and r["n"] == 500 and r["classes"] == ["a", "b"]
        assert r["protocol"] == {"repeats": 50, "fraction": 0.5, "seed": 0}
        for m in r["methods"]:
            # split conformal: mean coverage over the seeded splits >= 1 - alpha (0.01 slack)
            assert m["coverage"] >= 0.9 - 0.01, (judge, m)
            assert 1.0 < m["size"] < 2.0  # informative: not every set holds both classes
            got = (round(m["coverage"], 3), round(m["size"], 3))
            assert got == PINNED[(judge, m["method"])], (judge, m["method"], got)
        lac = next(m for m in r["methods"] if m["method"] == "lac")
        assert lac["empty"] == 0.0 and lac["singleton"] + lac["full"] == pytest.approx(1.0)
        aps = next(m for m in r["methods"] if m["method"] == "aps")
        if judge == "gpt-4-turbo":  # randomised APS gives empty sets (issue 41, item 10)
            assert f"{aps['empty']:.1%}" == APS_EMPTY


def test_guide_says_aps_sets_can_be_empty() -> None:
    text = " ".join((ROOT / "docs" / "calibrating.md").read_text(encoding="utf-8").split())
    assert f"{APS_EMPTY} of GPT-4-turbo's `aps` sets are empty" in text


def test_alpha_moves_coverage_and_size(capsys) -> None:  # type: ignore[no-untyped-def]
    argv = [*CMD, "--scores", "shipped:gpt-4-turbo", "--repeats", "20"]
    wide = {m["method"]: m for m in _json(capsys, [*argv, "--miscoverage", "0.05"])["methods"]}
    tight = {m["method"]: m for m in _json(capsys, [*argv, "--miscoverage", "0.3"])["methods"]}
    for m in ("lac", "aps"):
        assert wide[m]["coverage"] >= 0.95 - 0.01 and tight[m]["coverage"] >= 0.7 - 0.01
        assert wide[m]["size"] > tight[m]["size"]
    # at alpha 0.3 (more than the judge's 21.7% errors) LAC gives empty sets
    assert tight["lac"]["empty"] > 0 and tight["lac"]["size"] < 1.0


def test_sets_per_item_file(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = [*CMD, "--scores", "shipped:gpt-4-turbo", "--method", "lac", "--repeats", "3"]
    r = _json(capsys, [*argv, "--out", str(tmp_path / "sets")])
    rows = list(csv.DictReader((tmp_path / "sets" / "intervals.csv").open()))
    assert len(rows) == 250 and {x["method"] for x in rows} == {"lac"}
    assert {x["set"] for x in rows} <= {"a", "b", "a|b", ""}
    assert all(int(x["size"]) == len([c for c in x["set"].split("|") if c]) for x in rows)
    covered = np.mean([x["covered"] == "True" for x in rows])
    assert all((x["human"] in x["set"].split("|")) == (x["covered"] == "True") for x in rows)
    assert 0.85 < covered <= 1.0 and r["methods"][0]["method"] == "lac"


def _pair_scores(path: Path, b_extra: float) -> Path:
    with path.open("w") as fh:
        for i in range(500):
            for side, p in (("a", 0.6), ("b", 0.4 + (b_extra if i == 7 else 0.0))):
                fh.write(json.dumps({"item": str(i), "side": side, "metric": "j", "score": p}))
                fh.write("\n")
    return path


def test_probabilities_must_sum_to_one(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = _pair_scores(tmp_path / "bad.jsonl", 2e-6)
    assert main([*CMD, "--scores", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "score" in err and "'7'" in err and "tolerance 1e-06" in err
    ok = _pair_scores(tmp_path / "ok.jsonl", 5e-7)
    r = _json(capsys, [*CMD, "--scores", str(ok), "--repeats", "2"])
    assert r["n"] == 500


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        (["--miscoverage", "0"], "--miscoverage"),
        (["--miscoverage", "1.5"], "--miscoverage"),
        (["--method", "split"], "--method"),
        (["--target", "x.csv"], "--target"),
        ([], "--scores"),  # three judge columns: one is needed
    ],
)
def test_bad_input_exits_2_naming_the_field(capsys, extra, field) -> None:  # type: ignore[no-untyped-def]
    spec = "shipped" if field == "--scores" else "shipped:gpt-4-turbo"
    assert main([*CMD, "--scores", spec, *extra]) == 2
    assert field in capsys.readouterr().err


def test_set_methods_refused_on_ratings(data_dir: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    f = data_dir / "conformal_judge_sheng2025" / "summeval" / "4omini_fluency.csv"
    assert main(["calibrate", "conformal", "--ratings", str(f), "--method", "lac"]) == 2
    assert "--method" in capsys.readouterr().err


def _categorical(tmp: Path, total: float) -> tuple[Path, Path]:
    card = {
        "card": {
            "name": "synthetic_cats",
            "kind": "categorical",
            "dimensions": ["safe"],
            "scale": {"labels": ["No", "Yes", "Unsure"]},
            "annotators": 1,
            "description": "synthetic",
            "license": "CC0-1.0",
            "direction": "Yes = safe",
        }
    }
    data, scores = tmp / "cats.jsonl", tmp / "cats_judge.jsonl"
    rng = np.random.default_rng(0)
    with data.open("w") as fh, scores.open("w") as sc:
        fh.write(json.dumps(card) + "\n")
        for i in range(300):
            lab = ("Yes", "No", "Unsure")[i % 3]
            rec = {"id": f"c{i}", "input": {"question": "q"}, "system": "bot", "response": "r"}
            fh.write(json.dumps({**rec, "scores": {"safe": [lab]}}) + "\n")
            p = rng.dirichlet([1, 1, 1])
            probs = dict(zip(("Yes", "No", "Unsure"), p.tolist(), strict=True))
            if i == 0:
                probs["Yes"] += total - 1.0
            row = {"item": f"c{i}", "system": "bot", "metric": "j", "details": {"probs": probs}}
            sc.write(json.dumps({**row, "score": None}) + "\n")
    return data, scores


def test_categorical_sets_from_details_probs(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    data, scores = _categorical(tmp_path, 1.0)
    r = _json(capsys, ["calibrate", "conformal", "--input", str(data), "--scores", str(scores)])
    assert r["classes"] == ["No", "Unsure", "Yes"] and r["n"] == 300
    for m in r["methods"]:  # an uninformative judge: coverage holds by growing the sets
        assert m["coverage"] >= 0.89 and m["size"] > 2.0
    (tmp_path / "bad").mkdir()
    bad_data, bad_scores = _categorical(tmp_path / "bad", 1.01)
    assert (
        main(["calibrate", "conformal", "--input", str(bad_data), "--scores", str(bad_scores)]) == 2
    )
    assert "details.probs" in capsys.readouterr().err


def test_scores_and_sets_agree() -> None:
    """A class is in a set exactly when its score is at most q (LAC, randomised APS)."""
    rng = np.random.default_rng(1)
    probs = rng.dirichlet([1, 1, 1, 1], size=200)
    u = rng.uniform(size=200)
    for method, draws in (("lac", None), ("aps", u)):
        for q in (0.3, 0.6, 0.9):
            sets = prediction_sets(method, probs, q, draws)
            for k in range(4):
                s = set_scores(method, labels=np.full(200, k), probs=probs, u=draws)
                np.testing.assert_array_equal(sets[:, k], s <= q + 1e-12)
    # the non-randomised APS set is never empty and holds {score <= q}
    sets = prediction_sets("aps", probs, 0.5)
    assert sets.any(axis=1).all()
