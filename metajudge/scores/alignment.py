"""How score rows are aligned with a dataset by id: :class:`IdPolicy`.

A score file may hold rows for items or systems the dataset does not contain (a file scored on
a larger set, a subset loaded with ``--subset``). By default such rows are *dropped and counted*:
one warning names how many and the first ids, and the count is recorded in the run's
``result.json``. ``strict=True`` (``--strict-ids``) refuses the first of them with an
:class:`~metajudge.errors.InputError` naming the file, line and field, as before.

The policy is passed explicitly, from the command line down to
:meth:`metajudge.scores.upstream.KeyMap.resolve`, the one place a row's ids are checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metajudge.errors import InputError

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
