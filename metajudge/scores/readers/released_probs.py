"""The judge column of a file in the Trust-or-Escalate released format
(:mod:`metajudge.data.released_probs`: ``.jsonl`` lines with ``instruction``, ``outputs``,
``preferences`` and ``probs``) as score rows: :func:`judge_rows`, and its :data:`READER`.

Its probabilities are checked as a distribution (a pair that is not one, NaN included, is
refused): the same file is a dataset too (``--input``), whose labels and judge must be read
whole."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.data.released_probs import FIELDS, judge_name, read_lines
from metajudge.errors import InputError
from metajudge.scores.readers.base import Head, Reader, ReadOptions, jsonl_records
from metajudge.scores.readers.rows import ScoreRow, make_row


def judge_rows(path: str | Path, records: Sequence[Any], judge: str | None = None) -> list[dict]:
    """The file's judge column as score rows on ``records`` (side a = p(first), side b =
    p(second)), each line matched to a record by instruction and responses."""
    p = Path(path)
    name = judge or judge_name(p)
    by_key = {(r.input.question, r.a.response, r.b.response): r.id for r in records}
    rows: list[dict] = []
    seen: set[str] = set()
    for r in read_lines(p):
        item = by_key.get(r.key)
        if item is None:
            raise InputError(
                "this pair (instruction and outputs) is not in the dataset",
                path=p,
                line=r.line,
                field="instruction",
            )
        if item in seen:
            raise InputError(f"pair {item!r} given twice", path=p, line=r.line, field="outputs")
        seen.add(item)
        details = {"raw_probs": list(r.raw_probs), "renormalised": r.raw_probs != r.probs}
        for side, prob in zip(("a", "b"), r.probs, strict=True):
            rows.append(
                make_row(
                    item=item,
                    system=None,
                    side=side,
                    metric=name,
                    score=prob,
                    signature=f"released:{name}|class-probability",
                    details=details,
                )
            )
    return rows


def _sniff(head: Head) -> bool:
    first = head.first_object
    return isinstance(first, dict) and all(f in first for f in FIELDS)


def _rows(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    if records is None:
        raise InputError("a released-probabilities file is read against a dataset", path=path)
    return judge_rows(path, records)


READER = Reader(
    "released_probs",
    "a judge's class probabilities in the Trust-or-Escalate released format (JSONL)",
    (".jsonl",),
    _sniff,
    _rows,
    records=jsonl_records,
    labelled=True,
)
