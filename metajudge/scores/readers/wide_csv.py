"""Wide CSV/TSV score tables (``item, system[, side], <metric>...``) in columns: a
:class:`~metajudge.scores.readers.rows.ScoreTable` inside :class:`~metajudge.scores.readers.rows.ScoreRows` (a
float64 array per metric, no dict per score), read a chunk of lines at a time; label cells or
two headers naming one metric take the row-by-row reader (:func:`read_wide_csv_rows`). An empty
cell is a missing score (:func:`~metajudge.scores.readers.rows.score_cell`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from itertools import islice, repeat
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.bulk import paused_gc
from metajudge.data.formats import response_key
from metajudge.errors import InputError
from metajudge.io import csv_reader
from metajudge.scores.readers.alignment import ID_COLUMNS, Collector, KeyMap
from metajudge.scores.readers.base import Reader, ReadOptions, any_file, csv_records
from metajudge.scores.readers.rows import (
    MISSING_IN_FILE,
    MetricColumn,
    RowIds,
    RowKeys,
    ScoreRow,
    ScoreRows,
    ScoreTable,
    file_signature,
    score_cell,
)
from metajudge.scores.readers.tables import add_wide_row, resolve_ids, row_ids, split_header


def read_wide_csv(p: Path, km: KeyMap | None, labels: bool = False) -> list[ScoreRow]:
    """A wide CSV/TSV table: a :class:`~metajudge.scores.readers.rows.ScoreTable` read a chunk of lines
    at a time (ids resolved once per line, each column's cells converted in bulk); label cells
    (``labels``) or two headers naming one metric take the row-by-row reader."""
    delim = "\t" if p.suffix.lower() == ".tsv" else ","
    with open(p, encoding="utf-8", newline="") as fh:
        reader = csv_reader(fh, p, delimiter=delim)
        header = next(reader, None) or []
        _check_wide_header(p, header)
        names = [split_header(h) for h in header if h not in ID_COLUMNS]
        if labels or len(set(header)) < len(header) or len({m for m, _ in names}) < len(names):
            fh.seek(0)
            return read_wide_csv_rows(p, km, fh, delim, labels)
        with paused_gc():  # many small objects, no cycles (metajudge.bulk)
            if p.stat().st_size >= WideCsv.FRAMES_FROM_BYTES:
                wide = WideCsv(p, km, header)
                with csv_frames(p, delim, header) as frames:  # closed when left early too
                    taken = wide.read_frames(frames)
                if taken:
                    return wide.table(names)
            return WideCsv(p, km, header).read(reader).table(names)


def csv_frames(p: Path, delim: str, header: Sequence[str]) -> Any:
    """The lines of a wide CSV after its header, :attr:`WideCsv.CHUNK` at a time, parsed by
    pandas' C reader (a reader to close: use it as a context manager): id columns as text,
    metric columns as float64 where every cell is a number (an empty cell NaN; any other text
    keeps the column as text). Its float parser rounds as Python's ``float`` does (pandas 3.1
    and later: one correctly rounded parser; before: ``round_trip``, Python's own)."""
    import pandas as pd

    version = tuple(int(v) for v in pd.__version__.split(".")[:2])
    kw = {} if version >= (3, 1) else {"float_precision": "round_trip"}
    return pd.read_csv(
        p,
        sep=delim,
        encoding="utf-8",
        engine="c",
        dtype={h: str for h in header if h in ID_COLUMNS},
        keep_default_na=False,
        na_values={h: [""] for h in header if h not in ID_COLUMNS},
        chunksize=WideCsv.CHUNK,
        **kw,
    )


def _check_wide_header(p: Path, header: Sequence[str]) -> None:
    if "item" not in header and "id" not in header:
        raise InputError(
            "a wide score table needs an 'item' column (and 'system' or 'side')",
            path=p,
            line=1,
            field="item",
        )
    if not [h for h in header if h not in ID_COLUMNS]:
        raise InputError("no metric columns (columns other than item/system/side)", path=p, line=1)


class WideCsv:
    """The lines of a wide CSV in columns: each line's ids resolved (an unknown id dropped and
    counted by the :class:`KeyMap`'s policy), its cells gathered :attr:`CHUNK` lines at a time
    and converted column by column. An error is the one the row-by-row reader raises first:
    the earliest line, and on it the ids, then the cells in column order."""

    CHUNK = 1 << 15
    #: smallest file read by :meth:`read_frames` first (pandas' C reader: ten times the csv
    #: module's speed on numbers, once its import, ~0.3 s, has paid; ``benchmarks/``)
    FRAMES_FROM_BYTES = 1 << 22

    def __init__(self, p: Path, km: KeyMap | None, header: Sequence[str]) -> None:
        self.p, self.km = p, km
        self.header, self.width = list(header), len(header)
        self.id_at = [(h, i) for i, h in enumerate(header) if h in ID_COLUMNS]
        self.fast = _FastIds.of(km, header)
        self.cols = [(h, i) for i, h in enumerate(header) if h not in ID_COLUMNS]
        self.keys = RowKeys([], [])
        self.ids = RowIds(self.keys, [], [])
        self.seen = _Seen(km)  # the responses read
        self.values: list[list[Any]] = [[] for _ in self.cols]  # converted chunks per column
        self.lines = array("q")  # each kept line's number

    def read(self, reader: Iterable[list[str]]) -> WideCsv:
        lineno = 1
        while chunk := list(islice(reader, self.CHUNK)):
            if not self._bulk(chunk, lineno):
                lineno = self._lines(chunk, lineno)
            else:
                lineno += len(chunk)
        return self

    def read_frames(self, frames: Iterable[Any]) -> bool:
        """The lines from pandas' frames (:func:`csv_frames`) when every one is plain: full, its
        ids the dataset's, none read before, every metric cell a finite number or empty. False
        at the first frame that is not (or that pandas cannot parse): the caller then reads
        the file with :meth:`read`, whose line rule counts, drops and names what it must.
        (No line numbers are kept: nothing read this way raises later.)"""
        if self.fast is None:
            return False
        try:
            for df in frames:
                if list(df.columns) != self.header or df[[h for h, _ in self.id_at]].isna().any(
                    axis=None
                ):
                    return False
                values = [df.iloc[:, i].to_numpy() for _, i in self.cols]
                if any(v.dtype.kind not in "fiu" for v in values):
                    return False  # text (NA, a word), or True/False
                values = [v.astype(np.float64, copy=False) for v in values]
                if any(np.isinf(v).any() for v in values):
                    return False
                cols: list[Any] = [None] * self.width
                for _, i in self.id_at:
                    cols[i] = df.iloc[:, i].tolist()
                if not self._take_ids(cols):
                    return False
                for c, v in enumerate(values):
                    self.values[c].append(v)
        except ValueError:  # pandas' parser errors, a bad UTF-8 byte
            return False
        return True

    def _bulk(self, chunk: list[list[str]], lineno: int) -> bool:
        """A chunk of full lines whose ids the dataset has, none read before, in columns (C
        loops: ``zip``, ``map``); False (nothing done) when any line needs the line rule."""
        if self.fast is None or not all(map(self.width.__eq__, map(len, chunk))):
            return False
        cols = list(zip(*chunk, strict=True))
        if not self._take_ids(cols):
            return False
        self.lines.extend(range(lineno + 1, lineno + 1 + len(chunk)))
        self._convert([cols[i] for _, i in self.cols], len(chunk))
        return True

    def _take_ids(self, cols: list[Any]) -> bool:
        """Keep the ids of lines in columns when the dataset has every one and none was read
        before (else False, nothing kept)."""
        got = self.fast.bulk(cols)  # type: ignore[union-attr]
        if got is None:
            return False
        others = got[2] if self.km.pairwise else got[1]  # type: ignore[union-attr]
        if not self.seen.take_all(got[0], others):
            return False
        self.keys.extend(got[0], others)
        ids = self.ids
        ids.systems += got[1]
        ids.sides += got[2]
        return True

    def _lines(self, chunk: list[list[str]], lineno: int) -> int:
        """The chunk line by line (blank lines, short lines, unknown ids, errors)."""
        kept: list[list[Any]] = []
        for row in chunk:
            if not row:  # as csv.DictReader: a blank line is no row and no line number
                continue
            lineno += 1
            if len(row) < self.width:
                row = row + [None] * (self.width - len(row))  # type: ignore[list-item]
            try:
                if self._line(row, lineno):
                    kept.append(row)
            except InputError:
                self._convert([[r[i] for r in kept] for _, i in self.cols], len(kept))
                raise  # (after a bad cell on an earlier line, the first error)
        self._convert([[r[i] for r in kept] for _, i in self.cols], len(kept))
        return lineno

    def _line(self, row: list[Any], lineno: int) -> bool:
        """One line's ids (False: dropped, an id the dataset lacks)."""
        got = self.fast.line(row) if self.fast is not None else None
        if got is None:  # the general rule (and every error it names)
            where = {"path": self.p, "line": lineno}
            got = resolve_ids(self.km, row_ids({h: row[i] for h, i in self.id_at}, where), where)
            if got is None:
                return False
        item, system, side = got
        other = side if side is not None else str(system)
        if not self.seen.take(item, other):
            self._duplicate(response_key(item, other), row, lineno)
        self.keys.append(item, other)
        ids = self.ids
        ids.systems.append(system)
        ids.sides.append(side)
        self.lines.append(lineno)
        return True

    def _duplicate(self, key: str, row: list[Any], lineno: int) -> None:
        """As the row-by-row reader: the line's first cell is read, then the duplicate raises."""
        where = {"path": self.p, "line": lineno}
        h, i = self.cols[0]
        score_cell(row[i], field=h, where=where)
        m = split_header(h)[0]
        first = self.lines[self.ids.keys.index(key)]
        raise InputError(
            f"duplicate score for {key!r} metric {m!r} (first at line {first})", field=m, **where
        )

    def _convert(self, cells: Sequence[Sequence[Any]], n: int) -> None:
        """The last ``n`` kept lines' cells (one sequence per metric column) as floats; the
        first bad cell (by line, then column) raises as :func:`~metajudge.scores.readers.rows.score_cell` says it."""
        bad: list[tuple[int, int, InputError]] = []
        lines = self.lines[len(self.lines) - n :] if n else array("q")
        for c, (h, _) in enumerate(self.cols):
            vals, err = _column_floats(cells[c], h, self.p, lines)
            if err is not None:
                bad.append((err[0], c, err[1]))
            self.values[c].append(vals)
        if bad:
            raise min(bad, key=lambda b: (b[0], b[1]))[2]

    def table(self, names: Sequence[tuple[str, str | None]]) -> ScoreRows:
        cols = [
            MetricColumn(
                m,
                np.concatenate(self.values[c]) if self.values[c] else np.zeros(0),
                file_signature(m, self.p.name),
                direction=d,
                missing=MISSING_IN_FILE,
            )
            for c, (m, d) in enumerate(names)
        ]
        return ScoreRows([ScoreTable(self.ids, cols)])


class _Seen:
    """The responses a score file's lines gave, to find a second line of one: a side of a
    dataset pair marked in an array (no key string a line: 2,000,000 at a million pairs), any
    other response by its key."""

    def __init__(self, km: KeyMap | None) -> None:
        self.pairs = km.sides if km is not None and km.pairwise else {}
        self.marks = np.zeros(2 * len(self.pairs), dtype=bool)
        self.keys: set[str] = set()

    def take_all(self, items: Sequence[str], others: Sequence[str]) -> bool:
        """Mark the responses of the lines ``(items, others)`` read, the items the dataset's
        (pairwise: each with a side ``a``/``b``); False, nothing marked, when one was read
        before or is given twice."""
        if self.pairs:
            pairs = self.pairs
            at = np.fromiter((pairs[i][3] for i in items), dtype=np.int64, count=len(items))
            codes = 2 * at + np.fromiter(map("b".__eq__, others), dtype=bool, count=len(at))
            if self.marks[codes].any() or np.unique(codes).size < codes.size:
                return False
            self.marks[codes] = True
            return True
        keys = list(map(response_key, items, others))
        if len(set(keys)) < len(keys) or not self.keys.isdisjoint(keys):
            return False
        self.keys.update(keys)
        return True

    def take(self, item: str, other: str) -> bool:
        """Mark the response of one line read; False when it was read before."""
        pair = self.pairs.get(item)
        if pair is not None and other in ("a", "b"):
            code = 2 * pair[3] + (other == "b")
            seen, self.marks[code] = bool(self.marks[code]), True
            return not seen
        key = response_key(item, other)
        if key in self.keys:
            return False
        self.keys.add(key)
        return True


class _FastIds:
    """The common tables (pairwise ``item,side``; Likert ``item,system``): a line's (or a
    chunk's) ``(item, system, side)`` when the dataset has them as given, else None (the
    general rule :func:`~metajudge.scores.readers.tables.resolve_ids` then reads the line: unknown ids, errors)."""

    def __init__(self, km: KeyMap, header: Sequence[str]) -> None:
        self.km = km
        self.ii = header.index("item")
        self.other = header.index("side" if km.pairwise else "system")

    @classmethod
    def of(cls, km: KeyMap | None, header: Sequence[str]) -> _FastIds | None:
        if km is None or "item" not in header or len(set(header) & set(ID_COLUMNS)) != 2:
            return None
        return cls(km, header) if ("side" if km.pairwise else "system") in header else None

    def line(self, row: list[Any]) -> tuple[str, str | None, str | None] | None:
        item, other = row[self.ii], row[self.other]
        if not item:
            return None
        if self.km.pairwise:
            got = self.km.sides.get(item)
            if got is None or other not in ("a", "b"):
                return None
            return got[2], got[0] if other == "a" else got[1], other
        return (item, other, None) if other in self.km.systems.get(item, ()) else None

    def bulk(self, cols: list[tuple[Any, ...]]) -> tuple[list[Any], list[Any], list[Any]] | None:
        """``(items, systems, sides)`` of a chunk's columns, or None when a line is not plain."""
        items, other = cols[self.ii], cols[self.other]
        if self.km.pairwise:
            got = list(map(self.km.sides.get, items))
            if None in got or not set(other) <= {"a", "b"} or "" in items:
                return None
            systems = [g[1] if side == "b" else g[0] for g, side in zip(got, other, strict=True)]
            return [g[2] for g in got], systems, list(other)  # (the dataset's id strings)
        empty: set[str] = set()
        have = self.km.systems
        if "" in items or not all(
            map(set.__contains__, map(have.get, items, repeat(empty)), other)
        ):
            return None
        return list(items), list(other), [None] * len(items)


def _column_floats(
    cells: Sequence[Any], field: str, p: Path, lines: Sequence[int]
) -> tuple[Any, tuple[int, InputError] | None]:
    """One column's cells as float64 (NaN: missing), in bulk when every cell is a finite number
    (``float`` and :func:`~metajudge.scores.readers.rows.score_cell` agree there); else cell by cell through :func:`~metajudge.scores.readers.rows.score_cell`, with the
    first cell it refuses (its index and error)."""
    try:
        vals = np.fromiter(map(float, cells), dtype=np.float64, count=len(cells))
    except (TypeError, ValueError):
        vals = None
    if vals is not None and not np.isinf(vals).any():
        return vals, None
    out = np.full(len(cells), np.nan)
    for k, v in enumerate(cells):
        try:
            f = score_cell(v, field=field, where={"path": p, "line": lines[k]})
        except InputError as e:
            return out, (k, e)
        if f is not None:
            out[k] = f
    return out, None


def read_wide_csv_rows(
    p: Path, km: KeyMap | None, fh: Any, delim: str, labels: bool
) -> list[ScoreRow]:
    """The row-by-row reader of a wide CSV (label cells, a metric named by two headers)."""
    col = Collector()
    reader = csv_reader(fh, p, delimiter=delim, dicts=True)
    metrics = [h for h in reader.fieldnames or [] if h not in ID_COLUMNS]
    for lineno, row in enumerate(reader, start=2):
        where = {"path": p, "line": lineno}
        ids = resolve_ids(km, row_ids(row, where), where)
        if ids is None:
            continue
        cells = ((h, row.get(h), h) for h in metrics)
        add_wide_row(col, p, ids, cells, where, f"line {lineno}", labels)
    return col.rows


def _rows(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    km = KeyMap(records, opts.ids) if records is not None else None
    return read_wide_csv(path, km, opts.labels)


READER = Reader(
    "csv",
    "a wide score table (CSV or TSV: item, system or side, a column per metric)",
    (".csv", ".tsv"),
    any_file,
    _rows,
    records=csv_records,
    forcible=True,
)
