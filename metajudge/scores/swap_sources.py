"""Where backbone-swap scores come from: score specs (:mod:`metajudge.scores.spec`: files, a
dataset's shipped judge columns); the judge runs are :func:`metajudge.runs.backbone_swap.judge_scores`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data.estimate_rows import verdict_score
from metajudge.errors import InputError
from metajudge.scores.spec import ScoreSpec

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


def _rows_to_scores(
    rows: Sequence[Mapping[str, Any]], metric: str, binary: Sequence[str] | None = None
) -> dict[str, float | None]:
    """``{key: score}`` of one column, negated when its rows declare ``direction: lower``
    (``binary``: verdict labels read as 0/1, :func:`verdict_score`)."""
    got = [r for r in rows if r["metric"] == metric]
    sign = -1.0 if any(r.get("direction") == "lower" for r in got) else 1.0
    vals = {str(r["key"]): verdict_score(r, binary) for r in got}
    return {k: None if v is None else sign * v for k, v in vals.items()}


def external_scores(
    dataset: Any,
    specs: Sequence[ScoreSpec | str],
    *,
    dimension: str,
    data_dir: str | Path | None = None,
    binary: Sequence[str] | None = None,
) -> tuple[Scores, dict[str, str]]:
    """Per-backbone ``{key: score}`` columns of score specs; returns ``(scores, signatures)``.

    ``specs``: :class:`~metajudge.scores.spec.ScoreSpec` (``--scores``), or the old
    ``--external`` items as text (``LABEL=PATH[:COLUMN]``, a bare backbone name: see
    :func:`~metajudge.scores.spec.from_external_list`). Every spec is read by
    :func:`~metajudge.scores.spec.gather_scores`; each column is one backbone, named by its
    label (``LABEL=``), its backbone name (``shipped:gpt-4o``) or its column name.
    ``binary``: a binary dataset's two labels, to read verdict columns as 0/1.
    """
    from metajudge.scores.spec import from_external_list, gather_scores

    parsed = from_external_list(specs)
    scores: Scores = {}
    sigs: dict[str, str] = {}
    for spec in parsed:
        rows = gather_scores(dataset, [spec], data_dir=data_dir, dimension=dimension, labels=False)
        names = list(dict.fromkeys(r["metric"] for r in rows))
        if not spec.columns and len(names) != 1:
            raise InputError(
                f"score spec {spec.text!r}: {spec.source} has several score columns "
                f"({', '.join(names)}); pick one with LABEL={spec.source}:COLUMN",
                field="scores",
            )
        for name in names:
            if name in scores:
                raise InputError(
                    f"score spec {spec.text!r}: backbone {name!r} is given twice", field="scores"
                )
            col = [r for r in rows if r["metric"] == name]
            scores[name] = _rows_to_scores(col, name, binary)
            sigs[name] = str(col[0]["signature"])
    return scores, sigs
