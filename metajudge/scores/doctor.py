"""``metajudge data doctor FILE``: what a score file is, and the command that uses it.

:func:`describe` names the file's format (as ``--scores`` detects it, or ``FORMAT`` forced) and
version, its rows, the fields that could carry the item id (and the one read), the score-like
columns (numbers), the label-like columns (pass/fail, grades, a few distinct strings), the
missing values per column, and prints the ``meta-eval`` command that reads it. A Chatbot
Arena battle file (:mod:`metajudge.data.arena`) and a Parquet/Arrow table of canonical records
(:mod:`metajudge.data.columnar`) are named as such: datasets, given as ``--input``. With the labelled
dataset (``--input``) it also says how many of the file's responses the dataset has.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from metajudge.scores import readers
from metajudge.scores.readers.alignment import ID_COLUMNS
from metajudge.scores.readers.base import Reader, Reading
from metajudge.scores.readers.framework import ID_NAMES
from metajudge.scores.readers.rows import is_missing_cell


def describe(
    path: str | Path,
    *,
    fmt: str | None = None,
    reading: Reading | None = None,
    input_file: str | None = None,
) -> dict[str, Any]:
    """The doctor's findings on ``path`` as a dict (``lines()`` renders it): the file is read by
    the reader ``--scores`` reads it with (:mod:`metajudge.scores.readers`)."""
    p = Path(path)
    reading = reading or Reading()
    if fmt is None and _is_arena(p):
        return _arena(p)
    if fmt is None and _is_records_table(p):
        return _records_table(p)
    r = readers.reader(fmt) if fmt else readers.detect(p)
    out = _framework(p, r, reading) if r.judged is not None else _table(p, r)
    out["file"] = str(p)
    if input_file is not None:
        out["dataset"] = _joined(p, r.name, reading, input_file)
    out["command"] = command(p, r, reading, input_file, out.get("id_field"))
    return out


def _is_arena(p: Path) -> bool:
    from metajudge.data.arena import is_arena

    return p.is_file() and is_arena(p)


def _is_records_table(p: Path) -> bool:
    from metajudge.data.columnar import is_records_table

    return is_records_table(p)


def _records_table(p: Path) -> dict[str, Any]:
    """A Parquet/Arrow table of canonical records: a dataset, not a score file
    (:mod:`metajudge.data.columnar`)."""
    from metajudge.data.loading import load
    from metajudge.data.registry import describe_counts

    ds = load(p)
    c = describe_counts(ds)
    sides = (getattr(r, k, None) for r in ds.records for k in ("a", "b"))
    systems = {str(r.system) for r in ds.records if hasattr(r, "system")}
    systems |= {str(x.system) for x in sides if x is not None}
    argv = ["metajudge", "meta-eval", "--input", str(p), "--scores", "SCORES.jsonl"]
    note = (
        f"a dataset of {c['records']} {c['kind']} records (give it as --input): "
        f"dimensions {', '.join(c['dimensions'])}, card {c['name']}"
    )
    return {
        "file": str(p),
        "format": "columnar records",
        "version": p.suffix[1:],
        "rows": c["records"],
        "id_fields": ["id"],
        "id_field": "id",
        "systems": sorted(systems),
        "score_columns": [],
        "label_columns": list(c["dimensions"]),
        "missing": {},
        "notes": [note],
        "command": shlex.join(argv + ["--out", f"runs/{p.stem}"]),
    }


def _arena(p: Path) -> dict[str, Any]:
    """A Chatbot Arena battle file: a dataset of pairwise records, not a score file
    (:mod:`metajudge.data.arena`)."""
    from metajudge.data.arena import summary

    s = summary(p)
    w = s["winners"]
    argv = ["metajudge", "meta-eval", "--input", str(p), "--scores", "SCORES.jsonl"]
    note = (
        "a dataset of pairwise records, one per battle (give it as --input): "
        f"{w['model_a']} model_a, {w['model_b']} model_b, {w['tie']} tie, "
        f"{w['tie (bothbad)']} tie (bothbad) (kept apart in meta.tie); "
        f"{s['judges']} judges (meta.annotator)"
    )
    return {
        "file": str(p),
        "format": "arena",
        "version": "Chatbot Arena battles",
        "rows": s["battles"],
        "id_fields": ["question_id"],
        "id_field": "question_id",
        "systems": s["models"],
        "score_columns": [],
        "label_columns": ["winner"],
        "missing": {},
        "notes": [note],
        "command": shlex.join(argv + ["--out", f"runs/{p.stem}"]),
    }


def _framework(p: Path, r: Reader, reading: Reading) -> dict[str, Any]:
    info, judged = r.judged(p, reading)  # type: ignore[misc]
    missing: dict[str, int] = {}
    for j in judged:
        missing[j.metric] = missing.get(j.metric, 0) + (j.value is None)
    return {
        "format": r.name,
        "version": info.version,
        "rows": info.rows,
        "scores": len(judged),
        "id_fields": info.id_fields,
        "id_field": info.id_field,
        "systems": info.systems,
        "score_columns": info.columns,
        "label_columns": info.label_columns,
        "missing": missing,
        "epochs": info.epochs,
        "explanations": info.explanations,
        "notes": info.notes,
    }


def _table(p: Path, r: Reader) -> dict[str, Any]:
    """A plain score table (CSV/TSV, JSON list, JSONL score rows) or an upstream format: its
    records as the reader gives them; a cell the score rule reads as missing (empty, null,
    NaN, ``NA``: :func:`~metajudge.scores.readers.rows.score_cell`) counts as missing."""
    rows = r.records(p) if r.records is not None else []
    cols = list(dict.fromkeys(k for r in rows for k in r))
    ids = [c for c in cols if c in ID_COLUMNS or c in ID_NAMES]
    score, label, missing = [], [], {}
    for c in cols:
        if c in ids:
            continue
        vals = [r.get(c) for r in rows]
        missing[c] = sum(map(is_missing_cell, vals))
        present = [v for v in vals if not is_missing_cell(v)]
        (score if present and all(_is_number(v) for v in present) else label).append(c)
    return {
        "format": r.name,
        "version": "-",
        "rows": len(rows),
        "id_fields": ids,
        "id_field": next((c for c in ("item", "id") if c in ids), None),
        "systems": sorted({str(r["system"]) for r in rows if r.get("system") not in (None, "")}),
        "score_columns": score,
        "label_columns": [c for c in label if len({str(r.get(c)) for r in rows}) <= 20],
        "missing": missing,
        "epochs": 1,
        "explanations": 0,
        "notes": [],
    }


def _is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _joined(p: Path, fmt: str, reading: Reading, input_file: str) -> dict[str, Any]:
    """How the file's rows meet the labelled dataset: responses matched, rows dropped."""
    from metajudge.data.loading import open_dataset
    from metajudge.scores.files import read_scores
    from metajudge.scores.readers.alignment import IdPolicy
    from metajudge.scores.readers.rows import row_metrics

    ds = open_dataset(None, input_file)
    ids = IdPolicy()
    labels = ds.card.label_kind in ("categorical", "binary")
    rows = read_scores(p, ds.records, fmt=fmt, ids=ids, reading=reading, labels=labels)
    keys = {r["key"] for r in rows}
    return {
        "input": input_file,
        "responses": len(ds.records),
        "matched": len(keys),
        "columns": row_metrics(rows),
        "dropped": ids.summary()["rows_dropped"],
    }


