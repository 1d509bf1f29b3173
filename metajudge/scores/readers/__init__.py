"""The one registry of score-file formats: every file ``--scores`` and ``data doctor`` read is
read by one :class:`~metajudge.scores.readers.base.Reader` of :data:`READERS`.

A reader names the suffixes it reads and recognises a file of them by content
(``sniff(head)``, :class:`~metajudge.scores.readers.base.Head`); :func:`detect` asks the readers
in :data:`READERS`' order, the first that recognises the file reads it (``FORMAT:PATH`` forces
one of :data:`FORCIBLE`). The formats, one module per format or family:

- judge frameworks (:mod:`~metajudge.scores.readers.framework`): inspect_ai eval logs
  (:mod:`~metajudge.scores.readers.inspect_log`), promptfoo results
  (:mod:`~metajudge.scores.readers.promptfoo`), deepeval test runs
  (:mod:`~metajudge.scores.readers.deepeval`), ragas tables (:mod:`~metajudge.scores.readers.ragas`);
- upstream datasets' score files (:mod:`~metajudge.scores.readers.upstream_files`): RAGChecker,
  LFTQA-Eval, HANNA; released judge probabilities (:mod:`~metajudge.scores.readers.released_probs`);
  judges' raw replies in a JUDGE-BENCH file (:mod:`~metajudge.scores.readers.judge_bench`);
- score tables (:mod:`~metajudge.scores.readers.tables`, :mod:`~metajudge.scores.readers.wide_csv`):
  JSONL score rows, wide JSON and CSV/TSV tables; Parquet and Arrow IPC tables
  (:mod:`~metajudge.scores.readers.columnar`).

Every reader reads a score by one rule (:func:`metajudge.scores.readers.rows.score_cell`: empty, null
and NaN are a missing score, counted; infinite and non-numeric ones are refused) and aligns its
rows with the dataset by :class:`~metajudge.scores.readers.alignment.KeyMap`.
"""

from __future__ import annotations

from pathlib import Path

from metajudge.errors import InputError
from metajudge.scores.readers import (
    columnar,
    deepeval,
    inspect_log,
    judge_bench,
    promptfoo,
    ragas,
    released_probs,
    tables,
    upstream_files,
    wide_csv,
)
from metajudge.scores.readers.base import Head, Reader

#: every score-file reader, by format name, in the order :func:`detect` asks them (the content
#: checks first, the plain tables of each suffix last)
READERS: dict[str, Reader] = {
    r.name: r
    for r in (
        inspect_log.READER,
        promptfoo.READER,
        deepeval.READER,
        upstream_files.HANNA,
        ragas.READER,
        upstream_files.RAGCHECKER,
        upstream_files.LFTQA,
        released_probs.READER,
        judge_bench.READER,
        tables.JSONL,
        wide_csv.READER,
        tables.WIDE_JSON,
        columnar.READER,
    )
}

#: the formats ``FORMAT:PATH`` may force: the judge frameworks' and the plain tables
FORCIBLE: tuple[str, ...] = tuple(n for n, r in READERS.items() if r.forcible)

#: the suffixes of score files, as the readers declare them
SUFFIXES: tuple[str, ...] = tuple(dict.fromkeys(s for r in READERS.values() for s in r.suffixes))


def reader(name: str) -> Reader:
    """The reader of format ``name`` (an :class:`~metajudge.errors.InputError` when unknown)."""
    if name not in READERS:
        raise InputError(f"unknown score-file format {name!r} (known: {', '.join(READERS)})")
    return READERS[name]


def detect(path: str | Path) -> Reader:
    """The reader of the file ``path``: the first of :data:`READERS` that reads its suffix and
    recognises its content."""
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=p)
    head = Head(p)
    for r in READERS.values():
        if head.suffix in r.suffixes and r.sniff(head):
            return r
    raise InputError(
        f"unknown score-file type {head.suffix!r} (expected {', '.join(SUFFIXES)})", path=p
    )
