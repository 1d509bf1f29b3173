"""Small I/O helpers shared by every module: atomic writes, hashing, canonical JSON, and the
checks every path from a user goes through (:func:`read_text`, :func:`inside`,
:func:`check_output_file`, :func:`check_out_dir`, :func:`prepare_out_dir`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_write(
    path: str | Path, mode: str = "w", encoding: str | None = "utf-8"
) -> Iterator[IO[Any]]:
    """Write to a temporary file in the target folder, rename over ``path`` only on success.

    If the body raises, the temporary file is removed and ``path`` is untouched: no partial
    output is ever left behind.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": ""}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_text(path: str | Path, *, field: str | None = None) -> str:
    """The UTF-8 text of ``path``; a missing file, a folder, an unreadable file or bytes that are
    not UTF-8 raise ``InputError`` naming the file (and the line of the bad byte)."""
    from metajudge.errors import InputError

    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder, not a file", path=path, field=field)
    if not path.is_file():
        raise InputError("file not found", path=path, field=field)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path=path, field=field) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); convert it to UTF-8",
            path=path,
            line=line,
            field=field,
        ) from None


def inside(root: str | Path, relpath: str | Path, *, what: str = "path") -> Path:
    """``root / relpath`` resolved, refused (``InputError``) unless it stays inside ``root``:
    absolute paths, ``..`` and symlinks that lead out are all caught.

    >>> inside("/data", "a/b.json").as_posix().endswith("/data/a/b.json")
    True
    """
    from metajudge.errors import InputError

    base = Path(root).resolve()
    target = (base / relpath).resolve()
    if not target.is_relative_to(base):
        raise InputError(f"{what} {str(relpath)!r} leads outside {base}", field=what)
    return target


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _parents_are_folders(p: Path, field: str) -> None:
    """Refuse ``p`` when its nearest existing parent is a file (``x.jsonl/out``)."""
    from metajudge.errors import InputError

    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{parent} is a file, not a folder", path=p, field=field)
            return


def _not_an_input(p: Path, inputs: Sequence[str | Path | None], field: str) -> None:
    """Refuse an output path that is one of ``inputs`` (an input is never overwritten)."""
    from metajudge.errors import InputError

    for src in inputs:
        if src is not None and _same_file(p, Path(src)):
            raise InputError(
                "is also an input; write the output elsewhere (inputs are never overwritten)",
                path=p,
                field=field,
            )


def check_output_file(
    path: str | Path, *, inputs: Sequence[str | Path | None] = (), field: str = "--output"
) -> Path:
    """Refuse (``InputError``) an output file that is a folder, that lies in a path whose parent
    is a file, or that is one of ``inputs`` (an input is never overwritten). Returns the path."""
    from metajudge.errors import InputError

    p = Path(path)
    if p.is_dir():
        raise InputError("is a folder; give a file name", path=p, field=field)
    _parents_are_folders(p, field)
    _not_an_input(p, inputs, field)
    return p


def prepare_out_dir(
    path: str | Path, *, inputs: Sequence[str | Path | None] = (), field: str = "--out"
) -> Path:
    """Create the run folder ``path`` (parents too) after :func:`check_out_dir`."""
    from metajudge.errors import InputError

    p = check_out_dir(path, inputs=inputs, field=field)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(
            f"cannot create the folder: {e.strerror or e}", path=p, field=field
        ) from None
    return p


def check_out_dir(
    path: str | Path, *, inputs: Sequence[str | Path | None] = (), field: str = "--out"
) -> Path:
    """Refuse (``InputError``) a run folder that is an existing file, one below a file, and one
    that is an input file; creates nothing (a command checks ``--out`` before any work and writes
    the folder only when it has a result, so a refused run leaves no trace)."""
    from metajudge.errors import InputError

    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError("is a file; --out takes a folder", path=p, field=field)
    _parents_are_folders(p, field)
    _not_an_input(p, inputs, field)
    return p


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; a missing file, bytes that are not UTF-8 or malformed JSON raise
    ``InputError`` naming file and line."""
    from metajudge.errors import InputError

    path = Path(path)
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(
            f"malformed JSON: {e.msg}", path=path, line=e.lineno, field="<json>"
        ) from None


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def canonical_json(obj: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces) used for hashing and cache keys."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
