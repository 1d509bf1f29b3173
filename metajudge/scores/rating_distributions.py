"""Score rows of a judge's rating distributions (the judge columns of a dataset whose card has
a ``rating_distribution_csv`` shipped-scores entry, e.g. ``conformal_judge_sheng2025``); the
file format is read by :func:`metajudge.data.rating_csv.read_rating_csv`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from metajudge.data.rating_csv import RatingDistributions, read_rating_csv
from metajudge.errors import InputError
from metajudge.scores.readers.rows import file_signature, make_row


def distribution_rows(
    dist: RatingDistributions,
    records: list,
    metric: str,
    signature: str,
    order: npt.NDArray[np.int64] | None = None,
) -> list[dict]:
    """Score rows of one file's judge, file row j scoring ``records[order[j]]`` (``order``
    default: row j scores record j): score = the expected rating, details = the distribution
    (``probs`` over ``values``) and ``mass``."""
    if len(records) != len(dist.human):
        raise InputError(
            f"{len(dist.human)} rows but the dataset has {len(records)} records",
            path=dist.path,
            field="<rows>",
        )
    exp = dist.expected
    values = [float(v) for v in dist.values]
    idx = range(len(records)) if order is None else order
    rows = []
    for j, i in enumerate(idx):
        r = records[int(i)]
        details = {
            "probs": [round(float(x), 12) for x in dist.probs[j]],
            "values": values,
            "mass": float(dist.mass[j]),
            "line": dist.lines[j],
        }
        rows.append(
            make_row(
                item=r.id,
                system=r.system,
                side=None,
                metric=metric,
                score=float(exp[j]),
                signature=signature,
                details=details,
            )
        )
    return rows


def shipped_distribution_rows(
    dataset: Any, spec: dict, data_dir: str | Path | None, metrics: list[str] | None
) -> list[dict]:
    """The card's ``rating_distribution_csv`` columns: one judge column per (backbone,
    dimension), read from ``spec['file']`` (``{model}``/``{dimension}`` filled in), each file's
    rows aligned to the records (:func:`metajudge.data.convert_likert.sheng_alignment`)."""
    from metajudge.data.convert_likert import sheng_alignment
    from metajudge.data.upstream import _Source

    card = dataset.card
    src = _Source(card, data_dir, {})
    order = sheng_alignment(src)
    rows: list[dict] = []
    for model in spec.get("backbones", []):
        for dim in card.dimensions:
            name = str(spec["backbone_column"]).format(backbone=model, dimension=dim)
            if metrics is not None and name not in metrics:
                continue
            rel = str(spec["file"]).format(model=model, dimension=dim)
            sig = file_signature(name, f"{card.name}/{rel}")
            dist = read_rating_csv(src.path(rel))
            rows += distribution_rows(dist, list(dataset.records), name, sig, order[model])
    return rows
