"""Columnar files (Parquet, Arrow IPC/Feather): what a dataset or score file in one holds, read
column by column with pyarrow (the ``parquet`` extra; imported only when such a file is read).

A columnar dataset holds the canonical record's fields as columns (docs/own-data.md): ``id``,
``input`` (a struct: ``question``, ``reference``, ``context``, ``documents``), ``a`` and ``b``
(structs: ``system``, ``response``) and ``labels`` for pairwise records, ``system``,
``response`` and ``scores`` for per-response ones (a struct of one list per dimension, or a map),
``meta`` (a struct or map). Flat columns say the same: ``question``, ``reference``, ``context``,
``documents`` go into ``input``; ``system_a``/``response_a`` and ``system_b``/``response_b``
into ``a`` and ``b``. A null field of a struct is an absent field (a Parquet struct has every
field in every row). The card is the schema's ``metajudge.card`` metadata (JSON), else it is
inferred as for a JSONL file without a card line. :func:`table_of` is that table.

:func:`columnar_objects` gives the rows as canonical records (JSON objects), as
:func:`~metajudge.data.formats.iter_jsonl_objects` gives a JSONL file's lines, for the loader's
pass (:func:`metajudge.data.validation.dataset_objects`), one record batch
(:data:`RECORD_BATCH_ROWS` rows) after another. A text-free load (``texts`` False, where no metric
reads the texts) turns no text of a pairwise table into a Python string: each batch's inputs
are dropped and its responses' texts become their word counts in Arrow
(:func:`word_counts`), then nulls.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError

#: the suffixes of columnar files
COLUMNAR_SUFFIXES = (".parquet", ".arrow", ".feather", ".ipc")
#: the schema metadata key holding a dataset's card (JSON)
CARD_KEY = b"metajudge.card"
#: flat columns and the field of the canonical record they fill
_FLAT = {
    "question": ("input", "question"),
    "reference": ("input", "reference"),
    "context": ("input", "context"),
    "documents": ("input", "documents"),
    "system_a": ("a", "system"),
    "response_a": ("a", "response"),
    "system_b": ("b", "system"),
    "response_b": ("b", "response"),
}
_STRUCTS = ("input", "a", "b", "labels", "scores", "meta")
#: rows of one record batch read at a time
RECORD_BATCH_ROWS = 8192
#: the read buffer of a Parquet column chunk (:func:`batches_of`: 200,000 Arena battles read in
#: 270 MB peak RSS where whole row groups took 800 MB, and 1.5 s CPU where they took 2.5 s)
PARQUET_BUFFER = 1 << 20
_INPUT_COLUMNS = ("input", "question", "reference", "context", "documents")


@functools.cache
def _space_table() -> Any:
    """Per byte: 1 for an ASCII character ``str.split()`` splits on, else 0."""
    import numpy as np

    return np.array([b < 0x80 and chr(b).isspace() for b in range(256)], dtype=np.uint8)


def is_columnar(path: str | Path) -> bool:
    """Is ``path`` a Parquet or Arrow IPC file (by its suffix)?"""
    return Path(path).suffix.lower() in COLUMNAR_SUFFIXES


def pyarrow() -> Any:
    """The ``pyarrow`` module, or an error saying how to install it."""
    try:
        import pyarrow as pa
    except ImportError as e:  # pragma: no cover - the dev extra installs it
        raise InputError(
            "reading Parquet or Arrow files needs pyarrow: pip install 'metajudge[parquet]'"
        ) from e
    return pa


def table_of(path: str | Path, columns: Sequence[str] | None = None) -> Any:
    """The pyarrow table of a Parquet or Arrow IPC (Feather) file, only ``columns`` when given;
    an unreadable file is an :class:`~metajudge.errors.InputError` naming it."""
    pa = pyarrow()
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=p)
    cols = list(columns) if columns is not None else None
    try:
        if p.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(p, columns=cols)
        from pyarrow import feather

        return feather.read_table(p, columns=cols)
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"not a readable {p.suffix[1:]} file: {e}", path=p) from e


def schema_of(path: str | Path) -> Any:
    """The schema of a columnar file (its columns and metadata), without reading its rows."""
    pa = pyarrow()
    p = Path(path)
    try:
        if p.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_schema(p)
        with pa.memory_map(str(p)) as src:
            return pa.ipc.open_file(src).schema
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"not a readable {p.suffix[1:]} file: {e}", path=p) from e


def columns_of(path: str | Path) -> list[str]:
    """A columnar file's column names."""
    return list(schema_of(path).names)


