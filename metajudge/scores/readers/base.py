"""What every score-file reader is: a :class:`Reader` (how it recognises a file, how it reads
it), the :class:`Head` of a file it recognises by, and :class:`ReadOptions` (how the rows are
joined to a dataset). The registry of readers is :mod:`metajudge.scores.readers`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from metajudge.io import csv_reader, read_json
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.scores.readers.rows import ScoreRow

#: ``--epochs``: a framework's epochs or repeats averaged into one score per item (``mean``) or
#: kept, one column per epoch (``each``: ``scorer@1``, ``scorer@2`` …)
EPOCH_RULES = ("mean", "each")


@dataclass(frozen=True)
class Reading:
    """How a framework's file is joined to a dataset: ``id_field`` (the field carrying the item
    id, when it is not the obvious one), ``system`` (overrides the system the file implies),
    ``epochs`` (:data:`EPOCH_RULES`)."""

    id_field: str | None = None
    system: str | None = None
    epochs: str = "mean"


@dataclass(frozen=True)
class ReadOptions:
    """How a file's rows meet the dataset: ``labels`` (categorical data: a non-numeric cell is a
    label, not an error), ``ids`` (the rule for ids the dataset lacks,
    :class:`~metajudge.scores.readers.alignment.IdPolicy`; None refuses them), ``reading``
    (:class:`Reading`)."""

    labels: bool = False
    ids: IdPolicy | None = None
    reading: Reading = field(default_factory=Reading)


class Head:
    """What a reader recognises a file by: its ``path`` and ``suffix`` (lower case) and, read
    once when a reader asks, the JSON it holds (:attr:`json`), its first line
    (:attr:`first_line`), CSV/TSV header (:attr:`header`) or first JSONL object
    (:attr:`first_object`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.suffix = path.suffix.lower()

    @cached_property
    def json(self) -> Any:
        return read_json(self.path)

    @cached_property
    def first_line(self) -> str:
        with open(self.path, encoding="utf-8", newline="") as fh:
            return fh.readline()

    @cached_property
    def header(self) -> tuple[str, ...]:
        delim = "\t" if self.suffix == ".tsv" else ","
        return tuple(next(csv_reader([self.first_line], self.path, delimiter=delim), []))

    @cached_property
    def first_object(self) -> Any:
        from metajudge.data.formats import iter_jsonl_objects

        return next((o for _, o in iter_jsonl_objects(self.path)), None)


#: ``rows(path, records, options)``: the file's score rows (checked against ``records``, the
#: dataset's, when given)
RowsFn = Callable[[Path, Sequence[Any] | None, ReadOptions], list[ScoreRow]]


@dataclass(frozen=True)
class Reader:
    """One score-file format.

    ``name``: the format's name (``FORMAT:PATH`` names it when ``forcible``); ``what``: one line
    for people; ``suffixes``: the file names it reads; ``sniff(head)``: does a file of one of
    those suffixes hold this format (:class:`Head`)? ``rows``: :data:`RowsFn`; ``records(path)``:
    the file's plain records, what ``data doctor`` describes; ``judged(path, reading)``: a judge
    framework's scores before they meet a dataset (``(FileInfo, [Judged])``,
    :mod:`metajudge.scores.readers.framework`; None for other formats); ``labelled``: the file
    holds the human labels too, so it is also the dataset (``--input`` the same file)."""

    name: str
    what: str
    suffixes: tuple[str, ...]
    sniff: Callable[[Head], bool]
    rows: RowsFn
    records: Callable[[Path], list[Mapping[str, Any]]] | None = None
    judged: Callable[[Path, Reading], tuple[Any, list[Any]]] | None = None
    forcible: bool = False
    labelled: bool = False


def any_file(head: Head) -> bool:
    """The sniff of a suffix's plain table, asked last: any file of its suffixes."""
    return True


def csv_records(path: Path) -> list[Mapping[str, Any]]:
    """A CSV (TSV: ``.tsv``) file's lines as dicts by header."""
    with open(path, encoding="utf-8", newline="") as fh:
        delim = "\t" if path.suffix.lower() == ".tsv" else ","
        return list(csv_reader(fh, path, delimiter=delim, dicts=True))


def jsonl_records(path: Path) -> list[Mapping[str, Any]]:
    """A JSONL file's objects."""
    from metajudge.data.formats import iter_jsonl_objects

    return [o for _, o in iter_jsonl_objects(path) if isinstance(o, Mapping)]


def json_records(path: Path) -> list[Mapping[str, Any]]:
    """A JSON file's list of objects (none when it holds no list)."""
    data = read_json(path)
    return [o for o in data if isinstance(o, Mapping)] if isinstance(data, list) else []
