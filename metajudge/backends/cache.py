"""A crash-safe response cache (SQLite, WAL); :class:`~metajudge.backends.cached.CachedBackend`
puts any backend behind it.

Key = sha256 of the canonical JSON of
``{"kind", "model_id", "endpoint", "request": Request.to_dict(), "parser_version"}`` where
``model_id`` carries the GGUF file's sha256 for local models and ``endpoint`` is the remote
endpoint's normalised base URL (:func:`~metajudge.backends.openai_parse.endpoint_id`: no credentials, no secret query values), so
two deployments serving one model name never share an entry (issue 18). ``endpoint`` is left out
of the hashed object when empty (local models, whose loopback port changes every start), which
keeps every key recorded before it existed valid for them; entries of remote endpoints recorded
before that have ``endpoint`` NULL and are never served (which endpoint answered is unknown). Editing a prompt changes the request and so the key; a
new output parser must bump ``parser_version``, which also changes the key (the alpaca_eval
pitfall — a cache keyed by config name, stale after a prompt edit — cannot happen).

Each completed call is committed the moment it finishes (the backend's ``on_result`` hook), so a
run killed with SIGKILL loses at most the calls in flight, and a rerun makes only the missing
calls. Many processes may write the same file at once (WAL, ``busy_timeout``, retry on lock).
Failed calls are never cached, nor replies that are no usable answer to their request
(:func:`~metajudge.backends.reply.reply_problem`). The stored request never contains a key (keys live only in the
environment and the HTTP client).

Schema changes go through :data:`MIGRATIONS`, an append-only list; ``PRAGMA user_version`` records
how many have been applied (the approach of simonw/llm's ``migrations.py``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from metajudge.backends import cache_lock
from metajudge.backends.base import Choice, Completion, Request, TokenLogprob
from metajudge.backends.reply import reply_problem
from metajudge.errors import CacheError, InputError
from metajudge.io import atomic_write, canonical_json, sha256_text
from metajudge.paths import user_cache_dir

log = logging.getLogger(__name__)

#: Append-only. Never edit or reorder an entry that has shipped; add a new one.
MIGRATIONS: tuple[str, ...] = (
    # 1: responses keyed by the request hash
    """
    CREATE TABLE responses (
        key TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        model_id TEXT NOT NULL,
        parser_version TEXT NOT NULL,
        request_json TEXT NOT NULL,
        response_json TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        latency_s REAL NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    # 2: lookups by model for stats/prune
    "CREATE INDEX responses_model ON responses(model_id, parser_version)",
    # 3: how often an entry was served, and when last (prune by disuse)
    "ALTER TABLE responses ADD COLUMN hits INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE responses ADD COLUMN last_hit_at REAL",
    # 5: which endpoint answered (normalised base URL; '' for local models). NULL: recorded before
    # the endpoint was part of the key; such a remote entry is unreachable (its key lacks it).
    "ALTER TABLE responses ADD COLUMN endpoint TEXT",
    # 6: entries of non-remote kinds are unambiguous: their key never had an endpoint
    "UPDATE responses SET endpoint = '' WHERE kind != 'openai'",
)


def default_cache_path() -> Path:
    return user_cache_dir() / "llm-cache.sqlite"


def cache_key(
    kind: str, model_id: str, request: Request, parser_version: str, endpoint: str = ""
) -> str:
    """sha256 of the canonical JSON of (backend kind, model id, endpoint, full request, parser
    version); ``endpoint`` (:func:`endpoint_id`) is omitted when empty (see the module docstring)."""
    obj: dict[str, Any] = {
        "kind": kind,
        "model_id": model_id,
        "request": request.to_dict(),
        "parser_version": parser_version,
    }
    if endpoint:
        obj["endpoint"] = endpoint
    return sha256_text(canonical_json(obj))


def completion_to_json(c: Completion) -> str:
    """The stored form; a choice's ``raw_text`` is left out when it equals ``text`` (no
    ``<think>`` part), so a reply's text is stored once."""
    d = dataclasses.asdict(dataclasses.replace(c, cached=False))
    for ch in d["choices"]:
        if ch["raw_text"] == ch["text"]:
            del ch["raw_text"]
    return canonical_json(d)


def completion_from_json(text: str) -> Completion:
    d = json.loads(text)
    choices = tuple(
        Choice(
            text=ch["text"],
            raw_text=ch.get("raw_text", ch["text"]),
            finish_reason=ch.get("finish_reason"),
            logprobs=None
            if ch.get("logprobs") is None
            else tuple(
                TokenLogprob(
                    t["token"],
                    float(t["logprob"]),
                    tuple((a, float(b)) for a, b in t.get("top", ())),
                )
                for t in ch["logprobs"]
            ),
            reasoning_tokens=int(ch.get("reasoning_tokens", 0)),
        )
        for ch in d["choices"]
    )
    return Completion(
        choices=choices,
        prompt_tokens=int(d["prompt_tokens"]),
        completion_tokens=int(d["completion_tokens"]),
        latency_s=float(d["latency_s"]),
        cached=True,
        model=d.get("model", ""),
        extra=d.get("extra", {}),
        processed_prompt_tokens=d.get("processed_prompt_tokens"),
    )