def is_records_table(path: str | Path) -> bool:
    """Is ``path`` a columnar file of canonical records (columns ``id`` and ``labels`` or
    ``scores``), a dataset rather than a score table?"""
    if not is_columnar(path) or not Path(path).is_file():
        return False
    cols = set(columns_of(path))
    return "id" in cols and bool({"labels", "scores"} & cols)


def rows_of(table: Any) -> Iterator[dict[str, Any]]:
    """A table's rows as dicts, built column by column (one Python list per column)."""
    names = table.column_names
    cols = [table.column(n).to_pylist() for n in names]
    for values in zip(*cols, strict=True):
        yield dict(zip(names, values, strict=True))


def batches_of(path: str | Path, columns: Sequence[str] | None = None) -> Iterator[Any]:
    """A columnar file's record batches (at most :data:`RECORD_BATCH_ROWS` rows each; Parquet read
    one batch at a time, its column chunks streamed through a buffer of
    :data:`PARQUET_BUFFER` bytes, not read whole a row group at a time: a row group of 100,000
    Arena battles holds 300 MB of conversations), only ``columns`` when given. Once read, the
    memory Arrow's pool keeps for reuse is given back (the read's buffers would otherwise stay
    in the process for the rest of the run)."""
    p = Path(path)
    pa = pyarrow()
    try:
        if p.suffix.lower() != ".parquet":
            yield from table_of(p, columns).to_batches(RECORD_BATCH_ROWS)
            return
        import pyarrow.parquet as pq

        try:
            f = pq.ParquetFile(p, pre_buffer=False, buffer_size=PARQUET_BUFFER)
            cols = list(columns) if columns is not None else None
            yield from f.iter_batches(batch_size=RECORD_BATCH_ROWS, columns=cols, use_threads=False)
        except (pa.ArrowException, OSError) as e:
            raise InputError(f"not a readable {p.suffix[1:]} file: {e}", path=p) from e
    finally:
        pa.default_memory_pool().release_unused()


def columnar_objects(path: str | Path, texts: bool = True) -> Iterator[tuple[int, Any]]:
    """``(row, object)`` of each row of a columnar dataset as a canonical record, the card
    (where the schema holds one) first, as row 0, like a JSONL file's card line; ``texts``
    False: a pairwise table's rows without texts, their responses' word counts under
    :data:`~metajudge.data.formats.WORDS` (module docstring)."""
    from metajudge.data.formats import WORDS

    meta = schema_of(path).metadata or {}
    if CARD_KEY in meta:
        yield 0, {"card": json.loads(meta[CARD_KEY])}
    i = 0
    for batch in batches_of(path):
        words = None
        if not texts and ({"a", "b"} <= set(batch.schema.names)):
            batch, words = _without_texts(batch)
        for k, row in enumerate(rows_of(batch)):
            obj = canonical(row)
            if words is not None:
                obj[WORDS] = (words[0][k], words[1][k])
            i += 1
            yield i, obj
    batch = words = None  # the last batch's buffers, given back with the others
    pyarrow().default_memory_pool().release_unused()


