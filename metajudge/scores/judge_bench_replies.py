"""Judges' raw replies in a JUDGE-BENCH file (``instances[i].annotations[metric][<model>]``):
read as score rows (:func:`reply_rows`, parsed on the dataset's scale) and written into a copy of
the file (:func:`add_replies`). Their agreement with the humans is
:func:`metajudge.analyses.judge_bench.evaluate_judge`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metajudge.errors import InputError
from metajudge.metrics.judges.parsers.labels import parse_reply

if TYPE_CHECKING:
    from metajudge.data.registry import Dataset


def add_replies(
    src: str | Path, out: str | Path, model: str, replies: Mapping[tuple[str, str], str]
) -> int:
    """Write ``src`` (a JUDGE-BENCH file) to ``out`` with ``model``'s raw replies added under
    each ``(instance id, metric)`` of ``replies`` (atomically). Returns the count written; an
    unknown instance id or metric raises before anything is written."""
    import json

    from metajudge.io import atomic_write, read_json

    obj = read_json(src)
    by_id = {str(i["id"]): i for i in obj.get("instances", [])}
    n = 0
    for (iid, metric), text in replies.items():
        inst = by_id.get(str(iid))
        if inst is None or metric not in inst.get("annotations", {}):
            raise InputError(f"no instance {iid!r} with metric {metric!r}", path=src, field="id")
        inst["annotations"][metric][model] = text
        n += 1
    with atomic_write(out) as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=1)
    return n


def reply_rows(ds: Dataset, metrics: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Score rows of the judges' raw replies a JUDGE-BENCH file holds (``meta['replies']``),
    parsed with :func:`parse_reply`: categorical → ``label``, numeric → ``score``; an invalid
    reply is a row with neither and its ``error`` (counted, never guessed). Column = the model
    name (``<model>_<dimension>`` when the file has several dimensions)."""
    from metajudge.scores.readers.rows import make_row

    dims = ds.card.dimensions
    rows = []
    for r in ds.records:
        for dim, by_model in (r.meta.get("replies") or {}).items():
            scale = ds.card.scale_of(dim)
            for model, text in by_model.items():
                name = model if len(dims) == 1 else f"{model}_{dim}"
                if metrics and model not in metrics and name not in metrics:
                    continue
                got = parse_reply(str(text), scale)
                num = None if isinstance(got, str) or got is None else float(got)
                row = make_row(
                    item=r.id,
                    system=r.system,  # type: ignore[union-attr]
                    side=None,
                    metric=name,
                    score=num,
                    signature=f"{model}|reply parsed by metajudge.parse_reply",
                    error=None if got is not None else "invalid reply: no label found",
                )
                if isinstance(got, str):
                    row["label"] = got
                rows.append(row)
    return rows
