"""Score tables from elsewhere: JSONL score rows (or a JSON list of them) and wide JSON
tables (``item, system[, side], <metric>...``), read row by row; the shared rules of a row's ids
(:func:`row_ids`, :func:`resolve_ids`) and of a wide table's headers (:func:`split_header`)
and rows (:func:`add_wide_row`). A wide CSV/TSV table is :mod:`metajudge.scores.readers.wide_csv`.

A JSONL score row needs only ``metric``, ``score`` and its ids when read against a dataset;
without one, a ``.jsonl`` file must hold complete rows as
:func:`metajudge.scores.scoring.write_scores` writes them (:func:`read_written_rows`: a run
folder's ``scores.jsonl``). A row or a table may state a column's direction — a JSONL row's
``"direction": "higher"|"lower"``, a wide table's header ``name:lower`` (or ``name:higher``).
Scores follow :func:`~metajudge.scores.readers.rows.score_cell`: empty, null and NaN are missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import read_json
from metajudge.scores.readers.alignment import ID_COLUMNS, Collector, KeyMap
from metajudge.scores.readers.base import (
    Head,
    Reader,
    ReadOptions,
    any_file,
    json_records,
    jsonl_records,
)
from metajudge.scores.readers.rows import (
    DIRECTIONS,
    ScoreRow,
    check_score_row,
    file_signature,
    make_row,
    missing_error,
    score_cell,
)


def read_written_rows(path: Path) -> list[ScoreRow]:
    """A score file this package wrote: complete rows (a null score says why), no duplicate
    ``(key, metric)``; errors name the file, line and field."""
    from metajudge.data.formats import iter_jsonl_objects

    rows: list[ScoreRow] = []
    first: dict[tuple[str, str], int] = {}
    for line, obj in iter_jsonl_objects(path):
        row = check_score_row(obj, path, line)
        k = (row["key"], row["metric"])
        if k in first:
            raise InputError(
                f"duplicate (key, metric) {k!r} (first on line {first[k]})",
                path=path,
                line=line,
                field="key",
            )
        first[k] = line
        rows.append(row)
    return rows


def resolve_ids(
    km: KeyMap | None,
    ids: tuple[str, str | None, str | None],
    where: dict[str, Any],
) -> tuple[str, str | None, str | None] | None:
    """``(item, system, side)`` checked against the dataset (as given when there is none);
    ``None``: a row for ids the dataset lacks, dropped and counted by ``km``'s policy."""
    item, system, side = ids
    if km is None:
        if system is None and side is None:
            raise InputError("a row needs a 'system' or 'side'", field="system", **where)
        return item, system, side
    got = km.resolve(item, system, side, where=where)
    if got is None:
        return None
    sys_, side_, _key = got
    return item, sys_, side_


def row_ids(
    obj: Mapping[str, Any], where: dict[str, Any], prefix: str = ""
) -> tuple[str, str | None, str | None]:
    item = obj.get("item", obj.get("id"))
    if item is None or str(item) == "":
        key = obj.get("key")
        if isinstance(key, str) and "::" in key:
            item, _, rest = key.rpartition("::")
            side = rest if rest in ("a", "b") else None
            system = None if side else rest
            return item, system, side
        raise InputError("missing required field (item id)", field=prefix + "item", **where)
    system = obj.get("system")
    side = obj.get("side")
    return (
        str(item),
        (None if system is None else str(system)),
        (None if side in (None, "") else str(side)),
    )


def _direction(v: Any, *, field: str, where: dict[str, Any]) -> str | None:
    if v is None:
        return None
    if v not in DIRECTIONS:
        raise InputError(f"direction must be 'higher' or 'lower', got {v!r}", field=field, **where)
    return str(v)


def split_header(name: str) -> tuple[str, str | None]:
    """A wide table's column header ``metric[:higher|:lower]`` → ``(metric, direction)``.

    >>> split_header("ter:lower"), split_header("bleu")
    (('ter', 'lower'), ('bleu', None))
    """
    base, sep, d = name.rpartition(":")
    return (base, d) if sep and base and d in DIRECTIONS else (name, None)


def _cell(
    v: Any, *, field: str, where: dict[str, Any], labels: bool
) -> tuple[float | None, str | None]:
    """``(score, label)`` of a cell: a label string only when ``labels`` and not a number."""
    label = _label_of(v, labels)
    if label is not None:
        return None, label
    return score_cell(v, field=field, where=where), None


def _label_of(v: Any, labels: bool) -> str | None:
    """``v`` as a label string (categorical data: ``labels``), or None when it reads as a number."""
    if labels and isinstance(v, str) and v.strip():
        try:
            float(v)
        except ValueError:
            return v.strip()
    return None


def _labelled(row: ScoreRow, label: str | None) -> ScoreRow:
    if label is not None:
        row.update(label=label, error=None)
    return row


def _read_rows(p: Path, km: KeyMap | None, labels: bool = False) -> list[ScoreRow]:
    """JSONL (or a JSON list) of score rows from elsewhere (only ``metric``, ``score`` and ids)."""
    from metajudge.data.formats import iter_jsonl_objects

    if p.suffix.lower() == ".json":
        objs: Iterable[tuple[int | None, Any]] = ((None, o) for o in read_json(p))
    else:
        objs = iter_jsonl_objects(p)
    return score_rows(p, objs, km, labels)


