"""``metajudge backbone-swap`` end to end: load, gather per-backbone scores, analyse."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.analyses.backbone_swap import (
    HumanProtocol,
    SwapData,
    SwapResult,
    backbone_swap,
    build_swap_data,
)
from metajudge.errors import InputError
from metajudge.scores.spec import ScoreSpec, judge_specs
from metajudge.scores.swap_sources import external_scores, judge_scores, metric_dimension


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
    scores: Sequence[ScoreSpec | str] = (),
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

    Scores: ``scores`` specs (:mod:`metajudge.scores.spec`: score files, the card's shipped judge
    columns; ``external`` is their old spelling, :func:`~metajudge.scores.spec.from_external_list`)
    and/or the judge ``metric`` run under each of ``backbones``. ``limit`` keeps the first
    ``limit`` items.
    Returns the aligned :class:`SwapData`, the judge runs' summaries and the records used.
    """
    from metajudge.data.registry import load_dataset, load_jsonl_dataset

    specs = judge_specs(scores, external)
    if not specs and not backbones:
        raise InputError(
            "give --scores score columns or --backbones to run the judge under", field="backbones"
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
    columns: dict[str, dict[str, float | None]] = {}
    sigs: dict[str, str] = {}
    runs: dict[str, Any] = {}
    if specs:
        s, g = external_scores(ds, specs, dimension=dim, data_dir=data_dir)
        columns.update(s)
        sigs.update(g)
    if backbones:
        s, g, runs = judge_scores(
            records, metric, backbones, seed=seed, metric_options=metric_options
        )
        columns.update(s)
        sigs.update(g)
    name = ds.card.name + (f"/{subset}" if subset else "")
    data = build_swap_data(
        records, columns, dimension=dim, metric=metric, dataset=name, signatures=sigs
    )
    return data, runs, records


def run_backbone_swap(
    dataset: str | None,
    metric: str,
    *,
    input_file: str | Path | None = None,
    scores: Sequence[ScoreSpec | str] = (),
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
    out_dir: str | Path | None = None,
) -> SwapResult:
    """Load the data (:func:`load_swap_data`) and run :func:`~metajudge.analyses.backbone_swap.backbone_swap`.

    ``out_dir``: the run folder; the backbones judged live (``backbones``) get their per-response
    scores saved there (:func:`write_backbone_scores`) for the report's per-item views.
    """
    data, runs, records = load_swap_data(
        dataset,
        metric,
        input_file=input_file,
        scores=scores,
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
    if out_dir is not None and backbones:
        write_backbone_scores(out_dir, data, records, backbones)
    if limit is not None:
        res["n"]["limit_inputs"] = limit
    return res


def score_file(out_dir: str | Path, backbone: str) -> Path:
    """``<out_dir>/scores_<backbone>.jsonl`` (characters other than ``A-Za-z0-9._-`` as ``_``).

    >>> score_file("run", "openai:gpt-4o").name
    'scores_openai_gpt-4o.jsonl'
    """
    import re

    return Path(out_dir) / f"scores_{re.sub(r'[^A-Za-z0-9._-]', '_', backbone)}.jsonl"


def write_backbone_scores(
    out_dir: str | Path, data: SwapData, records: Sequence[Any], backbones: Sequence[str]
) -> list[Path]:
    """Each live backbone's per-response scores as score rows (:mod:`metajudge.scores.rows`)
    in :func:`score_file`.

    A response the backbone did not score has a null score and an ``error`` naming it (the
    error counts per kind are in ``swap.json``'s ``runs``)."""
    from metajudge.metrics.base import iter_responses
    from metajudge.scores.rows import make_row
    from metajudge.scores.scoring import write_scores

    col = {k: i for i, k in enumerate(data.view.keys)}
    refs = list(iter_responses(records))
    paths = []
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for bb in backbones:
        k = data.backbones.index(bb)
        rows = []
        for ref in refs:
            i = col.get(ref.key)
            v = None if i is None else float(data.scores[k, i])
            score = v if v is not None and np.isfinite(v) else None
            rows.append(
                make_row(
                    item=ref.item,
                    system=ref.system,
                    side=ref.side,
                    metric=data.metric,
                    score=score,
                    signature=data.signatures.get(bb, ""),
                    details={"backbone": bb},
                    error=None if score is not None else f"not scored by {bb} (see swap.json runs)",
                )
            )
        path = score_file(out_dir, bb)
        write_scores(path, rows)
        paths.append(path)
    return paths


def read_backbone_scores(
    out_dir: str | Path, backbones: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """The saved per-response scores (key -> score) of the backbones that have a score file."""
    from metajudge.scores.files import read_scores

    out: dict[str, dict[str, float | None]] = {}
    for bb in backbones:
        path = score_file(out_dir, bb)
        if path.is_file():
            out[bb] = {r["key"]: r["score"] for r in read_scores(path, allow_empty=True)}
    return out