def _disk_full(path: Path) -> bool:
    """Whether the disk of ``path`` has (almost) no room left: sqlite reports a write that found
    no room as "disk I/O error" where the file's ``-shm`` or journal could not grow."""
    import shutil

    try:
        return shutil.disk_usage(path.parent).free < 1 << 20
    except OSError:
        return False


def cache_error(path: Path, doing: str, err: BaseException) -> CacheError:
    """A sqlite failure as a :class:`CacheError` naming the file and saying what to do (a full
    disk said as such, "disk I/O error" on a disk without room included)."""
    import errno

    msg = str(err)
    nospace = getattr(err, "errno", None) == errno.ENOSPC
    if "readonly" in msg or "read-only" in msg or "unable to open" in msg:
        fix = (
            "make it writable, or use another cache file ($METAJUDGE_CACHE_DIR; --cache-file "
            "for `metajudge cache` and `judge export-batch`; get_backend(cache=False) in Python)"
        )
        what = "cannot be written"
    elif "full" in msg or "No space" in msg or nospace or ("I/O" in msg and _disk_full(path)):
        fix = (
            f"free space on the disk of {path}, delete entries (`metajudge cache prune "
            f"--cache-file {path} --older-than DAYS`), or put the cache on another disk "
            "($METAJUDGE_CACHE_DIR)"
        )
        what = "cannot grow (the disk or the file is full)"
    elif "malformed" in msg or "not a database" in msg or "corrupt" in msg:
        fix = (
            f"run `metajudge cache prune --damaged --cache-file {path}` (keeps what is readable and moves the "
            "damaged file aside), or move the file aside yourself, or use another cache file "
            "($METAJUDGE_CACHE_DIR)"
        )
        what = "is damaged"
    else:
        fix = f"move {path} aside or use another cache file ($METAJUDGE_CACHE_DIR)"
        what = "failed"
    return CacheError(f"{path}: the response cache {what} while {doing} ({msg}); {fix}")


