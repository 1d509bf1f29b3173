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
    batches_of,
    columns_of,
    is_records_table,
    rows_of,
    table_of,
)
from metajudge.scores.readers.alignment import KeyMap
from metajudge.scores.readers.base import Head, Reader, ReadOptions
from metajudge.scores.readers.tables import by_response, score_rows, wide_rows


def _is_score_table(head: Head) -> bool:
    """A columnar file that is no dataset (canonical records, an Arena battle file)."""
    from metajudge.data.arena import ARENA_COLUMNS

    return not ARENA_COLUMNS <= set(columns_of(head.path)) and not is_records_table(head.path)


def _rows(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> Any:
    km = KeyMap(records, opts.ids) if records is not None else None
    header = columns_of(path)
    if {"metric", "score"} <= set(header):
        return score_rows(path, ((None, r) for r in rows_of(table_of(path))), km, opts.labels)
    return _wide_in_columns(path, km, header, opts.labels) or wide_rows(
        path, rows_of(table_of(path)), km, opts.labels
    )


def _wide_in_columns(path: Path, km: KeyMap | None, header: list[str], labels: bool) -> Any:
    """A wide table read in columns (a :class:`~metajudge.scores.readers.rows.ScoreTable`, as a
    wide CSV's: :meth:`~metajudge.scores.readers.wide_csv.WideCsv.read_frames`, one record batch
    a frame) when every row is plain (ids the dataset's, read once; metric columns of numbers,
    finite or null); else None, and the row-by-row reader reads it (and names what it must).
    Label cells and a metric named by two headers take the row-by-row reader too."""
    from metajudge.scores.readers.alignment import ID_COLUMNS
    from metajudge.scores.readers.tables import split_header
    from metajudge.scores.readers.wide_csv import WideCsv

    names = [split_header(h) for h in header if h not in ID_COLUMNS]
    if labels or len({m for m, _ in names}) < len(names):
        return None
    wide = WideCsv(path, km, header)
    frames = (b.to_pandas() for b in batches_of(path))
    return wide.table(names) if wide.read_frames(frames) else None


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
