"""Judges' raw replies in a JUDGE-BENCH file (``instances[i].annotations[metric][<model>]``, the
unified format of :mod:`metajudge.data.judge_bench`) as score rows, and written back.

- :data:`READER`: the format ``judge_bench`` of the registry (``--scores FILE``,
  ``--scores judge_bench:FILE``, ``data doctor FILE``): a ``.json`` file in JUDGE-BENCH's format
  that holds replies, read against the dataset like every score file
  (:class:`~metajudge.scores.readers.alignment.KeyMap`);
- :func:`reply_rows`: the same rows of a dataset already loaded (``--scores shipped`` on a
  JUDGE-BENCH file or the built-in collection, :mod:`metajudge.scores.shipped`);
- :func:`add_replies`: a model's replies written into a copy of the file (``judge run-bench``).

A reply is parsed on its dimension's scale with :func:`~metajudge.metrics.judges.parsers.labels.
parse_reply`: categorical → ``label``, numeric → ``score``; an invalid reply is a row with
neither and its ``error`` (a missing score, counted, never guessed). The column is the model's
name (``<model>_<dimension>`` when the file has several dimensions). Their agreement with the
humans is :func:`metajudge.analyses.judge_bench.evaluate_judge`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metajudge.errors import InputError
from metajudge.scores.readers.base import Head, Reader, ReadOptions
from metajudge.scores.readers.rows import ScoreRow

if TYPE_CHECKING:
    from metajudge.data.registry import Dataset

#: the signature of a parsed reply's column
PARSER = "reply parsed by metajudge.parse_reply"


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


def reply_rows(ds: Dataset, metrics: Sequence[str] | None = None) -> list[ScoreRow]:
    """Score rows of the judges' raw replies the records of ``ds`` hold (``meta['replies']``),
    only the columns ``metrics`` names when given (module docstring)."""
    from metajudge.metrics.judges.parsers.labels import parse_reply
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
                    signature=f"{model}|{PARSER}",
                    error=None if got is not None else "invalid reply: no label found",
                )
                if isinstance(got, str):
                    row["label"] = got
                rows.append(row)
    return rows


def _dataset(path: Path) -> Dataset:
    from metajudge.data.judge_bench import read_file

    return read_file(path)


def _sniff(head: Head) -> bool:
    """A JUDGE-BENCH file with at least one reply beside the human scores."""
    from metajudge.data.judge_bench import has_replies

    return has_replies(head.json)


def _rows(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    """The file's replies as score rows, aligned with ``records`` when given: a row for an
    instance the dataset lacks is dropped and counted (or refused) by ``opts.ids``."""
    from metajudge.scores.readers.alignment import KeyMap

    rows = reply_rows(_dataset(path))
    if records is None:
        return rows
    km = KeyMap(records, opts.ids)
    out = []
    for row in rows:
        got = km.resolve(row["item"], row["system"], None, where={"path": path})
        if got is not None:
            row["system"], row["key"] = got[0], got[2]
            out.append(row)
    return out


def _records(path: Path) -> list[Mapping[str, Any]]:
    """One plain record per instance: its id and each reply column's parsed value (a label,
    a number, or None for an invalid reply), what ``data doctor`` describes."""
    by_item: dict[str, dict[str, Any]] = {}
    for row in reply_rows(_dataset(path)):
        rec = by_item.setdefault(row["item"], {"id": row["item"]})
        rec[row["metric"]] = row.get("label", row["score"])
    return list(by_item.values())


READER = Reader(
    "judge_bench",
    "judges' raw replies in a JUDGE-BENCH file (annotations[metric][<model>], JSON)",
    (".json",),
    _sniff,
    _rows,
    records=_records,
    forcible=True,
    labelled=True,
)
