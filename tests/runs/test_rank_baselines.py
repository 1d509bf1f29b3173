"""baselines/ours_rank_clusters_*.json: recomputing a rank-cluster table gives the stored one."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from metajudge.runs import rank_baselines as rb
from tests.conftest import Load

BASELINES = Path(__file__).resolve().parents[2] / "baselines"


def _stored(dataset: str) -> dict:  # type: ignore[type-arg]
    return json.loads(rb.rank_path(BASELINES, dataset).read_text())


def test_rank_baseline_files_cover_the_named_metrics() -> None:
    h = _stored("hanna")
    metrics = {r["metric"] for r in h["tables"][0]["rows"]}
    for m in ("hanna.bleu", "hanna.rouge-l_f-score", "hanna.meteor", "hanna.bertscore_f1"):
        assert m in metrics
    lf = _stored("lftqa_eval")
    assert {r["metric"] for r in lf["tables"][0]["rows"]} >= {
        "bleu",
        "rouge",
        "meteor",
        "bertscore",
    }
    for b in (h, lf):
        assert {t["options"]["level"] for t in b["tables"]} == set(rb.RANK_LEVELS)
        for t in b["tables"]:
            assert t["note"] is None and t["options"]["n_resamples"] == rb.N_RESAMPLES
            assert [r["cluster"] for r in t["rows"]] == sorted(r["cluster"] for r in t["rows"])


@pytest.mark.parametrize(("dataset", "dimension"), [("lftqa_eval", "faithfulness"),
                                                     ("hanna", "coherence")])  # fmt: skip
def test_one_table_recomputes_exactly(load: Load, dataset: str, dimension: str) -> None:
    from metajudge.analyses.metric_vs_human.matrices import score_matrices
    from metajudge.analyses.system_ranking import ClusterOptions, rank_table
    from metajudge.scores.shipped import shipped_scores

    ds = load(dataset)
    names = rb.RANK_SPECS[dataset]
    sm = score_matrices(ds.records, shipped_scores(ds, metrics=names), dimension, names)
    fresh = rank_table(sm, dataset, ClusterOptions("system", n_resamples=rb.N_RESAMPLES, seed=0))
    stored = _stored(dataset)
    table = next(t for t in stored["tables"]
                 if t["dimension"] == dimension and t["options"]["level"] == "system")  # fmt: skip
    one = {"dataset": dataset, "tables": [table]}
    assert rb.compare_rank_baseline(one, {"dataset": dataset, "tables": [fresh.to_dict()]}) == []


def test_compare_reports_a_moved_cluster() -> None:
    stored = _stored("lftqa_eval")
    moved = copy.deepcopy(stored)
    moved["tables"][0]["rows"][0]["cluster"] += 1
    problems = rb.compare_rank_baseline(stored, moved)
    assert len(problems) == 1 and "->" in problems[0]


@pytest.mark.slow
def test_every_rank_baseline_recomputes() -> None:
    assert rb.check_rank_baselines(BASELINES) == []
