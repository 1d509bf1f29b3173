"""The two engines behind :func:`metajudge.engine.statistics` give the same values (to 1e-12)
on every kind of data the engine serves, and ``meta-eval --engine reference`` writes the same
numbers as the fast run."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metajudge import engine
from metajudge import stats as st
from metajudge.cli import main
from metajudge.engine import Resamples

N_ITEMS, B = 36, 25


def _both(requests: list[tuple[str, np.ndarray, np.ndarray]], W: Any) -> None:
    fast = engine.statistics(requests, W, engine="fast")
    ref = engine.statistics(requests, W, engine="reference")
    for (name, _, _), f, r in zip(requests, fast, ref, strict=True):
        assert f.shape == r.shape == (B,), name
        assert np.array_equal(np.isnan(f), np.isnan(r)), name
        np.testing.assert_allclose(f, r, rtol=0, atol=1e-12, err_msg=name)


def _kinds(rng: np.random.Generator, n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """x, y of each kind of data: continuous, ties (few values: the contingency tables),
    binary, a continuous metric against 1-5 labels (the rank pass) and pairwise -1/0/1."""
    latent = rng.normal(size=n)
    labels = np.clip(np.round(latent + rng.normal(0, 0.8, n)) + 3, 1, 5)
    return {
        "continuous": (latent + rng.normal(0, 0.7, n), latent + rng.normal(0, 0.7, n)),
        "ties": (rng.integers(0, 4, n).astype(float), labels),
        "binary": ((latent > 0).astype(float), (latent + rng.normal(0, 1, n) > 0).astype(float)),
        "metric_vs_labels": (latent + rng.normal(0, 0.5, n), labels),
        "pairwise": (np.sign(np.round(latent, 0)), np.sign(np.round(latent + rng.normal(size=n)))),
    }


@pytest.mark.parametrize("kind", ["continuous", "ties", "binary", "metric_vs_labels", "pairwise"])
@pytest.mark.parametrize("cache", [0, 1 << 30])
def test_engines_agree_on_lazy_resamples_of_items(kind: str, cache: int) -> None:
    """One row per item; lazy resamples (cached or redrawn), every statistic in one call."""
    x, y = _kinds(np.random.default_rng(3), N_ITEMS)[kind]
    R = Resamples.draw(N_ITEMS, B, np.random.default_rng(11), cache_bytes=cache)
    credit, kept = st.accuracy_rows("acc_ties", human=y, judge=x)
    reqs = [(s, x, y) for s in ("pearson", "spearman", "kendall")] + [("accuracy", credit, kept)]
    _both(reqs, R)


@pytest.mark.parametrize("kind", ["continuous", "ties", "metric_vs_labels", "pairwise"])
def test_engines_agree_on_grouped_rows(kind: str) -> None:
    """Clustered rows: several rows per item, all moving with their item (column views of one
    Resamples), and a cell's stacked rows (one x, two annotators' labels: the pooled pass)."""
    rng = np.random.default_rng(5)
    groups = np.sort(rng.integers(0, N_ITEMS, 3 * N_ITEMS))
    x, y = _kinds(rng, groups.size)[kind]
    stacked = np.repeat(np.arange(N_ITEMS), 2)
    xs = np.repeat(_kinds(rng, N_ITEMS)[kind][0], 2)
    ys = _kinds(rng, stacked.size)["ties"][1]
    R = Resamples.draw(N_ITEMS, B, np.random.default_rng(2))
    reqs = [(s, x, y) for s in ("pearson", "spearman", "kendall")]
    reqs += [(s, xs, ys) for s in ("pearson", "spearman", "kendall")]
    _both(reqs, [R[:, groups]] * 3 + [R[:, stacked]] * 3)


def test_engines_agree_on_dense_weights_and_the_accuracies_of_the_stats_layer() -> None:
    """Dense row weights; the accuracies as the statistics layer asks for them
    (:func:`metajudge.stats.correlate` turns them into credit and scored rows)."""
    rng = np.random.default_rng(8)
    kinds = _kinds(rng, N_ITEMS)
    W = st.bootstrap_weights(N_ITEMS, B, np.random.default_rng(4))
    _both([(s, *kinds["continuous"]) for s in ("pearson", "spearman", "kendall")], W)
    d, h = kinds["pairwise"][0] + rng.normal(0, 0.3, N_ITEMS), kinds["pairwise"][1]
    reqs = [(s, d, h) for s in ("acc_ties", "acc_no_ties", "pearson")]
    R = Resamples.draw(N_ITEMS, B, np.random.default_rng(4))
    for resamples in (W, R):
        fast = st.correlate(reqs, resamples)
        ref = st.correlate(reqs, resamples, engine="reference")
        for f, r in zip(fast, ref, strict=True):
            np.testing.assert_allclose(f, r, rtol=0, atol=1e-12)


@pytest.mark.parametrize("undefined", [0.0, 0.3, 1.0])
def test_engines_agree_on_grouped_means(undefined: float) -> None:
    """``mean``: a grouped correlation's per-group values (some undefined; all undefined: every
    resample NaN) averaged over each resample's drawn groups, on lazy and dense resamples, and
    as the statistics layer asks for them (:func:`metajudge.stats.grouped_mean_samples`)."""
    rng = np.random.default_rng(6)
    v = rng.uniform(-1, 1, N_ITEMS)
    v[rng.random(N_ITEMS) < undefined] = np.nan
    ok = np.isfinite(v)
    req = [("mean", np.where(ok, v, 0.0), ok.astype(float))]
    R = Resamples.draw(N_ITEMS, B, np.random.default_rng(7))
    W = st.bootstrap_weights(N_ITEMS, B, np.random.default_rng(7))
    for resamples in (R, W):
        _both(req, resamples)
    fast = st.grouped_mean_samples(v, R)
    drawn = Resamples.draw(N_ITEMS, B, np.random.default_rng(7), engine="reference")
    ref = st.grouped_mean_samples(v, drawn)
    assert np.array_equal(np.isnan(fast), np.isnan(ref))
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
    assert np.isnan(fast).all() == (undefined == 1.0)


def test_every_engine_statistic_is_served_by_both() -> None:
    """The kinds the tests above cover are every kind the engine serves."""
    assert set(engine.ENGINE_STATISTICS) == {"pearson", "spearman", "kendall", "accuracy", "mean"}
    with pytest.raises(ValueError, match="unknown statistic"):
        engine.statistics([("median", np.ones(3), np.ones(3))], np.ones((1, 3)), engine="fast")
    with pytest.raises(ValueError, match="unknown statistic"):
        engine.statistics([("median", np.ones(3), np.ones(3))], np.ones((1, 3)), engine="reference")


def test_resamples_are_measured_by_the_engine_they_were_drawn_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without an ``engine``, a statistic of resamples drawn for the reference engine (and of
    their column views) is the reference's: every path of a run reaches the engine it chose."""
    from metajudge.engine import reference

    asked: list[int] = []
    plain = reference.reference_statistics
    monkeypatch.setattr(
        reference, "reference_statistics", lambda r, w: asked.append(len(r)) or plain(r, w)
    )
    rng = np.random.default_rng(3)
    x, y = _kinds(rng, 2 * N_ITEMS)["metric_vs_labels"]
    rows = np.repeat(np.arange(N_ITEMS), 2)
    R = Resamples.draw(N_ITEMS, B, np.random.default_rng(1), engine="reference")
    assert R.engine == R[:, rows].engine == "reference"
    st.correlate([("kendall", x, y)], R[:, rows])
    st.correlate([("pearson", x, y)], [R[:, rows]])
    st.bootstrap_ci(x, y, statistic="spearman", resamples=R[:, rows])
    st.grouped_mean_samples(rng.normal(size=N_ITEMS), R)
    assert asked == [1, 1, 1, 1]
    st.correlate([("kendall", x, y)], R[:, rows], engine="fast")  # asked for by name: fast
    assert asked == [1, 1, 1, 1]
    assert Resamples.draw(N_ITEMS, B, np.random.default_rng(1)).engine == "fast"


