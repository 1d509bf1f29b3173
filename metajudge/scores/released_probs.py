"""The judge column of a file in the Trust-or-Escalate released format
(:mod:`metajudge.data.released_probs`) as score rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.data.released_probs import judge_name, read_lines
from metajudge.errors import InputError
from metajudge.scores.rows import make_row


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
