"""Selective judging (Trust or Escalate) on a synthetic canonical dataset and on the released
data of trust_or_escalate_jung2025 (figures pinned for seed 0)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import metajudge as mj
from metajudge.analyses.selective import (
    JudgeColumn,
    Ranked,
    apply_cascade,
    calibrate_cascade,
    judge_columns,
    selective_judging,
)
from metajudge.data.loading import load
from metajudge.errors import InputError
from metajudge.scores.files import read_scores

PAIR_CARD = {
    "card": {
        "name": "synthetic_pairs",
        "kind": "pairwise",
        "dimensions": ["preference"],
        "scale": {"min": -1, "max": 1, "values": [-1, 1]},
        "annotators": 1,
        "description": "synthetic pairs for the selective-judging tests",
        "license": "CC0-1.0",
        "direction": "positive = b better",
    }
}


def write_pairs(tmp: Path, n: int = 200, seed: int = 0) -> tuple[Path, Path, np.ndarray]:
    """``n`` pairs (human label alternating a / b) and one judge's side probabilities: the
    more confident, the more often right (a confident top third always right)."""
    rng = np.random.default_rng(seed)
    data, scores = tmp / "pairs.jsonl", tmp / "judge.jsonl"
    conf = rng.uniform(0.5, 1.0, n)
    right = (rng.uniform(size=n) < conf) | (conf > 0.85)
    with open(data, "w") as fh, open(scores, "w") as sc:
        fh.write(json.dumps(PAIR_CARD) + "\n")
        for i in range(n):
            human = -1 if i % 2 else 1
            fh.write(
                json.dumps(
                    {
                        "id": f"p{i}",
                        "input": {"question": f"q{i}"},
                        "a": {"system": "x", "response": "ra"},
                        "b": {"system": "y", "response": "rb"},
                        "labels": {"preference": [human]},
                    }
                )
                + "\n"
            )
            judge_b = (human == 1) == bool(right[i])  # the judge prefers b
            pb = conf[i] if judge_b else 1 - conf[i]
            for side, p in (("a", 1 - pb), ("b", pb)):
                row = {"item": f"p{i}", "side": side, "metric": "judge", "score": float(p)}
                sc.write(json.dumps(row) + "\n")
    return data, scores, conf


def test_synthetic_pairs_keep_the_confident_and_cost(tmp_path: Path) -> None:
    data, scores, conf = write_pairs(tmp_path)
    ds = load(data)
    rows = read_scores(scores, ds.records)
    sd = judge_columns(ds, rows, ["judge"], costs={"judge": 2.5})
    assert len(sd.units) == 200 and sd.judges[0].cost == 2.5
    np.testing.assert_allclose(sd.judges[0].conf, np.maximum(conf, 1 - conf))
    res = selective_judging(sd, alpha=0.1, delta=0.1, repeats=20, seed=3, thresholds="distinct")
    (alone,) = res.configs
    assert res.n_calibration == 100 and res.n_test == 100
    assert alone.splits_empty == 0 and 0.2 < alone.coverage_mean < 1.0
    assert alone.agreement_mean is not None and alone.agreement_mean >= 0.9
    assert alone.agreement_mean > alone.raw_agreement_mean
    assert alone.cost_per_1000 == alone.reference_cost_per_1000 == 2500.0
    # the share kept over the splits: its median and quartiles, a split keeping none at 0
    covs = [o.coverage for o in alone.splits]
    assert alone.coverage_median == pytest.approx(float(np.median(covs)))
    lo, hi = alone.coverage_quartiles
    assert lo == pytest.approx(float(np.percentile(covs, 25))) and lo <= alone.coverage_median <= hi
    # one split by hand: the threshold found on the calibration half, applied to the other half
    human = np.asarray(sd.human)
    cal, test = np.arange(0, 200, 2), np.arange(1, 200, 2)
    (t,) = calibrate_cascade(human, sd.judges, cal, 0.1, 0.1, 30, None)
    out = apply_cascade(human, sd.judges, test, (t,))
    c = np.asarray(sd.judges[0].conf)[test]
    kept = c >= t
    assert out.coverage == kept.mean()
    assert out.agreement == (np.asarray(sd.judges[0].pred)[test][kept] == human[test][kept]).mean()


def test_a_cascade_escalates_and_counts_calls(tmp_path: Path) -> None:
    data, scores, _ = write_pairs(tmp_path)
    ds = load(data)
    rows = read_scores(scores, ds.records)
    rows += [{**r, "metric": "judge2"} for r in rows]
    sd = judge_columns(ds, rows, ["judge", "judge2"], costs={"judge": 1, "judge2": 10})
    res = selective_judging(sd, alpha=0.1, delta=0.1, repeats=5, seed=1)
    names = [c.name for c in res.configs]
    assert names == ["judge alone", "judge2 alone", "cascade judge -> judge2"]
    cas = res.configs[2]
    # the same judge twice: the second keeps what the first left only when its own test passes
    for o in cas.splits:
        assert o.cost_per_item == pytest.approx(1 + 10 * (1 - o.share_by_judge[0]))
    assert cas.reference_cost_per_1000 == 10_000.0


def test_categorical_judge_from_details_probs(tmp_path: Path) -> None:
    card = {
        "card": {
            "name": "synthetic_cats",
            "kind": "categorical",
            "dimensions": ["safe"],
            "scale": {"labels": ["No", "Yes"]},
            "annotators": 1,
            "description": "synthetic",
            "license": "CC0-1.0",
            "direction": "Yes = safe",
        }
    }
    data, scores = tmp_path / "cats.jsonl", tmp_path / "cats_judge.jsonl"
    rng = np.random.default_rng(0)
    with open(data, "w") as fh, open(scores, "w") as sc:
        fh.write(json.dumps(card) + "\n")
        for i in range(120):
            lab = "Yes" if i % 3 else "No"
            fh.write(
                json.dumps(
                    {
                        "id": f"c{i}",
                        "input": {"question": "q"},
                        "system": "bot",
                        "response": "r",
                        "scores": {"safe": [lab]},
                    }
                )
                + "\n"
            )
            p = float(rng.uniform(0.9, 1.0)) if i < 80 else 0.55
            other = "No" if lab == "Yes" else "Yes"
            probs = {lab: p, other: 1 - p} if i < 80 or i % 2 else {other: p, lab: 1 - p}
            sc.write(
                json.dumps(
                    {
                        "item": f"c{i}",
                        "system": "bot",
                        "metric": "j",
                        "score": None,
                        "details": {"probs": probs},
                    }
                )
                + "\n"
            )
    ds = load(data)
    rows = read_scores(scores, ds.records, labels=True)
    sd = judge_columns(ds, rows, ["j"])
    assert set(sd.human) == {"Yes", "No"} and len(sd.units) == 120
    res = selective_judging(sd, alpha=0.1, delta=0.1, repeats=10, seed=0)
    assert res.configs[0].agreement_mean == 1.0  # only the confident, always-right items kept
    assert res.configs[0].splits_empty == 0


def test_bad_probabilities_and_levels(tmp_path: Path) -> None:
    data, scores, _ = write_pairs(tmp_path, n=60)
    ds = load(data)
    rows = read_scores(scores, ds.records)
    rows[0] = {**rows[0], "score": rows[0]["score"] + 1e-5}
    with pytest.raises(InputError) as e:
        judge_columns(ds, rows, ["judge"])
    assert e.value.field == "score" and "p0" in e.value.message
    rows[0] = {**rows[0], "score": rows[0]["score"] - 1e-5}
    sd = judge_columns(ds, rows, ["judge"])
    for field, kw in (
        ("alpha", {"alpha": 0.0, "delta": 0.1}),
        ("delta", {"alpha": 0.1, "delta": 1}),
    ):
        with pytest.raises(InputError) as e:
            selective_judging(sd, **kw)
        assert e.value.field == field


def test_one_human_class_is_judged_not_refused(tmp_path: Path) -> None:
    """The binomial bound counts agreements whatever the classes: one class is a valid input
    (issue 41 item 6; it used to exit 2 with "holds one human class only")."""
    data, scores, _ = write_pairs(tmp_path, n=120)
    ds = load(data)
    sd = judge_columns(ds, read_scores(scores, ds.records), ["judge"])
    one = type(sd)(sd.units, tuple("a" for _ in sd.human), sd.judges)
    res = selective_judging(one, alpha=0.15, delta=0.1, repeats=3)
    assert res.repeats == 3 and res.warnings == () and len(res.configs[0].splits) == 3


JUDGES = ["mistral-7b-instruct", "gpt-3.5-turbo", "gpt-4-turbo"]


@pytest.mark.parametrize(
    ("thresholds", "gpt4", "cascade"),
    [
        # (coverage, agreement on kept, raw agreement, splits keeping none) for seed 0
        ("grid", (0.48598, 0.88479, 0.78338, 51), (0.47686, 0.89358, 0.78338, 26)),
        ("distinct", (0.18204, 0.93595, 0.78338, 59), (0.30570, 0.91714, 0.78338, 31)),
    ],
)
def test_trust_or_escalate_released_data(data_dir: Path, thresholds, gpt4, cascade) -> None:
    """alpha 0.15, delta 0.1, 200 seeded 250/250 splits: agreement on kept items >= 0.85."""
    res = mj.calibrate_selective(
        "trust_or_escalate_jung2025", JUDGES, repeats=200, seed=0, thresholds=thresholds
    )
    assert (res.n_calibration, res.n_test, res.repeats) == (250, 250, 200)
    by = {c.name: c for c in res.configs}
    for c, want in (
        (by["gpt-4-turbo alone"], gpt4),
        (by["cascade " + " -> ".join(JUDGES)], cascade),
    ):
        got = (c.coverage_mean, c.agreement_mean, c.raw_agreement_mean, c.splits_empty)
        assert got == pytest.approx(want, abs=5e-6)
        assert c.agreement_mean >= 0.85 > c.raw_agreement_mean


@pytest.mark.parametrize("grid", [None, 5000])
def test_a_ranked_column_gives_the_threshold_of_the_units_sorted_afresh(grid: int | None) -> None:
    """A column ranked once for every split (:class:`Ranked`) gives each split's test (its
    threshold, the units kept, their errors and bound) as the fixed-sequence test on that
    split's units sorted afresh, with tied confidences (a few distinct values) and units drawn
    several times (the population draws)."""
    from metajudge.stats.selective import fixed_sequence_threshold

    rng = np.random.default_rng(3)
    n = 3000
    conf = rng.choice([0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0], size=n)
    human = np.where(rng.uniform(size=n) < conf, "a", "b")
    pred = np.full(n, "a")
    ranked = Ranked.of(human, JudgeColumn("j", tuple(pred), tuple(conf)))
    found = 0
    for draw in range(20):
        idx = rng.integers(0, n, n // 2) if draw % 2 else np.sort(rng.permutation(n)[: n // 2])
        ok = pred[idx] == human[idx]
        want = fixed_sequence_threshold(ok, conf[idx], 0.15, 0.1, grid=grid)
        assert ranked.test(idx, 0.15, 0.1, 30, grid) == want
        found += want.threshold is not None
    assert found >= 10  # the splits keep items: the thresholds compared are numbers
