"""Our rank-cluster tables: ``baselines/ours_rank_clusters_<dataset>.json`` (issue 14).

For HANNA and LFTQA-Eval, every dimension, at the item-grouped and system levels: BLEU, ROUGE-L,
METEOR and BERTScore and the other score columns the dataset ships, ordered by Pearson and
clustered by Perm-Both + Holm (:mod:`metajudge.analyses.system_ranking`). BLEU, ROUGE-L, METEOR
and BERTScore are the dataset's SHIPPED columns (HANNA's metric CSV, LFTQA-Eval's metric files):
metajudge's own BERTScore over HANNA is too slow on 2 CPU cores for a regression file.

``metajudge baselines check --write`` writes them and ``metajudge baselines check`` recomputes them
(:mod:`metajudge.runs.baselines` calls :func:`regenerate_rank_baselines` and
:func:`check_rank_baselines`); every value is seeded, so a check expects the same numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.io import atomic_write

RANK_SCHEMA = "metajudge.rank_clusters/1"
RANK_TOLERANCE = 1e-9
RANK_LEVELS: tuple[str, ...] = ("item", "system")
N_RESAMPLES = 2000  # Holm over 66 pairs needs 66/(k + 1) < 0.05
RANK_SPECS: dict[str, tuple[str, ...] | None] = {
    "hanna": (
        "hanna.bleu",
        "hanna.rouge-l_f-score",
        "hanna.meteor",
        "hanna.bertscore_f1",
        "hanna.chrf",
        "hanna.moverscore",
        "hanna.bartscore-sh",
        "hanna.s3-pyramid",
        "hanna.supert-ps",
        "hanna.summaqa",
        "hanna.text_length",
        "hanna.chatgpt_avg_run1",
    ),
    "lftqa_eval": None,  # every shipped column: BLEU, ROUGE, METEOR, BERTScore, G-Eval, ...
}


def rank_path(out_dir: str | Path, dataset: str) -> Path:
    return Path(out_dir) / f"ours_rank_clusters_{dataset}.json"


def compute_rank_baseline(dataset: str, *, data_dir: str | Path | None = None) -> dict[str, Any]:
    """Every dimension × level rank table of ``dataset`` (shipped columns; seed 0)."""
    from metajudge.analyses.metric_vs_human.matrices import score_matrices
    from metajudge.analyses.system_ranking import ClusterOptions, rank_table
    from metajudge.data.loading import load
    from metajudge.scores.shipped import shipped_scores

    ds = load(dataset, data_dir)
    names = RANK_SPECS[dataset]
    rows = shipped_scores(ds, data_dir, metrics=names)
    tables = []
    for dim in ds.card.dimensions:
        sm = score_matrices(ds.records, rows, dim, names)
        for level in RANK_LEVELS:
            o = ClusterOptions(level=level, n_resamples=N_RESAMPLES, seed=0)
            tables.append(rank_table(sm, dataset, o).to_dict())
    return {
        "schema": RANK_SCHEMA,
        "dataset": dataset,
        "scores": "shipped columns",
        "tables": tables,
    }


def _rank_specs(datasets: Sequence[str] | None) -> list[str]:
    return [d for d in RANK_SPECS if not datasets or d in datasets]


def regenerate_rank_baselines(
    out_dir: str | Path, *, datasets: Sequence[str] | None = None, data_dir: Any = None
) -> list[Path]:
    written = []
    for d in _rank_specs(datasets):
        p = rank_path(out_dir, d)
        with atomic_write(p) as fh:
            json.dump(compute_rank_baseline(d, data_dir=data_dir), fh, indent=1, sort_keys=True)
            fh.write("\n")
        written.append(p)
    return written


def compare_rank_baseline(stored: Mapping[str, Any], fresh: Mapping[str, Any]) -> list[str]:
    """Lines naming every table row whose correlation or cluster moved."""

    def index(b: Mapping[str, Any]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
        return {
            (t["dimension"], t["options"]["level"], r["metric"]): r
            for t in b.get("tables", [])
            for r in t["rows"]
        }

    old, new = index(stored), index(fresh)
    ds = stored.get("dataset")
    out = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if a is None or b is None:
            out.append(f"{ds} rank clusters: {k}: {'new' if a is None else 'gone'} (regenerate)")
        elif a["cluster"] != b["cluster"] or not math.isclose(
            a["correlation"], b["correlation"], rel_tol=RANK_TOLERANCE, abs_tol=RANK_TOLERANCE
        ):
            out.append(f"{ds} rank clusters: {k}: {a} -> {b}")
    return out


def check_rank_baselines(
    out_dir: str | Path, *, datasets: Sequence[str] | None = None, data_dir: Any = None
) -> list[str]:
    problems = []
    for d in _rank_specs(datasets):
        p = rank_path(out_dir, d)
        if not p.is_file():
            problems.append(f"{d}: no stored rank-cluster baseline {p} (regenerate)")
            continue
        stored = json.loads(p.read_text(encoding="utf-8"))
        problems += compare_rank_baseline(stored, compute_rank_baseline(d, data_dir=data_dir))
    return problems
