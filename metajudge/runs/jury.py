"""``metajudge judge jury`` and ``judge self-preference``: a dataset's judge label columns (e.g.
its released judges, ``--scores shipped``) against its human labels
(:func:`metajudge.analyses.juries.jury`, :func:`metajudge.analyses.self_preference.self_preference`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metajudge.data.source import DataSource
from metajudge.errors import InputError


def _columns_by_judge(
    ds: Any, src: DataSource, judges: Sequence[str] | None
) -> tuple[str, dict[str, list], list[str]]:
    """``(dimension, {judge: its score rows}, judges asked)`` of ``src``'s score columns on its
    dataset ``ds``: column ``J_<dim>`` is judge ``J`` on a dataset with several dimensions."""
    from metajudge.scores.source_rows import source_rows

    dims = ds.card.dimensions
    dim = src.dimension or dims[0]
    if dim not in dims:
        raise InputError(
            f"no dimension {dim!r} (dimensions: {', '.join(dims)})", field="--dimension"
        )
    by_metric: dict[str, list] = {}
    # default: released judges; the rows read once where src carries them (the judge card)
    for r in source_rows(src.but(dataset_obj=ds)):
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
    return dim, by_metric, names


def score_columns(
    src: DataSource, judges: Sequence[str] | None = None
) -> tuple[Any, str, list[float | None], dict[str, list[float | None]]]:
    """``(dataset, dimension, human mean per record, {judge: score per record})`` of a dataset
    with numeric (Likert / rating) labels (the ``judges``' columns of ``src.scores``, all
    without ``judges``); a missing or failed score is None."""
    import numpy as np

    from metajudge.data.formats import LikertRecord, response_key

    ds = src.load()
    if ds.card.label_kind != "numeric" or not all(isinstance(r, LikertRecord) for r in ds.records):
        raise InputError(
            f"{ds.name} has {ds.card.label_kind} labels: a score jury needs per-response "
            "numeric ratings",
            field="dataset",
        )
    dim, by_metric, names = _columns_by_judge(ds, src, judges)
    gold: list[float | None] = []
    for r in ds.records:
        vals = [float(v) for v in (r.scores.get(dim) or ()) if v is not None]
        gold.append(float(np.mean(vals)) if vals else None)
    keys = [response_key(r.id, r.system) for r in ds.records]  # type: ignore[union-attr]
    preds = {}
    for j in names:
        table = {row["key"]: row.get("score") for row in by_metric[j] if row.get("error") is None}
        preds[j] = [table.get(k) for k in keys]
    return ds, dim, gold, preds


def label_columns(
    src: DataSource, judges: Sequence[str] | None = None
) -> tuple[Any, str, dict[str, list[str | None]]]:
    """``(dataset, dimension, {judge: label per record})`` of a categorical or binary dataset
    (``judges``: as for :func:`score_columns`)."""
    from metajudge.analyses.metric_vs_human.categorical import _column_labels
    from metajudge.data.formats import response_key

    ds = src.load()
    if ds.card.label_kind not in ("categorical", "binary"):
        raise InputError(
            f"{ds.name} has {ds.card.label_kind} labels: this needs label data "
            "(categorical or binary)",
            field="dataset",
        )
    dim, by_metric, names = _columns_by_judge(ds, src, judges)
    labels = tuple(ds.card.scale_of(dim).labels or ())
    keys = [response_key(r.id, r.system) for r in ds.records]  # type: ignore[union-attr]
    preds = {}
    for j in names:
        table, _ = _column_labels(by_metric[j], j, labels)
        preds[j] = [table.get(k) for k in keys]
    return ds, dim, preds


def run_jury(
    src: DataSource,
    judges: Sequence[str] | None = None,
    *,
    fit_fraction: float = 0.5,
    seed: int = 0,
    n_resamples: int = 1000,
) -> Any:
    """The jury result of one dimension (:func:`metajudge.analyses.juries.jury`) of the
    ``judges``' columns of ``src`` (all without ``judges``): votes on label data, mean scores on
    numeric ratings (``n_resamples``: the permutations of their test against the best judge)."""
    from metajudge.analyses.juries import jury
    from metajudge.analyses.metric_vs_human.categorical import gold_labels

    src = src.loaded_once()
    ds = src.load()
    common = {"fit_fraction": fit_fraction, "seed": seed, "n_resamples": n_resamples}
    if ds.card.label_kind == "numeric":
        ds, dim, gold, preds = score_columns(src, judges)
        systems = [str(r.system) for r in ds.records]  # type: ignore[union-attr]
        return jury(
            gold, preds, [r.id for r in ds.records], systems=systems, **_about(ds, dim), **common
        )
    ds, dim, preds = label_columns(src, judges)
    labels = tuple(ds.card.scale_of(dim).labels or ())
    gold = gold_labels(ds, dim).labels
    return jury(gold, preds, [r.id for r in ds.records], labels, **_about(ds, dim), **common)


def _about(ds: Any, dim: str) -> dict[str, str]:
    return {"dataset": ds.name, "dimension": dim}


def run_self_preference(
    src: DataSource,
    *,
    judge: str,
    family: Sequence[str],
    positive: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Any:
    """The self-preference check of ``judge`` (a column of ``src``) on ``family``'s responses
    (binary data)."""
    from metajudge.analyses.metric_vs_human.categorical import gold_labels
    from metajudge.analyses.self_preference import self_preference

    ds, dim, preds = label_columns(src, [judge])
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
