"""The judged rows ``calibrate estimate`` / ``plan`` read from a
:class:`~metajudge.data.source.DataSource`: a CJE fresh-draw folder (``--input DIR``,
:mod:`metajudge.data.cje_folder`, its ``judge_score`` and oracle label), or a canonical file
(``--input FILE``) or built-in dataset with ``--scores`` naming one judge column (a binary
judge's verdicts on the card's labels read as 0/1). A record's label is the mean of
its annotators on the dimension (binary: the share of annotators giving the card's second label);
a record with no label there (``scores`` empty, absent, or all ``null``) is an unlabelled row —
partial labels are a data kind, not an error. Responses without a judge score are left out and
counted. The cluster is the record ``id`` (the input) unless ``--cluster-field`` names a dotted
record field (``meta.item_id``, ``input.question``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data.cje_folder import Row
from metajudge.errors import InputError

ESTIMATE_KINDS = ("numeric", "binary")


def _field(rec: Any, dotted: str) -> Any:
    obj: Any = rec.to_dict()
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _label(rec: Any, dimension: str, binary: tuple[str, ...] | None) -> float | None:
    vals = [v for v in (getattr(rec, "scores", {}) or {}).get(dimension, ()) if v is not None]
    if not vals:
        return None
    if binary is not None:
        return sum(v == binary[1] for v in vals) / len(vals)
    return sum(float(v) for v in vals) / len(vals)


def verdict_score(row: Mapping[str, Any], binary: Sequence[str] | None) -> float | None:
    """A score row's number: its ``score``, else, on a binary dataset (``binary``: the card's
    two labels), its verdict ``label`` as 0/1 (1: the second label, as the human labels read).

    >>> verdict_score({"score": None, "label": "True"}, ("False", "True"))
    1.0
    """
    if row.get("score") is not None or binary is None:
        return row.get("score")
    label = row.get("label")
    return float(label == binary[1]) if label in binary else None


def _dimension(ds: Any, dimension: str | None) -> str:
    dims = tuple(ds.card.dimensions)
    if dimension is None:
        if len(dims) != 1:
            raise InputError(f"give --dimension (one of {', '.join(dims)})", field="--dimension")
        return dims[0]
    if dimension not in dims:
        raise InputError(
            f"unknown dimension {dimension!r} (known: {', '.join(dims)})", field="--dimension"
        )
    return dimension


#: the score rows of a dataset: :func:`metajudge.scores.spec.gather_scores`, passed in by the
#: caller (the data layer reads records; the score specs are read above it)
Gather = Callable[..., list[dict[str, Any]]]


def read_rows(
    src: Any, gather: Gather, notes: list[str] | None = None
) -> tuple[list[Row], tuple[float, float], dict[str, int]]:
    """The judged rows of ``src`` (a :class:`~metajudge.data.source.DataSource`; a dataset's
    judge column read by ``gather``), the label scale, and the rows left out per reason;
    ``notes`` gets what a CJE folder's reader notes (:func:`~metajudge.data.cje_folder.read_folder`)."""
    from metajudge.data import cje_folder

    if src.path and not src.is_mlflow and not Path(src.path).exists():
        raise InputError(
            "not found (a CJE fresh-draw folder or a dataset file)", path=src.path, field="--input"
        )
    from metajudge.data import judge_table

    if src.path and judge_table.is_judge_table(src.path):
        if src.scores:
            raise InputError(
                "--scores goes with a dataset; a judge-score table carries judge_score",
                field="--scores",
            )
        rows, scale = judge_table.judge_table_rows(src.path, src.cluster_field)
        return rows, scale, {}
    if src.is_folder:
        if src.scores:
            raise InputError(
                "--scores goes with a dataset; a CJE folder carries judge_score", field="--scores"
            )
        rows = cje_folder.read_folder(
            src.path, cluster_field=src.cluster_field or "prompt_id", notes=notes
        )
        return rows, cje_folder.SCALE, {}
    return dataset_rows(src, gather)


def dataset_rows(src: Any, gather: Gather) -> tuple[list[Row], tuple[float, float], dict[str, int]]:
    """The judged rows of a dataset source and its judge column (module docstring; ``gather``:
    as for :func:`read_rows`), the label scale, and the rows left out per reason."""
    if not src.scores:
        raise InputError("a dataset needs --scores (the judge column)", field="--scores")
    ds = src.load()
    kind = ds.card.label_kind
    if kind not in ESTIMATE_KINDS:
        raise InputError(
            f"a {kind} dataset has no mean to estimate; calibrate estimate takes numeric "
            "(likert) or binary labels",
            path=src.path,
        )
    dim = _dimension(ds, src.dimension)
    binary = tuple(ds.card.scale.labels) if kind == "binary" else None
    sc = ds.card.scale_of(dim)
    scale = (0.0, 1.0) if binary else (float(sc.min), float(sc.max))
    rows = gather(ds, src.scores, data_dir=src.data_dir, dimension=dim, labels=False, ids=src.ids)
    metrics = sorted({str(r["metric"]) for r in rows})
    if len(metrics) != 1:
        raise InputError(
            f"give exactly one judge column (got {', '.join(metrics) or 'none'})",
            field="--scores",
        )
    recs = {f"{r.id}::{r.system}": r for r in ds.records}
    out: list[Row] = []
    dropped = {"no_judge_score": 0}
    for r in rows:
        rec = recs.get(str(r["key"]))
        judge = verdict_score(r, binary)  # a binary dataset's verdict labels: 0/1
        if rec is None or judge is None:
            dropped["no_judge_score"] += 1
            continue
        cluster = rec.id if not src.cluster_field else _field(rec, src.cluster_field)
        if cluster is None:
            raise InputError(
                f"record {rec.id} ({rec.system}) has no {src.cluster_field}",
                path=src.path,
                field=src.cluster_field,
            )
        label = _label(rec, dim, binary)
        out.append((rec.system, str(cluster), f"{rec.id}::{rec.system}", float(judge), label))
    return out, scale, dropped
