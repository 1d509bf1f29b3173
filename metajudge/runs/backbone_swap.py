"""``metajudge backbone-swap`` end to end: load, gather per-backbone scores (score columns, or
the judge run under each backbone: :func:`judge_scores`), analyse."""

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
from metajudge.analyses.metric_vs_human.aligned import binary_as_numbers
from metajudge.data.formats import Record
from metajudge.errors import InputError
from metajudge.scores.spec import ScoreSpec, judge_specs
from metajudge.scores.swap_sources import Scores, external_scores, metric_dimension


def subset_records(
    records: Sequence[Any], limit: int | None, first: int | None = None, seed: int = 0
) -> list[Any]:
    """The records a swap, a decision or a drift runs on: ``limit`` items drawn with ``seed``, or
    the ``first`` items (:func:`metajudge.data.subsample.select`, the rule of every command)."""
    from metajudge.data.subsample import select

    return list(select(records, limit=limit, first=first, seed=seed).records)


def _error_counts(results: Sequence[Any]) -> dict[str, int]:
    errors: dict[str, int] = {}
    for r in results:
        if r.score is None:
            k = (r.error or "unscored").split(":")[0][:60]
            errors[k] = errors.get(k, 0) + 1
    return errors


#: one backbone's judge run: per-response scores, the judge's signature, its run summary
Judged = tuple[dict[str, float | None], str, dict[str, Any]]


def swap_items(records: Sequence[Record]) -> list[Any]:
    """The :class:`~metajudge.metrics.base.ScoreItem` of every response of ``records``, in the
    order every judge of a swap scores them."""
    from metajudge.metrics.base import iter_responses

    return [r.score_item() for r in iter_responses(records)]


def judge_backbone(m: Any, items: Sequence[Any]) -> Judged:
    """Score ``items`` with the judge metric ``m`` (built for one backbone; the caller closes
    it): the scores by response key, the signature and the run summary (items scored/failed,
    parse failures and rate, calls, tokens, wall time, error counts)."""
    import time

    t0 = time.perf_counter()
    results = m.score_batch(items)
    wall = time.perf_counter() - t0
    errors = _error_counts(results)
    run = {
        "wall_s": round(wall, 2),
        "n_items": len(items),
        "unscored": sum(errors.values()),
        "errors": errors,
        **dict(getattr(m, "summary", {}) or {}),
    }
    return {r.key: r.score for r in results}, m.signature, run


def judge_variant(label: str, metric: str) -> tuple[str, str]:
    """The (metric, backbone) a swap's column ``label`` names: a backbone runs ``metric``;
    ``NAME@BACKBONE`` runs metric ``NAME`` (e.g. another judge definition, ``judge:PATH``) on
    that backbone. A judge variant is (definition, backbone): two definitions, or one under two
    backbones, go through the same swap.

    >>> judge_variant("smollm2-135m", "judge:old.yaml")
    ('judge:old.yaml', 'smollm2-135m')
    >>> judge_variant("judge:new.yaml@gemma3-270m", "judge:old.yaml")
    ('judge:new.yaml', 'gemma3-270m')
    """
    if "@" not in label:
        return metric, label
    name, _, backbone = label.rpartition("@")
    if not name or not backbone:
        raise InputError(
            f"{label!r}: a judge variant is BACKBONE or METRIC@BACKBONE", field="--backbones"
        )
    return name, backbone


def judge_scores(
    records: Sequence[Record],
    metric: str,
    backbones: Sequence[str],
    *,
    seed: int = 0,
    metric_options: Mapping[str, Any] | None = None,
    judged: Mapping[str, Judged] | None = None,
) -> tuple[Scores, dict[str, str], dict[str, Any]]:
    """Run judge ``metric`` under each backbone (one after the other) on every response of ``records``.

    Returns ``(scores, signatures, runs)``; ``runs[bb]`` has the judge's run summary (items
    scored/failed, parse failures and rate, calls, tokens, wall time) and the error counts.
    ``judged``: backbones already judged on these records (:func:`judge_backbone` on
    :func:`swap_items`, e.g. while something else ran), taken as they are; their response keys
    must be those of ``records`` (else ``ValueError``).
    """
    from metajudge.metrics.registry import get_metric

    items = swap_items(records)
    scores: Scores = {}
    sigs: dict[str, str] = {}
    runs: dict[str, Any] = {}
    for bb in backbones:
        if judged is not None and bb in judged:
            done = judged[bb]
            if list(done[0]) != [it.key for it in items]:
                raise ValueError(f"the {bb} scores handed to the swap are not of its responses")
        else:
            name, backbone = judge_variant(bb, metric)
            m = get_metric(name, backbone=backbone, seed=seed, **dict(metric_options or {}))
            try:
                done = judge_backbone(m, items)
            finally:
                m.close()
        scores[bb], sigs[bb], runs[bb] = done
    return scores, sigs, runs


