"""One Result protocol: every result class of metajudge, found by walking the package, gives
``to_dict()`` (a dict ``json.dumps`` accepts), ``to_json()`` (text, never ``NaN``) and
``to_pandas()`` (a DataFrame) on a real instance, built here from the shipped data."""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metajudge.results import Result, as_data, finite

ROOT = Path(__file__).resolve().parents[1] / "metajudge"
BACKBONES = ["gpt-4o", "gpt-4o-mini", "Meta-Llama-3.1-70B-Instruct-Turbo"]


def _module_names() -> list[str]:
    out = []
    for p in sorted(ROOT.rglob("*.py")):
        if "__pycache__" in p.parts or p.name == "__main__.py":
            continue
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


def _subclasses(cls: type) -> Iterator[type]:
    for s in cls.__subclasses__():
        yield s
        yield from _subclasses(s)


def _classes() -> dict[str, type]:
    """Every class of the package, by ``module:Name`` (all modules imported first)."""
    found: dict[str, type] = {}
    for name in _module_names():
        mod = importlib.import_module(name)
        for obj in vars(mod).values():
            if isinstance(obj, type) and obj.__module__ == name:
                found[f"{name}:{obj.__qualname__}"] = obj
    return found


CLASSES = _classes()
RESULTS = sorted(k for k, c in CLASSES.items() if issubclass(c, Result) and c is not Result)


# builders: one real instance per result class ---------------------------------------------------
BUILDERS: dict[str, Callable[[dict[str, Any]], Any]] = {}


