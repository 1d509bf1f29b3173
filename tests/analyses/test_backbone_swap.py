"""Backbone-swap analysis: properties on synthetic data and LFTQA-Eval's published numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as st

from metajudge.analyses.backbone_swap import backbone_swap, build_swap_data
from metajudge.cli import main
from metajudge.data.formats import Input, LikertRecord, PairwiseRecord, Response
from metajudge.errors import InputError
from metajudge.scores.swap_sources import external_scores
from tests.conftest import Load


def _likert(
    n_items: int = 40, n_sys: int = 6, seed: int = 0, annotators: int = 1
) -> tuple[list[LikertRecord], dict[str, float]]:
    rng = np.random.default_rng(seed)
    recs, truth = [], {}
    for i in range(n_items):
        for s in range(n_sys):
            t = float(rng.normal())
            key = f"q{i}::sys{s}"
            truth[key] = t
            scores = tuple(
                float(np.clip(np.round(3 + t + rng.normal(scale=0.4)), 1, 5))
                for _ in range(annotators)
            )
            recs.append(
                LikertRecord(
                    id=f"q{i}",
                    input=Input(question="?"),
                    system=f"sys{s}",
                    response=None,
                    scores={"faithfulness": scores},
                )
            )
    return recs, truth


def _noisy(truth: dict[str, float], scale: float, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    return {k: v + float(rng.normal(scale=scale)) for k, v in truth.items()}


def test_identical_backbones_agree_perfectly() -> None:
    recs, truth = _likert()
    judge = _noisy(truth, 0.3, 1)
    data = build_swap_data(
        recs,
        {"x": judge, "y": dict(judge)},
        dimension="faithfulness",
        metric="m",
        dataset="synthetic",
    )
    res = backbone_swap(data, rng=np.random.default_rng(0), n_boot=200)
    p = res["pairs"][0]
    assert p["pearson"]["value"] == pytest.approx(1.0)
    assert p["spearman"]["value"] == pytest.approx(1.0)
    assert p["kappa"] == pytest.approx(1.0) and p["kappa_quadratic"] == pytest.approx(1.0)
    assert p["flip_rate"]["value"] == 0.0
    assert res["alpha"]["interval_scores"] == pytest.approx(1.0)
    assert p["human_diff"]["delta"] == pytest.approx(0.0)
    assert p["human_diff"]["p_bootstrap"] == pytest.approx(1.0)
    assert "no significant difference" in p["verdict"]


def test_noisier_backbone_is_significantly_worse_and_numbers_match_scipy() -> None:
    recs, truth = _likert(n_items=60)
    good, bad = _noisy(truth, 0.2, 1), _noisy(truth, 1.5, 2)
    data = build_swap_data(
        recs, {"big": good, "cheap": bad}, dimension="faithfulness", metric="m", dataset="synthetic"
    )
    res = backbone_swap(
        data, rng=np.random.default_rng(0), n_boot=500, human_protocol="pooled", seed=0
    )
    keys = list(data.keys)
    x = np.array([good[k] for k in keys])
    y = np.array([bad[k] for k in keys])
    h = data.human_resp[:, 0]
    p = res["pairs"][0]
    assert p["pearson"]["value"] == pytest.approx(st.pearsonr(x, y)[0], abs=1e-10)
    assert p["spearman"]["value"] == pytest.approx(st.spearmanr(x, y)[0], abs=1e-10)
    lo, hi = p["pearson"]["ci"]
    assert lo < p["pearson"]["value"] < hi
    assert res["per_backbone"]["big"]["pooled_pearson"]["value"] == pytest.approx(
        st.pearsonr(x, h)[0], abs=1e-10
    )
    hd = p["human_diff"]
    assert hd["delta"] < 0 and hd["ci"][1] < 0 and hd["p_holm"] < 0.05
    assert hd["williams"]["p"] < 0.05
    assert "cheap is significantly worse than big" in p["verdict"]
    assert res["ceiling"]["available"] is False


def test_seeded_bootstrap_is_reproducible() -> None:
    recs, truth = _likert()
    scores = {"a": _noisy(truth, 0.5, 1), "b": _noisy(truth, 0.7, 2), "c": _noisy(truth, 0.9, 3)}
    data = build_swap_data(recs, scores, dimension="faithfulness", metric="m", dataset="synthetic")
    r1 = backbone_swap(data, rng=np.random.default_rng(7), n_boot=100)
    r2 = backbone_swap(data, rng=np.random.default_rng(7), n_boot=100)
    assert json.dumps(r1.to_dict(), sort_keys=True) == json.dumps(r2.to_dict(), sort_keys=True)
    assert len(r1["pairs"]) == 3
    assert r1["protocol"]["name"].startswith("backbone-swap|human:grouped|boot:100")


def test_ceiling_with_two_annotators_and_unscored_responses() -> None:
    recs, truth = _likert(annotators=2)
    a = _noisy(truth, 0.3, 1)
    b = _noisy(truth, 0.3, 2)
    dropped = list(b)[:5]
    for k in dropped:
        b[k] = None  # type: ignore[assignment]
    data = build_swap_data(
        recs, {"a": a, "b": b}, dimension="faithfulness", metric="m", dataset="synthetic"
    )
    res = backbone_swap(data, rng=np.random.default_rng(0), n_boot=100)
    assert res["per_backbone"]["b"]["unscored"] == 5
    assert res["pairs"][0]["pearson"]["n"] == len(data.keys) - 5
    c = res["ceiling"]
    assert c["available"] and 0.5 < c["value"] < 1.0 and c["ci"][0] <= c["value"] <= c["ci"][1]


def test_pairwise_records_use_pair_differences() -> None:
    rng = np.random.default_rng(3)
    recs, sa, sb = [], {}, {}
    for i in range(80):
        qa, qb = rng.normal(), rng.normal()
        lab = tuple(float(np.sign(qb - qa + rng.normal(scale=0.3))) for _ in range(2))
        recs.append(
            PairwiseRecord(
                id=f"p{i}",
                input=Input(question="?"),
                a=Response("x", "r1"),
                b=Response("y", "r2"),
                labels={"overall": lab},
            )
        )
        sa[f"p{i}::a"], sa[f"p{i}::b"] = qa + rng.normal(scale=0.2), qb + rng.normal(scale=0.2)
        sb[f"p{i}::a"], sb[f"p{i}::b"] = qa + rng.normal(scale=1.0), qb + rng.normal(scale=1.0)
    data = build_swap_data(
        recs, {"s": sa, "w": sb}, dimension="overall", metric="m", dataset="synthetic"
    )
    res = backbone_swap(data, rng=np.random.default_rng(0), n_boot=200)
    assert res["protocol"]["human_protocol"] == "pairs"
    assert (
        res["per_backbone"]["s"]["pair_accuracy"]["value"]
        > res["per_backbone"]["w"]["pair_accuracy"]["value"]
    )
    assert res["ceiling"]["available"]
    with pytest.raises(InputError, match="Likert"):
        backbone_swap(data, rng=np.random.default_rng(0), n_boot=10, human_protocol="grouped")


def test_build_rejects_bad_inputs() -> None:
    recs, truth = _likert(n_items=3)
    with pytest.raises(InputError, match="two or more"):
        build_swap_data(recs, {"a": truth}, dimension="faithfulness", metric="m", dataset="d")
    with pytest.raises(InputError, match="scored none"):
        build_swap_data(
            recs,
            {"a": truth, "b": {"zz::q": 1.0}},
            dimension="faithfulness",
            metric="m",
            dataset="d",
        )


def test_external_score_file_spec(data_dir: Path, load: Load, tmp_path: Path) -> None:
    """LABEL=PATH:COLUMN reads any score table; a bad cell names file and field."""
    ds = load("lftqa_eval", subset="qtsumm")
    recs = ds.records
    good = tmp_path / "judge.csv"
    good.write_text(
        "item,system,mine\n"
        + "".join(f"{r.id},{r.system},{i % 5 + 1}\n" for i, r in enumerate(recs[:40]))
    )
    scores, sigs = external_scores(
        ds, [f"mine={good}:mine", "gpt-4o"], dimension="faithfulness", data_dir=data_dir
    )
    assert len(scores["mine"]) == 40 and sigs["mine"].startswith("mine")
    assert scores["gpt-4o"][f"{recs[0].id}::{recs[0].system}"] is not None
    bad = tmp_path / "bad.csv"
    bad.write_text(f"item,system,mine\n{recs[0].id},{recs[0].system},abc\n")
    with pytest.raises(InputError, match=r"bad\.csv"):
        external_scores(ds, [f"x={bad}"], dimension="faithfulness", data_dir=data_dir)


# ---- real data: LFTQA-Eval's three G-Eval backbones


PUBLISHED = {  # correlation_results.csv (instance-level Pearson), faithfulness
    ("qtsumm", "gpt-4o"): 0.633,
    ("qtsumm", "gpt-4o-mini"): 0.466,
    ("qtsumm", "Meta-Llama-3.1-70B-Instruct-Turbo"): 0.545,
    ("fetaqa", "gpt-4o"): 0.47,
    ("fetaqa", "gpt-4o-mini"): 0.342,
    ("fetaqa", "Meta-Llama-3.1-70B-Instruct-Turbo"): 0.433,
}


@pytest.mark.parametrize("subset", ["qtsumm", "fetaqa"])
def test_lftqa_eval_grouped_correlations_reproduce_published(data_dir: Path, subset: str) -> None:
    from metajudge.runs.backbone_swap import run_backbone_swap

    bbs = ["gpt-4o", "gpt-4o-mini", "Meta-Llama-3.1-70B-Instruct-Turbo"]
    res = run_backbone_swap(
        "lftqa_eval",
        "geval_faithfulness",
        external=bbs,
        subset=subset,
        n_boot=200,
        seed=0,
        data_dir=data_dir,
    )
    for bb in bbs:
        got = res["per_backbone"][bb]["human"]["value"]
        assert round(got, 3) == pytest.approx(PUBLISHED[(subset, bb)], abs=1e-9), bb
    assert res["n"]["inputs"] == 150
    for p in res["pairs"]:
        assert 0.4 < p["pearson"]["value"] < 0.8
        assert p["pearson"]["ci"][0] < p["pearson"]["value"] < p["pearson"]["ci"][1]
        assert not math.isnan(p["kappa_quadratic"])
    assert 0.4 < res["alpha"]["interval_scores"] < 0.8


def test_cli_backbone_swap_lftqa_eval(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(
        [
            "judge",
            "swap",
            "--dataset",
            "lftqa_eval",
            "--metric",
            "geval_faithfulness",
            "--scores",
            "shipped:gpt-4o,gpt-4o-mini,Meta-Llama-3.1-70B-Instruct-Turbo",
            "--n-boot",
            "200",
            "--data-dir",
            str(data_dir),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "| gpt-4o | gpt-4o-mini |" in out and "Krippendorff's α" in out and "Holm" in out
    assert "Bootstrap p: the smallest with 200 resamples is 2/(B + 1) = 0.00995 (shown as ≤)" in out
    assert "| ≤0.010 | ≤0.030 |" in out and "p ≤ 0.010, Holm p ≤ 0.030" in out  # gpt-4o vs mini
    assert out.count("agrees with") == 3
    for f in (
        "swap.md",
        "swap.json",
        "agreement_heatmap.png",
        "human_correlation.png",
        "reliability.png",
    ):
        assert (tmp_path / "out" / f).stat().st_size > 0
    saved = json.loads((tmp_path / "out" / "swap.json").read_text())
    assert saved["signatures"]["gpt-4o"].startswith("geval_gpt-4o_faithfulness|source:lftqa_eval")


def test_cli_backbone_swap_bad_backbone_is_a_clear_error(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(
        [
            "judge",
            "swap",
            "--dataset",
            "lftqa_eval",
            "--metric",
            "geval_faithfulness",
            "--scores",
            "shipped:gpt-4o,claude-9",
            "--data-dir",
            str(data_dir),
        ]
    )
    assert rc == 2
    assert "claude-9" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.llm
def test_embedded_two_backbone_swap_end_to_end(data_dir: Path) -> None:
    """Both embedded backbones score the same responses; the table is built from their scores."""
    from metajudge.runs.backbone_swap import run_backbone_swap

    res = run_backbone_swap(
        "lftqa_mitigation_pradhumant",
        "geval_faithfulness",
        backbones=["smollm2-135m", "gemma3-270m"],
        limit=4,
        n_boot=100,
        seed=0,
        data_dir=data_dir,
    )
    assert res["backbones"] == ["smollm2-135m", "gemma3-270m"]
    assert res["n"]["responses"] == 8 and len(res["pairs"]) == 1
    for bb in res["backbones"]:
        run = res["runs"][bb]
        assert run["n_items"] == 8 and run["items_scored"] + run["items_failed"] == 8
        assert (
            res["signatures"][bb].startswith(f"geval|backbone:{bb}|")
            or f"backbone:{bb}" in res["signatures"][bb]
        )
    assert "agrees with" in res["pairs"][0]["verdict"]


def test_cli_backbone_swap_json_format(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["judge", "swap", "--dataset", "lftqa_eval", "--subset", "qtsumm", "--metric"]
    args += ["geval_faithfulness", "--scores", "shipped:gpt-4o,gpt-4o-mini", "--n-boot", "50"]
    assert main([*args, "--format", "json", "--data-dir", str(data_dir), "--tie-band", "0.5"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["backbones"] == ["gpt-4o", "gpt-4o-mini"] and res["protocol"]["eps"] == 0.5


def test_lftqa_kappa_and_alpha_do_not_depend_on_pair_orientation(data_dir: Path) -> None:
    """Issue 25 item 8: κ (gpt-4o vs gpt-4o-mini) was 0.2415 with name-sorted pairs and 0.2470
    in file order, ordinal α on decisions 0.3116 vs 0.3184; with both orientations counted, every
    orientation gives 0.2473 and 0.3189."""
    from dataclasses import replace

    from metajudge.runs.backbone_swap import load_swap_data
    from metajudge.stats.agreement import ORIENTATION

    bbs = ["gpt-4o", "gpt-4o-mini", "Meta-Llama-3.1-70B-Instruct-Turbo"]
    data, _, _ = load_swap_data("lftqa_eval", "geval_faithfulness", external=bbs, data_dir=data_dir)
    v = data.view
    half = np.random.default_rng(8).random(v.pair_a.size) < 0.5
    views = {
        "as loaded": v,
        "every pair reversed": replace(v, pair_a=v.pair_b, pair_b=v.pair_a),
        "a random half reversed": replace(
            v, pair_a=np.where(half, v.pair_b, v.pair_a), pair_b=np.where(half, v.pair_a, v.pair_b)
        ),
    }
    got = {}
    for name, view in views.items():
        r = backbone_swap(replace(data, view=view), rng=np.random.default_rng(0), n_boot=10)
        got[name] = (
            [k for p in r.pairs for k in (p["kappa"], p["kappa_quadratic"])],
            r.alpha["ordinal_decisions"],
        )
    ref = got["as loaded"]
    for name, g in got.items():
        assert g[0] == pytest.approx(ref[0], abs=1e-12), name
        assert g[1] == pytest.approx(ref[1], abs=1e-12), name
    assert ref[0][0] == pytest.approx(0.2473, abs=1e-4)
    assert ref[1] == pytest.approx(0.3189, abs=1e-4)
    assert ORIENTATION in r.protocol["kappa"] and ORIENTATION in r.protocol["alpha"]
