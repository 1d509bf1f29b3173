"""The meta-evaluation protocol: synthetic properties, bad input, and the published tables."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from metajudge import stats
from metajudge.analyses.metric_vs_human import normalize
from metajudge.analyses.metric_vs_human.evaluate import MetaEvalResult, meta_evaluate
from metajudge.data.formats import DatasetCard, Input, LikertRecord, PairwiseRecord, Response, Scale
from metajudge.data.registry import Dataset
from metajudge.errors import InputError
from metajudge.scores.readers import upstream as external


def _card(
    kind: str = "pairwise",
    scale: Scale | None = None,
    dims: tuple[str, ...] = ("quality",),
    name: str = "toy",
) -> DatasetCard:
    return DatasetCard(
        name=name,
        kind=kind,
        description="toy",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=dims,
        scale=scale or Scale(-2, 2),
        annotators=2,
        direction="positive = b better",
    )


def _pairwise(labels: list[list[float | None]], name: str = "toy") -> Dataset:
    recs = [
        PairwiseRecord(
            id=str(i),
            input=Input(question=f"q{i}"),
            a=Response("A", "a"),
            b=Response("B", "b"),
            labels={"quality": tuple(lab)},
        )
        for i, lab in enumerate(labels)
    ]
    return Dataset(card=_card(name=name), records=recs)


def _rows(metric: str, sa: list[float | None], sb: list[float | None]) -> list[dict]:
    out = []
    for i, (a, b) in enumerate(zip(sa, sb, strict=True)):
        out.append(
            {
                "key": f"{i}::a",
                "metric": metric,
                "score": a,
                "signature": f"{metric}|test",
                "error": None if a is not None else "x",
            }
        )
        out.append(
            {
                "key": f"{i}::b",
                "metric": metric,
                "score": b,
                "signature": f"{metric}|test",
                "error": None if b is not None else "x",
            }
        )
    return out


def _toy(n: int = 40, seed: int = 0) -> tuple[Dataset, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    labels = [
        [
            float(np.clip(round(t + rng.normal(scale=0.3)), -2, 2)),
            float(np.clip(round(t + rng.normal(scale=0.3)), -2, 2)),
        ]
        for t in truth
    ]
    return _pairwise(labels), truth


def test_minmax_is_ragcheckers_formula() -> None:
    d = np.array([0.2, -0.4, np.nan, 0.6, 0.0])
    res = normalize.minmax(d, 2.0)
    lo, hi, med = -0.4, 0.6, np.median([0.2, -0.4, 0.6, 0.0])
    filled = np.where(np.isnan(d), med, d)
    np.testing.assert_allclose(res.values, ((filled - lo) / (hi - lo) - 0.5) * 4)
    assert res.n_imputed == 1
    assert normalize.minmax(np.array([0.3, 0.3, 0.3]), 2.0).undefined.startswith(
        "metric difference is constant"
    )


def test_perfect_metric_correlates_one_and_flips_with_direction() -> None:
    ds, truth = _toy()
    mean_lab = [np.mean(r.labels["quality"]) for r in ds.records]
    rows = _rows("perfect", [0.0] * len(truth), mean_lab)
    res = meta_evaluate(ds, rows, aggregation="mean", normalize="raw", n_boot=50)
    for s in ("pearson", "spearman", "kendall", "acc_ties"):
        assert res.value("perfect", "quality", s) == pytest.approx(1.0)
    neg = meta_evaluate(
        ds, rows, aggregation="mean", normalize="raw", n_boot=0, directions={"perfect": "lower"}
    )
    assert neg.value("perfect", "quality") == pytest.approx(-1.0)
    # swapping a and b scores flips the sign of the difference and of the correlation
    swapped = _rows("perfect", mean_lab, [0.0] * len(truth))
    assert meta_evaluate(ds, swapped, aggregation="mean", normalize="raw", n_boot=0).value(
        "perfect", "quality"
    ) == pytest.approx(-1.0)


def test_per_annotator_rows_and_minmax_match_a_direct_computation() -> None:
    ds, _truth = _toy(30, seed=3)
    rng = np.random.default_rng(1)
    sa, sb = rng.random(30), rng.random(30)
    res = meta_evaluate(ds, _rows("m", list(sa), list(sb)), n_boot=0)
    d = sb - sa
    dn = ((d - d.min()) / (d.max() - d.min()) - 0.5) * 4
    x = np.repeat(dn, 2)
    y = np.array([v for r in ds.records for v in r.labels["quality"]])
    cell = res.cell("m", "quality")
    assert cell["n_rows"] == 60 and cell["n_pairs"] == 30
    assert res.value("m", "quality") == pytest.approx(stats.pearson(x, y), abs=1e-12)
    assert res.value("m", "quality", "spearman") == pytest.approx(stats.spearman(x, y), abs=1e-12)
    # accuracy is taken from the sign of the raw difference (minmax moves zero)
    assert res.value("m", "quality", "acc_ties") == pytest.approx(
        stats.pairwise_accuracy(human=y, judge=np.repeat(d, 2))
    )
    # the ceiling: annotator 1 vs annotator 2
    a1 = [r.labels["quality"][0] for r in ds.records]
    a2 = [r.labels["quality"][1] for r in ds.records]
    assert res.ceiling("quality") == pytest.approx(stats.pearson(a1, a2), abs=1e-12)


def test_constant_metric_is_undefined_with_a_reason() -> None:
    ds, _ = _toy(10)
    res = meta_evaluate(ds, _rows("const", [0.5] * 10, [0.5] * 10), n_boot=20)
    for s in ("pearson", "spearman", "kendall"):
        e = res.cell("const", "quality")["stats"][s]
        assert e["value"] is None
        assert "constant" in e["undefined"]
    raw = meta_evaluate(ds, _rows("const", [0.5] * 10, [0.5] * 10), normalize="raw", n_boot=20)
    assert "constant" in raw.cell("const", "quality")["stats"]["pearson"]["undefined"]
    # serialisable without NaN
    json.dumps(res.to_dict(), allow_nan=False)


def test_fewer_than_three_pairs_is_an_error() -> None:
    ds = _pairwise([[1, 1], [-1, 0]])
    with pytest.raises(InputError, match="at least 3"):
        meta_evaluate(ds, _rows("m", [0.1, 0.2], [0.3, 0.1]))


def test_missing_scores_are_counted_and_imputed_under_minmax() -> None:
    ds, _ = _toy(12)
    rng = np.random.default_rng(2)
    sa = list(rng.random(12))
    sb = list(rng.random(12))
    sb[3] = None
    rows = _rows("m", sa, sb)
    rows = [r for r in rows if r["key"] != "5::a"]  # absent
    res = meta_evaluate(ds, rows, n_boot=0)
    miss = res.data["metrics"][0]["missing"]["m"]
    assert miss["responses_absent"] == 1
    assert miss["responses_unscored"] == 1
    assert miss["pairs_missing"] == 2
    assert miss["pairs_imputed_median"] == 2
    assert res.cell("m", "quality")["n_pairs"] == 12  # RAGChecker: NaN -> median, pair kept
    sign = meta_evaluate(ds, rows, normalize="sign", n_boot=0)
    assert sign.cell("m", "quality")["n_pairs"] == 10  # other modes drop the pair


def test_sign_mode_epsilon_and_learned_epsilon() -> None:
    ds, _truth = _toy(60, seed=4)
    rng = np.random.default_rng(0)
    mean_lab = np.array([np.mean(r.labels["quality"]) for r in ds.records])
    sb = mean_lab * 0.1 + rng.normal(scale=0.02, size=60)
    rows = _rows("m", [0.0] * 60, list(sb))
    r0 = meta_evaluate(ds, rows, normalize="sign", n_boot=0)
    r1 = meta_evaluate(ds, rows, normalize="sign", epsilon=0.05, n_boot=0)
    assert r0.data["protocol"]["epsilon"] == 0.0 and r1.data["protocol"]["epsilon"] == 0.05
    assert r0.value("m", "quality", "acc_ties") != r1.value("m", "quality", "acc_ties")
    learned = meta_evaluate(
        ds, rows, normalize="sign", learn_epsilon=True, cv_folds=4, n_boot=0, seed=1
    )
    cell = learned.cell("m", "quality")
    assert len(cell["epsilon_per_fold"]) == 4
    assert learned.value("m", "quality", "acc_ties") is not None
    with pytest.raises(InputError, match="learn_epsilon"):
        meta_evaluate(ds, rows, normalize="minmax", learn_epsilon=True)


def test_learned_epsilon_never_uses_the_scored_fold() -> None:
    d = np.array([0.01, 0.02, 0.5, -0.5, 0.03, -0.01] * 5)
    h = np.array([0, 0, 1, -1, 0, 0] * 5)
    items = np.arange(d.size)
    eps, per_fold = normalize.learn_epsilon_cv(d, h, items, k=3, rng=np.random.default_rng(0))
    assert eps.shape == d.shape and len(per_fold) == 3
    assert all(0.03 <= e < 0.5 for e in per_fold)  # the tie band that separates ties from wins


def test_three_annotators_leave_one_out_ceiling() -> None:
    rng = np.random.default_rng(5)
    truth = rng.normal(size=25)
    labels = [
        [float(np.clip(round(t + rng.normal(scale=0.5)), -2, 2)) for _ in range(3)] for t in truth
    ]
    ds = _pairwise(labels)
    res = meta_evaluate(ds, _rows("m", [0.0] * 25, list(truth)), n_boot=30)
    L = np.array(labels)
    ref = np.mean([stats.pearson(np.delete(L, j, axis=1).mean(axis=1), L[:, j]) for j in range(3)])
    assert res.ceiling("quality") == pytest.approx(ref, abs=1e-12)
    assert "each of 3" in res.data["ceiling"][0]["method"]


def test_comparisons_are_paired_and_holm_corrected() -> None:
    ds, truth = _toy(50, seed=6)
    rng = np.random.default_rng(3)
    rows = _rows("good", [0.0] * 50, list(truth + rng.normal(scale=0.2, size=50)))
    rows += _rows("bad", [0.0] * 50, list(rng.normal(size=50)))
    rows += _rows("mid", [0.0] * 50, list(truth + rng.normal(scale=1.5, size=50)))
    res = meta_evaluate(ds, rows, metrics=["good", "bad", "mid"], n_boot=300, seed=0)
    comps = res.data["comparisons"]
    assert len(comps) == 3 * 2  # 3 metric pairs x (pearson, spearman)
    gb = next(
        c
        for c in comps
        if c["metric_a"] == "good" and c["metric_b"] == "bad" and c["statistic"] == "pearson"
    )
    assert gb["diff"] == pytest.approx(
        res.value("good", "quality") - res.value("bad", "quality"), abs=1e-12
    )
    assert gb["p_bootstrap"] < 0.01 and gb["p_permutation"] < 0.01 and gb["p_williams"] < 0.01
    for c in comps:
        for k in ("p_bootstrap", "p_permutation"):
            assert c[k + "_holm"] >= c[k]
    # same seed, same result
    again = meta_evaluate(ds, rows, metrics=["good", "bad", "mid"], n_boot=300, seed=0)
    assert again.data["comparisons"] == comps
    assert (
        again.cell("good", "quality")["stats"]["pearson"]["ci"]
        == res.cell("good", "quality")["stats"]["pearson"]["ci"]
    )


def test_result_roundtrip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ds, truth = _toy(15)
    res = meta_evaluate(ds, _rows("m", [0.0] * 15, list(truth)), n_boot=20)
    p = res.save(tmp_path / "r.json")
    back = MetaEvalResult.load(p)
    assert back.to_dict() == json.loads(p.read_text())
    (tmp_path / "bad.json").write_text('{"schema": "other"}')
    with pytest.raises(InputError, match="schema"):
        MetaEvalResult.load(tmp_path / "bad.json")


def test_likert_grouped_is_response_level() -> None:
    card = _card(kind="likert", scale=Scale(1, 5), dims=("q",))
    rng = np.random.default_rng(0)
    recs, rows = [], []
    for item in range(8):
        for si, sysname in enumerate(["s1", "s2", "s3", "s4"]):
            h = float(rng.integers(1, 6))
            recs.append(
                LikertRecord(
                    id=f"i{item}",
                    input=Input(question="q"),
                    system=sysname,
                    response="r",
                    scores={"q": (h,)},
                )
            )
            rows.append(
                {
                    "key": f"i{item}::{sysname}",
                    "metric": "m",
                    "score": h + rng.normal(scale=0.8),
                    "signature": "m",
                }
            )
    ds = Dataset(card=card, records=recs)
    res = meta_evaluate(ds, rows, grouped=True, normalize="raw", n_boot=50)
    x = np.array([r["score"] for r in rows])
    y = np.array([r.scores["q"][0] for r in recs])
    g = np.array([r.id for r in recs])
    ref, _, _ = stats.grouped_correlation(x, y, g)
    assert res.value("m", "q") == pytest.approx(ref, abs=1e-12)
    assert res.data["protocol"]["grouped_unit"] == "response"
    assert res.data["ceiling"][0]["method"] is None  # one label per response


# ---------------------------------------------------------------------------------------------
# Published numbers, reproduced from the real data


def test_ragchecker_meta_evaluation_table_exactly(data_dir, load) -> None:  # type: ignore[no-untyped-def]
    from metajudge.data.registry import resolve_file

    ds = load("ragchecker_meta_eval")
    rows = external.ragchecker_baseline(
        resolve_file("ragchecker_meta_eval", "baseline_ragchecker.json", data_dir), ds.records
    )
    res = meta_evaluate(ds, rows, normalize="minmax", n_boot=200)
    got = {
        d: (
            f"{res.value('ragchecker', d) * 100:.2f}",
            f"{res.value('ragchecker', d, 'spearman') * 100:.2f}",
        )
        for d in res.dimensions
    }
    assert got == {
        "correctness": ("49.66", "46.95"),
        "completeness": ("60.67", "58.11"),
        "overall": ("61.93", "60.90"),
    }
    ceil = {d: f"{res.ceiling(d) * 100:.2f}" for d in res.dimensions}
    assert ceil == {"correctness": "63.67", "completeness": "71.91", "overall": "70.09"}
    assert res.cell("ragchecker", "overall")["n_rows"] == 560
    # published values are attached when a report is rendered, and agree
    from metajudge.reports.published import attach_published

    assert res.data["published"] == []  # the computation does not read them
    attach_published(res)
    pub = {(e["metric"], e["dimension"], e["statistic"]): e["value"] for e in res.data["published"]}
    assert pub[("ragchecker", "overall", "pearson")] == 61.93
    for (m, d, s), v in pub.items():
        ours = res.ceiling(d, s) if m == "human" else res.value(m, d, s)
        assert f"{ours * 100:.2f}" == f"{v:.2f}"


def test_ragchecker_ceiling_does_not_depend_on_annotator_order(data_dir, load) -> None:  # type: ignore[no-untyped-def]
    """Issue 25 item 7: acc_no_ties of the inter-human row was 0.5625 with annotator 1 as the
    reference and 0.66 with the two swapped; now both orders, averaged (0.6113)."""
    from dataclasses import replace

    from metajudge.data.registry import resolve_file
    from metajudge.stats.human import TWO_ANNOTATORS

    ds = load("ragchecker_meta_eval")
    rows = external.ragchecker_baseline(
        resolve_file("ragchecker_meta_eval", "baseline_ragchecker.json", data_dir), ds.records
    )
    swapped = [
        replace(r, labels={d: tuple(reversed(v)) for d, v in r.labels.items()}) for r in ds.records
    ]
    a, b = (
        meta_evaluate(replace(ds, records=recs), rows, normalize="minmax", n_boot=50)
        for recs in (ds.records, swapped)
    )
    for d in a.dimensions:
        for s in ("pearson", "spearman", "kendall", "acc_ties", "acc_no_ties"):
            assert a.ceiling(d, s) == pytest.approx(b.ceiling(d, s), abs=1e-12)
    assert a.ceiling("correctness", "acc_no_ties") == pytest.approx(0.6113, abs=1e-4)
    assert a.ceiling("completeness", "acc_no_ties") == pytest.approx(0.7168, abs=1e-4)
    assert a.ceiling("overall", "acc_no_ties") == pytest.approx(0.7217, abs=1e-4)
    assert a.data["ceiling"][0]["method"] == TWO_ANNOTATORS


def test_lftqa_eval_correlation_results_reproduced(data_dir, load) -> None:  # type: ignore[no-untyped-def]
    from metajudge.data.registry import resolve_file

    ds = load("lftqa_eval")
    with open(resolve_file("lftqa_eval", "correlation_results.csv", data_dir), newline="") as fh:
        table = list(csv.reader(fh))
    header, body = table[0], table[1:]
    metrics = [r[0] for r in body]
    checked = 0
    for subset in ("qtsumm", "fetaqa"):
        sub = ds.subset(subset)
        rows = external.lftqa_metric_scores(subset, data_dir=data_dir, records=sub.records)
        res = meta_evaluate(
            sub,
            rows,
            metrics=metrics,
            grouped=True,
            normalize="raw",
            n_boot=0,
            compare=False,
            statistics=("pearson",),
        )
        for r in body:
            for j, col in enumerate(header[1:], start=1):
                s, dim = col.split("-")
                if s != subset:
                    continue
                assert round(res.value(r[0], dim), 3) == pytest.approx(float(r[j]), abs=1e-9), (
                    r[0],
                    col,
                )
                checked += 1
    assert checked == len(body) * 4 == 48


def test_grouped_flag_changes_the_unit_on_pairwise_data(data_dir) -> None:  # type: ignore[no-untyped-def]
    ds, truth = _toy(20)
    res = meta_evaluate(ds, _rows("m", [0.0] * 20, list(truth)), grouped=True, n_boot=0)
    # every input has one pair: per-input correlation undefined, said so
    e = res.cell("m", "quality")["stats"]["pearson"]
    assert e["value"] is None and "no input" in e["undefined"]
    assert math.isfinite(res.value("m", "quality", "acc_ties"))


def test_unknown_options_are_errors() -> None:
    ds, truth = _toy(5)
    rows = _rows("m", [0.0] * 5, list(truth))
    with pytest.raises(InputError):
        meta_evaluate(ds, rows, normalize="zscore")
    with pytest.raises(InputError):
        meta_evaluate(ds, rows, aggregation="trimmed-mean")
    with pytest.raises(InputError):
        meta_evaluate(ds, rows, dimensions=["nope"])
    with pytest.raises(InputError, match="no metric scores"):
        meta_evaluate(ds, [{"key": "zz::a", "metric": "m", "score": 1.0}])
    with pytest.raises(InputError, match="duplicate"):
        meta_evaluate(ds, rows + rows[:1])
    with pytest.raises(InputError, match="non-numeric"):
        meta_evaluate(ds, [{"key": "0::a", "metric": "m", "score": "high"}] + rows[1:])


def test_cli_small_n_option_picks_the_ci_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``meta-eval --small-n``: on 8 pairs the default (20) gives Fisher z; ``--small-n 5``
    the percentile bootstrap; the result JSON names the method and its units per value."""
    from metajudge.cli import main

    fixture = Path(__file__).parents[2] / "fixtures" / "byod" / "pairwise.jsonl"
    base = ["meta-eval", "--input", str(fixture), "--metrics", "bleu", "--n-boot", "50"]
    base += ["--no-plots", "--paths-only", "--no-compare", "--no-baselines"]
    methods = {}
    for name, extra in (("default", []), ("five", ["--small-n", "5"])):
        assert main([*base, "--out", str(tmp_path / name), *extra]) == 0
        data = json.loads((tmp_path / name / "result.json").read_text())
        e = next(c for c in data["cells"] if c["metric"] == "bleu")["stats"]["pearson"]
        methods[name] = (e["ci_method"], e["ci_n"])
    assert methods == {"default": ("Fisher z", 8), "five": ("percentile bootstrap", 8)}