def command(
    p: Path, r: Reader, reading: Reading, input_file: str | None, id_field: str | None
) -> str:
    """The ``meta-eval`` command that reads the file (without ``--input``: the file itself when
    it holds the labels too, else ``LABELS.jsonl``)."""
    labels = str(p) if r.labelled else "LABELS.jsonl"
    argv = ["metajudge", "meta-eval", "--input", input_file or labels]
    argv += ["--scores", str(p), "--out", f"runs/{p.stem}"]
    framework = r.judged is not None
    if reading.id_field or (framework and id_field and id_field not in ("id", "item")):
        argv += ["--id-field", str(reading.id_field or id_field)]
    if reading.system:
        argv += ["--system", reading.system]
    if reading.epochs != "mean":
        argv += ["--epochs", reading.epochs]
    return shlex.join(argv)


def lines(d: Mapping[str, Any]) -> list[str]:
    """The findings as text, one finding a line."""

    def names(xs: Any) -> str:
        return ", ".join(map(str, xs)) if xs else "none"

    if d.get("format") == "mlflow":
        from metajudge.data.mlflow_traces import doctor_lines

        return doctor_lines(str(d["experiment"]), d)

    out = [
        f"file: {d['file']}",
        f"format: {d['format']} ({d['version']})",
        f"rows: {d['rows']}" + (f" ({d['scores']} scores)" if "scores" in d else ""),
        f"id-like fields: {names(d['id_fields'])}; item id read from: {d['id_field'] or 'none (give --id-field)'}",
        f"systems: {names(d['systems'])}",
        f"score-like columns: {names(d['score_columns'])}",
        f"label-like columns: {names(d['label_columns'])}",
        "missing values: "
        + (
            names(f"{k} {v}" for k, v in d["missing"].items() if v)
            if any(d["missing"].values())
            else "none"
        ),
    ]
    if d.get("epochs", 1) > 1:
        out.append(f"epochs: {d['epochs']} (averaged; --epochs each keeps one column per epoch)")
    if d.get("explanations"):
        out.append(
            f"explanations: {d['explanations']} (shown in report.html beside the human label)"
        )
    out += [f"note: {n}" for n in d.get("notes", [])]
    if "dataset" in d:
        j = d["dataset"]
        out.append(
            f"dataset {j['input']}: {j['matched']} of {j['responses']} responses scored; "
            f"{j['dropped']} rows for ids it lacks"
        )
    out.append(f"command: {d['command']}")
    return out
