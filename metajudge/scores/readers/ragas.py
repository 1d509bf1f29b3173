"""ragas results (``EvaluationResult.to_pandas()`` written with ``to_csv`` or
``to_json(orient="records")``), read without ragas or pandas.

ragas' table holds the evaluation dataset's columns (``user_input``, ``retrieved_contexts``,
``response``, ``reference`` …; older ragas: ``question``, ``contexts``, ``answer``,
``ground_truth``) and one column per metric (``faithfulness``, ``answer_relevancy``,
``context_precision`` …). ragas keeps no item id: add one column before writing the table
(``df.insert(0, "id", ids)``) or name the column that carries it with ``--id-field``. A
``system`` column, when there is one, names the system. A metric cell ragas left NaN (the
metric failed on that row) is a missing score, as in every score file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import csv_reader, read_json
from metajudge.scores.readers.base import Head, Reading
from metajudge.scores.readers.framework import ID_NAMES, FileInfo, Judged, framework_reader
from metajudge.scores.readers.rows import score_cell

#: the evaluation dataset's columns (ragas 0.2+ and the older names): never a metric
INPUT_COLUMNS = (
    "user_input",
    "retrieved_contexts",
    "reference_contexts",
    "response",
    "multi_responses",
    "reference",
    "rubrics",
    "question",
    "contexts",
    "answer",
    "ground_truth",
    "ground_truths",
)
_MARK = ({"user_input", "response"}, {"user_input", "retrieved_contexts"}, {"question", "contexts"})


def sniff(head: Head) -> bool:
    """A table (CSV header, or a JSON list's first object) with ragas' input columns."""
    if head.suffix != ".json":
        cols = set(head.header)
    elif isinstance(head.json, list) and head.json and isinstance(head.json[0], Mapping):
        cols = set(head.json[0])
    else:
        return False
    return any(m <= cols for m in _MARK)


def _table(path: Path) -> tuple[list[str], list[tuple[int | None, dict[str, Any]]]]:
    if path.suffix.lower() == ".json":
        data = read_json(path)
        if not isinstance(data, list) or not all(isinstance(o, Mapping) for o in data):
            raise InputError(
                "a ragas JSON table is a list of objects (orient='records')", path=path
            )
        cols = list(dict.fromkeys(k for o in data for k in o))
        return cols, [(None, dict(o)) for o in data]
    with open(path, encoding="utf-8", newline="") as fh:
        # strict: a file cut inside a quoted cell is refused, not read as one long last cell
        rd = csv_reader(fh, path, dicts=True, strict=True)
        rows = []
        for n, r in enumerate(rd, start=2):
            if None in r.values():  # pandas' to_csv writes every cell: a short row was cut
                raise InputError(
                    f"a row of {sum(v is not None for v in r.values())} cells under a header of "
                    f"{len(r)} (a truncated file?)",
                    path=path,
                    line=n,
                    field=next(k for k, v in r.items() if v is None),
                )
            rows.append((n, dict(r)))
        return list(rd.fieldnames or []), rows


def read(path: Path, reading: Reading) -> tuple[FileInfo, list[Judged]]:
    cols, rows = _table(path)
    info = FileInfo(
        "ragas",
        "ragas EvaluationResult table"
        + (" (JSON)" if path.suffix.lower() == ".json" else " (CSV)"),
    )
    info.id_fields = [c for c in cols if c in ID_NAMES or c == reading.id_field]
    idc = reading.id_field or next((c for c in ID_NAMES if c in cols), None)
    if reading.id_field and reading.id_field not in cols:
        raise InputError(
            f"no column {reading.id_field!r} (columns: {', '.join(cols)})",
            path=path,
            line=1,
            field=reading.id_field,
        )
    info.id_field = idc
    metrics = [
        c for c in cols if c not in INPUT_COLUMNS and c not in ID_NAMES and c not in (idc, "system")
    ]
    info.columns, info.rows = metrics, len(rows)
    out: list[Judged] = []
    for n, (line, r) in enumerate(rows):
        item = r.get(idc) if idc else None
        system = r.get("system")
        for m in metrics:
            field = m if line is not None else f"[{n}].{m}"
            out.append(
                Judged(
                    item=None if item in (None, "") else str(item),
                    system=None if system in (None, "") else str(system),
                    metric=m,
                    value=score_cell(r.get(m), field=field, where={"path": path, "line": line}),
                    where={"path": path, "line": line, "field": field},
                )
            )
    info.systems = sorted({j.system for j in out if j.system})
    return info, out


READER = framework_reader(
    "ragas",
    "ragas results table (to_pandas() as CSV or JSON)",
    (".csv", ".tsv", ".json"),
    sniff,
    read,
)