def _without_texts(batch: Any) -> tuple[Any, tuple[list[Any], list[Any]]]:
    """A pairwise batch without its texts: every string of the input's and the responses'
    columns an empty string (:func:`_blanked`: nulls, types and the rest kept, so the record's
    checks see what they saw), and the word counts of the ``a`` and ``b`` responses."""
    cols = {n: batch.column(n) for n in batch.schema.names}
    words = []
    for side in ("a", "b"):
        text = cols.get(f"response_{side}")
        arr = cols[side]
        struct = pyarrow().types.is_struct(arr.type)
        if text is None and struct and arr.type.get_field_index("response") >= 0:
            text = arr.field("response")
        words.append(word_counts(text) if text is not None else [None] * len(arr))
    for n in (*_INPUT_COLUMNS, "a", "b", "response_a", "response_b"):
        if n in cols:
            cols[n] = _blanked(cols[n], keep=("system",))
    return pyarrow().RecordBatch.from_pydict(cols), (words[0], words[1])


def _blanked(arr: Any, keep: Sequence[str] = ()) -> Any:
    """``arr`` with every string an empty string (nulls kept), through structs and lists; a
    struct's fields ``keep`` as they are."""
    pa = pyarrow()
    import pyarrow.compute as pc

    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pc.if_else(pc.is_valid(arr), pa.scalar("", t), pa.scalar(None, t))
    if pa.types.is_struct(t):
        fields = [t.field(j) for j in range(t.num_fields)]
        kids = [
            arr.field(f.name) if f.name in keep else _blanked(arr.field(f.name)) for f in fields
        ]
        return pa.StructArray.from_arrays(kids, fields=fields, mask=arr.is_null())
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        if arr.null_count:
            return arr  # a list with nulls: kept as it is
        kind = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        return kind.from_arrays(arr.offsets, _blanked(arr.values))
    return arr


def word_counts(text: Any) -> list[int | None]:
    """``len(t.split())`` of each string of an Arrow array (None: null, or not a string
    column): :func:`word_count_array`'s."""
    pa = pyarrow()
    if isinstance(text, pa.ChunkedArray):
        return [w for chunk in text.chunks for w in word_counts(chunk)]
    if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)):
        return [None] * len(text)
    counts, nulls = word_count_array(text)
    out: list[int | None] = counts.tolist()
    for j in nulls.nonzero()[0].tolist():
        out[j] = None
    return out


def word_count_array(text: Any) -> tuple[Any, Any]:
    """``(words, nulls)`` of a string array: ``len(t.split())`` of each string (int64; 0 where
    null) and where it is null, counted on the array's UTF-8 bytes
    (:func:`metajudge.data.word_pass.count_words`, no Python string made) for ASCII texts, by
    ``str.split`` for the others (Unicode spaces)."""
    import numpy as np

    from metajudge.data.word_pass import count_words

    pa = pyarrow()
    n = len(text)
    nulls = text.is_null().to_numpy(zero_copy_only=False)
    if n == 0:
        return np.zeros(0, dtype=np.int64), nulls
    wide = np.int64 if pa.types.is_large_string(text.type) else np.int32
    _, offs, data = text.buffers()
    at = np.frombuffer(offs, dtype=wide, count=n + 1, offset=text.offset * wide().itemsize)
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    counts = count_words(raw, at.astype(np.int64), _space_table())
    for j in np.flatnonzero(counts == -1).tolist():
        counts[j] = len(text[j].as_py().split())
    counts[nulls] = 0
    return counts, nulls


def canonical(row: Mapping[str, Any]) -> dict[str, Any]:
    """A table row as a canonical record: flat columns folded into ``input``/``a``/``b``, null
    struct fields and null columns dropped (absent)."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if v is None:
            continue
        if k in _FLAT:
            outer, inner = _FLAT[k]
            out.setdefault(outer, {})[inner] = v
        elif k in _STRUCTS:
            m = dict(v) if isinstance(v, list) else v  # a map column: [(key, value), ...]
            got = {a: b for a, b in m.items() if b is not None} if isinstance(m, Mapping) else m
            if isinstance(got, dict) and isinstance(out.get(k), dict):
                got = {**got, **out[k]}
            out[k] = got
        else:
            out[k] = v
    return out
