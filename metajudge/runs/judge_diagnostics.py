"""``metajudge judge diagnostics`` end to end: load pairs, judge both orders per backbone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.analyses.judge_biases import BIASES_VERSION, TiePolicy, diagnose_backbone
from metajudge.analyses.metric_vs_human.result import DiagnosticsResult
from metajudge.data.formats import PairwiseRecord
from metajudge.errors import InputError


def run_judge_diagnostics(
    dataset: str | None,
    backbones: Sequence[str],
    *,
    input_file: str | Path | None = None,
    limit: int | None = 100,
    dimension: str | None = None,
    tie_policy: TiePolicy = "exclude_human_ties",
    runs: int = 1,
    temperature: float = 0.7,
    seed: int = 0,
    data_dir: str | Path | None = None,
    judge_options: Mapping[str, Any] | None = None,
) -> DiagnosticsResult:
    """Load a pairwise dataset, judge its first ``limit`` pairs in both orders under each backbone.

    ``dataset``: a registry name, or None with ``input_file`` (any file
    :func:`~metajudge.data.loading.load` reads). This is what ``metajudge judge diagnostics``
    runs. Backbones run one after the other.
    """
    from metajudge.data.loading import open_dataset
    from metajudge.metrics.judges.pairwise import PairwiseJudge

    ds = open_dataset(dataset, input_file, data_dir=data_dir)
    dataset = ds.card.name
    if ds.card.kind != "pairwise":
        raise InputError(
            "judge diagnostics need a pairwise dataset with response texts (pairs of responses "
            f"to one input); {dataset!r} is {ds.card.kind}",
            path=input_file,
            field="dataset",
        )
    records = [
        r
        for r in ds.records
        if isinstance(r, PairwiseRecord) and r.a.response is not None and r.b.response is not None
    ]
    if limit is not None:
        records = records[:limit]
    if not records:
        raise InputError(
            f"dataset {dataset!r} has no pairs with both response texts", path=input_file
        )
    dim = dimension or ds.card.dimensions[0]
    if dim not in ds.card.dimensions:
        raise InputError(
            f"dataset {dataset!r} has no dimension {dim!r} (it has {', '.join(ds.card.dimensions)})",
            field="dimension",
        )
    out: dict[str, Any] = {
        "dataset": dataset,
        "dimension": dim,
        "n_pairs": len(records),
        "protocol": f"judge-diagnostics|orders:ab+ba|tie_policy:{tie_policy}|runs:{runs}|temp_runs:{temperature:g}"
        f"|length:words|limit:{limit}|seed:{seed}|version:{BIASES_VERSION}",
        "backbones": {},
    }
    if ds.source:
        out["source"] = ds.source  # the report loads the pairs from there
    for bb in backbones:
        judge = PairwiseJudge(backbone=bb, seed=seed, **dict(judge_options or {}))
        try:
            out["backbones"][bb] = diagnose_backbone(
                judge,
                records,
                dimension=dim,
                tie_policy=tie_policy,
                runs=runs,
                temperature=temperature,
                seed=seed,
            )
        finally:
            judge.close()
    return DiagnosticsResult(out)
