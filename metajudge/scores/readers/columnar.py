"""Score tables in Parquet or Arrow IPC (Feather) files, read column by column with pyarrow
(:mod:`metajudge.data.columnar`): score rows (columns ``metric`` and ``score`` with the ids,
as a JSONL score file's rows, :func:`~metajudge.scores.readers.tables.score_rows`) or a wide
table (``item``, ``system``/``side``, one column per metric,
:func:`~metajudge.scores.readers.tables.wide_rows`). A row's field in messages is
``[row].column``, rows counted from 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data.columnar import (
    COLUMNAR_SUFFIXES,
    columns_of,
    is_records_table,
    rows_of,
    table_of,
)
from metajudge.scores.readers.alignment import KeyMap
from metajudge.scores.readers.base import Head, Reader, ReadOptions
from metajudge.scores.readers.rows import ScoreRow
from metajudge.scores.readers.tables import by_response, score_rows, wide_rows


def _is_score_table(head: Head) -> bool:
    """A columnar file that is no dataset (canonical records, an Arena battle file)."""
    from metajudge.data.arena import ARENA_COLUMNS

    return not ARENA_COLUMNS <= set(columns_of(head.path)) and not is_records_table(head.path)


def _rows(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    km = KeyMap(records, opts.ids) if records is not None else None
    rows = rows_of(table_of(path))
    if {"metric", "score"} <= set(columns_of(path)):
        return score_rows(path, ((None, r) for r in rows), km, opts.labels)
    return wide_rows(path, rows, km, opts.labels)


def _records(path: Path) -> list[Mapping[str, Any]]:
    """What ``data doctor`` describes: the rows (score rows: one record per response)."""
    rows = list(rows_of(table_of(path)))
    return by_response(rows) if {"metric", "score"} <= set(columns_of(path)) else rows


READER = Reader(
    "parquet",
    "a score table in Parquet or Arrow IPC: score rows (item, system, metric, score) or wide",
    COLUMNAR_SUFFIXES,
    _is_score_table,
    _rows,
    records=_records,
    forcible=True,
)