def score_rows(
    p: Path, objs: Iterable[tuple[int | None, Any]], km: KeyMap | None, labels: bool = False
) -> list[ScoreRow]:
    """Score rows from elsewhere, ``(line or None, object)`` each (a JSONL line, an element of a
    JSON list, a columnar table's row)."""
    col = Collector()
    for idx, (line, obj) in enumerate(objs):
        where = {"path": p, "line": line}
        pre = "" if line is not None else f"[{idx}]."
        label = _label_of(obj.get("score"), labels) if isinstance(obj, Mapping) else None
        if label is not None:
            obj = {**obj, "score": None}
        row = check_score_row(obj, p, line, external=True, prefix=pre)  # one rule for rows
        metric, score = row["metric"], row["score"]
        resolved = resolve_ids(km, row_ids(obj, where, pre), where)
        if resolved is None:
            continue
        item, sys_, side_ = resolved
        err = row["error"] if score is None else None
        out = make_row(
            item=item,
            system=sys_,
            side=side_,
            metric=metric,
            score=score,
            signature=str(obj.get("signature") or f"{metric}|external"),
            details=obj.get("details") if isinstance(obj.get("details"), Mapping) else None,
            error=err or missing_error(score),
            direction=_direction(obj.get("direction"), field=pre + "direction", where=where),
        )
        col.add(
            _labelled(out, label),
            where,
            f"line {line}" if line else f"[{idx}]",
        )
    return col.rows


def add_wide_row(
    col: Collector,
    p: Path,
    ids: tuple[str, str | None, str | None],
    cells: Iterable[tuple[str, Any, str]],
    where: dict[str, Any],
    label: str,
    labels: bool = False,
) -> None:
    """One row of a wide table (CSV or JSON): a score row per ``(header, value, field)`` cell,
    the header's ``:lower``/``:higher`` suffix kept as the column's direction."""
    item, system, side = ids
    for header, value, field in cells:
        m, direction = split_header(header)
        score, cell_label = _cell(value, field=field, where=where, labels=labels)
        row = make_row(
            item=item,
            system=system,
            side=side,
            metric=m,
            score=score,
            signature=file_signature(m, p.name),
            error=missing_error(score),
            direction=direction,
        )
        col.add(_labelled(row, cell_label), where, label)


def _read_wide_json(p: Path, km: KeyMap | None, labels: bool = False) -> list[ScoreRow]:
    data = read_json(p)
    if not isinstance(data, list):
        raise InputError(
            "expected a JSON list of objects {item, system, <metric>: value, ...}", path=p
        )
    return wide_rows(p, data, km, labels)


def wide_rows(
    p: Path, data: Iterable[Any], km: KeyMap | None, labels: bool = False
) -> list[ScoreRow]:
    """A wide table's score rows: ``data`` its rows as objects ``{item, system, <metric>: value}``
    (a JSON list's, a columnar table's)."""
    col = Collector()
    for i, obj in enumerate(data):
        where = {"path": p, "line": None}
        if not isinstance(obj, Mapping):
            raise InputError("expected an object", field=f"[{i}]", **where)
        ids = resolve_ids(km, row_ids(obj, where, f"[{i}]."), where)
        if ids is None:
            continue
        cells = ((h, v, f"[{i}].{h}") for h, v in obj.items() if h not in ID_COLUMNS)
        add_wide_row(col, p, ids, cells, where, f"[{i}]", labels)
    return col.rows


def _jsonl_rows(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    if records is None and path.suffix.lower() == ".jsonl":
        return read_written_rows(path)
    km = KeyMap(records, opts.ids) if records is not None else None
    return _read_rows(path, km, opts.labels)


def _is_row_list(head: Head) -> bool:
    """A ``.jsonl`` file, or a ``.json`` list of objects with ``metric`` and ``score``."""
    if head.suffix == ".jsonl":
        return True
    data = head.json
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], Mapping)
        and {"metric", "score"} <= set(data[0])
    )


def _wide_json_rows(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    km = KeyMap(records, opts.ids) if records is not None else None
    return _read_wide_json(path, km, opts.labels)


def _by_response(path: Path) -> list[Mapping[str, Any]]:
    """Score rows as ``data doctor`` describes a table: one record per response (its ids) with a
    column per metric (the score, else the label)."""
    objs = jsonl_records(path) if path.suffix.lower() == ".jsonl" else json_records(path)
    return by_response(objs)


def by_response(objs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Score rows ``objs`` as one record per response (its ids) with a column per metric."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for o in objs:
        ids = {k: o[k] for k in ID_COLUMNS if o.get(k) not in (None, "")}
        rec = out.setdefault(tuple((k, str(v)) for k, v in ids.items()), ids)
        if "metric" in o:
            score = o.get("score")
            rec[str(o["metric"])] = o.get("label") if score is None and o.get("label") else score
    return list(out.values())


JSONL = Reader(
    "jsonl",
    "score rows (JSONL, or a JSON list of rows)",
    (".jsonl", ".json"),
    _is_row_list,
    _jsonl_rows,
    records=_by_response,
    forcible=True,
)
WIDE_JSON = Reader(
    "json",
    "a wide score table as a JSON list of {item, system, <metric>: value}",
    (".json",),
    any_file,
    _wide_json_rows,
    records=json_records,
    forcible=True,
)
