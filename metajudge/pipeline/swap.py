"""``metajudge backbone-swap`` end to end: load, gather per-backbone scores, analyse."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.errors import InputError
from metajudge.metaeval.swap import (
    HumanProtocol,
    SwapData,
    SwapResult,
    backbone_swap,
    build_swap_data,
)
from metajudge.metaeval.swap_sources import external_scores, judge_scores, metric_dimension


def _limit(records: list[Any], limit: int | None) -> list[Any]:
    """The first ``limit`` items in dataset order (Likert inputs with all their responses)."""
    if limit is None:
        return records
    keep: dict[str, None] = {}
    for r in records:
        if r.id not in keep and len(keep) >= limit:
            continue
        keep.setdefault(r.id, None)
    return [r for r in records if r.id in keep]


def load_swap_data(
    dataset: str | None,
    metric: str,
    *,
    input_file: str | Path | None = None,
    external: Sequence[str] = (),
    backbones: Sequence[str] = (),
    subset: str | None = None,
    limit: int | None = None,
    dimension: str | None = None,
    seed: int = 0,
    data_dir: str | Path | None = None,
    dataset_options: Mapping[str, Any] | None = None,
    metric_options: Mapping[str, Any] | None = None,
) -> tuple[SwapData, dict[str, Any], list[Any]]:
    """Load the dataset (``dataset`` name or ``input_file``) and get per-backbone scores.

    Scores: ``external`` score columns (files or the card's shipped judge columns) and/or the
    judge ``metric`` run under each of ``backbones``. ``limit`` keeps the first ``limit`` items.
    Returns the aligned :class:`SwapData`, the judge runs' summaries and the records used.
    """
    from metajudge.data.registry import load_dataset, load_jsonl_dataset

    if not external and not backbones:
        raise InputError(
            "give --external score columns or --backbones to run the judge under", field="backbones"
        )
    if (dataset is None) == (input_file is None):
        raise InputError("give exactly one of --dataset NAME and --input FILE", field="dataset")
    if input_file is not None:
        ds = load_jsonl_dataset(input_file)
    else:
        ds = load_dataset(dataset, data_dir=data_dir, **dict(dataset_options or {}))
    if subset:
        ds = ds.subset(subset)
    if not ds.records:
        raise InputError(f"dataset {ds.card.name!r} has no human-labelled records")
    records = _limit(list(ds.records), limit)
    dim = dimension or metric_dimension(metric, ds.card.dimensions)
    if dim not in ds.card.dimensions:
        raise InputError(
            f"dataset {ds.card.name!r} has no dimension {dim!r} (it has {', '.join(ds.card.dimensions)})",
            field="dimension",
        )
    scores: dict[str, dict[str, float | None]] = {}
    sigs: dict[str, str] = {}
    runs: dict[str, Any] = {}
    if external:
        s, g = external_scores(ds, external, dimension=dim, data_dir=data_dir)
        scores.update(s)
        sigs.update(g)
    if backbones:
        s, g, runs = judge_scores(
            records, metric, backbones, seed=seed, metric_options=metric_options
        )
        scores.update(s)
        sigs.update(g)
    name = ds.card.name + (f"/{subset}" if subset else "")
    data = build_swap_data(
        records, scores, dimension=dim, metric=metric, dataset=name, signatures=sigs
    )
    return data, runs, records


def run_backbone_swap(
    dataset: str | None,
    metric: str,
    *,
    input_file: str | Path | None = None,
    external: Sequence[str] = (),
    backbones: Sequence[str] = (),
    subset: str | None = None,
    limit: int | None = None,
    dimension: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    eps: float = 0.0,
    human_protocol: HumanProtocol | None = None,
    data_dir: str | Path | None = None,
    dataset_options: Mapping[str, Any] | None = None,
    metric_options: Mapping[str, Any] | None = None,
) -> SwapResult:
    """Load the data (:func:`load_swap_data`) and run :func:`~metajudge.metaeval.swap.backbone_swap`."""
    data, runs, _ = load_swap_data(
        dataset,
        metric,
        input_file=input_file,
        external=external,
        backbones=backbones,
        subset=subset,
        limit=limit,
        dimension=dimension,
        seed=seed,
        data_dir=data_dir,
        dataset_options=dataset_options,
        metric_options=metric_options,
    )
    res = backbone_swap(
        data,
        rng=np.random.default_rng(seed),
        n_boot=n_boot,
        eps=eps,
        human_protocol=human_protocol,
        seed=seed,
    )
    if runs:
        res["runs"] = runs
    if limit is not None:
        res["n"]["limit_inputs"] = limit
    return res
