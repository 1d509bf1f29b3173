"""Judge frameworks' files (inspect_ai, promptfoo, deepeval, ragas): what each framework's
reader gives (:class:`Judged` scores and a :class:`FileInfo`) and how those scores become score
rows of a dataset (:func:`framework_rows`); :func:`framework_reader` makes a framework's
:class:`~metajudge.scores.readers.base.Reader`.

The item is the id the file records (``--id-field`` names another field); an id that is a
response key of the dataset (``item::system``, ``item::a``) names the response itself. The
system is ``--system``, else the one the file implies (inspect_ai: ``eval.model``; promptfoo:
the provider), else — for files that record none (ragas, deepeval) — the item's one system in
the dataset. Rows for ids the dataset lacks follow the :class:`~metajudge.scores.readers.alignment.IdPolicy`
(dropped and counted, or refused). Epochs are averaged (``--epochs mean``, the default) or kept as
one column per epoch (``each``); the rule is in each row's signature and details. The judge's
explanation is kept in ``details.explanation`` (report.html shows it beside the human label).
A score is read by :func:`metajudge.scores.readers.rows.score_cell`'s rule, as in every score file: an
absent, null or NaN score is a missing score (a row with a null score, counted), an infinite
or non-numeric one is refused (exit 2 naming file and field).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.data.formats import response_key
from metajudge.errors import InputError
from metajudge.scores.readers.alignment import Collector, IdPolicy, KeyMap
from metajudge.scores.readers.base import Head, Reader, Reading, ReadOptions
from metajudge.scores.readers.rows import (
    ScoreRow,
    file_signature,
    make_row,
    missing_error,
    score_cell,
)

#: field names that carry an item id, in the order they are tried
ID_NAMES = ("id", "item", "item_id", "sample_id", "example_id", "question_id", "uid")


@dataclass
class Judged:
    """One judge's score of one item as the framework recorded it.

    ``item``: the id value (None: the file has no id field); ``system``: the system the file
    implies (None: none); ``metric``: the judge column; ``value``: the score (None: missing, as
    :func:`json_score` reads it); ``epoch``: 1-based; ``explanation``: the judge's reason;
    ``where``: ``{"path", "line", "field"}`` of the value (errors name it)."""

    item: str | None
    system: str | None
    metric: str
    value: float | None
    where: dict[str, Any]
    epoch: int = 1
    explanation: str | None = None


@dataclass
class FileInfo:
    """What a framework file is: ``format``, ``version``, and what ``data doctor`` prints
    (:func:`metajudge.scores.doctor.describe`)."""

    format: str
    version: str
    id_fields: list[str] = field(default_factory=list)  # fields that could carry the item id
    id_field: str | None = None  # the one used
    systems: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)  # judge (score) columns
    label_columns: list[str] = field(default_factory=list)  # pass/fail or grade columns
    epochs: int = 1
    rows: int = 0
    explanations: int = 0
    notes: list[str] = field(default_factory=list)


_KINDS = {dict: "an object", list: "a list", str: "a string", int: "an integer"}


def shaped(v: Any, kind: type, path: Path, field: str) -> Any:
    """``v``, a value of a framework file, as the reader needs it: ``kind()`` (an empty object,
    list or string, or 0) when absent or null, ``v`` when of type ``kind``; anything else (a list
    where an object belongs, ``true`` for a count) is refused naming file and field.

    >>> shaped(None, dict, Path("r.json"), "vars"), shaped([1], list, Path("r.json"), "x")
    ({}, [1])
    >>> shaped(["x"], dict, Path("r.json"), "results.results[0].vars")
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: r.json: field results.results[0].vars: expected an object, got a list
    """
    if v is None:
        return kind()
    if isinstance(v, kind) and not isinstance(v, bool):
        return v
    got = next((w for k, w in _KINDS.items() if isinstance(v, k) and not isinstance(v, bool)), None)
    got = got or ("a boolean" if isinstance(v, bool) else "a number")
    raise InputError(f"expected {_KINDS[kind]}, got {got}", path=path, field=field)


def first_id(obj: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    """The first of ``names`` that ``obj`` holds with a value: ``(name, value)``."""
    for n in names:
        v = obj.get(n)
        if v not in (None, ""):
            return n, v
    return None, None


#: ``judged(path, reading)``: a framework's scores of a file, before they meet a dataset
JudgedFn = Callable[[Path, Reading], tuple[FileInfo, list[Judged]]]


def framework_reader(
    name: str, what: str, suffixes: tuple[str, ...], sniff: Callable[[Head], bool], judged: JudgedFn
) -> Reader:
    """A judge framework's :class:`~metajudge.scores.readers.base.Reader`: its rows are
    :func:`framework_rows` of ``judged``; ``FORMAT:PATH`` may name it."""

    def rows(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
        return framework_rows(path, judged, records, opts.ids, opts.reading)

    return Reader(name, what, suffixes, sniff, rows, judged=judged, forcible=True)


def json_score(v: Any, path: Path, field: str, line: int | None = None) -> float | None:
    """A score a framework wrote as a JSON value: a number, or null / NaN (missing); a string,
    a boolean or an infinite number is refused (:func:`~metajudge.scores.readers.rows.score_cell`)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, type(None))):
        raise InputError(f"non-numeric score {v!r}", path=path, line=line, field=field)
    return score_cell(v, field=field, where={"path": path, "line": line})


