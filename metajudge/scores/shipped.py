"""Score columns a dataset ships, as its card declares them (``shipped_scores``).

A card lists ``{"loader": NAME, "file": ..., "backbone_column": ...}`` entries; :data:`LOADERS`
maps each loader name to its reader (the upstream files' loaders:
:mod:`metajudge.scores.readers.upstream`). No dataset name is
tested in code: a new dataset with shipped scores adds an entry to its card (and, for a new
file format, a loader here).

``backbone_column`` names the column of a judge under one backbone (``{backbone}`` and
``{dimension}`` are filled in): it is what ``backbone-swap --scores shipped:NAME`` reads for a
backbone name (:mod:`metajudge.scores.spec`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.scores.readers import upstream as ext

Loader = Callable[[Any, Mapping[str, Any], "str | Path | None", "Sequence[str] | None"], list]


def _file(dataset: Any, spec: Mapping[str, Any], data_dir: str | Path | None) -> Path:
    from metajudge.data.registry import resolve_file

    return resolve_file(dataset.card.name, str(spec["file"]), data_dir)


def _ragchecker(ds: Any, spec: Mapping[str, Any], data_dir: Any, metrics: Any) -> list:
    rows = ext.ragchecker_baseline(_file(ds, spec, data_dir), ds.records)
    return rows if metrics is None else [r for r in rows if r["metric"] in metrics]


def _lftqa(ds: Any, spec: Mapping[str, Any], data_dir: Any, metrics: Any) -> list:
    subsets = ds.subsets if len(ds.subsets) == 1 else (None,)
    rows: list = []
    for s in subsets:
        rows += ext.lftqa_metric_scores(s, data_dir=data_dir, records=ds.records, metrics=metrics)
    return rows


def _hanna(ds: Any, spec: Mapping[str, Any], data_dir: Any, metrics: Any) -> list:
    return ext.hanna_metric_scores(_file(ds, spec, data_dir), records=ds.records, metrics=metrics)


def _released_probs(ds: Any, spec: Mapping[str, Any], data_dir: Any, metrics: Any) -> list:
    """Judge columns of files in the Trust-or-Escalate format (``judges``: judge -> the card's
    local file name, or a path for a file read with ``--input``)."""
    from metajudge.data.registry import resolve_file
    from metajudge.scores.readers.released_probs import judge_rows

    rows: list = []
    for judge, file in dict(spec.get("judges") or {}).items():
        if metrics is not None and judge not in metrics:
            continue
        p = Path(file)
        if not (p.is_absolute() and p.is_file()):
            p = resolve_file(ds.card.name, str(file), data_dir)
        rows += judge_rows(p, ds.records, judge)
    return rows


def _rating_distributions(ds: Any, spec: Mapping[str, Any], data_dir: Any, metrics: Any) -> list:
    from metajudge.scores.rating_distributions import shipped_distribution_rows

    return shipped_distribution_rows(ds, dict(spec), data_dir, metrics)


def _alt_test(
    ds: Any, spec: Mapping[str, Any], data_dir: Any, metrics: Any
) -> list[dict[str, Any]]:
    """Score rows of the LLMs' labels of one annotation set (the ``alt_test_llm_labels``
    shipped-scores loader): a numeric label is a ``score``, a category a ``label``. Column =
    the LLM's name (``<llm>_<dimension>`` when the set has several dimensions)."""
    from metajudge.data.alt_test_dir import BUILTIN
    from metajudge.data.convert_alt_test import split_id
    from metajudge.data.registry import resolve_file
    from metajudge.io import read_json
    from metajudge.scores.readers.rows import make_row

    subset = str(spec.get("subset") or "")
    path = resolve_file(BUILTIN, str(spec["file"]), data_dir)
    obj = read_json(path)
    if not isinstance(obj, dict):
        raise InputError("expected {llm: {item: label}}", path=path, field="<root>")
    several = len(ds.card.dimensions) > 1
    have = {(r.id, r.system) for r in ds.records}
    rows = []
    for llm, labels in obj.items():
        for iid, v in labels.items():
            item, system, dim = split_id(subset, iid)
            name = f"{llm}_{dim}" if several else llm
            if (metrics and llm not in metrics and name not in metrics) or (
                item,
                system,
            ) not in have:
                continue
            numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
            row = make_row(
                item=item,
                system=system,
                side=None,
                metric=name,
                score=float(v) if numeric else None,
                signature=f"{llm}|released label (Calderon et al. 2025)",
                error=None if v is not None else "no label",
            )
            if not numeric and v is not None:
                row["label"] = str(v)
            rows.append(row)
    return rows


