"""``metajudge judge jury`` and ``judge self-preference``: a dataset's judge label columns (e.g.
its released judges, ``--scores shipped``) against its human labels
(:func:`metajudge.analyses.juries.jury`, :func:`metajudge.analyses.self_preference.self_preference`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError


def label_columns(
    dataset: str | None,
    *,
    input_file: str | None = None,
    subset: str | None = None,
    scores: Sequence[str] = ("shipped",),
    judges: Sequence[str] | None = None,
    dimension: str | None = None,
    data_dir: str | Path | None = None,
) -> tuple[Any, str, dict[str, list[str | None]]]:
    """``(dataset, dimension, {judge: label per record})`` of a categorical or binary dataset."""
    from metajudge.analyses.metric_vs_human.categorical import _column_labels
    from metajudge.data.formats import response_key
    from metajudge.data.loading import open_dataset
    from metajudge.scores.spec import gather_scores

    ds = open_dataset(dataset, input_file, subset=subset, data_dir=data_dir)
    if ds.card.label_kind not in ("categorical", "binary"):
        raise InputError(
            f"{ds.name} has {ds.card.label_kind} labels: this needs label data "
            "(categorical or binary)",
            field="dataset",
        )
    dims = ds.card.dimensions
    dim = dimension or dims[0]
    if dim not in dims:
        raise InputError(
            f"no dimension {dim!r} (dimensions: {', '.join(dims)})", field="--dimension"
        )
    by_metric: dict[str, list] = {}
    for r in gather_scores(ds, list(scores), data_dir=data_dir):
        name = r["metric"]
        if len(dims) > 1:
            if not name.endswith("_" + dim):
                continue
            name = name[: -len(dim) - 1]
        by_metric.setdefault(name, []).append(r)
    names = list(judges) if judges else list(by_metric)
    unknown = [j for j in names if j not in by_metric]
    if unknown:
        raise InputError(
            f"no judge column {unknown[0]!r} (columns: {', '.join(by_metric)})", field="--judges"
        )
    labels = tuple(ds.card.scale_of(dim).labels or ())
    keys = [response_key(r.id, r.system) for r in ds.records]  # type: ignore[union-attr]
    preds = {}
    for j in names:
        table, _ = _column_labels(by_metric[j], j, labels)
        preds[j] = [table.get(k) for k in keys]
    return ds, dim, preds


def run_jury(dataset: str | None, *, fit_fraction: float = 0.5, seed: int = 0, **kw: Any) -> Any:
    """The jury result of one dimension (``kw``: :func:`label_columns`)."""
    from metajudge.analyses.juries import jury
    from metajudge.analyses.metric_vs_human.categorical import gold_labels

    ds, dim, preds = label_columns(dataset, **kw)
    return jury(
        gold_labels(ds, dim).labels,
        preds,
        [r.id for r in ds.records],
        tuple(ds.card.scale_of(dim).labels or ()),
        dataset=ds.name,
        dimension=dim,
        fit_fraction=fit_fraction,
        seed=seed,
    )


def run_self_preference(
    dataset: str | None,
    *,
    judge: str,
    family: Sequence[str],
    positive: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    **kw: Any,
) -> Any:
    """The self-preference check of ``judge`` on ``family``'s responses (binary data)."""
    from metajudge.analyses.metric_vs_human.categorical import gold_labels
    from metajudge.analyses.self_preference import self_preference

    ds, dim, preds = label_columns(dataset, judges=[judge], **kw)
    labels = ds.card.scale_of(dim).labels or ()
    pos = positive or labels[-1]
    if pos not in labels:
        raise InputError(f"{pos!r} is not a label ({', '.join(labels)})", field="--positive")
    return self_preference(
        gold_labels(ds, dim).labels,
        preds[judge],
        [str(r.system) for r in ds.records],  # type: ignore[union-attr]
        [r.id for r in ds.records],
        family,
        judge_name=judge,
        positive=pos,
        n_boot=n_boot,
        seed=seed,
    )
