"""What a name or path taken from a card, a command line or the environment may look like.

Every dataset name, every file path of a card (``path``, ``local``), its ``repository`` and
``commit`` go through these checks before they touch the file system or a URL, so nothing read
from a card can lead outside its folder (issue 18: a card's ``local: "../../x"`` wrote outside the
cache; ``--dataset ../x`` loaded a card from outside the card folder).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from metajudge.errors import InputError

#: A dataset name: up to 128 characters, no ``/`` or ``\\``, no control character, not starting
#: with ``.`` and without ``..`` (it names a card file and a folder, and must stay one name).
NAME_PATTERN = re.compile(r"[^/\\\x00-\x1f.][^/\\\x00-\x1f]{0,127}")
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9_.\-]+")
_COMMIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}")


def check_dataset_name(name: Any, *, field: str = "name", path: Any = None) -> str:
    """``name`` if it is a valid dataset name, else ``InputError`` saying the rule.

    >>> check_dataset_name("hanna")
    'hanna'
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or ".." in name:
        raise InputError(
            f"{name!r} is not a dataset name (one name: no '/', no '..', no leading '.'); "
            "to read a file give --input FILE",
            path=path,
            field=field,
        )
    return name


def check_relpath(rel: Any, *, field: str, path: Any = None) -> str:
    """``rel`` if it is a relative POSIX path with no ``..``, no empty part and no backslash."""
    parts = PurePosixPath(rel).parts if isinstance(rel, str) and rel else ()
    if (
        not parts
        or rel.startswith("/")
        or "\\" in rel
        or "\x00" in rel
        or any(p in ("..", ".") for p in parts)
        or re.match(r"[A-Za-z]:", rel)
    ):
        raise InputError(
            f"{rel!r} must be a relative path inside the dataset's folder (no '..', no leading '/')",
            path=path,
            field=field,
        )
    return rel


def check_card_sources(d: dict[str, Any], *, path: Any = None) -> None:
    """Check the name, repository, commit and file paths of a card's dict (before it is built)."""
    check_dataset_name(d.get("name"), path=path)
    for key, pat in (("repository", _REPO), ("commit", _COMMIT)):
        v = d.get(key) or ""
        if v and (not isinstance(v, str) or not pat.fullmatch(v) or ".." in v):
            raise InputError(f"invalid {key} {v!r}", path=path, field=key)
    for i, f in enumerate(d.get("files") or ()):
        if not isinstance(f, dict):
            raise InputError("must be an object", path=path, field=f"files[{i}]")
        check_relpath(f.get("path"), field=f"files[{i}].path", path=path)
        if f.get("local") is not None:
            check_relpath(f["local"], field=f"files[{i}].local", path=path)
        for key, pat in (("repository", _REPO), ("commit", _COMMIT)):
            v = f.get(key)
            if v is not None and (not isinstance(v, str) or not pat.fullmatch(v) or ".." in v):
                raise InputError(f"invalid {key} {v!r}", path=path, field=f"files[{i}].{key}")