def _thakur(ds: Any, spec: Mapping[str, Any], data_dir: Any, metrics: Any) -> list:
    """The nine judges' True/False verdicts of Judging the Judges (``thakur_judge_columns``):
    one label column per judge, on the rows that carry a human verdict."""
    from metajudge.data.convert_likert import THAKUR_JUDGES, thakur_rows
    from metajudge.io import csv_reader
    from metajudge.scores.readers.rows import make_row

    p = _file(ds, spec, data_dir)
    with open(p, encoding="utf-8", newline="") as fh:
        reader = csv_reader(fh, p, dicts=True)
        rows = [(reader.line_num, row) for row in reader]
    have = {(r.id, r.system) for r in ds.records}
    out = []
    for _line, iid, row in thakur_rows(p, rows):
        if (iid, row["model"]) not in have:
            continue
        for judge in THAKUR_JUDGES:
            if metrics and judge not in metrics:
                continue
            v = row.get(judge, "").strip()
            ok = v in ("True", "False")
            r = make_row(
                item=iid,
                system=row["model"],
                side=None,
                metric=judge,
                score=None,
                signature=f"{judge}|released verdict (Thakur et al. 2024)",
                error=None if ok else f"no verdict ({v!r})",
            )
            if ok:
                r["label"] = v
            out.append(r)
    return out


def _mlflow(ds: Any, spec: Mapping[str, Any], data_dir: Any, metrics: Any) -> list:
    """LLM judges' assessments of the traces of an MLflow experiment (``--input mlflow:EXP``,
    :mod:`metajudge.data.mlflow_traces`): one row per assessment a record holds; an error or
    off-kind value is a row with its ``error`` (counted as unparsed)."""
    from metajudge.data.mlflow_traces import META_KEY
    from metajudge.scores.readers.rows import make_row

    rows = []
    for r in ds.records:
        for col, cell in (r.meta.get(META_KEY) or {}).items():
            if metrics is not None and col not in metrics:
                continue
            row = make_row(
                item=r.id,
                system=r.system,
                side=None,
                metric=col,
                score=cell.get("score"),
                signature=f"{col}|MLflow LLM_JUDGE feedback",
                error=cell.get("error"),
            )
            if "label" in cell:
                row["label"] = cell["label"]
            rows.append(row)
    return rows


#: loader name (a card's ``shipped_scores[].loader``) → reader
LOADERS: dict[str, Loader] = {
    "ragchecker_baseline": _ragchecker,
    "lftqa_metric_files": _lftqa,
    "hanna_metric_columns": _hanna,
    "trust_or_escalate_probs": _released_probs,
    "rating_distribution_csv": _rating_distributions,
    "alt_test_llm_labels": _alt_test,
    "thakur_judge_columns": _thakur,
    "mlflow_assessments": _mlflow,
}


def _specs(dataset: Any) -> tuple[Mapping[str, Any], ...]:
    specs = tuple(getattr(dataset.card, "shipped_scores", ()) or ())
    if not specs:
        raise InputError(
            f"dataset {dataset.card.name!r} ships no per-response scores (its card has no "
            "'shipped_scores')",
            field="scores",
        )
    for s in specs:
        if s.get("loader") not in LOADERS:
            raise InputError(
                f"unknown shipped-scores loader {s.get('loader')!r} (known: {', '.join(LOADERS)})",
                field="shipped_scores",
            )
    return specs


def shipped_scores(
    dataset: Any, data_dir: str | Path | None = None, *, metrics: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Score rows of every column ``dataset`` ships (only ``metrics`` when given)."""
    from metajudge.scores.readers.judge_bench import reply_rows

    replies = reply_rows(dataset, metrics)  # judges' replies held by a JUDGE-BENCH file
    rows: list[dict[str, Any]] = []
    for spec in _specs(dataset) if not replies or dataset.card.shipped_scores else ():
        rows += LOADERS[str(spec["loader"])](dataset, spec, data_dir, metrics)
    return rows + replies


def backbone_column(dataset: Any, backbone: str, dimension: str) -> tuple[str, list[str]]:
    """The shipped column of a judge under ``backbone`` and the backbones the card names."""
    for spec in _specs(dataset):
        tmpl = spec.get("backbone_column")
        if tmpl:
            return str(tmpl).format(backbone=backbone, dimension=dimension), list(
                spec.get("backbones", [])
            )
    raise InputError(
        f"dataset {dataset.card.name!r} names no judge columns per backbone; use LABEL=PATH[:COLUMN]",
        field="scores",
    )
