"""The response cache's inter-process lock: ``<cache file>.lock`` beside the SQLite file.

Every process that has a cache open for writing holds a shared lock on it (:func:`share`, taken
by :class:`~metajudge.backends.cache.ResponseCache` and released by ``close()``); ``metajudge
cache prune --damaged``, which moves the file aside, takes it exclusively (:func:`exclusive`) and refuses
while another process holds it, so it never pulls the file from under a live run (issue 30: 10
of 40 entries a concurrent run had just written were lost).

POSIX record locks (``fcntl.lockf``) belong to the process, so one process never blocks itself;
one descriptor per lock file and process is kept with a count of its users, because closing any
descriptor of a file drops all of the process's locks on it. Where locks cannot be taken (no
``fcntl``, a folder that cannot be written) the cache works unlocked.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from metajudge.errors import CacheError

log = logging.getLogger(__name__)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock
    fcntl = None  # type: ignore[assignment]

_HELD: dict[str, list[int]] = {}  # lock file -> [descriptor, users]
_GUARD = threading.Lock()


def lock_path(path: str | Path) -> Path:
    """The lock file of the cache at ``path``."""
    p = Path(path)
    return p.with_name(p.name + ".lock")


def _open(lock: Path) -> int | None:
    try:
        return os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        log.debug("%s: no cache lock (%s)", lock, e)
        return None


def share(path: str | Path) -> str | None:
    """Take the shared lock of the cache at ``path`` (waits while a repair holds it); returns a
    token for :func:`release`, ``None`` where no lock can be taken."""
    if fcntl is None:
        return None
    lock = str(lock_path(path).resolve())
    with _GUARD:
        held = _HELD.get(lock)
        if held is not None:
            held[1] += 1
            return lock
        fd = _open(Path(lock))
        if fd is None:
            return None
        fcntl.lockf(fd, fcntl.LOCK_SH)
        _HELD[lock] = [fd, 1]
        return lock


def release(token: str | None) -> None:
    """Give back a lock :func:`share` took."""
    if token is None:
        return
    with _GUARD:
        held = _HELD.get(token)
        if held is None:
            return
        held[1] -= 1
        if held[1] <= 0:
            del _HELD[token]
            os.close(held[0])  # drops the lock


@contextlib.contextmanager
def exclusive(path: str | Path) -> Iterator[None]:
    """Hold the cache at ``path`` exclusively; a :class:`CacheError` naming the file when another
    process has it open. (This process's own users of the lock share its descriptor.)"""
    if fcntl is None:
        yield
        return
    lock = str(lock_path(path).resolve())
    with _GUARD:
        held = _HELD.get(lock)
        fd = held[0] if held is not None else _open(Path(lock))
        if fd is None:
            raise CacheError(
                f"{lock}: cannot create the cache's lock file; its folder must be writable"
            )
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if held is None:
                os.close(fd)
            raise CacheError(
                f"{path}: the response cache is in use by another process (it holds a lock on "
                f"{lock}); let that run finish or stop it, then run `metajudge cache prune --damaged` again"
            ) from None
        if held is None:
            held = _HELD[lock] = [fd, 0]
        held[1] += 1
    try:
        yield
    finally:
        with _GUARD:
            held[1] -= 1
            if held[1] <= 0:
                del _HELD[lock]
                os.close(fd)
            else:  # this process still has the cache open: back to shared
                fcntl.lockf(fd, fcntl.LOCK_SH)