def load_swap_data(
    dataset: Any,
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
    first: int | None = None,
    judged: Mapping[str, Judged] | None = None,
) -> tuple[SwapData, dict[str, Any], list[Any]]:
    """Load the dataset (``dataset``: a name or a loaded Dataset, or ``input_file``: any file
    :func:`~metajudge.data.loading.load` reads) and get per-backbone scores.

    Scores: ``scores`` specs (:mod:`metajudge.scores.spec`: score files, the card's shipped judge
    columns; ``external`` is their old spelling, :func:`~metajudge.scores.spec.from_external_list`)
    and/or the judge ``metric`` run under each of ``backbones``. ``limit`` draws that many items
    with ``seed``; ``first`` keeps the first ones (:func:`subset_records`). ``judged``: backbones
    already judged on these records (:func:`judge_scores`).
    Returns the aligned :class:`SwapData`, the judge runs' summaries and the records used.
    """
    specs = judge_specs(scores, external)
    if not specs and not backbones:
        raise InputError(
            "give --scores score columns or --backbones to run the judge under", field="backbones"
        )
    ds = swap_dataset(dataset, input_file, subset, data_dir, dataset_options)
    records = subset_records(ds.records, limit, first, seed)
    need_pairs(ds, records)
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
        binary = ds.card.scale_of(dim).labels if ds.card.label_kind == "binary" else None
        s, g = external_scores(ds, specs, dimension=dim, data_dir=data_dir, binary=binary)
        columns.update(s)
        sigs.update(g)
    if backbones:
        s, g, runs = judge_scores(
            records, metric, backbones, seed=seed, metric_options=metric_options, judged=judged
        )
        columns.update(s)
        sigs.update(g)
    name = ds.card.name + (f"/{subset}" if subset else "")
    data = build_swap_data(
        binary_as_numbers(records, ds.card, dim),  # a binary dataset's labels as 0/1
        columns,
        dimension=dim,
        metric=metric,
        dataset=name,
        signatures=sigs,
    )
    return data, runs, records


def swap_dataset(
    dataset: Any,
    input_file: str | Path | None,
    subset: str | None,
    data_dir: str | Path | None,
    options: Mapping[str, Any] | None = None,
) -> Any:
    """The human-labelled records a swap or a decision runs on (:func:`~metajudge.data.loading.open_dataset`);
    a dataset without them (benchmark inputs, an empty subset) is refused, naming its source."""
    from metajudge.data.loading import open_dataset

    ds = open_dataset(dataset, input_file, subset=subset, data_dir=data_dir, **dict(options or {}))
    if not ds.records:
        where = f" ({input_file})" if input_file is not None else ""
        raise InputError(f"dataset {ds.card.name!r}{where} has no human-labelled records")
    return ds


def need_pairs(ds: Any, records: Sequence[Any]) -> None:
    """Refuse pointwise data: a swap, a decision and a drift compare the backbones' decisions on
    pairs of responses (pairwise records, or two responses to one input of Likert records)."""
    if ds.card.kind == "pairwise" or len({r.id for r in records}) < len(records):
        return
    raise InputError(
        f"every input of {ds.card.name!r} has one response, so there are no pairs of responses "
        "to decide between (backbone-swap, decide swap and decide drift compare the judges' "
        "decisions on pairs); for one response per input use meta-eval --protocol pointwise "
        "or calibrate estimate --method ppi",
        path=ds.source.get("input"),
        field="dataset",
    )


def run_backbone_swap(
    dataset: Any,
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
    first: int | None = None,
    judged: Mapping[str, Judged] | None = None,
) -> SwapResult:
    """Load the data (:func:`load_swap_data`) and run :func:`~metajudge.analyses.backbone_swap.backbone_swap`.

    ``out_dir``: the run folder; the backbones judged live (``backbones``) get their per-response
    scores saved there (:func:`metajudge.scores.backbone_files.write_backbone_scores`) for the report's per-item views.
    ``res.source``: where the data was loaded from (the report loads it again from there).
    ``judged``: backbones already judged on these records, taken as they are (:func:`judge_scores`).
    """
    ds = swap_dataset(dataset, input_file, subset, data_dir, dataset_options)
    data, runs, records = load_swap_data(
        ds,
        metric,
        scores=scores,
        external=external,
        backbones=backbones,
        subset=subset,
        limit=limit,
        first=first,
        dimension=dimension,
        seed=seed,
        data_dir=data_dir,
        metric_options=metric_options,
        judged=judged,
    )
    res = backbone_swap(
        data,
        rng=np.random.default_rng(seed),
        n_boot=n_boot,
        eps=eps,
        human_protocol=human_protocol,
        seed=seed,
    )
    res.runs = dict(runs)
    res.source = ds.source or None
    if out_dir is not None and backbones:
        from metajudge.scores.backbone_files import write_backbone_scores

        write_backbone_scores(out_dir, data, records, backbones)
    if limit is not None:
        res.n["limit_inputs"] = limit
    if first is not None:
        res.n["first_inputs"] = first
    return res
