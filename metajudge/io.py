"""Small I/O helpers shared by every module: atomic writes, hashing, canonical JSON, and the
checks every path from a user goes through (:func:`read_text`, :func:`inside`,
:func:`check_output_file`, :func:`check_out_dir`, :func:`prepare_out_dir`)."""

from __future__ import annotations

import contextlib
import csv
import errno
import hashlib
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

#: stage folder -> the run folder it becomes (:func:`metajudge.run_folder.run_folder`)
STAGES: dict[str, str] = {}


def final_path(p: str | Path) -> Path:
    """``p`` with the stage folder of a run folder being written replaced by the run folder
    (the path a user is shown); any other path unchanged."""
    s = str(p)
    for stage, out in STAGES.items():
        if s == stage or s.startswith(stage + os.sep):
            return Path(out + s[len(stage) :])
    return Path(p)


def _umask() -> int:
    """The process's umask: read from ``/proc/self/status`` (Linux) where it can be, which
    changes nothing; else set and restored at once (``os.umask`` has no read-only form)."""
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/self/status", encoding="ascii") as fh,
    ):
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
        if hasattr(os, "fchmod"):  # mkstemp gives 0600: the user's umask decides instead
            os.fchmod(fd, 0o666 & ~_umask())
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": ""}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename is None:
            raise _named(e, path) from e
        raise


