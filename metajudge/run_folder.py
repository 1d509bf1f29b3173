"""A run folder (``--out``) written as a set: every run writer goes through :func:`run_folder`.

The files of a run are written into a temporary sibling folder (``.<name>.stage-<run id>``),
``manifest.json`` last (the run id, and the sha256 of every file), and the folder is then put in
place of ``--out`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere two renames, the
old folder kept until the new one is in place). A ``kill -9`` at any moment leaves ``--out``
holding one whole run, the old or the new, never the files of two.

Only a run folder (its ``manifest.json`` says so) is ever replaced. ``--out`` may also be a new
folder or an empty one, which is filled in place (never renamed: it is the user's); anything
else is refused before any work (:func:`metajudge.out_folder.check_out_folder`). ``--out`` a
symlink: the folder it points to is written (the link stays as it is).

What the folder held that the old run did not write (``scores.jsonl``, the score cache; a
user's own files; files rewritten since the old run, e.g. by this run's scoring phase) is
carried into the new folder (hard links). Stale temporaries (``.<file>.*.tmp`` of an
interrupted atomic write, stage and old folders of a killed run) are removed.

:func:`run_lock`: one run at a time per ``--out`` (``.<name>.lock`` beside it, an ``flock``
the kernel releases when the process dies); a second run refuses with exit 2 naming the first
(pid, start time); the file goes when the lock is released. A run folder inside a folder
another run holds, or one holding such a folder, is refused the same way (the outer run's
stage would replace the inner run's output). :func:`check_manifest`: readers refuse a file the manifest does not vouch for.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from metajudge.io import STAGES, _named
from metajudge.out_folder import MANIFEST, check_out_folder, is_ours, is_run_folder, target

#: the result files a reader renders a folder from (checked against the manifest first)
RESULT_FILES = ("result.json", "swap.json", "decision.json", "diagnostics.json")
_HELD: dict[str, int] = {}  # resolved --out -> nesting count of this process's lock
_LOCK_FDS: dict[str, int] = {}  # resolved --out -> the fd holding its flock


def _drop_locks_in_child() -> None:
    """In a forked child (the plots' child of a run): close the inherited lock fds, so that a
    child outliving a killed run does not hold its folder's lock (the flock is the parent's)."""
    for fd in _LOCK_FDS.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _LOCK_FDS.clear()
    _HELD.clear()


os.register_at_fork(after_in_child=_drop_locks_in_child)


def _lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.lock"


def _holder(lock: Path) -> str:
    try:
        info = json.loads(lock.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        info = {}
    return f"pid {info.get('pid', '?')}, started {info.get('started', '?')}"


@contextlib.contextmanager
def run_lock(out: str | Path) -> Iterator[None]:
    """Hold the lock of run folder ``out`` (re-entrant within a process); refuse
    (``InputError``, exit 2) while another process holds it, naming its pid and start time.
    The lock file is removed on release (a refused run leaves no trace)."""
    out = target(out)
    key = str(out)
    if _HELD.get(key):
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = _lock_path(out)
    fd = _acquire(lock, out)
    _LOCK_FDS[key] = fd
    try:
        started = datetime.now(UTC).isoformat(timespec="seconds")
        try:
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps({"pid": os.getpid(), "started": started}).encode())
        except OSError as e:  # a full disk: the error names --out, and no lock file is left
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)
            raise _named(e, out) from e
        _HELD[key] = 1
        try:
            _refuse_nested(out)
            _recover(out)
            yield
        finally:
            _HELD.pop(key, None)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)  # while holding it: whoever opens it next makes a new one
    finally:
        _LOCK_FDS.pop(key, None)
        os.close(fd)


def _acquire(lock: Path, out: Path) -> int:
    """An fd holding the ``flock`` of ``lock``, the file still at that path (one unlinked by a
    releasing holder between our open and our lock is opened afresh)."""
    import fcntl

    from metajudge.errors import InputError

    tries = 20  # a nested run's check (_held_elsewhere) holds it shared for a moment
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            tries -= 1
            if tries:
                time.sleep(0.005)
                continue
            raise InputError(
                f"another run is writing into this folder ({_holder(lock)}); wait for it to "
                "finish or give another --out",
                path=out,
                field="--out",
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


def _held_elsewhere(lock: Path) -> bool:
    """Whether another process holds the run lock file ``lock`` now (one of this process's own
    locks is not: a writer nests run folders in the folder it holds)."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:  # gone (released), or not ours to read
        return False
    ours = {(st.st_dev, st.st_ino) for st in map(os.fstat, _LOCK_FDS.values())}
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) in ours:  # whatever path names it
        os.close(fd)
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # drops the shared lock taken, if any
    return False