def test_the_reference_draws_the_resamples_of_the_fast_engine() -> None:
    """Its items, drawn one resample at a time, count to the fast engine's count matrix."""
    R = Resamples.draw(N_ITEMS, B, np.random.default_rng(9))
    counts = np.array([np.bincount(i, minlength=N_ITEMS) for i in R.indices()])
    assert np.array_equal(counts, R.dense())
    assert np.array_equal(R.dense(), st.bootstrap_weights(N_ITEMS, B, np.random.default_rng(9)))


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown engine 'slow'"):
        engine.statistics([], np.ones((1, 3)), engine="slow")
    from metajudge.cli.options import _ENGINE_CHOICES as ENGINES

    assert engine.ENGINES == ENGINES


def _numbers(result: dict[str, Any]) -> dict[tuple[Any, ...], Any]:
    """Every leaf of a result.json but its timings and run facts, by its path."""

    def leaves(o: Any, at: tuple[Any, ...]) -> Any:
        if isinstance(o, dict):
            for k, v in o.items():
                yield from leaves(v, (*at, k))
        elif isinstance(o, list):
            for i, v in enumerate(o):
                yield from leaves(v, (*at, i))
        else:
            yield at, o

    return dict(leaves({k: v for k, v in result.items() if k not in ("timing_s", "run")}, ()))