class ResponseCache:
    """The SQLite store. Safe to share between threads and between processes.

    ``create=False`` opens an existing cache only (``InputError`` when the file is missing), so
    that maintenance commands never create a file; ``read_only=True`` also writes nothing
    (no WAL switch, no migration, no hit counts). Any sqlite failure is a :class:`CacheError`
    naming the file and the fix; a stored response that cannot be read is a counted miss
    (``corrupt_rows``), replaced by the next answer.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        busy_timeout_s: float = 60.0,
        create: bool = True,
        read_only: bool = False,
    ) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        if self.path.is_dir():
            raise InputError("is a folder, not a cache file", path=self.path, field="--cache-file")
        if not create and not self.path.is_file():
            raise InputError("cache file not found", path=self.path, field="--cache-file")
        self._busy = busy_timeout_s
        self.read_only = read_only
        self._lock = threading.RLock()
        self.corrupt_rows = 0
        self.refused = 0  # unusable replies put() did not store
        self._held: str | None = None  # the shared cache lock (cache_lock), while open for writing
        with self._guard("opening it"):
            if read_only:
                self._open_read_only(busy_timeout_s)
                return
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            lock_existed = cache_lock.lock_path(self.path).exists()
            self._held = cache_lock.share(self.path)
            try:
                self._open_writable(busy_timeout_s)
            except BaseException:  # a file that is no cache: leave no lock file beside it
                cache_lock.release(self._held)
                if not lock_existed:
                    cache_lock.lock_path(self.path).unlink(missing_ok=True)
                raise

    def _open_writable(self, busy_timeout_s: float) -> None:
        self._conn = sqlite3.connect(
            self.path, timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        self._retry(lambda: self._conn.execute("PRAGMA journal_mode=WAL"))
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._migrate()

    def _open_read_only(self, busy_timeout_s: float) -> None:
        """Open without writing anything (``cache stats``/``export`` on a read-only file); a
        file whose schema is older than this version must be opened writable once."""
        if not self.path.is_file():
            raise InputError("cache file not found", path=self.path, field="--cache-file")
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        self._conn = sqlite3.connect(
            uri, uri=True, timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
        if version < len(MIGRATIONS):
            raise CacheError(
                f"{self.path}: the response cache has schema v{version}, this version needs "
                f"v{len(MIGRATIONS)}; open it writable once (any run or `metajudge cache prune`) "
                "to upgrade it"
            )

    # -- plumbing -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as e:
            raise cache_error(self.path, doing, e) from None
        except OSError as e:
            raise cache_error(self.path, doing, e) from None

    def _retry(self, fn: Any) -> Any:
        """Run ``fn`` retrying while another process holds the write lock (beyond busy_timeout)."""
        deadline = time.monotonic() + self._busy
        delay = 0.01
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _migrate(self) -> None:
        def run() -> None:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    done = self._conn.execute("PRAGMA user_version").fetchone()[0]
                    for i in range(done, len(MIGRATIONS)):
                        self._conn.execute(MIGRATIONS[i])
                    if done < len(MIGRATIONS):
                        self._conn.execute(f"PRAGMA user_version={len(MIGRATIONS)}")
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise

        self._retry(run)

    @property
    def schema_version(self) -> int:
        with self._lock, self._guard("reading its schema version"):
            return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            try:
                with self._guard("closing it"):  # its last write-ahead log checkpoint
                    self._conn.close()
            finally:
                cache_lock.release(self._held)
                self._held = None

    # -- reads and writes -------------------------------------------------------------------------
    def _decode(self, key: str, text: str) -> Completion | None:
        try:
            return completion_from_json(text)
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
            self.corrupt_rows += 1
            log.warning(
                "%s: unreadable cached response %s (%s: %s); counted as a miss, it will be replaced",
                self.path,
                key[:12],
                type(e).__name__,
                e,
            )
            return None

    def get_many(self, keys: Sequence[str]) -> dict[str, Completion]:
        """Cached completions for ``keys`` (missing or unreadable keys are absent); marks hits."""
        out: dict[str, Completion] = {}
        if not keys:
            return out
        uniq = list(dict.fromkeys(keys))
        with self._lock, self._guard("reading cached responses"):
            for i in range(0, len(uniq), 500):
                chunk = uniq[i : i + 500]
                q = f"SELECT key, response_json FROM responses WHERE key IN ({','.join('?' * len(chunk))})"
                for k, resp in self._retry(
                    lambda q=q, chunk=chunk: self._conn.execute(q, chunk).fetchall()
                ):
                    c = self._decode(k, resp)
                    if c is not None:
                        out[k] = c
            if out and not self.read_only:
                now = time.time()
                hit = list(out)

                def mark() -> None:
                    self._conn.executemany(
                        "UPDATE responses SET hits = hits + 1, last_hit_at = ? WHERE key = ?",
                        [(now, k) for k in hit],
                    )

                self._retry(mark)
        return out

    def put(
        self,
        key: str,
        *,
        kind: str,
        model_id: str,
        parser_version: str,
        request: Request,
        completion: Completion,
        endpoint: str = "",
    ) -> bool:
        """Store one completion (committed at once; replaces an older entry with the same key).

        A reply that is no usable answer to ``request`` (:func:`reply_problem`), or that holds a
        lone surrogate, is not stored: it is counted in ``refused`` and ``False`` is returned."""
        problem = reply_problem(request, completion)
        if problem is not None:
            self.refused += 1
            log.warning("%s: unusable reply not stored (%s)", self.path, problem)
            return False
        request_json, response_json = (
            canonical_json(request.to_dict()),
            completion_to_json(completion),
        )
        try:  # a lone surrogate is no text: SQLite cannot store it (the parser refuses it first)
            request_json.encode("utf-8"), response_json.encode("utf-8")
        except UnicodeEncodeError:
            self.refused += 1
            log.warning("%s: reply with a lone surrogate not stored", self.path)
            return False
        row = (
            key,
            kind,
            model_id,
            parser_version,
            request_json,
            response_json,
            completion.prompt_tokens,
            completion.completion_tokens,
            completion.latency_s,
            time.time(),
            endpoint,
        )
        with self._lock, self._guard("storing a response"):
            self._retry(
                lambda: self._conn.execute(
                    "INSERT OR REPLACE INTO responses (key, kind, model_id, parser_version, request_json, response_json, "
                    "prompt_tokens, completion_tokens, latency_s, created_at, endpoint) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    row,
                )
            )
        return True

    def __len__(self) -> int:
        with self._lock, self._guard("counting entries"):
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    # -- maintenance ----------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Entries, file size, tokens and latency stored, by model, endpoint and parser version."""
        with self._lock, self._guard("reading its statistics"):
            total = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(prompt_tokens),0), COALESCE(SUM(completion_tokens),0), "
                "COALESCE(SUM(latency_s),0), COALESCE(SUM(hits),0), MIN(created_at), MAX(created_at) FROM responses"
            ).fetchone()
            groups = self._conn.execute(
                "SELECT kind, model_id, endpoint, parser_version, COUNT(*), SUM(prompt_tokens), "
                "SUM(completion_tokens), SUM(hits) FROM responses "
                "GROUP BY kind, model_id, endpoint, parser_version ORDER BY COUNT(*) DESC"
            ).fetchall()
        size = sum(
            p.stat().st_size for p in (self.path, Path(str(self.path) + "-wal")) if p.exists()
        )
        return {
            "path": str(self.path),
            "schema_version": self.schema_version,
            "entries": total[0],
            "bytes": size,
            "prompt_tokens": total[1],
            "completion_tokens": total[2],
            "latency_s_stored": round(total[3], 3),
            "hits": total[4],
            "oldest": total[5],
            "newest": total[6],
            "groups": [
                {
                    "kind": g[0],
                    "model_id": g[1],
                    # None: a remote entry recorded before the endpoint was keyed; never served
                    "endpoint": g[2],
                    "parser_version": g[3],
                    "entries": g[4],
                    "prompt_tokens": g[5],
                    "completion_tokens": g[6],
                    "hits": g[7],
                }
                for g in groups
            ],
        }

    def _where(
        self,
        *,
        older_than_s: float | None,
        model: str | None,
        parser_version: str | None,
        unused: bool = False,
    ) -> tuple[str, list[Any]]:
        conds, args = [], []
        if older_than_s is not None:
            if not older_than_s >= 0:  # also refuses NaN
                raise InputError(
                    f"must be a duration >= 0, got {older_than_s}", field="older_than_s"
                )
            conds.append("COALESCE(last_hit_at, created_at) < ?")
            args.append(time.time() - older_than_s)
        if model is not None:
            conds.append("model_id LIKE ?")
            args.append(f"%{model}%")
        if parser_version is not None:
            conds.append("parser_version = ?")
            args.append(parser_version)
        if unused:
            conds.append("hits = 0")
        return (" WHERE " + " AND ".join(conds)) if conds else "", args

    def count(
        self,
        *,
        older_than_s: float | None = None,
        model: str | None = None,
        parser_version: str | None = None,
        unused: bool = False,
    ) -> int:
        """How many entries :meth:`prune` would delete with the same criteria."""
        where, args = self._where(
            older_than_s=older_than_s, model=model, parser_version=parser_version, unused=unused
        )
        with self._lock, self._guard("counting entries"):
            return int(
                self._conn.execute("SELECT COUNT(*) FROM responses" + where, args).fetchone()[0]
            )

    def prune(
        self,
        *,
        older_than_s: float | None = None,
        model: str | None = None,
        parser_version: str | None = None,
        unused: bool = False,
        vacuum: bool = True,
    ) -> int:
        """Delete entries not used for ``older_than_s`` seconds / of a model / of a parser version.

        With no criterion at all nothing is deleted (use ``older_than_s=0`` to empty the cache).
        A negative or NaN ``older_than_s`` is refused (``InputError``).
        """
        if older_than_s is None and model is None and parser_version is None and not unused:
            return 0
        where, args = self._where(
            older_than_s=older_than_s, model=model, parser_version=parser_version, unused=unused
        )
        with self._lock, self._guard("deleting entries"):
            n = self._retry(
                lambda: self._conn.execute("DELETE FROM responses" + where, args).rowcount
            )
            if vacuum and n:
                self._retry(lambda: self._conn.execute("VACUUM"))
        return int(n)

    def iter_entries(
        self, *, model: str | None = None, parser_version: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Stored entries, oldest first; an unreadable stored JSON is counted and skipped."""
        where, args = self._where(older_than_s=None, model=model, parser_version=parser_version)
        with self._lock, self._guard("reading entries"):
            rows = self._conn.execute(
                "SELECT key, kind, model_id, parser_version, request_json, response_json, prompt_tokens, completion_tokens, "
                "latency_s, created_at, hits, endpoint FROM responses"
                + where
                + " ORDER BY created_at",
                args,
            ).fetchall()
        for r in rows:
            try:
                request, response = json.loads(r[4]), json.loads(r[5])
            except ValueError as e:
                self.corrupt_rows += 1
                log.warning("%s: unreadable entry %s skipped (%s)", self.path, r[0][:12], e)
                continue
            yield {
                "key": r[0],
                "kind": r[1],
                "model_id": r[2],
                "endpoint": r[11],
                "parser_version": r[3],
                "request": request,
                "response": response,
                "prompt_tokens": r[6],
                "completion_tokens": r[7],
                "latency_s": r[8],
                "created_at": r[9],
                "hits": r[10],
            }

    def export(
        self, out_path: str | Path, *, model: str | None = None, parser_version: str | None = None
    ) -> int:
        """Write entries as JSON Lines (atomically); returns how many."""
        n = 0
        with atomic_write(out_path) as fh:
            for e in self.iter_entries(model=model, parser_version=parser_version):
                fh.write(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n")
                n += 1
        return n