def _refuse_nested(out: Path) -> None:
    """Refuse (``InputError``, exit 2) a run folder inside a folder another run is writing
    (its stage replaces the folder, and with it this run's output), or one holding a folder
    another run is writing; called with ``out``'s own lock held, so of two runs started at once
    at least one sees the other."""
    from metajudge.errors import InputError

    found = [a for a in out.parents if _held_elsewhere(_lock_path(a))]
    if out.is_dir() and not found:
        found = [
            Path(d) / name[1 : -len(".lock")]
            for d, _, files in os.walk(out)
            for name in files
            if name.startswith(".") and name.endswith(".lock")
            if _held_elsewhere(Path(d) / name)
        ]
    if found:
        other = found[0]
        how = "lies inside" if other in out.parents else "holds"
        raise InputError(
            f"{how} the run folder {other}, which another run is writing "
            f"({_holder(_lock_path(other))}); wait for it to finish or give another --out",
            path=out,
            field="--out",
        )


def _siblings(out: Path, kind: str) -> list[Path]:
    return sorted(out.parent.glob(f".{out.name}.{kind}-*")) if out.parent.is_dir() else []


def _recover(out: Path) -> None:
    """Under the lock: put back a run a kill left between the two renames, remove stale stage
    and old folders."""
    if not out.exists():
        done = [s for s in _siblings(out, "stage") if (s / MANIFEST).is_file()]
        olds = _siblings(out, "old")
        back = done[-1] if done else (olds[-1] if olds else None)
        if back is not None:
            os.rename(back, out)
    for stale in (*_siblings(out, "stage"), *_siblings(out, "old")):
        shutil.rmtree(stale, ignore_errors=True)


def read_manifest(out: str | Path) -> dict[str, Any] | None:
    """The run folder's manifest (None for a folder written before manifests)."""
    p = Path(out) / MANIFEST
    if not p.is_file():
        return None
    from metajudge.io import read_json

    m = read_json(p)
    return m if isinstance(m, dict) else None


def _carry(src: Path, dst: Path, skip: Mapping[str, str]) -> None:
    """Hard-link (else copy) into ``dst`` what ``src`` holds that is not an old output (``skip``:
    name -> the sha256 the old manifest gives; a file changed since is carried)."""
    from metajudge.io import sha256_file

    for p in src.iterdir():
        if is_ours(p.name) or p.name == MANIFEST:
            continue
        rel = p.name
        if rel in skip and (p.is_dir() or sha256_file(p) == skip[rel]):
            continue
        target = dst / rel
        if p.is_dir() and not p.is_symlink():
            shutil.copytree(p, target, copy_function=_link_or_copy, symlinks=True)
        else:
            _link_or_copy(p, target)


def _link_or_copy(a: str | Path, b: str | Path) -> None:
    try:
        os.link(a, b, follow_symlinks=False)
    except OSError:
        shutil.copy2(a, b, follow_symlinks=False)


