"""What ``--out`` may name (:func:`check_out_folder`), checked before any work by every command
that writes a run folder (:func:`metajudge.io.check_out_dir`, :func:`metajudge.run_folder.
run_folder`): a new folder, an empty one (filled in place, never renamed: it is the user's), or
a metajudge run folder (its ``manifest.json`` says so; replaced as a whole). Anything else is
refused with exit 2 and left as it was: ``""``, the working directory or a folder holding it,
a folder of other files (a user's: replacing it would detach what is mounted or open in it).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

MANIFEST = "manifest.json"


def is_ours(name: str) -> bool:
    """A temporary or lock of ours (never carried into a new run folder)."""
    return name.startswith(".") and (
        name.endswith((".tmp", ".lock")) or ".stage-" in name or ".old-" in name
    )


def target(out: str | Path) -> Path:
    """The folder ``out`` names, absolute; for a symlink, the folder it points to (written in its
    place, so the link is neither replaced nor left behind as a stage)."""
    p = Path(out).absolute()
    return p.resolve() if p.is_symlink() else p


def is_run_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a metajudge run: a ``manifest.json`` with a run id and files."""
    p = folder / MANIFEST
    if not p.is_file():
        return False
    try:
        m = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(m, dict) and "run_id" in m and isinstance(m.get("files"), dict)


def _foreign(folder: Path, allow: Collection[str] = ()) -> list[str]:
    """What ``folder`` holds besides temporaries of ours and the names ``allow`` (sorted names;
    [] when it is empty)."""
    return sorted(p.name for p in folder.iterdir() if not is_ours(p.name) and p.name not in allow)


def check_out_folder(out: str | Path, field: str = "--out", allow: Collection[str] = ()) -> Path:
    """Refuse (``InputError``, exit 2; nothing is created or changed) a run folder ``out`` that
    writing would harm: ``""``, the working directory or a folder holding it, and a folder that
    holds files but is not a run folder (no metajudge ``manifest.json``): such a folder is the
    user's, and a run folder is replaced as a whole. A new folder, an empty one and a run folder
    pass (``allow``: names a writer's own folder may hold before its first run is complete, e.g.
    the demo's sections). Returns :func:`target` of ``out``."""
    from metajudge.errors import InputError

    if not str(out).strip():
        raise InputError("is empty; give the run folder to write, e.g. --out run1", field=field)
    real = target(out)
    cwd = Path.cwd().resolve()
    if real.resolve() == cwd or real.resolve() in cwd.parents:
        raise InputError(
            "is the working directory or holds it: a run folder is replaced as a whole when it "
            "is written again; give a folder of its own, e.g. --out run1 (nothing was changed)",
            path=out,
            field=field,
        )
    if real.is_dir() and not is_run_folder(real):
        others = _foreign(real, allow)
        if others:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if others[3:] else "")
            raise InputError(
                f"holds files ({shown}) and is not a metajudge run folder (no {MANIFEST}): "
                "give a new or empty folder, or a run folder (nothing was changed)",
                path=out,
                field=field,
            )
    return real
