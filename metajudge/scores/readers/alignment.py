"""How score rows are aligned with a dataset by id: :class:`KeyMap` turns a row's ``(item,
system[, side])`` into one of the dataset's responses, :class:`IdPolicy` says what becomes of a
row whose ids the dataset lacks, :class:`Collector` keeps one row per ``(key, metric)``. Every
reader of score files (:mod:`metajudge.scores.readers`) aligns its rows with these.

A score file may hold rows for items or systems the dataset does not contain (a file scored on
a larger set, a subset loaded with ``--subset``). By default such rows are *dropped and counted*:
one warning names how many and the first ids, and the count is recorded in the run's
``result.json``. ``strict=True`` (``--strict-ids``) refuses the first of them with an
:class:`~metajudge.errors.InputError` naming the file, line and field, as before.

The policy is passed explicitly, from the command line down to
:meth:`KeyMap.resolve`, the one place a row's ids are checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.data.formats import LikertRecord, PairwiseRecord, response_key
from metajudge.errors import InputError
from metajudge.scores.readers.rows import ScoreRow

#: Columns of a wide score table that are ids, not metrics.
ID_COLUMNS = ("item", "system", "side", "key", "id")

#: how many of the dropped ids a warning names
SHOW_IDS = 5


class IdPolicy:
    """Drop-and-count (default) or refuse (``strict``) score rows whose ids the dataset lacks.

    >>> p = IdPolicy()
    >>> p.unknown("unknown item id 'x'", field="item", where={"path": "s.csv", "line": 3}, item="x", system="m")
    >>> p.unknown("unknown item id 'x'", field="item", where={"path": "s.csv", "line": 4}, item="x", system="n")
    >>> p.warning()
    '2 score rows for ids the dataset does not contain were dropped (s.csv: 2; first ids: x/m, x/n; --strict-ids refuses them)'
    >>> IdPolicy(strict=True).unknown("unknown item id 'x'", field="item", where={"path": "s.csv", "line": 3}, item="x", system=None)
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: s.csv:3: field item: unknown item id 'x'
    """

    def __init__(
        self, strict: bool = False, *, elsewhere: frozenset[str] = frozenset(), subset: str = ""
    ) -> None:
        self.strict = strict
        self.dropped: list[dict[str, Any]] = []
        self._seen: set[tuple[str, Any]] = set()
        #: item ids of the dataset's other subsets (a ``--subset`` run): their rows are set
        #: aside and counted apart, not called unknown nor refused
        self.elsewhere, self.subset = elsewhere, subset
        self.other_subsets = 0

    def unknown(
        self,
        message: str,
        *,
        field: str,
        where: dict[str, Any],
        item: str,
        system: str | None,
    ) -> None:
        """A row whose ``item`` / ``system`` the dataset lacks: refused when strict, else counted
        (once per file line: a wide table's row is one row, whatever its metric columns)."""
        path = str(where.get("path") or "")
        key = (path, where.get("line"), item, system)
        if item in self.elsewhere:
            if key not in self._seen:
                self._seen.add(key)
                self.other_subsets += 1
            return
        if self.strict:
            raise InputError(message, field=field, **where)
        if key in self._seen:
            return
        self._seen.add(key)
        self.dropped.append(
            {
                "path": path,
                "line": where.get("line"),
                "item": item,
                "system": system,
                "why": message,
            }
        )

    def summary(self) -> dict[str, Any]:
        """What ``result.json`` records: the rule, the count, per file, and the first ids."""
        files: dict[str, int] = {}
        for d in self.dropped:
            name = Path(d["path"]).name if d["path"] else "?"
            files[name] = files.get(name, 0) + 1
        return {
            "rule": "strict" if self.strict else "drop",
            "rows_dropped": len(self.dropped),
            "files": files,
            "first": [_id(d) for d in self.dropped[:SHOW_IDS]],
            "rows_other_subsets": self.other_subsets,
            "subset": self.subset or None,
        }

    def warning(self) -> str | None:
        """One line for all dropped rows (None when none was dropped)."""
        return dropped_warning(self.summary())


def _id(d: dict[str, Any]) -> str:
    return d["item"] if d["system"] in (None, "") else f"{d['item']}/{d['system']}"


def other_subsets_line(summary: dict[str, Any] | None) -> str | None:
    """The note of the score rows a ``--subset`` run set aside as the other subsets' (None when
    there were none)."""
    n = (summary or {}).get("rows_other_subsets") or 0
    if not n:
        return None
    return (
        f"{n} score row{'s' if n != 1 else ''} of the dataset's other subsets set aside "
        f"(--subset {summary.get('subset')})"  # type: ignore[union-attr]
    )


def dropped_warning(summary: dict[str, Any] | None) -> str | None:
    """The one warning line of a :meth:`IdPolicy.summary` (as ``result.json`` holds it)."""
    if not summary or not summary.get("rows_dropped"):
        return None
    n = summary["rows_dropped"]
    files = "; ".join(f"{k}: {v}" for k, v in summary.get("files", {}).items())
    first = ", ".join(summary.get("first", []))
    more = ", …" if n > len(summary.get("first", [])) else ""
    return (
        f"{n} score row{'s' if n != 1 else ''} for ids the dataset does not contain "
        f"{'were' if n != 1 else 'was'} dropped ({files}; first ids: {first}{more}; "
        "--strict-ids refuses them)"
    )


class KeyMap:
    """Which responses a dataset has, to turn ``(item, system[, side])`` into a response key."""

    def __init__(self, records: Sequence[Any], ids: IdPolicy | None = None) -> None:
        #: the rule for rows whose ids the dataset lacks (None: refuse, as strict)
        self.ids = ids
        self.pairwise = bool(records) and isinstance(records[0], PairwiseRecord)
        #: each pair's systems ``(a, b)``, its id as the dataset holds it (a score file's rows
        #: keep that one string, not one read from each line) and its place among the pairs
        self.sides: dict[str, tuple[str, str, str, int]] = {}
        self.systems: dict[str, set[str]] = {}
        for r in records:
            if isinstance(r, PairwiseRecord):
                at = self.sides[r.id][3] if r.id in self.sides else len(self.sides)
                self.sides[r.id] = (r.a.system, r.b.system, r.id, at)
            elif isinstance(r, LikertRecord):
                self.systems.setdefault(r.id, set()).add(r.system)

    def keys(self) -> set[str]:
        if self.pairwise:
            return {response_key(i, s) for i in self.sides for s in ("a", "b")}
        return {response_key(i, s) for i, ss in self.systems.items() for s in ss}

    def resolve(
        self, item: str, system: str | None, side: str | None, *, where: dict[str, Any]
    ) -> tuple[str, str | None, str] | None:
        """``(system, side, key)`` for one row. An item or system the dataset lacks is refused
        (InputError naming ``where``) or, under a non-strict :class:`IdPolicy`, counted there
        and ``None`` returned (the row is dropped); a malformed side is always an error."""
        if self.pairwise:
            if item not in self.sides:
                return self._unknown(
                    f"unknown item id {item!r} (not a pair of this dataset)",
                    "item",
                    where,
                    item,
                    system,
                )
            return self._pair_side(item, system, side, where)
        if item not in self.systems:
            return self._unknown(
                f"unknown item id {item!r} (not in this dataset)", "item", where, item, system
            )
        if system not in self.systems[item]:
            return self._unknown(
                f"unknown system {system!r} for item {item!r}", "system", where, item, system
            )
        return system, None, response_key(item, system)

    def _unknown(
        self, message: str, field: str, where: dict[str, Any], item: str, system: str | None
    ) -> None:
        if self.ids is None:
            raise InputError(message, field=field, **where)
        self.ids.unknown(message, field=field, where=where, item=item, system=system)

    def _pair_side(
        self, item: str, system: str | None, side: str | None, where: dict[str, Any]
    ) -> tuple[str, str | None, str] | None:
        sa, sb = self.sides[item][:2]
        if side is not None:
            if side not in ("a", "b"):
                raise InputError(f"side must be 'a' or 'b', got {side!r}", field="side", **where)
            sys_ = sa if side == "a" else sb
            if system not in (None, "", sys_):
                raise InputError(
                    f"system {system!r} is not side {side} ({sys_!r}) of pair {item!r}",
                    field="system",
                    **where,
                )
            return sys_, side, response_key(item, side)
        if system == sa and system == sb:
            raise InputError(
                f"both sides of pair {item!r} are {system!r}: give a 'side' column",
                field="side",
                **where,
            )
        if system == sa:
            return sa, "a", response_key(item, "a")
        if system == sb:
            return sb, "b", response_key(item, "b")
        return self._unknown(
            f"unknown system {system!r} for pair {item!r} (its systems: {sa!r}, {sb!r})",
            "system",
            where,
            item,
            system,
        )


class Collector:
    """Collects a score file's rows, refusing a second row of one ``(key, metric)`` (the error
    names where the first was)."""

    def __init__(self) -> None:
        self.rows: list[ScoreRow] = []
        self.seen: dict[tuple[str, str], str] = {}

    def add(self, row: ScoreRow, where: dict[str, Any], origin: str) -> None:
        k = (row["key"], row["metric"])
        if k in self.seen:
            raise InputError(
                f"duplicate score for {row['key']!r} metric {row['metric']!r} (first at {self.seen[k]})",
                field=row["metric"],
                **where,
            )
        self.seen[k] = origin
        self.rows.append(row)
