"""A framework's :class:`~metajudge.scores.framework_types.Judged` scores as score rows of a dataset.

The item is the id the file records (``--id-field`` names another field); an id that is a
response key of the dataset (``item::system``, ``item::a``) names the response itself. The
system is ``--system``, else the one the file implies (inspect_ai: ``eval.model``; promptfoo:
the provider), else — for files that record none (ragas, deepeval) — the item's one system in
the dataset. Rows for ids the dataset lacks follow the :class:`~metajudge.scores.alignment.IdPolicy`
(dropped and counted, or refused). Epochs are averaged (``--epochs mean``, the default) or kept as
one column per epoch (``each``); the rule is in each row's signature and details. The judge's
explanation is kept in ``details.explanation`` (report.html shows it beside the human label).
A NaN score is refused (exit 2 naming file and field); an absent one is a missing score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.data.formats import response_key
from metajudge.errors import InputError
from metajudge.scores.alignment import IdPolicy
from metajudge.scores.framework_types import FileInfo, Judged, Reading
from metajudge.scores.rows import ScoreRow, make_row


def framework_rows(
    path: Path,
    fmt: str,
    records: Sequence[Any] | None,
    ids: IdPolicy | None,
    reading: Reading | None = None,
) -> list[ScoreRow]:
    """Score rows of the framework file ``path`` (format ``fmt``), checked against ``records``."""
    from metajudge.scores.frameworks import reader
    from metajudge.scores.upstream import KeyMap

    reading = reading or Reading()
    info, judged = reader(fmt).read(path, reading)
    if not judged:
        raise InputError(f"no scores in this {fmt} file ({info.version})", path=path)
    for j in judged:
        _check_value(j)
    km = KeyMap(records, ids) if records is not None else None
    keys = km.keys() if km is not None else set()
    resolved = [(_resolve(j, km, keys, reading), j) for j in judged]
    kept = [(k, j) for k, j in resolved if k is not None]
    if not kept and resolved:
        _no_match(path, info, judged, reading)
    return _combine(path, info, kept, reading)


def _check_value(j: Judged) -> None:
    if j.value is not None and (math.isnan(j.value) or math.isinf(j.value)):
        raise InputError(
            f"score is {j.value!r}: the framework wrote no number for this judge (a failed "
            "metric?); remove the row or leave the score empty (null) to count it as missing",
            **j.where,
        )


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
    from metajudge.scores.upstream import _Collector

    groups: dict[tuple[str, str], list[tuple[tuple[str, Any, Any], Judged]]] = {}
    for ids, j in kept:
        key = response_key(ids[0], ids[2] if ids[2] is not None else str(ids[1]))
        metric = (
            j.metric if reading.epochs == "mean" or info.epochs == 1 else f"{j.metric}@{j.epoch}"
        )
        groups.setdefault((key, metric), []).append((ids, j))
    col = _Collector()
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
            signature=f"{metric}|{info.format}:{info.version}|{rule}|source:{path.name}|external",
            details=details,
            error=None if score is not None else "missing in the score file",
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