def framework_rows(
    path: Path,
    read: JudgedFn,
    records: Sequence[Any] | None,
    ids: IdPolicy | None,
    reading: Reading | None = None,
) -> list[ScoreRow]:
    """Score rows of the framework file ``path`` (its scores: ``read``), checked against
    ``records``."""
    reading = reading or Reading()
    info, judged = read(path, reading)
    if not judged:
        raise InputError(f"no scores in this {info.format} file ({info.version})", path=path)
    km = KeyMap(records, ids) if records is not None else None
    keys = km.keys() if km is not None else set()
    resolved = [(_resolve(j, km, keys, reading), j) for j in judged]
    kept = [(k, j) for k, j in resolved if k is not None]
    if not kept and resolved:
        _no_match(path, info, judged, reading)
    return _combine(path, info, kept, reading)


def _resolve(
    j: Judged, km: Any, keys: set[str], reading: Reading
) -> tuple[str, str | None, str | None] | None:
    """``(item, system, side)`` of one score, or None (dropped by the id policy); ``keys``: the
    dataset's response keys (an id may name a response)."""
    if j.item is None:
        raise InputError(
            "no id field: give --id-field FIELD naming the field that carries the item id",
            **{**j.where, "field": reading.id_field or "id"},
        )
    item, system = str(j.item), reading.system or j.system
    where = {"path": j.where.get("path"), "line": j.where.get("line")}
    if km is None:
        return item, system, None
    if "::" in item and item in keys:  # the id names the response (item::system|side)
        item, _, rest = item.rpartition("::")
        side = rest if km.pairwise else None
        return item, (None if km.pairwise else rest), side
    if system is None:
        system = _sole_system(km, item)
    got = km.resolve(item, system, None, where=where)
    if got is None:
        return None
    return item, got[0], got[1]


def _sole_system(km: Any, item: str) -> str | None:
    """The item's one system in the dataset (files that name no system)."""
    have = km.systems.get(item, ())
    return next(iter(have)) if len(have) == 1 else None


def _no_match(path: Path, info: FileInfo, judged: list[Judged], reading: Reading) -> None:
    first = judged[0]
    sys_hint = (
        f"; the file's system is {first.system!r} (--system NAME names the dataset's)"
        if first.system and not reading.system
        else ""
    )
    raise InputError(
        f"no score of this {info.format} file names an item (and system) of the dataset: ids "
        f"read from field {info.id_field or reading.id_field or '?'!r}, e.g. {first.item!r}"
        f"{sys_hint}; --id-field FIELD names another field",
        path=path,
        field=info.id_field or reading.id_field,
    )


def _combine(
    path: Path,
    info: FileInfo,
    kept: list[tuple[tuple[str, str | None, str | None], Judged]],
    reading: Reading,
) -> list[ScoreRow]:
    """One row per response and column: epochs averaged, or one column per epoch."""
    groups: dict[tuple[str, str], list[tuple[tuple[str, Any, Any], Judged]]] = {}
    for ids, j in kept:
        key = response_key(ids[0], ids[2] if ids[2] is not None else str(ids[1]))
        metric = (
            j.metric if reading.epochs == "mean" or info.epochs == 1 else f"{j.metric}@{j.epoch}"
        )
        groups.setdefault((key, metric), []).append((ids, j))
    col = Collector()
    for (_key, metric), got in groups.items():
        (item, system, side), j0 = got[0]
        _no_duplicate_epoch(got, metric)
        vals = [j.value for _, j in got if j.value is not None]
        score = sum(vals) / len(vals) if vals else None
        rule = f"epochs:{reading.epochs}({len(got)})" if info.epochs > 1 else "epochs:1"
        details: dict[str, Any] = {"framework": info.format, "epochs": len(got)}
        notes = [
            f"epoch {j.epoch}: {j.explanation}" if len(got) > 1 else j.explanation
            for _, j in got
            if j.explanation
        ]
        if notes:
            details["explanation"] = "\n".join(str(n) for n in notes)
        row = make_row(
            item=item,
            system=system,
            side=side,
            metric=metric,
            score=score,
            signature=file_signature(metric, path.name, f"{info.format}:{info.version}", rule),
            details=details,
            error=missing_error(score),
        )
        col.add(row, {k: v for k, v in j0.where.items() if k != "field"}, _origin(j0))
    return col.rows


def _no_duplicate_epoch(got: list[tuple[Any, Judged]], metric: str) -> None:
    seen: dict[int, Judged] = {}
    for _, j in got:
        if j.epoch in seen:
            raise InputError(
                f"two scores of {metric!r} for one response and epoch {j.epoch} (first at "
                f"{_origin(seen[j.epoch])})",
                **j.where,
            )
        seen[j.epoch] = j


def _origin(j: Judged) -> str:
    w = j.where
    return f"line {w['line']}" if w.get("line") else str(w.get("field") or "?")