#: meta-eval runs checked with both engines: RAGChecker's pairwise cells (Pearson, Spearman,
#: Kendall, the accuracies) and the inter-human reference; two metrics' comparisons (paired
#: bootstrap CIs); LFTQA-Eval's grouped (per input, then averaged) pointwise correlations
RAG = ["--dataset", "ragchecker_meta_eval", "--scores", "shipped"]
RUNS = {
    "cells": [*RAG, "--no-compare"],
    "comparisons": [*RAG, "--metrics", "ragchecker_correctness,ragchecker_completeness"],
    "grouped": ["--dataset", "lftqa_eval", "--subset", "qtsumm", "--scores", "shipped"]
    + ["--metrics", "bleu,geval_gpt-4o_faithfulness", "--protocol", "pointwise"]
    + ["--level", "item", "--no-compare"],
}


@pytest.mark.parametrize("run", list(RUNS))
def test_meta_eval_with_the_reference_engine_writes_the_fast_numbers(
    run: str, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--engine reference`` on real data (:data:`RUNS`): the same numbers as the fast run
    (1e-12), every resampled value the reference's (the fast engine is never asked)."""
    from metajudge.engine import reference

    asked: dict[str, list[int]] = {"reference": [], "fast": []}  # requests answered, per run
    plain = {"reference": reference.reference_statistics, "fast": engine.weighted_statistics}

    def counted(name: str) -> Any:
        def answer(requests: Any, resamples: Any) -> list[np.ndarray]:
            asked[name][-1] += len(requests)
            return plain[name](requests, resamples)

        return answer

    monkeypatch.setattr(reference, "reference_statistics", counted("reference"))
    monkeypatch.setattr(engine, "weighted_statistics", counted("fast"))
    argv = ["meta-eval", *RUNS[run], "--data-dir", str(data_dir)]
    argv += ["--n-boot", "20", "--no-plots", "--quiet"]
    results = {}
    for name in ("fast", "reference"):
        asked["reference"].append(0)
        asked["fast"].append(0)
        assert main([*argv, "--engine", name, "--out", str(tmp_path / name)]) == 0
        results[name] = json.loads((tmp_path / name / "result.json").read_text())
    assert asked["reference"][0] == 0 and asked["fast"][1] == 0  # each run its own engine
    assert asked["reference"][1] >= 10 and asked["fast"][0] >= 10
    fast, ref = _numbers(results["fast"]), _numbers(results["reference"])
    assert ref.pop(("options", "engine")) == "reference"
    assert fast.pop(("options", "engine")) == "fast"
    assert fast.keys() == ref.keys()
    floats = 0
    for at, f in fast.items():
        r = ref[at]
        if isinstance(f, float) and isinstance(r, float):
            floats += 1
            assert (math.isnan(f) and math.isnan(r)) or abs(f - r) <= 1e-12, (at, f, r)
        else:
            assert f == r, (at, f, r)
    ci = [at for at in fast if "ci" in at and isinstance(fast[at], float)]
    assert floats > 1000 and len(ci) > 30  # the bootstrap CIs are among them
    kinds = {
        "cells": [at for at in fast if at[-2:] == ("kendall", "ci_method")],
        "comparisons": [at for at in fast if at[-1] == "p_bootstrap" and fast[at] is not None],
        "grouped": [at for at in fast if at == ("protocol", "grouped") and fast[at] is True],
    }
    assert kinds[run], run  # the run has what it checks
