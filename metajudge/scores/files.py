"""``read_scores``: score rows (:mod:`metajudge.scores.readers.rows`) of any score file, read by the
one reader of its format (:mod:`metajudge.scores.readers`: JSONL score rows, wide CSV/TSV and
JSON tables, judge frameworks' files, upstream datasets' score files), recognised by content.

Given the dataset's ``records``, every row is checked against them (unknown item or system,
duplicates and non-numeric values are :class:`~metajudge.errors.InputError` naming file, line
and field; unknown ids follow the :class:`~metajudge.scores.readers.alignment.IdPolicy`). Every format
reads a score by one rule (:func:`~metajudge.scores.readers.rows.score_cell`): an empty, null or NaN
score is a missing score, kept as a row with a null score and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.scores import readers
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.scores.readers.base import Reading, ReadOptions
from metajudge.scores.readers.rows import ScoreRow


def read_scores(
    path: str | Path,
    records: Sequence[Any] | None = None,
    *,
    fmt: str | None = None,
    labels: bool = False,
    allow_empty: bool = False,
    ids: IdPolicy | None = None,
    reading: Reading | None = None,
) -> list[ScoreRow]:
    """Read any supported score file; with ``records``, check it against the dataset.

    ``reading``: how a judge framework's file is joined to the dataset (``--id-field``,
    ``--system``, ``--epochs``: :class:`~metajudge.scores.readers.base.Reading`).

    ``ids``: the rule for rows whose item or system the dataset lacks
    (:class:`~metajudge.scores.readers.alignment.IdPolicy`: dropped and counted there, or refused when
    strict); ``None`` refuses them.

    ``fmt``: a format name of :data:`metajudge.scores.readers.READERS` (default: detected). ``labels=True``
    (categorical datasets): a non-numeric cell is a label string, kept in the row's ``label``
    (``score`` None), instead of an error. ``allow_empty``: an empty file gives no rows
    instead of an error (a cache not written yet)."""
    p = Path(path)
    r = readers.reader(fmt) if fmt else readers.detect(p)
    rows = r.rows(p, records, ReadOptions(labels, ids, reading or Reading()))
    if not rows and not allow_empty:
        first = next((d for d in ids.dropped if d["path"] == str(p)), None) if ids else None
        if first is not None:  # nothing left to align: the first unknown id is the error
            raise InputError(
                f"{first['why']}: no row of the file names an item and system of this dataset",
                path=p,
                line=first["line"],
                field="item" if first["why"].startswith("unknown item") else "system",
            )
        raise InputError("empty score file: no score rows", path=p)
    return rows