def _exchange(a: Path, b: Path) -> bool:
    """Swap folders ``a`` and ``b`` in one step (Linux ``renameat2``); False where unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _put_in_place(stage: Path, out: Path, run_id: str, replace: bool) -> None:
    """``stage`` becomes ``out``: renamed there (a new folder), exchanged with it (``replace``: a
    run folder), or moved into it file by file (an empty folder, or one of a nested writer's:
    never renamed), the manifest first, so that an interrupted fill is a run folder the next
    run replaces (readers refuse its missing files)."""
    if not out.exists():
        os.rename(stage, out)
        return
    if not replace:
        for p in out.iterdir():  # stale temporaries of ours
            if is_ours(p.name) and p.is_file() and not p.is_symlink():
                p.unlink(missing_ok=True)
        names = sorted(os.listdir(stage), key=lambda n: n != MANIFEST)
        for name in names:
            os.replace(stage / name, out / name)
        shutil.rmtree(stage, ignore_errors=True)
        return
    if _exchange(stage, out):
        shutil.rmtree(stage, ignore_errors=True)  # now the old run
        return
    old = out.with_name(f".{out.name}.old-{run_id}")
    os.rename(out, old)
    os.rename(stage, out)
    shutil.rmtree(old, ignore_errors=True)


def write_file(folder: str | Path, name: str, content: str | bytes) -> Path:
    """Write file ``name`` of a run folder (text as UTF-8, or bytes), atomically: a reader sees
    the old file or the new one, never part of one. Every file of a run folder is written here;
    inside :func:`run_folder`, ``folder`` is the stage (the manifest vouches for the files when the
    stage is put in place). The file's path."""
    from metajudge.io import atomic_write

    path = Path(folder) / name
    if isinstance(content, bytes):
        with atomic_write(path, "wb", encoding=None) as fh:
            fh.write(content)
    else:
        with atomic_write(path) as fh:
            fh.write(content)
    return path


def write_json_file(folder: str | Path, name: str, obj: Any, **kw: Any) -> Path:
    """:func:`write_file` of ``obj`` as JSON (``kw``: :func:`json.dumps`' options) and a newline."""
    return write_file(folder, name, json.dumps(obj, **kw) + "\n")


