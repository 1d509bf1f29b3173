"""issue 42: ``meta-eval --control FIELD`` — partial correlation controlling for a field (FRANK's
protocol), cross-checked against pingouin and statsmodels on HANNA (11 systems), with CIs over
items and Williams / paired comparisons on the residuals."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metajudge.cli import main
from metajudge.stats.partial import control_of, partial_rows, residualize

pd = pytest.importorskip("pandas")
pg = pytest.importorskip("pingouin")
sm = pytest.importorskip("statsmodels.api")
scipy_stats = pytest.importorskip("scipy.stats")

METRICS = ("hanna.bertscore_f1", "hanna.chrf")
DIMS = ("relevance", "coherence")


def _meta_eval(out: Path, *extra: str) -> dict[str, Any]:
    argv = ["meta-eval", "--dataset", "hanna", "--scores", "shipped:" + ",".join(METRICS),
            "--control", "system", "--aggregation", "mean", "--no-baselines", "--n-boot", "200",
            "--no-plots", "--paths-only", "--out", str(out), *extra]  # fmt: skip
    assert main(argv) == 0
    return json.loads((out / "result.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("control")
    return {
        "residuals": _meta_eval(base / "res"),
        "ranks": _meta_eval(base / "ranks", "--control-spearman", "ranks"),
        "folder": base / "res",
    }


@pytest.fixture(scope="module")
def frame() -> Any:
    """HANNA's responses: metric scores, the annotators' mean per dimension, the system."""
    import metajudge as mj
    from metajudge.data.formats import response_key
    from metajudge.data.loading import open_dataset

    ds = open_dataset("hanna")
    scores: dict[str, dict[str, float]] = {m: {} for m in METRICS}
    for r in mj.shipped_scores(ds):
        if r["metric"] in scores and r["score"] is not None:
            scores[r["metric"]][r["key"]] = r["score"]
    rows = []
    for r in ds.records:
        k = response_key(r.id, r.system)
        row = {"system": r.system, **{m: scores[m].get(k, math.nan) for m in METRICS}}
        for d in DIMS:
            vals = [v for v in r.scores[d] if v is not None]
            row[d] = float(np.mean(vals)) if vals else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _cell(res: dict[str, Any], metric: str, dim: str, stat: str) -> dict[str, Any]:
    (c,) = [c for c in res["cells"] if c["metric"] == metric and c["dimension"] == dim]
    return c["stats"][stat]


def _reference(frame: Any, metric: str, dim: str) -> dict[str, float]:
    df = frame[[metric, dim, "system"]].dropna()
    dummies = pd.get_dummies(df["system"], drop_first=True, dtype=float)
    dummies.columns = [f"s{i}" for i in range(dummies.shape[1])]
    data = pd.concat(
        [df[[metric, dim]].reset_index(drop=True), dummies.reset_index(drop=True)], axis=1
    )
    data.columns = ["x", "y", *dummies.columns]
    covar = list(dummies.columns)
    design = sm.add_constant(dummies.to_numpy())
    rx = sm.OLS(data["x"].to_numpy(), design).fit().resid
    ry = sm.OLS(data["y"].to_numpy(), design).fit().resid
    return {
        "pearson": float(pg.partial_corr(data, "x", "y", covar=covar)["r"].iloc[0]),
        "spearman_ranks": float(
            pg.partial_corr(data, "x", "y", covar=covar, method="spearman")["r"].iloc[0]
        ),
        "spearman_residuals": float(scipy_stats.spearmanr(rx, ry)[0]),  # FRANK's evaluate.py
        "n": len(df),
    }


@pytest.mark.slow
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dim", DIMS)
def test_partial_correlations_match_pingouin_and_statsmodels(
    runs: dict[str, Any], frame: Any, metric: str, dim: str
) -> None:
    ref = _reference(frame, metric, dim)
    res, ranks = runs["residuals"], runs["ranks"]
    assert abs(_cell(res, metric, dim, "pearson")["value"] - ref["pearson"]) < 1e-6
    assert abs(_cell(res, metric, dim, "spearman")["value"] - ref["spearman_residuals"]) < 1e-6
    assert abs(_cell(ranks, metric, dim, "spearman")["value"] - ref["spearman_ranks"]) < 1e-6
    assert abs(_cell(ranks, metric, dim, "pearson")["value"] - ref["pearson"]) < 1e-6
    # a CI from the item bootstrap around each value; Kendall is not controlled: said so
    for stat in ("pearson", "spearman"):
        e = _cell(res, metric, dim, stat)
        assert e["ci_method"] and "bootstrap" in e["ci_method"]
        assert e["ci"][0] < e["value"] < e["ci"][1]
    assert "Pearson and Spearman only" in _cell(res, metric, dim, "kendall")["undefined"]


@pytest.mark.slow
def test_control_comparisons_and_header(runs: dict[str, Any], frame: Any) -> None:
    res = runs["residuals"]
    p = res["protocol"]
    assert p["control"]["field"] == "system" and p["control"]["kind"] == "categorical"
    assert "FRANK" in p["control"]["spearman_definition"]
    assert "rank-based" in runs["ranks"]["protocol"]["control"]["spearman_definition"]
    comps = [c for c in res["comparisons"] if c["statistic"] == "pearson"]
    assert len(comps) == 6  # two metrics: one pair per dimension of HANNA's six
    comps = [c for c in comps if c["dimension"] in DIMS]
    for c in comps:
        ref = _reference(frame, c["metric_a"], c["dimension"])
        assert c["williams_n"] == ref["n"] - 10  # 11 systems: 10 parameters besides the intercept
        assert c["p_williams"] is not None and c["p_bootstrap"] is not None
        assert c["ci"] is not None and c["p_permutation"] is not None
    text = (runs["folder"] / "table.md").read_text()
    assert "partial correlation controlling for system (categorical, 11 values, one-hot)" in text
    assert "Spearman of the residuals (FRANK)" in text
    tex = (runs["folder"] / "table.tex").read_text()
    assert "partial correlation controlling for system (Spearman: Spearman of the residuals" in tex
    html = (runs["folder"] / "report.html").read_text()
    assert "partial correlation controlling for system" in html
    # the metric-against-metric section: every comparison, and the significance matrix
    assert "Metric vs metric (differences, Holm-adjusted p)" in html
    assert "Significance matrix, relevance, Pearson" in html


def test_control_refused_outside_pointwise_global(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["meta-eval", "--dataset", "lftqa_eval", "--scores", "shipped", "--metrics", "bleu",
            "--n-boot", "10", "--no-plots", "--control", "system"]  # fmt: skip
    assert main([*base, "--protocol", "pairwise-difference", "--out", str(tmp_path / "a")]) == 2
    assert "--control needs the pointwise protocol" in capsys.readouterr().err
    assert (
        main([*base, "--level", "item", "--protocol", "pointwise", "--out", str(tmp_path / "b")])
        == 2
    )
    assert "--control needs level global" in capsys.readouterr().err


def test_control_on_a_meta_field_every_record_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["meta-eval", "--dataset", "lftqa_eval", "--subset", "fetaqa", "--scores", "shipped",
            "--metrics", "bleu", "--protocol", "pointwise", "--n-boot", "10", "--no-plots",
            "--no-baselines", "--control", "no_such_field", "--out", str(tmp_path / "c")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--control no_such_field" in err and "records lack the field" in err


def test_numeric_control_matches_statsmodels() -> None:
    """A numeric control enters linearly: the residuals of OLS with an intercept."""
    rng = np.random.default_rng(4)
    z = rng.normal(size=60)
    x, y = z + rng.normal(size=60), 2 * z + rng.normal(size=60)
    c = control_of("length", z.tolist())
    design = sm.add_constant(z)
    rx = sm.OLS(x, design).fit().resid
    assert np.allclose(residualize(x, c, np.arange(60)), rx, atol=1e-12)
    data = pd.DataFrame({"x": x, "y": y, "z": z})
    taken, ax, ay = partial_rows("pearson", x, y, c, np.arange(60))
    assert taken == "pearson"
    assert (
        abs(np.corrcoef(ax, ay)[0, 1] - pg.partial_corr(data, "x", "y", covar="z")["r"].iloc[0])
        < 1e-9
    )
    taken, ax, ay = partial_rows("spearman", x, y, c, np.arange(60), "ranks")
    want = pg.partial_corr(data, "x", "y", covar="z", method="spearman")["r"].iloc[0]
    assert taken == "pearson" and abs(np.corrcoef(ax, ay)[0, 1] - want) < 1e-9
