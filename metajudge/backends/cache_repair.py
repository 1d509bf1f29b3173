"""``metajudge cache prune --damaged``: keep what a damaged response cache still holds, move it aside.

The rows that can be read (and whose stored JSON parses) are copied into a fresh cache file (a
damaged page does not end the scan; the rows dropped are counted); the
damaged file (and its ``-wal``/``-shm``) is renamed to ``<file>.damaged-<time>`` so nothing is
deleted; the fresh file takes its place. A file that is not a database at all gives an empty
cache and keeps the original aside. A healthy cache is never moved, and nothing is done while
another process has the cache open (its lock, :mod:`.cache_lock`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from metajudge.backends import cache_lock
from metajudge.backends.cache import ResponseCache
from metajudge.errors import InputError


def _readable_rows(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Every row of ``responses`` that can be read and whose JSON parses, and how many rows the
    file holds that were dropped (unreadable, or stored JSON that does not parse). A damaged page
    does not end the scan: the rows are found by rowid along every path that reaches them
    (:func:`_rowids`) and read one by one."""
    rows: list[dict[str, Any]] = []
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return rows, 0
    try:
        con.row_factory = sqlite3.Row
        ids = _rowids(con)
        for rid in sorted(ids):
            try:
                r = con.execute("SELECT * FROM responses WHERE rowid = ?", (rid,)).fetchone()
                d = dict(r) if r is not None else {}
                json.loads(d["request_json"])
                json.loads(d["response_json"])
            except (sqlite3.Error, ValueError, TypeError, KeyError):
                continue  # counted below
            rows.append(d)
        return rows, max(len(ids), _count(con)) - len(rows)
    finally:
        con.close()


def _rowids(con: sqlite3.Connection) -> set[int]:
    """The rowids of ``responses`` found by scanning the table forwards and backwards and each of
    its indexes, every scan read until it reaches a damaged page."""
    found: set[int] = set()
    scans = ["ORDER BY rowid", "ORDER BY rowid DESC"]
    try:
        names = con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'responses'"
        ).fetchall()
        scans += [f'INDEXED BY "{n[0]}"' for n in names]
    except sqlite3.Error:
        pass
    for how in scans:
        try:
            cur = con.execute(f"SELECT rowid FROM responses {how}")
            while (r := cur.fetchone()) is not None:
                found.add(int(r[0]))
        except sqlite3.Error:
            continue  # the rest of this path is unreadable; the other paths go on
    return found


def _count(con: sqlite3.Connection) -> int:
    """``COUNT(*)`` of ``responses`` (0 when it cannot be read)."""
    try:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.Error:
        return 0


def _healthy(path: Path, n_read: int, dropped: int) -> bool:
    """Whether SQLite finds the file sound and every row of it was read."""
    if dropped:
        return False
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            ok = con.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            n = int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return ok and n == n_read


def repair_cache(path: str | Path) -> dict[str, Any]:
    """Rebuild the cache at ``path`` from its readable rows; returns what was kept and where the
    damaged file went (``recovered``, ``dropped``, ``moved_to``; ``healthy``).

    The cache's lock (:mod:`.cache_lock`) is held throughout: while another process has the
    cache open this refuses (:class:`CacheError`), and a healthy cache is left where it is
    (``healthy: True``, ``moved_to: None``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("cache file not found", path=path, field="--cache-file")
    with cache_lock.exclusive(path):
        rows, dropped = _readable_rows(path)
        if _healthy(path, len(rows), dropped):
            return {"recovered": len(rows), "dropped": 0, "moved_to": None, "healthy": True}
        aside = _rebuild(path, rows)
    return {"recovered": len(rows), "dropped": dropped, "moved_to": str(aside), "healthy": False}


def _rebuild(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A fresh cache from ``rows`` in place of ``path``; the damaged file moved aside (returned)."""
    fresh = path.with_name(path.name + ".repairing")
    for p in (fresh, Path(f"{fresh}-wal"), Path(f"{fresh}-shm")):
        p.unlink(missing_ok=True)
    store = ResponseCache(fresh)
    cols = [
        c[1] for c in store._conn.execute("PRAGMA table_info(responses)").fetchall()
    ]  # the current schema's columns
    for r in rows:
        keep = [c for c in cols if c in r]
        store._conn.execute(
            f"INSERT OR REPLACE INTO responses ({','.join(keep)}) VALUES ({','.join('?' * len(keep))})",
            [r[c] for c in keep],
        )
    # rows from before schema v5 have no endpoint: as migration 6, only non-remote ones are keyed
    store._conn.execute(
        "UPDATE responses SET endpoint = '' WHERE endpoint IS NULL AND kind != 'openai'"
    )
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            os.replace(side, Path(f"{aside}{suffix}"))
    os.replace(fresh, path)
    for suffix in ("-wal", "-shm", ".lock"):
        Path(f"{fresh}{suffix}").unlink(missing_ok=True)
    return aside
