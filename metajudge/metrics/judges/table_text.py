"""Table serialisation for LLM judges (MT-RAIG, Seo et al. 2025, Appendix B.4).

The paper flattens each table as::

    [TITLE] title [HEADER] col 1 | col2 | ... [ROW 1] cell 1,1 | cell 1,2 | ... [ROW 2] cell 2,1 | ...

and, for the table-aware decomposition step (Table 15), gives the decomposer only the table
*schemas*: the title and the header. Several tables are numbered ``Table 1: …``, one per line
(the layout of the paper's Table 28).

Long tables: at most ``max_rows`` rows per table are serialised (default
:data:`DEFAULT_MAX_ROWS`); the rows dropped are recorded in :class:`SerializedTables` so a metric
can put the truncation into its result details. The paper states no limit (its judge had a 128k
context); the embedded small models have a few thousand tokens, hence the limit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from metajudge.data.formats import Input, Table

#: Rows kept per table by default. MT-RAIG Bench tables average 10.54 rows (paper Table 2), so
#: 30 keeps almost every table whole while bounding the prompt for small-context models.
DEFAULT_MAX_ROWS = 30


@dataclass(frozen=True)
class SerializedTables:
    """Serialised tables plus what was cut: ``rows_total[i]`` rows of which ``rows_kept[i]`` kept."""

    text: str
    rows_total: tuple[int, ...]
    rows_kept: tuple[int, ...]

    @property
    def truncated(self) -> bool:
        return any(k < t for k, t in zip(self.rows_kept, self.rows_total, strict=True))

    def truncation(self) -> dict[str, object]:
        """The truncation record that goes into result details."""
        return {
            "tables": len(self.rows_total),
            "rows_total": sum(self.rows_total),
            "rows_kept": sum(self.rows_kept),
            "truncated": self.truncated,
        }


def _cell(value: object) -> str:
    s = "" if value is None else str(value)
    return " ".join(s.split())  # one line per table: newlines/tabs inside cells become spaces


def serialize_table(table: Table, *, max_rows: int | None = DEFAULT_MAX_ROWS) -> tuple[str, int]:
    """One table as ``[TITLE] t [HEADER] a | b [ROW 1] x | y ...``; returns (text, rows kept).

    >>> t = Table("Sales", ("Year", "Units"), (("2020", "10"), ("2021", "15")))
    >>> serialize_table(t)
    ('[TITLE] Sales [HEADER] Year | Units [ROW 1] 2020 | 10 [ROW 2] 2021 | 15', 2)
    >>> serialize_table(t, max_rows=1)
    ('[TITLE] Sales [HEADER] Year | Units [ROW 1] 2020 | 10', 1)
    """
    rows = table.rows if max_rows is None else table.rows[: max(0, max_rows)]
    parts = [
        f"[TITLE] {_cell(table.title)}",
        "[HEADER] " + " | ".join(_cell(h) for h in table.header),
    ]
    parts += [f"[ROW {i}] " + " | ".join(_cell(c) for c in row) for i, row in enumerate(rows, 1)]
    return " ".join(parts), len(rows)


def serialize_schema(table: Table) -> str:
    """Title and header only (the decomposer's input in MT-RAIG Table 15).

    >>> serialize_schema(Table("Sales", ("Year", "Units"), ()))
    '[TITLE] Sales [HEADER] Year | Units'
    """
    return f"[TITLE] {_cell(table.title)} [HEADER] " + " | ".join(_cell(h) for h in table.header)


def _number(lines: list[str]) -> str:
    if len(lines) == 1:
        return lines[0]
    return "\n".join(f"Table {i}: {line}" for i, line in enumerate(lines, 1))


def serialize_tables(
    tables: Sequence[Table],
    *,
    max_rows: int | None = DEFAULT_MAX_ROWS,
    max_chars: int | None = None,
) -> SerializedTables:
    """All tables, one per line, numbered when there are several; truncation recorded.

    ``max_chars`` bounds the whole text (a small model's context): the per-table row limit is
    lowered step by step (×3/4) until the text fits or one row per table is left.

    >>> a = Table("A", ("x",), (("1",), ("2",), ("3",)))
    >>> s = serialize_tables([a, Table("B", ("y",), (("9",),))], max_rows=2)
    >>> print(s.text)
    Table 1: [TITLE] A [HEADER] x [ROW 1] 1 [ROW 2] 2
    Table 2: [TITLE] B [HEADER] y [ROW 1] 9
    >>> s.truncation()
    {'tables': 2, 'rows_total': 4, 'rows_kept': 3, 'truncated': True}
    >>> serialize_tables([a], max_chars=35).rows_kept
    (1,)
    """
    limit = max_rows
    while True:
        lines, kept = [], []
        for t in tables:
            text, k = serialize_table(t, max_rows=limit)
            lines.append(text)
            kept.append(k)
        out = SerializedTables(_number(lines), tuple(len(t.rows) for t in tables), tuple(kept))
        longest = max(kept, default=0)
        if max_chars is None or len(out.text) <= max_chars or longest <= 1:
            return out
        limit = max(1, min(longest - 1, longest * 3 // 4))


def serialize_schemas(tables: Sequence[Table]) -> str:
    """Every table's schema (title + header), one per line, numbered when there are several."""
    return _number([serialize_schema(t) for t in tables])


_TITLE = re.compile(r"^\s*Table Title:\s*(.*)$", re.IGNORECASE)


def parse_text_table(text: str) -> Table | None:
    """Read the plain-text table layout of LFTQA-Eval-derived data back into a :class:`Table`.

    The layout is ``Table Title: t`` / ``Table:`` / a ``|``-separated header line / one
    ``|``-separated line per row. Returns ``None`` when ``text`` is not in that layout.

    >>> t = parse_text_table("Table Title: Records\\nTable:\\nRace | Time\\n50 m | 26.76\\n- | -\\n")
    >>> t.title, t.header, t.rows
    ('Records', ('Race', 'Time'), (('50 m', '26.76'), ('-', '-')))
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    title = ""
    m = _TITLE.match(lines[0])
    if m:
        title = m.group(1).strip()
        lines = lines[1:]
    if lines and lines[0].strip().lower() == "table:":
        lines = lines[1:]
    if not lines or "|" not in lines[0]:
        return None
    header = tuple(c.strip() for c in lines[0].split("|"))
    rows = tuple(tuple(c.strip() for c in ln.split("|")) for ln in lines[1:])
    return Table(title, header, rows)


def tables_of(inp: Input | None) -> tuple[Table, ...] | None:
    """The tables of an input: ``input.tables``, else a table laid out as text in ``input.context``."""
    if inp is None:
        return None
    if inp.tables:
        return tuple(inp.tables)
    if inp.context:
        t = parse_text_table(inp.context)
        if t is not None:
            return (t,)
    return None
