"""One core: meta-eval and backbone swap agree on the same data, protocol and seed; p-values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metajudge import stats
from metajudge.analyses.backbone_swap import backbone_swap, build_swap_data
from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
from metajudge.analyses.metric_vs_human.protocol import Protocol
from tests.conftest import Load

BACKBONES = ["gpt-4o", "gpt-4o-mini", "Meta-Llama-3.1-70B-Instruct-Turbo"]


def test_bootstrap_p_value_is_never_zero_and_one_rule() -> None:
    d = np.linspace(0.1, 1.0, 999)  # every resample on one side
    assert stats.bootstrap_p_value(d) == pytest.approx(2 / 1000)
    assert stats.bootstrap_p_value(-d) == pytest.approx(2 / 1000)
    assert stats.bootstrap_p_value(np.zeros(9)) == 1.0
    res = stats.paired_bootstrap_diff(
        d,
        np.zeros_like(d) + np.random.default_rng(0).normal(size=d.size),
        d,
        n_resamples=199,
        rng=np.random.default_rng(1),
    )
    assert res.p_value >= 2 / 200


def test_metaeval_comparisons_never_report_p_zero() -> None:
    from tests.analyses.metric_vs_human.test_evaluate import _rows, _toy

    ds, truth = _toy(50, seed=6)
    rng = np.random.default_rng(3)
    rows = _rows("good", [0.0] * 50, list(truth + rng.normal(scale=0.2, size=50)))
    rows += _rows("bad", [0.0] * 50, list(rng.normal(size=50)))
    for grouped in (False, True):
        res = meta_evaluate(ds, rows, n_boot=300, seed=0, grouped=grouped, aggregation="mean")
        for c in res.data["comparisons"]:
            if c.get("p_bootstrap") is not None:
                assert c["p_bootstrap"] >= 2 / 301


def _lftqa(data_dir: Path, load: Load):  # type: ignore[no-untyped-def]
    from metajudge.scores.shipped import shipped_scores

    ds = load("lftqa_eval")
    names = [f"geval_{b}_faithfulness" for b in BACKBONES]
    return ds, shipped_scores(ds, data_dir, metrics=names), names


def test_meta_eval_and_backbone_swap_report_identical_human_correlations(
    data_dir: Path, load: Load
) -> None:
    ds, rows, names = _lftqa(data_dir, load)
    proto = Protocol(
        normalize="raw",
        aggregation="mean",
        grouped=True,
        n_boot=300,
        seed=7,
        compare=True,
        statistics=("pearson",),
    )
    res = meta_evaluate(ds, rows, proto, metrics=names, dimensions=["faithfulness"])
    scores = {
        b: {r["key"]: r["score"] for r in rows if r["metric"] == n}
        for b, n in zip(BACKBONES, names, strict=True)
    }
    data = build_swap_data(ds.records, scores, dimension="faithfulness", metric="m", dataset="x")
    swap = backbone_swap(data, rng=np.random.default_rng(7), n_boot=300)
    # the same Protocol value passed to both gives the same numbers
    same = backbone_swap(data, proto.with_options(correlate="pointwise"))
    assert same["per_backbone"] == swap["per_backbone"]
    for b, n in zip(BACKBONES, names, strict=True):
        e = res.cell(n, "faithfulness")["stats"]["pearson"]
        h = swap["per_backbone"][b]["human"]
        assert h["value"] == pytest.approx(e["value"], abs=1e-12)
        assert h["ci"] == pytest.approx(e["ci"], abs=1e-12)
    # the difference gpt-4o-mini - gpt-4o: same CI and the same smoothed p-value in both
    pair = next(p for p in swap["pairs"] if p["x"] == "gpt-4o" and p["y"] == "gpt-4o-mini")
    comp = next(
        c
        for c in res.data["comparisons"]
        if c["metric_a"] == names[0] and c["metric_b"] == names[1]
    )
    # meta-eval reports a - b (gpt-4o - gpt-4o-mini), the swap y - x: the same numbers negated
    assert comp["diff"] == pytest.approx(-pair["human_diff"]["delta"], abs=1e-12)
    lo, hi = pair["human_diff"]["ci"]
    assert comp["ci"] == pytest.approx([-hi, -lo], abs=1e-12)
    assert comp["p_bootstrap"] == pytest.approx(pair["human_diff"]["p_bootstrap"], abs=1e-15)
    assert comp["p_bootstrap"] > 0


def test_readme_backbone_swap_numbers(data_dir: Path) -> None:
    """docs/reproductions.md: `metajudge judge swap --dataset lftqa_eval --metric
    geval_faithfulness --scores shipped:gpt-4o,gpt-4o-mini,Meta-Llama-3.1-70B-Instruct-Turbo`
    (1,000 resamples, seed 0)."""
    import metajudge as mj

    res = mj.backbone_swap(
        "lftqa_eval",
        "geval_faithfulness",
        external=BACKBONES,
        n_boot=1000,
        seed=0,
        data_dir=data_dir,
    )
    human = {b: round(res["per_backbone"][b]["human"]["value"], 3) for b in BACKBONES}
    assert human == {
        "gpt-4o": 0.551,
        "gpt-4o-mini": 0.404,
        "Meta-Llama-3.1-70B-Instruct-Turbo": 0.489,
    }
    pair = next(p for p in res["pairs"] if p["x"] == "gpt-4o" and p["y"] == "gpt-4o-mini")
    hd = pair["human_diff"]
    assert round(hd["delta"], 3) == -0.147
    assert [round(v, 3) for v in hd["ci"]] == [-0.194, -0.100]
    assert round(hd["p_holm"], 3) == 0.006
    assert round(res["alpha"]["interval_scores"], 3) == 0.581


def test_missing_rule_drop_median_error_counted_and_printed(tmp_path: Path) -> None:
    from metajudge.errors import InputError
    from metajudge.reports import tables
    from tests.analyses.metric_vs_human.test_evaluate import _rows, _toy

    ds, truth = _toy(20, seed=2)
    sb: list[float | None] = list(truth)
    sb[3] = sb[7] = None
    rows = _rows("m", [0.0] * 20, sb)
    med = meta_evaluate(ds, rows, n_boot=0)  # minmax: RAGChecker's median by default
    drop = meta_evaluate(ds, rows, n_boot=0, missing="drop")
    miss_med = med.data["metrics"][0]["missing"]["m"]
    miss_drop = drop.data["metrics"][0]["missing"]["m"]
    assert (miss_med["pairs_imputed_median"], miss_med["pairs_dropped"]) == (2, 0)
    assert (miss_drop["pairs_imputed_median"], miss_drop["pairs_dropped"]) == (0, 2)
    assert med.cell("m", "quality")["n_pairs"] == 20 and drop.cell("m", "quality")["n_pairs"] == 18
    assert med.data["protocol"]["missing"] == "median"
    assert "2 of 20 pairs imputed with the median" in tables.summary_table(med)
    assert "2 of 20 pairs dropped" in tables.to_markdown(drop)
    raw = meta_evaluate(ds, rows, n_boot=0, normalize="raw", missing="median")
    assert raw.data["metrics"][0]["missing"]["m"]["pairs_imputed_median"] == 2
    with pytest.raises(InputError, match="2 of 20 pairs lack a score"):
        meta_evaluate(ds, rows, n_boot=0, missing="error")
    with pytest.raises(InputError, match="missing"):
        Protocol(missing="zero")


def test_cli_warns_about_imputed_scores(
    data_dir: Path, load: Load, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from metajudge.cli import main
    from metajudge.data.formats import response_key

    ds = load("ragchecker_meta_eval")
    f = tmp_path / "half.jsonl"
    lines = []
    for i, r in enumerate(ds.records[:200]):
        for side, v in (("a", 0.0), ("b", float(i % 7))):
            key = response_key(r.id, side)
            lines.append(json.dumps({"key": key, "metric": "half", "score": v}))
    f.write_text("\n".join(lines) + "\n")
    args = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", str(f)]
    args += [
        "--n-boot",
        "10",  # the CLI takes 1..10_000_000 resamples (issue 18); n_boot=0 is the API's
        "--no-plots",
        "--out",
        str(tmp_path / "run"),
        "--data-dir",
        str(data_dir),
    ]
    assert main(args) == 0
    cap = capsys.readouterr()
    assert "80 of 280 pairs imputed with the median" in cap.out
    assert "Inter-Human Correlation: annotator 1 vs annotator 2 and 2 vs 1, averaged" in cap.out
    assert main([*args, "--missing", "error", "--out", str(tmp_path / "r2")]) == 2
    assert "80 of 280 pairs lack a score" in capsys.readouterr().err


@pytest.mark.parametrize(("human", "level"), [("grouped", "item"), ("pooled", "global")])
def test_one_inter_human_reference_in_meta_eval_and_backbone_swap(human: str, level: str) -> None:
    from tests.analyses.metric_vs_human.test_pointwise import _likert

    ds, rows = _likert(annotators=3, seed=4)
    proto = Protocol(correlate="pointwise", aggregation="mean", level=level, n_boot=200, seed=5)
    res = meta_evaluate(ds, rows, proto)
    scores = {m: {r["key"]: r["score"] for r in rows if r["metric"] == m} for m in ("m", "noise")}
    data = build_swap_data(ds.records, scores, dimension="q", metric="j", dataset="toy")
    swap = backbone_swap(data, rng=np.random.default_rng(5), n_boot=200, human_protocol=human)  # type: ignore[arg-type]
    ceil = res.data["ceiling"][0]["stats"]["pearson"]
    assert swap["ceiling"]["value"] == pytest.approx(ceil["value"], abs=1e-12)
    assert swap["ceiling"]["ci"] == pytest.approx(ceil["ci"], abs=1e-12)
    assert swap["per_backbone"]["m"]["human"]["value"] == pytest.approx(
        res.value("m", "q"), abs=1e-12
    )
    assert swap["per_backbone"]["m"]["human"]["ci"] == pytest.approx(res.ci("m", "q"), abs=1e-12)


def test_protocol_is_a_frozen_validated_value() -> None:
    import dataclasses

    from metajudge.errors import InputError

    p = Protocol(normalize="sign", epsilon=0.1, n_boot=10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.n_boot = 5  # type: ignore[misc]
    assert Protocol.from_dict(p.to_dict()) == p
    assert p.with_options(seed=3).seed == 3 and p.seed == 0
    with pytest.raises(InputError, match="unknown protocol option"):
        Protocol.from_dict({"nboot": 3})
    with pytest.raises(InputError, match="normalisation"):
        Protocol(normalize="zscore")
    with pytest.raises(InputError, match="learn_epsilon"):
        Protocol(learn_epsilon=True)
    assert Protocol().missing_rule == "median" and Protocol(normalize="raw").missing_rule == "drop"


def test_results_are_typed_with_json_and_pandas() -> None:
    import json

    from tests.analyses.metric_vs_human.test_evaluate import _rows, _toy

    ds, truth = _toy(20)
    res = meta_evaluate(ds, _rows("m", [0.0] * 20, list(truth)), n_boot=20)
    assert json.loads(res.to_json()) == res.to_dict()
    df = res.to_pandas()
    assert set(df["statistic"]) >= {"pearson", "spearman"} and len(df) == 5
    for c in res.data["cells"]:
        assert not any(k.startswith("_") for k in c)  # no private arrays in the JSON
    assert res.data["published"] == []  # attached by reports, not read by the engine


def test_swap_result_to_json_and_pandas() -> None:
    import json

    from tests.analyses.metric_vs_human.test_pointwise import _likert

    ds, rows = _likert(annotators=1)
    scores = {m: {r["key"]: r["score"] for r in rows if r["metric"] == m} for m in ("m", "noise")}
    data = build_swap_data(ds.records, scores, dimension="q", metric="j", dataset="toy")
    res = backbone_swap(data, Protocol(correlate="pointwise", level="item", n_boot=50))
    assert json.loads(res.to_json())["backbones"] == ["m", "noise"]
    df = res.to_pandas()
    assert list(df["backbone"]) == ["m", "noise"] and df["human"].notna().all()


def test_pairwise_reference_sets_each_metric_beside_single_annotators() -> None:
    from tests.analyses.metric_vs_human.test_evaluate import _rows, _toy

    ds, truth = _toy(40, seed=8)
    res = meta_evaluate(ds, _rows("m", [0.0] * 40, list(truth)), n_boot=50, normalize="raw")
    L = np.array([r.labels["quality"] for r in ds.records])
    want = (stats.pearson(truth, L[:, 0]) + stats.pearson(truth, L[:, 1])) / 2
    matched = res.data["ceiling"][0]["matched"]["m"]["pearson"]["value"]
    assert matched == pytest.approx(want, abs=1e-12)
    assert res.ceiling("quality") == pytest.approx(stats.pearson(L[:, 0], L[:, 1]), abs=1e-12)