def write_png(folder: str | Path, name: str, fig: Any, **kw: Any) -> Path:
    """:func:`write_file` of a matplotlib figure as PNG (``kw``: ``savefig``'s options)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", **kw)
    return write_file(folder, name, buf.getvalue())


@dataclass
class RunFolder:
    """A run folder being written: write into ``stage``; it becomes ``out`` on success."""

    out: Path
    stage: Path
    run_id: str
    kept: dict[str, str] = field(default_factory=dict)
    caches: set[str] = field(default_factory=set)

    def write_text(self, name: str, text: str) -> Path:
        """Write the run's file ``name`` (``text``) into the stage (:func:`write_file`); its
        stage path."""
        return write_file(self.stage, name, text)

    def write_cache(self, name: str, text: str) -> Path:
        """Write a cache (``scores.jsonl``) into the stage: it comes in place with the run's
        files, and the manifest records it under ``kept`` (carried into the next run, which may
        not rewrite it). Its stage path."""
        self.caches.add(name)
        return write_file(self.stage, name, text)

    def write_texts(self, texts: Mapping[str, str]) -> dict[str, Path]:
        """Write each ``{name: text}`` (:meth:`write_text`), in order; ``{name: stage path}``."""
        return {name: self.write_text(name, text) for name, text in texts.items()}

    def final(self, p: str | Path) -> Path:
        """Where ``p`` (a path in the stage) lies once the folder is in place."""
        s, stage = str(p), str(self.stage)
        if s == stage or s.startswith(stage + os.sep):
            return Path(str(self.out) + s[len(stage) :])
        return Path(p)


@contextlib.contextmanager
def maybe_locked(out: str | Path | None) -> Iterator[None]:
    """:func:`run_lock` of ``out``, or nothing when a command writes no folder (``out`` None)."""
    if out is None:
        yield
        return
    with run_lock(out):
        yield


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def run_folder(out: str | Path, *, run_id: str | None = None) -> Iterator[RunFolder]:
    """Write a run folder as a set (module docstring): yields a :class:`RunFolder` whose
    ``stage`` the caller writes into; on success the manifest is written last and the stage
    replaces ``out``; on an exception the stage is removed and ``out`` is untouched. ``out`` is
    checked first (:func:`check_out_folder`), unless this process already holds its lock (a
    writer that checked it and writes beside the run folder, e.g. the demo's sections)."""
    shown = Path(out).absolute()
    real = target(out)
    rid = run_id or new_run_id()
    nested = bool(_HELD.get(str(real)))
    with run_lock(real):
        if not nested:
            check_out_folder(shown)
        replace = real.is_dir() and is_run_folder(real)
        stage = real.with_name(f".{real.name}.stage-{rid}")
        stage.mkdir()
        STAGES[str(stage)] = str(shown)
        try:
            if replace:
                old = read_manifest(real) or {}
                _carry(real, stage, dict(old.get("files") or {}))
            carried = _listing(stage)
            rf = RunFolder(shown, stage, rid, kept=carried)
            yield rf
            now = _listing(stage)
            kept = {k for k, v in carried.items() if now.get(k) == v} | (rf.caches & set(now))
            write_manifest(stage, rid, kept=kept, listing=now)
            _put_in_place(stage, real, rid, replace)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        finally:
            STAGES.pop(str(stage), None)


def _listing(root: Path) -> dict[str, str]:
    """``name -> sha256`` of every file of ``root`` (subfolders, temporaries and the manifest
    left out: a subfolder is a run folder of its own)."""
    from metajudge.io import sha256_file

    return {
        p.name: sha256_file(p)
        for p in sorted(root.iterdir())
        if p.is_file() and not p.is_symlink() and not is_ours(p.name) and p.name != MANIFEST
    }


def write_manifest(
    folder: str | Path,
    run_id: str,
    *,
    kept: set[str] | None = None,
    listing: dict[str, str] | None = None,
) -> Path:
    """``manifest.json`` of ``folder``: the run id and the sha256 of each output (``files``) and
    of what was carried from before (``kept``); written last. ``listing``: :func:`_listing` of
    the folder when the caller has it."""
    folder = Path(folder)
    top = _listing(folder) if listing is None else listing
    kept = kept or set()
    doc = {
        "run_id": run_id,
        "written": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": {k: v for k, v in top.items() if k not in kept},
        "kept": {k: v for k, v in top.items() if k in kept},
    }
    return write_json_file(folder, MANIFEST, doc, indent=1, sort_keys=True)


def check_manifest(out: str | Path, names: Any = None) -> dict[str, Any] | None:
    """Refuse (``InputError``) a run folder whose files (``names``; default: every output the
    manifest lists) differ from what its manifest vouches for; None without a manifest."""
    from metajudge.errors import InputError
    from metajudge.io import sha256_file

    out = Path(out)
    m = read_manifest(out)
    if m is None:
        return None
    files = {**dict(m.get("kept") or {}), **dict(m.get("files") or {})}
    wanted = (
        list(m.get("files") or {}) if names is None else [n for n in names if (out / n).exists()]
    )
    for name in wanted:
        p = out / name
        if name not in files:
            raise InputError(
                f"not written by run {m.get('run_id')} (not in its {MANIFEST})", path=p
            )
        if not p.is_file() or sha256_file(p) != files[name]:
            raise InputError(
                f"changed since run {m.get('run_id')} wrote it (sha256 differs from {MANIFEST}); "
                "rerun the command that wrote the folder",
                path=p,
            )
    return m


def refresh_manifest(out: str | Path) -> None:
    """After an in-place re-render from the folder's own result (``metajudge report``): the
    manifest vouches for the re-rendered files, under the same run id."""
    m = read_manifest(out)
    if m is not None:
        write_manifest(out, str(m.get("run_id")), kept=set(m.get("kept") or {}))
