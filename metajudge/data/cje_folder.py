"""CJE's fresh-draw and probe folders, read as they are (cje-eval, Landesberg et al. 2025).

A fresh-draw folder holds one JSON Lines file per system, ``<system>_responses.jsonl``; a probe
folder ``<system>_probe.jsonl``. Each line is one judged response: ``prompt_id`` (string or
integer), ``judge_score`` (a finite number), ``oracle_label`` (optional in fresh draws: absent,
``null`` or NaN = unlabelled; required in probes; on CJE's scale [0, 1]), optional ``draw_idx``
(several draws of one prompt) or ``row_id`` (the row's own id). Other fields are kept for
``cluster_field``: the rows are clustered by ``prompt_id`` unless it names another field.

:func:`read_folder` returns tuples ``(system, cluster, item, judge, label or None)`` (the item id
is ``row_id``, else ``prompt_id#draw_idx``), each bad line an ``InputError`` naming file, line
and field; what it reads without refusing but a user should know (labels given as NaN, read as
unlabelled; a system whose file has no row) is said in its notes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import parse_json, read_text

RESPONSES = "_responses.jsonl"
PROBES = "_probe.jsonl"
#: CJE's label scale
SCALE = (0.0, 1.0)

Row = tuple[str, str, str, float, "float | None"]


def folder_files(folder: str | Path, suffix: str, field: str) -> dict[str, Path]:
    """``{system: file}`` of the folder's ``<system><suffix>`` files (sorted by system)."""
    d = Path(folder)
    if not d.is_dir():
        raise InputError("not a folder", path=d, field=field)
    files = {p.name[: -len(suffix)]: p for p in sorted(d.glob(f"*{suffix}")) if p.is_file()}
    if not files:
        raise InputError(f"no <system>{suffix} file in the folder", path=d, field=field)
    return files


def _number(rec: dict[str, Any], key: str, path: Path, line: int) -> float | None:
    v = rec.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"expected a number, got {v!r}", path=path, line=line, field=key)
    x = float(v)
    if math.isnan(x):
        return None
    if not math.isfinite(x):
        raise InputError(f"expected a finite number, got {v!r}", path=path, line=line, field=key)
    return x


def _key(rec: dict[str, Any], key: str, path: Path, line: int) -> str:
    v = rec.get(key)
    if v is None or isinstance(v, (bool, dict, list)) or str(v) == "":
        raise InputError(
            "missing (the cluster of each row)" if v is None else f"not an id: {v!r}",
            path=path,
            line=line,
            field=key,
        )
    return str(v)


def _row(rec: Any, system: str, path: Path, line: int, *, cluster_field: str, probe: bool) -> Row:
    if not isinstance(rec, dict):
        raise InputError("expected a JSON object", path=path, line=line)
    pid = _key(rec, "prompt_id", path, line)
    cluster = pid if cluster_field == "prompt_id" else _key(rec, cluster_field, path, line)
    judge = _number(rec, "judge_score", path, line)
    if judge is None:
        raise InputError("missing judge score", path=path, line=line, field="judge_score")
    label = _number(rec, "oracle_label", path, line)
    if label is None and probe:
        raise InputError("a probe row needs its label", path=path, line=line, field="oracle_label")
    if label is not None and not SCALE[0] <= label <= SCALE[1]:
        raise InputError(
            f"label {label:g} outside the scale [{SCALE[0]:g}, {SCALE[1]:g}]",
            path=path,
            line=line,
            field="oracle_label",
        )
    item = rec.get("row_id")
    item = str(item) if item not in (None, "") else f"{pid}#{rec.get('draw_idx', 0)}"
    return system, cluster, item, judge, label


def read_folder(
    folder: str | Path,
    *,
    probe: bool = False,
    cluster_field: str = "prompt_id",
    notes: list[str] | None = None,
) -> list[Row]:
    """Every row of a fresh-draw (``probe``: probe) folder (module docstring); an item id seen
    twice in one system's file is refused. ``notes`` gets a line per file with labels given as
    NaN (read as unlabelled) and per system with no row."""
    suffix, field = (PROBES, "--probes") if probe else (RESPONSES, "--input")
    out: list[Row] = []
    for system, path in folder_files(folder, suffix, field).items():
        seen: dict[str, int] = {}
        nan_labels: list[int] = []
        for n, text in enumerate(read_text(path).splitlines(), 1):
            if not text.strip():
                continue
            rec = parse_json(text, path=path, line=n)
            row = _row(rec, system, path, n, cluster_field=cluster_field, probe=probe)
            if row[4] is None and _is_nan(rec, "oracle_label"):
                nan_labels.append(n)
            if row[2] in seen:
                raise InputError(
                    f"row {row[2]} again (first on line {seen[row[2]]}); give each draw a "
                    "draw_idx or row_id",
                    path=path,
                    line=n,
                    field="prompt_id",
                )
            seen[row[2]] = n
            out.append(row)
        _note(notes, path, system, len(seen), nan_labels)
    return out


def _is_nan(rec: Any, key: str) -> bool:
    v = rec.get(key) if isinstance(rec, dict) else None
    return isinstance(v, float) and math.isnan(v)


def _note(notes: list[str] | None, path: Path, system: str, rows: int, nan: list[int]) -> None:
    if notes is None:
        return
    if nan:
        at = ", ".join(map(str, nan[:5])) + (", …" if len(nan) > 5 else "")
        notes.append(
            f"{path.name}: {len(nan)} oracle_label(s) given as NaN, read as unlabelled (line {at})"
        )
    if not rows:
        notes.append(f"{path.name}: no responses, so system {system!r} is not estimated")
