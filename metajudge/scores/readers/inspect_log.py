"""inspect_ai eval logs (``.eval`` zip or ``.json``), read through inspect_ai's own log reader
(the optional extra ``metajudge[inspect]``, imported here only when a log is read).

The item is the sample id (``--id-field FIELD``: a key of the sample's ``metadata`` instead),
the system the evaluated model as the log records it (``eval.model``). Each scorer is a column
(a scorer whose value is a dict gives one column per key, ``scorer.key``); its value per sample
and epoch is mapped to a number as inspect_ai maps it (``value_to_float``: C = 1, P = 0.5,
I = N = 0, yes/true = 1, no/false = 0; NaN, which inspect_ai writes when the grader gave no grade,
is a missing score, counted, as in every score file); the scorer's ``explanation`` is kept.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from metajudge.errors import InputError, MissingResourceError
from metajudge.scores.readers.base import Head, Reading
from metajudge.scores.readers.framework import FileInfo, Judged, framework_reader
from metajudge.scores.readers.rows import score_cell

#: eval-log versions this reader knows (inspect_ai's ``EvalLog.version``)
VERSIONS = (1, 2)


def sniff(head: Head) -> bool:
    """A ``.eval`` log, or a ``.json`` one (``eval.task``, ``eval.model`` and ``version``)."""
    if head.suffix == ".eval":
        return True
    data = head.json
    return (
        isinstance(data, dict)
        and isinstance(data.get("eval"), dict)
        and {"task", "model"} <= set(data["eval"])
        and "version" in data
    )


def _version(path: Path) -> Any:
    """The log's ``version``, read before inspect_ai parses it (a truncated or corrupt file is an
    error naming the file)."""
    if path.suffix.lower() != ".eval":
        from metajudge.io import read_json

        data = read_json(path)
        return data.get("version") if isinstance(data, dict) else None
    from metajudge.limits import check_archive

    try:
        with zipfile.ZipFile(path) as z:
            check_archive(z, path)  # before inspect_ai (or this) inflates a member
            names = set(z.namelist())
            name = "header.json" if "header.json" in names else "_journal/start.json"
            if name not in names:
                raise InputError("no header.json in the log (not an inspect_ai log?)", path=path)
            return json.loads(z.read(name)).get("version")
    except InputError:  # (a ValueError) the archive's limits, or no header
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError) as e:
        raise InputError(
            f"not a readable inspect_ai .eval log (corrupt or truncated zip: {e})",
            path=path,
            field="log",
        ) from None


def _log(path: Path) -> Any:
    version = _version(path)
    if version not in VERSIONS:
        raise InputError(
            f"inspect_ai log version {version!r} is not one this reader knows "
            f"({', '.join(map(str, VERSIONS))})",
            path=path,
            field="version",
        )
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise MissingResourceError(
            f"{path}: reading an inspect_ai log needs inspect_ai: pip install 'metajudge[inspect]'"
        ) from None
    try:
        return read_eval_log(str(path))
    except Exception as e:  # noqa: BLE001 - inspect_ai raises many kinds on a bad log
        raise InputError(
            f"inspect_ai could not read the log ({type(e).__name__}: {str(e)[:300]})",
            path=path,
            field="samples",
        ) from None


def read(path: Path, reading: Reading) -> tuple[FileInfo, list[Judged]]:
    from inspect_ai.scorer import value_to_float

    log = _log(path)
    to_float = value_to_float()
    model = str(log.eval.model)
    info = FileInfo("inspect", f"inspect_ai log v{log.version}", systems=[model])
    info.id_fields = ["id", *sorted({k for s in log.samples or () for k in (s.metadata or {})})]
    info.id_field = reading.id_field or "id"
    info.notes.append(f"task {log.eval.task}, status {log.status}")
    out: list[Judged] = []
    for n, s in enumerate(log.samples or ()):
        item = _sample_id(s, reading.id_field)
        info.epochs = max(info.epochs, int(s.epoch or 1))
        for name, score in (s.scores or {}).items():
            field = f"samples[{n}].scores.{name}.value"
            for metric, value in _values(name, score.value):
                out.append(
                    Judged(
                        item=item,
                        system=model,
                        metric=metric,
                        value=_number(value, to_float, path, field),
                        where={"path": path, "line": None, "field": field},
                        epoch=int(s.epoch or 1),
                        explanation=score.explanation,
                    )
                )
                if score.explanation:
                    info.explanations += 1
    info.rows = len(log.samples or ())
    info.columns = list(dict.fromkeys(j.metric for j in out))
    return info, out


def _sample_id(s: Any, id_field: str | None) -> str | None:
    if id_field in (None, "id"):
        return None if s.id is None else str(s.id)
    v = (s.metadata or {}).get(id_field)
    return None if v in (None, "") else str(v)


def _values(name: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [(f"{name}.{k}", v) for k, v in value.items()]
    return [(name, value)]


def _number(value: Any, to_float: Any, path: Path, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, list):
        raise InputError("a list score value (give one number per sample)", path=path, field=field)
    # inspect_ai writes NaN when the grader gave no grade: a missing score (score_cell's rule)
    return score_cell(float(to_float(value)), field=field, where={"path": path, "line": None})


READER = framework_reader(
    "inspect", "inspect_ai eval log (.eval or .json)", (".eval", ".json"), sniff, read
)