def builds(
    key: str,
) -> Callable[[Callable[[dict[str, Any]], Any]], Callable[[dict[str, Any]], Any]]:
    def deco(fn: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        BUILDERS[key] = fn
        return fn

    return deco


def _lftqa(ctx: dict[str, Any]) -> Any:
    """LFTQA-Eval with its shipped G-Eval columns under three backbones (the swap data)."""
    if "lftqa" not in ctx:
        from metajudge.runs.backbone_swap import load_swap_data

        ctx["lftqa"] = load_swap_data(
            "lftqa_eval", "geval_faithfulness", external=BACKBONES, data_dir=ctx["data_dir"]
        )
    return ctx["lftqa"]


@builds("metajudge.analyses.metric_vs_human.result:MetaEvalResult")
def _meta_eval(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
    from metajudge.data.loading import load
    from metajudge.scores.shipped import shipped_scores

    ds = load("ragchecker_meta_eval", data_dir=ctx["data_dir"])
    return meta_evaluate(ds, shipped_scores(ds, ctx["data_dir"]), n_boot=50, seed=0)


@builds("metajudge.analyses.backbone_swap:SwapResult")
def _swap(ctx: dict[str, Any]) -> Any:
    from metajudge.runs.backbone_swap import run_backbone_swap

    return run_backbone_swap(
        "lftqa_eval",
        "geval_faithfulness",
        external=BACKBONES,
        n_boot=50,
        seed=0,
        data_dir=ctx["data_dir"],
    )


@builds("metajudge.analyses.decide.swap_decision:SwapDecision")
def _swap_decision(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.decide.swap_decision import decide_swap

    data, _, _ = _lftqa(ctx)
    rng = np.random.default_rng(0)
    return decide_swap(data, BACKBONES[0], BACKBONES[1], rng=rng, n_boot=50)


@builds("metajudge.analyses.decide.noninferiority:NonInferiority")
def _non_inferiority(ctx: dict[str, Any]) -> Any:
    return _swap_decision(ctx).non_inferiority


@builds("metajudge.analyses.decide.drift:DriftResult")
def _drift(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.decide.drift import drift

    data, _, _ = _lftqa(ctx)
    return drift(data, rng=np.random.default_rng(0), n_boot=50)


@builds("metajudge.analyses.decide.frontier:Frontier")
def _frontier(ctx: dict[str, Any]) -> Any:
    from metajudge.runs.decide import run_frontier_table

    return run_frontier_table(data_dir=ctx["data_dir"])


def _judgebench_files(ctx: dict[str, Any]) -> list[Path]:
    return sorted((ctx["data_dir"] / "judgebench" / "outputs").glob("*.jsonl"))


@builds("metajudge.analyses.decide.verdict_decision:VerdictDecision")
def _verdict_decision(ctx: dict[str, Any]) -> Any:
    from metajudge.runs.decide import run_decide_verdicts

    return run_decide_verdicts(_judgebench_files(ctx), n_boot=50)


@builds("metajudge.scores.released_verdicts:JudgeVerdicts")
def _judge_verdicts(ctx: dict[str, Any]) -> Any:
    from metajudge.scores.released_verdicts import read_verdicts

    return read_verdicts(_judgebench_files(ctx)[0])


@builds("metajudge.analyses.verdict_accuracy:VerdictsResult")
def _verdicts(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.verdict_accuracy import evaluate_verdicts
    from metajudge.scores.released_verdicts import read_verdicts

    judges = [read_verdicts(f) for f in _judgebench_files(ctx)[:2]]
    return evaluate_verdicts(judges, "double_game", n_boot=20)


@builds("metajudge.analyses.binary_verdicts:BinaryVerdicts")
def _binary_verdicts(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.binary_verdicts import binary_verdicts

    gold = ["fail", "pass", "pass", None, "fail", "pass", "fail", "pass"] * 5
    pred = ["pass", "pass", "pass", "pass", "fail", None, "fail", "pass"] * 5
    systems = ["A", "B"] * 20
    return binary_verdicts(gold, pred, systems, ["fail", "pass"], judge="grader", seed=0)


@builds("metajudge.analyses.annotator_agreement:AgreementResult")
def _agreement(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.annotator_agreement import AgreementOptions, agreement
    from metajudge.data.loading import load

    ds = load("ragchecker_meta_eval", data_dir=ctx["data_dir"])
    return agreement(ds, AgreementOptions(splits=5))


def _dices(ctx: dict[str, Any]) -> Any:
    """DICES-990 with a stand-in judge: the first annotator's label (the categorical path)."""
    if "dices" not in ctx:
        from metajudge.analyses.metric_vs_human.categorical import (
            CategoricalOptions,
            categorical_meta_evaluate,
        )
        from metajudge.data.loading import load
        from metajudge.scores.files import read_scores

        ds = load("dmg_judge_bench", data_dir=ctx["data_dir"]).subset("dices-990")
        first = ctx["tmp"] / "first.jsonl"
        with first.open("w") as fh:
            for r in ds.records:
                lab = next(v for v in r.scores["safety"] if v is not None)
                row = {"item": r.id, "system": r.system, "metric": "r1", "score": lab}
                fh.write(json.dumps(row) + "\n")
        rows = read_scores(first, ds.records, labels=True)
        ctx["dices"] = categorical_meta_evaluate(ds, rows, CategoricalOptions(n_boot=20))
    return ctx["dices"]


@builds("metajudge.analyses.metric_vs_human.categorical:CategoricalResult")
def _categorical(ctx: dict[str, Any]) -> Any:
    return _dices(ctx)


@builds("metajudge.analyses.metric_vs_human.categorical:MatchedReference")
def _matched_reference(ctx: dict[str, Any]) -> Any:
    return _dices(ctx).rows[0].reference


@builds("metajudge.analyses.system_ranking:RankTable")
def _rank_table(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.metric_vs_human.matrices import score_matrices
    from metajudge.analyses.system_ranking import ClusterOptions, rank_table
    from metajudge.data.loading import load
    from metajudge.scores.shipped import shipped_scores

    ds = load("lftqa_eval", data_dir=ctx["data_dir"])
    names = [f"geval_{b}_faithfulness" for b in BACKBONES]
    rows = shipped_scores(ds, ctx["data_dir"], metrics=names)
    sm = score_matrices(ds.records, rows, "faithfulness", names)
    return rank_table(sm, "lftqa_eval", ClusterOptions("system", n_resamples=19, seed=0))


@builds("metajudge.analyses.judge_biases:DiagnosticsResult")
def _diagnostics(ctx: dict[str, Any]) -> Any:
    """PandaLM's test pairs under a stand-in judge that always prefers the longer response."""
    from metajudge.analyses.judge_biases import (
        DiagnosticsResult,
        verdict_diagnostics,
        verdict_rows,
    )
    from metajudge.data.formats import PairwiseRecord
    from metajudge.data.loading import load
    from metajudge.metrics.judges.pairwise import PairwiseVerdict

    ds = load("pandalm_testset", data_dir=ctx["data_dir"])
    recs = [r for r in ds.records if isinstance(r, PairwiseRecord)][:30]
    from metajudge.stats.decisions import Pref

    longer = [Pref.B if len(r.b.response or "") > len(r.a.response or "") else Pref.A for r in recs]
    ab = [PairwiseVerdict(r.id, "ab", s, s) for r, s in zip(recs, longer, strict=True)]
    ba = [PairwiseVerdict(r.id, "ba", s.flip(), s) for r, s in zip(recs, longer, strict=True)]
    dim = ds.card.dimensions[0]
    d = verdict_diagnostics(recs, ab, ba, dimension=dim) | {"verdicts": verdict_rows(ab, ba)}
    return DiagnosticsResult(ds.card.name, dim, len(recs), "stand-in: longer wins", {"long": d})


@builds("metajudge.stats.classification:CategoricalScores")
def _categorical_scores(ctx: dict[str, Any]) -> Any:
    from metajudge.stats.classification import categorical_scores

    rows = _dices(ctx).rows[0]
    return categorical_scores(
        ["No", "Yes", "Yes", "No"], ["No", "Yes", None, "Yes"], rows.labels[:2]
    )


def _human_and_judge(ctx: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    from metajudge import stats

    data, _, _ = _lftqa(ctx)
    h, j = stats.annotator_mean(data.human_resp), data.scores[0]
    m = np.isfinite(h) & np.isfinite(j)
    return h[m], j[m]


@builds("metajudge.stats.ppi:PPIResult")
def _ppi(ctx: dict[str, Any]) -> Any:
    from metajudge.stats.ppi import ppi_mean

    h, j = _human_and_judge(ctx)
    return ppi_mean(h[:50], j[:50], j[50:])


@builds("metajudge.stats.kendall:TieCalibration")
def _tie_calibration(ctx: dict[str, Any]) -> Any:
    from metajudge.stats.kendall import tie_calibration

    h, j = _human_and_judge(ctx)
    return tie_calibration(j, h, np.arange(h.size) // 5)


def _matrices(ctx: dict[str, Any]) -> Any:
    if "matrices" not in ctx:
        ctx["matrices"] = _rank_table_inputs(ctx)
    return ctx["matrices"]


def _rank_table_inputs(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.metric_vs_human.matrices import score_matrices
    from metajudge.data.loading import load
    from metajudge.scores.shipped import shipped_scores

    ds = load("lftqa_eval", data_dir=ctx["data_dir"])
    names = [f"geval_{b}_faithfulness" for b in BACKBONES]
    return score_matrices(
        ds.records, shipped_scores(ds, ctx["data_dir"], metrics=names), "faithfulness", names
    )


@builds("metajudge.stats.resampling_tests:ResamplingTest")
def _resampling_test(ctx: dict[str, Any]) -> Any:
    from metajudge.stats.resampling_tests import perm_test

    sm = _matrices(ctx)
    x, y = (sm.metrics[m] for m in list(sm.metrics)[:2])
    return perm_test(x, y, sm.human, level="system", rng=0, n_resamples=49)


@builds("metajudge.stats.spa:SPAResult")
def _spa(ctx: dict[str, Any]) -> Any:
    from metajudge.stats.spa import soft_pairwise_accuracy

    sm = _matrices(ctx)
    return soft_pairwise_accuracy(sm.human, next(iter(sm.metrics.values())), n_resamples=49, rng=0)


def _judge_bench_run(ctx: dict[str, Any]) -> Any:
    """CoLA (JUDGE-BENCH) judged by a scripted backend (its replies: the majority label)."""
    if "judge_bench" not in ctx:
        from metajudge.runs.judge_bench import run_judge_bench
        from tests.runs.test_judge_bench import Scripted

        src = ctx["data_dir"] / "dmg_judge_bench" / "data" / "cola" / "cola.json"
        inst = json.loads(src.read_text())["instances"][:6]
        replies = [i["annotations"]["grammaticality"]["majority_human"] for i in inst]
        out = ctx["tmp"] / "replies.json"
        run = run_judge_bench(
            output=out, backbone="m", input_file=str(src), first=6, backend=Scripted(replies)
        )
        ctx["judge_bench"] = (run, out)
    return ctx["judge_bench"]


@builds("metajudge.runs.judge_bench:JudgeBenchRun")
def _judge_bench(ctx: dict[str, Any]) -> Any:
    return _judge_bench_run(ctx)[0]


@builds("metajudge.analyses.judge_bench:JudgeEval")
def _judge_eval(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.judge_bench import evaluate_judge
    from metajudge.data.loading import load as load_file

    run, out = _judge_bench_run(ctx)
    return evaluate_judge(load_file(out), run.model)


@builds("metajudge.runs.matrix.table:DatasetFacts")
def _facts(ctx: dict[str, Any]) -> Any:
    from metajudge.data.loading import load
    from metajudge.runs.matrix.table import dataset_facts

    return dataset_facts(load("ragchecker_meta_eval", data_dir=ctx["data_dir"]))


@builds("metajudge.runs.matrix.table:Matrix")
def _matrix(ctx: dict[str, Any]) -> Any:
    from metajudge.runs.matrix.table import build_matrix

    return build_matrix(data_dir=ctx["data_dir"], baselines=ROOT.parent / "baselines")


@builds("metajudge.runs.matrix.cost:CostEstimate")
def _estimate(ctx: dict[str, Any]) -> Any:
    """The dry run of a lexical cell on RAGChecker's pairs (no model called)."""
    from metajudge.runs.matrix.cost import estimate_cell
    from metajudge.runs.matrix.prepare import CellOptions

    opts = CellOptions(
        metric="bleu",
        dataset="ragchecker_meta_eval",
        limit=5,
        data_dir=str(ctx["data_dir"]),
        baselines=str(ctx["tmp"]),
        progress=False,
    )
    return estimate_cell(opts)


@builds("metajudge.runs.demo:JudgeRun")
def _judge_run(ctx: dict[str, Any]) -> Any:
    from metajudge.runs.demo import JudgeRun

    return JudgeRun(
        "ragchecker",
        "geval_faithfulness",
        "smollm2-135m",
        6,
        1,
        6,
        1,
        6,
        0,
        900,
        30,
        1.5,
        correlations=[{"dimension": "correctness", "pearson": 0.2}],
    )


@builds("metajudge.runs.demo:DemoResult")
def _demo(ctx: dict[str, Any]) -> Any:
    from metajudge.runs.demo import DemoOptions, DemoResult

    swap = _swap(ctx).to_dict()
    return DemoResult(DemoOptions(), {}, [_judge_run(ctx)], swap, {"calls": 6}, 1.0)


@builds("metajudge.analyses.alt_test:AltTestResult")
def _alt_test(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.alt_test import alt_test, settings_for
    from metajudge.data.alt_test_dir import load_alt_test

    data = load_alt_test("alt_test_calderon2025", "mtbench", data_dir=ctx["data_dir"])
    return alt_test(data, settings_for("mtbench"))


@builds("metajudge.analyses.alt_test_plan:AltTestPlan")
def _alt_test_plan(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.alt_test_plan import PlanSettings, alt_test_plan

    return alt_test_plan(PlanSettings(n_items=(30,), epsilons=(0.2,), reps=2))


@builds("metajudge.analyses.juries:JuryResult")
def _jury(ctx: dict[str, Any]) -> Any:
    from metajudge.data.source import DataSource
    from metajudge.runs.jury import run_jury

    src = DataSource(dataset="alt_test_calderon2025", subset="mtbench", data_dir=ctx["data_dir"])
    return run_jury(src)


@builds("metajudge.analyses.juries:ScoreJuryResult")
def _score_jury(ctx: dict[str, Any]) -> Any:
    from metajudge.data.source import DataSource
    from metajudge.runs.jury import run_jury

    src = DataSource(
        dataset="conformal_judge_sheng2025", dimension="fluency", data_dir=ctx["data_dir"]
    )
    return run_jury(src, n_resamples=20)


@builds("metajudge.analyses.self_preference:SelfPreference")
def _self_preference(ctx: dict[str, Any]) -> Any:
    from metajudge.data.source import DataSource
    from metajudge.runs.jury import run_self_preference

    src = DataSource(dataset="judging_the_judges_thakur2024", data_dir=ctx["data_dir"])
    return run_self_preference(src, judge="GPT-4", family=["gpt-4t"], n_boot=50)


def _sheng_table(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.calibration.sources import table_from_csv

    path = ctx["data_dir"] / "conformal_judge_sheng2025" / "summeval" / "4omini_relevance.csv"
    return table_from_csv(path, data_dir=ctx["data_dir"])


@builds("metajudge.analyses.calibration.fit:FitResult")
def _calibrate_fit(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.calibration.fit import calibrate_fit

    return calibrate_fit(_sheng_table(ctx), repeats=2)


@builds("metajudge.analyses.calibration.fit:ApplyResult")
def _calibrate_apply(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.calibration.fit import apply_result

    table = _sheng_table(ctx)
    return apply_result(_calibrate_fit(ctx).calibrator, table)


@builds("metajudge.analyses.calibration.conformal:ConformalResult")
def _calibrate_conformal(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.calibration.conformal import calibrate_conformal

    return calibrate_conformal(_sheng_table(ctx), ("split",), repeats=2)


@builds("metajudge.analyses.calibration.verdict_sets:SetResult")
def _calibrate_sets(ctx: dict[str, Any]) -> Any:
    import metajudge as mj
    from metajudge.data.loading import load
    from metajudge.scores.spec import gather_scores, parse_score_spec

    ds = load("trust_or_escalate_jung2025", ctx["data_dir"])
    spec = parse_score_spec("shipped:gpt-4-turbo")
    rows = gather_scores(ds, [spec], data_dir=ctx["data_dir"], labels=False)
    return mj.calibrate_sets(mj.verdict_table(ds, rows), repeats=2, keep_items=True)


@builds("metajudge.analyses.selective:SelectiveResult")
def _selective(ctx: dict[str, Any]) -> Any:
    from metajudge.analyses.selective import calibrate_selective

    return calibrate_selective(
        "trust_or_escalate_jung2025", ["gpt-4-turbo"], repeats=2, data_dir=ctx["data_dir"]
    )


def _arena(ctx: dict[str, Any]) -> Any:
    from metajudge.data.source import DataSource

    return DataSource(path=str(ctx["data_dir"] / "cje_arena_sample" / "fresh_draws"))


@builds("metajudge.analyses.calibration.estimate:EstimateResult")
def _calibrate_estimate(ctx: dict[str, Any]) -> Any:
    from metajudge.runs.calibrate_estimate import run_estimate

    probes = str(ctx["data_dir"] / "cje_arena_sample" / "probe_slice")
    return run_estimate(_arena(ctx), probes=probes, folds=5).result


@builds("metajudge.analyses.calibration.plan:PlanResult")
def _calibrate_plan(ctx: dict[str, Any]) -> Any:
    from metajudge.runs.calibrate_estimate import run_plan

    return run_plan(_arena(ctx), half_width=0.02, folds=5).result


# the tests ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ctx(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return {"data_dir": data_dir, "tmp": tmp_path_factory.mktemp("results")}


def test_every_result_class_is_found_and_has_a_builder() -> None:
    assert len(RESULTS) >= 25
    assert sorted(BUILDERS) == RESULTS


def test_every_class_with_to_json_or_to_pandas_is_a_result() -> None:
    """No second protocol: a class of metajudge that writes JSON or a DataFrame is a Result."""
    own = {k for k, c in CLASSES.items() if {"to_json", "to_pandas"} & set(vars(c))}
    assert sorted(k for k in own if not issubclass(CLASSES[k], Result)) == []


@pytest.mark.parametrize("key", RESULTS)
def test_result_protocol_on_a_real_instance(key: str, ctx: dict[str, Any]) -> None:
    import pandas as pd

    obj = BUILDERS[key](ctx)
    assert isinstance(obj, CLASSES[key])
    d = obj.to_dict()
    assert type(d) is dict and d
    json.dumps(d)  # plain JSON data (NaN is the only thing to_json still has to write as null)
    text = obj.to_json()
    assert isinstance(text, str)
    assert json.loads(text) == json.loads(json.dumps(finite(d)))
    assert "NaN" not in text.replace('"NaN', "")  # never the bare token (not JSON)
    assert as_data(obj) == d
    df = obj.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) >= 1


def test_to_json_writes_non_finite_numbers_as_null() -> None:
    from metajudge.stats.spa import SPAResult

    r = SPAResult(math.nan, 3, 10, 0, 0, None)
    assert json.loads(r.to_json()) == {
        "value": None,
        "n_systems": 3,
        "n_segments": 10,
        "segments_dropped": 0,
        "n_perm": 0,
        "seed": None,
    }
    assert r.to_json(indent=None) == json.dumps(json.loads(r.to_json()), ensure_ascii=False)
    assert finite({"x": np.float64("inf"), "n": np.int64(4), "t": (1.0,)}) == {
        "x": None,
        "n": 4,
        "t": [1.0],
    }


def test_swap_result_keeps_the_dict_spelling(ctx: dict[str, Any]) -> None:
    """``res["per_backbone"]`` (README, notebook 02) is the attribute; other keys are KeyError."""
    res = _swap(ctx)
    assert res["per_backbone"] is res.per_backbone and res["pairs"] is res.pairs
    assert "runs" not in res.to_dict() and dict(res) == res.to_dict()
    with pytest.raises(KeyError):
        res["runs"]  # empty: not in swap.json, so not a key
    with pytest.raises(KeyError):
        res["nope"]