def write_json(
    path: str | Path,
    obj: Any,
    *,
    indent: int | None = 1,
    ensure_ascii: bool = False,
    default: Any = str,
    end: str = "",
) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (:func:`atomic_write`), ``end`` after it."""
    with atomic_write(path) as fh:
        fh.write(json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii, default=default) + end)
    return Path(path)


def _named(e: OSError, path: Path) -> OSError:
    """``e`` with the file it was writing named (a full disk says which path could not be
    written, and what to do, instead of "a file")."""
    what = e.strerror or str(e) or type(e).__name__
    if e.errno == errno.ENOSPC:
        what += " (free space on that disk or write the output elsewhere, e.g. another --out)"
    return OSError(e.errno, what, str(final_path(path)))


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
        raise _not_utf8(data[e.start], e.start, path, line, field) from None


def _not_utf8(byte: int, offset: int, path: Path, line: int, field: str | None) -> Exception:
    from metajudge.errors import InputError

    return InputError(
        f"not UTF-8 text (byte 0x{byte:02x} at offset {offset}); convert it to UTF-8",
        path=path,
        line=line,
        field=field,
    )


def text_lines(path: str | Path) -> Iterator[str]:
    """The UTF-8 text of ``path`` one line at a time (split at ``\\n`` only, the newline not
    kept; a final newline ends the last line), read as a stream: the errors of
    :func:`read_text`, a bad byte named by its offset in the file and its line."""
    from metajudge.errors import InputError

    path = Path(path)
    if path.is_dir() or not path.is_file():
        read_text(path)  # raises: a folder, or no such file
    try:
        with open(path, "rb") as fh:
            offset = 0
            for i, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise _not_utf8(raw[e.start], offset + e.start, path, i, None) from None
                offset += len(raw)
                yield text.removesuffix("\n")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path=path) from None


def inside(
    root: str | Path, relpath: str | Path, *, what: str = "path", source: str | Path | None = None
) -> Path:
    """``root / relpath`` resolved, refused (``InputError``; ``source``: the file that named
    it) unless it stays inside ``root``: absolute paths, ``..`` and symlinks that lead out are
    all caught, before anything is read.

    >>> inside("/data", "a/b.json").as_posix().endswith("/data/a/b.json")
    True
    """
    from metajudge.errors import InputError

    base = Path(root).resolve()
    target = (base / relpath).resolve()
    if not target.is_relative_to(base):
        raise InputError(
            f"{what} {str(relpath)!r} leads outside {base}; it was not read",
            path=source,
            field=what,
        )
    return target


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _clash(out: Path, src: Path) -> str | None:
    """How writing ``out`` would change the input ``src`` (None: it would not): ``out`` is
    ``src`` (the same path, through symlinks, or the same inode), lies inside the input folder
    ``src``, or is a folder holding ``src`` (a run folder is replaced as a whole)."""
    if _same_file(out, src):
        return "is also an input"
    try:
        o, i = out.resolve(), src.resolve()
    except (OSError, RuntimeError):  # a symlink loop: nothing to compare
        return None
    if i.is_dir() and o.is_relative_to(i):
        return f"lies inside the input folder {src}"
    if i.is_relative_to(o):
        return f"holds the input {src}"
    return None


def _parents_are_folders(p: Path, field: str) -> None:
    """Refuse ``p`` when its nearest existing parent is a file (``x.jsonl/out``)."""
    from metajudge.errors import InputError

    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{parent} is a file, not a folder", path=p, field=field)
            return


def _not_an_input(p: Path, inputs: Sequence[str | Path | None], field: str) -> None:
    """Refuse an output path that would change one of ``inputs`` (:func:`_clash`: the input
    itself, a path inside an input folder, or a folder holding an input), naming the option and
    the input: no output ever replaces or changes an input."""
    from metajudge.errors import InputError

    for src in inputs:
        why = None if src is None or not str(src) else _clash(p, Path(src))
        if why is not None:
            raise InputError(
                f"{why}; write the output elsewhere (inputs are never changed)",
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
    _not_an_input(p, inputs, field)
    _parents_are_folders(p, field)
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
    """Refuse (``InputError``) a run folder that is an existing file, one below a file, one
    that is an input file, and one writing would harm (:func:`metajudge.out_folder.
    check_out_folder`: ``""``, the working directory, a folder of other files); creates nothing
    (a command checks ``--out`` before any work and writes the folder only when it has a
    result, so a refused run leaves no trace)."""
    from metajudge.errors import InputError
    from metajudge.out_folder import check_out_folder

    p = Path(path)
    _not_an_input(p, inputs, field)
    if p.exists() and not p.is_dir():
        raise InputError("is a file; --out takes a folder", path=p, field=field)
    _parents_are_folders(p, field)
    check_out_folder(path, field=field)
    return p


def read_json(path: str | Path, *, finite: bool = False) -> Any:
    """Parse a JSON file; a missing file, bytes that are not UTF-8, malformed JSON, nesting
    deeper than :data:`MAX_JSON_DEPTH`, a lone surrogate escape, an integer too long to read
    or (``finite``) a NaN or infinite number raise ``InputError`` naming file, line and field
    (:func:`parse_json`)."""
    path = Path(path)
    return parse_json(read_text(path), path=path, finite=finite)


#: The deepest nesting of arrays and objects any JSON input may have (a deeper one is refused
#: with file, line and field, not left to end in ``RecursionError``).
MAX_JSON_DEPTH = 200

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})")
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?|[\[\]{}]')


def parse_json(
    text: str, *, path: str | Path | None, line: int | None = None, finite: bool = False
) -> Any:
    r"""THE JSON parser of every input: ``json.loads`` of ``text`` (from ``path``; ``line``: the
    line of a JSON Lines record), refusing with ``InputError`` (file, line, field) malformed
    JSON, nesting deeper than :data:`MAX_JSON_DEPTH`, a lone UTF-16 surrogate escape
    (``"\ud800"``: not text; it would fail later when written or hashed), an integer longer than
    Python reads (``sys.get_int_max_str_digits()``, 4300 digits), an integer outside the range
    of a float (:func:`_refuse_huge_integer`: every number an input gives is read as a float,
    where it would raise ``OverflowError``) and, with ``finite``, a number that is ``NaN``,
    ``Infinity`` or too large for a float (``1e309``).

    >>> parse_json('{"a": [1, 2]}', path=None)
    {'a': [1, 2]}
    >>> parse_json('{"id": "x\\ud800"}', path="d.jsonl", line=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: d.jsonl:3: field id: a lone surrogate \ud800 is not text; ...
    >>> parse_json('{"s": ' + "9" * 400 + '}', path="h.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: h.json:1: field s: a number outside the range of a float (999…, 400 digits; ...
    >>> parse_json('{"a": {"x": NaN}}', path="h.json", finite=True)
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: h.json:1: field a.x: NaN is not a finite number
    """
    from metajudge.errors import InputError

    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        msg = f"malformed JSON: {e.msg}" + (f" (column {e.colno})" if line is not None else "")
        at = line if line is not None else e.lineno
        raise InputError(msg, path=path, line=at, field="<json>") from None
    except ValueError as e:  # an integer past Python's int-str conversion limit
        ln, field = _locate(text, pos=_long_integer(text))
        raise InputError(
            f"a number with more digits than can be read ({str(e).split(';')[0]})",
            path=path,
            line=ln if line is None else line,
            field=field,
        ) from None
    except RecursionError:
        obj, plain, too_deep = None, False, True
    else:  # the checks of the text only where the one walk of the value finds a refusal
        plain = plain_json(obj)
        too_deep = not plain and _too_deep(obj)
    if too_deep:
        ln, field = _locate(text, depth=MAX_JSON_DEPTH + 1)
        raise InputError(
            f"nested deeper than {MAX_JSON_DEPTH} levels of arrays/objects",
            path=path,
            line=ln if line is None else line,
            field=field,
        )
    if not plain:
        _refuse_lone_surrogate(text, path, line)
        _refuse_huge_integer(text, path, line)
    if finite:
        _refuse_non_finite(obj, text, path, line)
    return obj


_NUMBER_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN|-?\d[\d.eE+-]*')


#: A run of digits this long may be an integer past a float's range (``2**1024`` has 309 digits).
_HUGE_DIGITS = re.compile(r"\d{309,}")


def may_hold_huge_integer(text: str) -> bool:
    """Whether ``text`` has a run of 309 or more digits (one C-speed scan): only then can it hold
    an integer :func:`parse_json` refuses as outside a float's range."""
    return len(text) >= 309 and _HUGE_DIGITS.search(text) is not None


def plain_json(obj: Any) -> bool:
    """Whether parsed JSON ``obj`` holds nothing :func:`parse_json` refuses once parsed: nesting
    at most :data:`MAX_JSON_DEPTH` deep, no lone surrogate (a surrogate code point in a key or a
    string: the one a lone ``\\udXXX`` escape decodes to; the scanner joins a pair into one
    character), no integer outside a float's range (``abs >= 2**1024``). One walk of the
    containers, the keys and strings tested at once (their joined text ASCII, else searched for a
    surrogate): cheaper on a line of long texts than any scan of its characters (of brackets,
    escapes or digits), and as cheap on a short one."""
    stack, texts = [(obj, 1)] if type(obj) in (dict, list) else [([obj], 0)], []
    while stack:
        o, depth = stack.pop()
        if type(o) is dict:
            texts += o  # the keys
            o = o.values()
        for v in o:
            t = type(v)
            if t is str:
                texts.append(v)
            elif t is dict or t is list:
                if depth >= MAX_JSON_DEPTH:  # v one level deeper
                    return False
                stack.append((v, depth + 1))
            elif t is int and v.bit_length() > 1024:
                return False
    joined = "".join(texts)
    return joined.isascii() or _SURROGATE.search(joined) is None


def _refuse_huge_integer(text: str, path: str | Path | None, line: int | None) -> None:
    """Refuse an integer of JSON ``text`` that no float can hold (``abs >= 2**1024``), naming its
    line and field: every number of an input is read as a float somewhere, and ``float()`` of
    one raises ``OverflowError`` (a huge *decimal* such as ``1e309`` is read as infinity, which
    each reader refuses or counts by its own rule)."""
    from metajudge.errors import InputError

    if not may_hold_huge_integer(text):
        return
    for m in _NUMBER_OR_STRING.finditer(text):
        tok = m.group(0).lstrip("-")
        if tok[0] == '"' or len(tok) < 309 or not tok.isdigit():
            continue
        if len(tok) < 400 and int(tok) < 2**1024:
            continue
        ln, field = _locate(text, pos=m.start())
        raise InputError(
            f"a number outside the range of a float ({tok[:3]}…, {len(tok)} digits; at most "
            "about 1.8e308)",
            path=path,
            line=ln if line is None else line,
            field=field,
        )


def _long_integer(text: str) -> int:
    """The offset of the first number in JSON ``text`` with more digits than Python reads."""
    limit = sys.get_int_max_str_digits() or 4300
    for m in _NUMBER_OR_STRING.finditer(text):
        tok = m.group(0)
        if tok[0] != '"' and len(tok) > limit:
            return m.start()
    return 0


def _refuse_non_finite(obj: Any, text: str, path: str | Path | None, line: int | None) -> None:
    """Refuse a number in ``obj`` that is NaN or infinite (``NaN``, ``Infinity``, ``1e309``),
    naming the line and field of the first one in ``text``."""
    from metajudge.errors import InputError

    stack, bad = [obj], False
    while stack and not bad:
        o = stack.pop()
        if type(o) is dict:
            stack.extend(o.values())
        elif type(o) is list:
            stack.extend(o)
        else:
            bad = type(o) is float and not math.isfinite(o)
    if not bad:
        return
    for m in _NUMBER_OR_STRING.finditer(text):
        tok = m.group(0)
        if tok[0] != '"' and not math.isfinite(float(tok)):
            ln, field = _locate(text, pos=m.start())
            raise InputError(
                f"{tok[:20]} is not a finite number",
                path=path,
                line=ln if line is None else line,
                field=field,
            )


def _too_deep(obj: Any) -> bool:
    """Whether ``obj`` nests arrays/objects deeper than :data:`MAX_JSON_DEPTH` (level by level,
    no recursion)."""
    level = [obj]
    for _ in range(MAX_JSON_DEPTH):
        below = []
        for o in level:
            for c in o.values() if type(o) is dict else o:
                if type(c) is dict or type(c) is list:
                    below.append(c)
        if not below:
            return False
        level = below
    return True


def _refuse_lone_surrogate(text: str, path: str | Path | None, line: int | None) -> None:
    """Refuse a ``\\udXXX`` escape that is not half of a surrogate pair."""
    from metajudge.errors import InputError

    if "\\u" not in text and "\\U" not in text:
        return
    pairs = [
        (m.start(), m.end(), int(m.group(2), 16))
        for m in _SURROGATE_ESCAPE.finditer(text)
        if len(m.group(1)) % 2 == 1
    ]  # an even run of backslashes is a literal backslash
    for i, (start, end, code) in enumerate(pairs):
        nxt = pairs[i + 1] if i + 1 < len(pairs) else None
        prev = pairs[i - 1] if i else None
        if code < 0xDC00:
            paired = nxt is not None and nxt[0] == end and nxt[2] >= 0xDC00
        else:
            paired = prev is not None and prev[1] == start and prev[2] < 0xDC00
        if not paired:
            ln, field = _locate(text, pos=start)
            raise InputError(
                f"a lone surrogate \\u{code:04x} is not text; remove it or give the character "
                "it was meant to be",
                path=path,
                line=ln if line is None else line,
                field=field,
            )


def _locate(text: str, *, depth: int | None = None, pos: int | None = None) -> tuple[int, str]:
    """``(line, field)`` in JSON ``text`` of the first point nested ``depth`` deep, or of the
    string at offset ``pos``; the field is the key path (``a.b[]``), shortened when long."""
    path: list[str] = []
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group(0)
        if pos is not None and m.end() > pos:
            break
        if tok in "[{":
            path.append("[]" if tok == "[" else "")
            if depth is not None and len(path) >= depth:
                pos = m.start()
                break
        elif tok in "]}":
            if path:
                path.pop()
        elif m.group(1) and path:
            path[-1] = tok[: tok.rindex('"') + 1].strip('"')
    names = [p for p in path if p]
    shown = "".join(p if p == "[]" else f".{p}" for p in names[:4]).lstrip(".")
    shown += "…" if len(names) > 4 else ""
    return text.count("\n", 0, pos or 0) + 1, shown or "<json>"


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


#: The longest CSV cell any reader reads, in characters (Python's csv module stops at 131,072,
#: shorter than a ragas ``retrieved_contexts`` cell or a long note may be); a longer cell is an
#: error naming file and line, not a ``_csv.Error`` traceback. The one place CSV input is read
#: by the csv module: :func:`csv_reader`.
CSV_FIELD_LIMIT = 1 << 30


class CsvReader:
    """A ``csv.reader`` (``dicts``: ``csv.DictReader``) whose errors name the file and line
    (:func:`csv_reader`); iterate it as either, ``fieldnames`` and ``line_num`` as theirs."""

    def __init__(self, reader: Any, path: str | Path | None) -> None:
        self._reader, self.path = reader, path
        self._rows = self._guarded()

    def _guarded(self) -> Iterator[Any]:
        try:
            yield from self._reader
        except csv.Error as e:
            raise self._error(e) from None

    def _error(self, e: csv.Error) -> Exception:
        from metajudge.errors import InputError

        msg = str(e)
        if "field larger than field limit" in msg:
            msg = f"a cell longer than {CSV_FIELD_LIMIT:,} characters"
        elif "unexpected end of data" in msg:
            msg = "the file ends inside a quoted cell (a truncated file?)"
        return InputError(f"not readable as CSV: {msg}", path=self.path, line=self.line_num)

    def __iter__(self) -> Iterator[Any]:
        return self._rows

    def __next__(self) -> Any:
        return next(self._rows)

    @property
    def fieldnames(self) -> Any:
        try:
            return self._reader.fieldnames
        except csv.Error as e:
            raise self._error(e) from None

    @property
    def line_num(self) -> int:
        return int(self._reader.line_num)


def csv_reader(
    lines: Iterable[str],
    path: str | Path | None,
    *,
    delimiter: str = ",",
    dicts: bool = False,
    strict: bool = False,
) -> CsvReader:
    """THE csv-module reader of CSV input ``lines`` (an open file or text lines) from ``path``:
    cells up to :data:`CSV_FIELD_LIMIT` characters, rows as lists (``dicts``: as dicts by
    header, as ``csv.DictReader``); with ``strict``, a file that ends inside a quoted cell (cut
    short) or quotes a cell badly is refused. A ``csv.Error`` is an ``InputError`` naming
    ``path`` and the line.

    >>> list(csv_reader(["a,b", "1,2"], "t.csv", dicts=True))
    [{'a': '1', 'b': '2'}]
    >>> list(csv_reader(['a,b', '1,"x'], "t.csv", strict=True))
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: t.csv:2: not readable as CSV: the file ends inside a quoted cell (a truncated file?)
    """
    csv.field_size_limit(CSV_FIELD_LIMIT)
    make = csv.DictReader if dicts else csv.reader
    return CsvReader(make(lines, delimiter=delimiter, strict=strict), path)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(v: Any) -> Any:
    """A CSV cell that a spreadsheet cannot run: a carriage return or line feed inside a string
    is written as the two characters ``\\r`` / ``\\n`` (a raw one would start a new row for a
    reader: a name ``x\\r=cmd|…`` would put a formula first in a row of its own); a string
    starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``
    (OWASP's advice against formula injection); numbers, and strings that read as a number
    (``-0.25``), are kept.

    >>> csv_cell("=cmd|' /C calc'!A0"), csv_cell("@SUM(1+1)"), csv_cell(-0.25), csv_cell("-0.25")
    ("'=cmd|' /C calc'!A0", "'@SUM(1+1)", -0.25, '-0.25')
    >>> csv_cell("bleu\\r=cmd|' /C calc'!A0"), csv_cell("\\n@x")
    ("bleu\\\\r=cmd|' /C calc'!A0", '\\\\n@x')
    """
    if isinstance(v, str) and ("\r" in v or "\n" in v):
        v = v.replace("\r", "\\r").replace("\n", "\\n")
    if not isinstance(v, str) or not v.startswith(_FORMULA_START):
        return v
    try:
        float(v)
    except ValueError:
        return "'" + v
    return v


class CsvWriter:
    """``csv.writer`` whose every cell goes through :func:`csv_cell` (THE CSV writer)."""

    def __init__(self, fh: IO[str], **kwargs: Any) -> None:
        self._w = csv.writer(fh, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._w.writerow([csv_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for r in rows:
            self.writerow(r)


class CsvDictWriter(csv.DictWriter):  # type: ignore[type-arg]
    """``csv.DictWriter`` whose header and cells go through :func:`csv_cell`."""

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return self.writer.writerow([csv_cell(v) for v in self._dict_to_list(rowdict)])

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for r in rowdicts:
            self.writerow(r)
