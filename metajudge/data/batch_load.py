"""A text-free load of a pairwise file in Arrow record batches, all or nothing.

Where no metric reads the texts (``texts`` False) and the file is a canonical JSONL file with a
pairwise card, or a columnar table of the canonical columns (:mod:`metajudge.data.columnar`),
its records are built a record batch at a time (:meth:`FastRecords.batch
<metajudge.data.fast_records.FastRecords.batch>`): a JSONL file parsed by Arrow's JSON reader
(C++, on the threads Arrow uses, against a schema of exactly the common shape: ``id``,
``input.question``, ``a``/``b`` with ``system`` and ``response``, ``labels`` with one list of
numbers per card dimension), the checks of the loader's pass made on the columns, the
responses' word counts counted on the bytes (:func:`~metajudge.data.columnar.word_counts`), no
text made a Python string. A columnar Arena battle file's records are built from its columns
(:func:`metajudge.data.arena.lean_records`). 200,000 realistic pairs (prompts ~300, responses ~1,200 characters)
load in about a third of the CPU of the line-by-line pass (``benchmarks/bench_cli_scale.py
--records realistic``).

Anything this route does not recognise gives ``None`` and the file is read again by the
line-by-line pass (:func:`metajudge.data.validation.check_file`), which finds and words every
problem as before: an Arrow parse error (malformed JSON, a field outside the schema, a number
where a string is, a duplicate key, a lone surrogate), another row count than the file's lines
(blank lines, two values on a line), bytes that are not UTF-8, a null (absent in a table, absent
or null in JSON: the two are kept apart by the line pass alone), a label outside the card's scale
or not finite, a label list of an annotator count the card does not state or without a label,
an empty or repeated id. So a file it loads is one the line pass accepts, with equal records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from metajudge.data.batch_columns import SIDE_FIELDS

#: the bytes of JSON the reader parses at a time (about 1,200 realistic pairs)
JSON_BLOCK = 4 << 20


def batch_load(
    path: str | Path, card: Any, progress: Callable[[int], None] | None = None
) -> tuple[Any, list[Any]] | None:
    """``(card, records)`` of a text-free load of ``path`` (module docstring), or ``None``:
    read it line by line. ``card``: the one given for a file without its own;
    ``progress``: called with the records read so far, after each batch."""
    from metajudge.data import arena
    from metajudge.data.columnar import pyarrow
    from metajudge.data.formats import DatasetCard
    from metajudge.data.validation import Rules

    p = Path(path)
    if not p.is_file():
        return None
    arena_file = arena.is_arena(p)
    src = (DatasetCard.from_dict(arena.CARD), None) if arena_file else _source(p, card)
    if src is None:
        return None
    from metajudge.data.fast_records import FastRecords

    fast = FastRecords(Rules.of(src[0]), texts=False)
    pa = pyarrow()
    try:
        records = arena.lean_records(p, fast) if arena_file else _built(src[1], fast, progress)
    except (pa.ArrowException, OSError, ValueError):
        return None
    finally:
        pa.default_memory_pool().release_unused()
    if not records or len({r.id for r in records}) != len(records):
        return None
    return src[0], records


def _built(batches: Iterator[Any], fast: Any, progress: Any) -> list[Any] | None:
    """The records of ``batches`` (:meth:`FastRecords.batch
    <metajudge.data.fast_records.FastRecords.batch>`), or None where one is declined."""
    records: list[Any] = []
    for batch in batches:
        got = fast.batch(batch)
        if got is None:
            return None
        records += got
        if progress is not None:
            progress(len(records))
    return records


def _source(path: Path, card: Any) -> tuple[Any, Iterator[Any]] | None:
    """The pairwise card and record batches of ``path``, or ``None`` (not this route's)."""
    from metajudge.data import columnar

    if columnar.is_columnar(path):
        meta = columnar.schema_of(path).metadata or {}
        if columnar.CARD_KEY in meta:
            card = _card(json.loads(meta[columnar.CARD_KEY]))
        return None if not _pairwise(card) else (card, columnar.batches_of(path))
    if path.suffix.lower() != ".jsonl":
        return None
    header, start = _header(path)
    if header is not None:
        card = _card(header)
    if not _pairwise(card):
        return None
    return card, _json_batches(path, card, start)


def _pairwise(card: Any) -> bool:
    return card is not None and card.kind == "pairwise" and bool(card.dimensions)


def _card(obj: Any) -> Any:
    """The card of a header's ``card`` object, or None where it has an error."""
    from metajudge.data.formats import DatasetCard
    from metajudge.data.validation import card_errors

    return None if card_errors(obj) else DatasetCard.from_dict(obj)


def _header(path: Path) -> tuple[Any, int]:
    """The ``card`` object of a JSONL file's first line (None: no card line) and the byte
    offset where its records begin."""
    with open(path, "rb") as fh:
        first = fh.readline()
    try:
        obj = json.loads(first)
    except ValueError:
        return None, 0
    if isinstance(obj, dict) and set(obj) == {"card"}:
        return obj["card"], len(first)
    return None, 0


def _json_batches(path: Path, card: Any, start: int) -> Iterator[Any]:
    """The record batches of a JSONL file's records (from byte ``start``), parsed by Arrow
    against the common pairwise shape; ``ValueError`` where the rows are not the file's
    lines (a blank line, two values on one)."""
    from metajudge.data.columnar import pyarrow

    pa = pyarrow()
    import pyarrow.json as pj

    text, side = pa.string(), pa.struct([(f, pa.string()) for f in SIDE_FIELDS])
    schema = pa.schema(
        [
            ("id", text),
            ("input", pa.struct([("question", text)])),
            ("a", side),
            ("b", side),
            ("labels", pa.struct([(d, pa.list_(pa.float64())) for d in card.dimensions])),
        ]
    )
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    rows = 0
    with pa.OSFile(str(path)) as f:
        f.seek(start)
        reader = pj.open_json(
            f, read_options=pj.ReadOptions(block_size=JSON_BLOCK), parse_options=options
        )
        for batch in reader:
            rows += batch.num_rows
            yield batch
    if rows != _lines(path, start):
        raise ValueError("the rows are not the file's lines")


def _lines(path: Path, start: int) -> int:
    """The lines of ``path`` from byte ``start`` (a last line without a newline counts)."""
    n, last = 0, b"\n"
    with open(path, "rb") as fh:
        fh.seek(start)
        while chunk := fh.read(1 << 24):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")
