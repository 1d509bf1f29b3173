"""Where backbone-swap scores come from: score files and a dataset's shipped judge columns (the
judge runs are :func:`metajudge.runs.backbone_swap.judge_scores`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data.formats import Record
from metajudge.errors import InputError

Scores = dict[str, dict[str, float | None]]

#: Human dimension a judge metric is compared with, per dataset card dimension names.
_METRIC_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "faithfulness": ("faithfulness", "correctness", "consistency", "factual"),
    "completeness": ("completeness", "comprehensiveness", "coverage", "relevance"),
}


def metric_dimension(metric: str, dimensions: Sequence[str]) -> str:
    """The human dimension a judge metric is meant to track (``geval_faithfulness`` → ``faithfulness``).

    >>> metric_dimension("geval_completeness", ["faithfulness", "comprehensiveness"])
    'comprehensiveness'
    """
    for aspect, names in _METRIC_DIMENSIONS.items():
        if aspect in metric:
            for n in names:
                for d in dimensions:
                    if n in d.lower():
                        return d
    if len(dimensions) == 1:
        return dimensions[0]
    raise InputError(
        f"cannot tell which human dimension {metric!r} tracks; pass --dimension (one of {', '.join(dimensions)})",
        field="dimension",
    )


def _rows_to_scores(rows: Sequence[Mapping[str, Any]], metric: str) -> dict[str, float | None]:
    """``{key: score}`` of one column, negated when its rows declare ``direction: lower``."""
    got = [r for r in rows if r["metric"] == metric]
    sign = -1.0 if any(r.get("direction") == "lower" for r in got) else 1.0
    return {str(r["key"]): None if r["score"] is None else sign * r["score"] for r in got}


def _file_spec(spec: str, records: Sequence[Record]) -> tuple[str, dict[str, float | None], str]:
    from metajudge.scores.files import read_score_file

    label, _, target = spec.partition("=")
    path, column = target, None
    if ":" in target and not Path(target).is_file():
        path, _, column = target.rpartition(":")
    rows = read_score_file(path, records)
    names = sorted({r["metric"] for r in rows})
    if column is None:
        if len(names) != 1:
            raise InputError(
                f"{path} has several score columns ({', '.join(names)}); pick one with {label}={path}:COLUMN",
                field="external",
            )
        column = names[0]
    elif column not in names:
        raise InputError(
            f"{path} has no score column {column!r} (it has {', '.join(names)})", field="external"
        )
    got = [r for r in rows if r["metric"] == column]
    sig = str(got[0]["signature"]) if got else f"{column}|external"
    return label, _rows_to_scores(got, column), sig


def _shipped_spec(
    dataset: Any, spec: str, dimension: str, data_dir: str | Path | None
) -> tuple[dict[str, float | None], str]:
    from metajudge.scores.shipped import backbone_column, shipped_scores

    name, known = backbone_column(dataset, spec, dimension)
    rows = shipped_scores(dataset, data_dir, metrics=[name])
    if not rows:
        hint = f" ({dataset.card.name} ships: {', '.join(known)})" if known else ""
        raise InputError(
            f"no shipped scores {name!r} for backbone {spec!r} in {dataset.card.name}{hint}",
            field="external",
        )
    return _rows_to_scores(rows, name), str(rows[0]["signature"])


def external_scores(
    dataset: Any,
    specs: Sequence[str],
    *,
    dimension: str,
    data_dir: str | Path | None = None,
) -> tuple[Scores, dict[str, str]]:
    """Per-backbone scores from external score columns; returns ``(scores, signatures)``.

    A spec is ``LABEL=PATH[:COLUMN]`` — any score file
    :func:`metajudge.scores.files.read_score_file` reads; ``COLUMN`` picks the metric when
    the file has several — or a bare backbone name whose column the dataset's card declares
    (``shipped_scores[].backbone_column``, e.g. LFTQA-Eval's ``geval_<backbone>_<dimension>``).
    """
    scores: Scores = {}
    sigs: dict[str, str] = {}
    for spec in (x.strip() for x in specs):
        if not spec:
            continue
        if "=" in spec:
            label, col, sig = _file_spec(spec, dataset.records)
            scores[label], sigs[label] = col, sig
        else:
            scores[spec], sigs[spec] = _shipped_spec(dataset, spec, dimension, data_dir)
    return scores, sigs
