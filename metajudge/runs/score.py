"""``metajudge metrics run``: score a dataset with metrics into a score file, optionally adding a
calibrated column (``--calibrator``).

:func:`run_score` loads the dataset (:func:`metajudge.data.loading.open_dataset`), checks the
calibrator before anything is scored, scores through
:func:`metajudge.scores.scoring.score_dataset` and writes the score file
(:func:`metajudge.scores.scoring.write_scores`), keeping the rows of other metrics already in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ScoreRun:
    """What ``metrics run`` wrote: ``n`` rows into ``path`` (``kept`` of them rows of other
    metrics already in the file) and the ``rows`` scored now."""

    path: Path
    n: int
    kept: int
    rows: list[dict[str, Any]]


def check_calibrator_file(
    path: str | Path, metrics: Sequence[str], options: Mapping[str, Any], backbone: Any
) -> dict[str, Any]:
    """The ``--calibrator`` file, refused before anything is scored when its metric is not
    scored here or the metric's signature (with these options and backbone) differs."""
    from metajudge.analyses.calibration.fit import check_calibrator, check_signature
    from metajudge.errors import InputError
    from metajudge.io import read_json
    from metajudge.metrics.registry import metric_info

    cal = check_calibrator(read_json(path), path)
    name = str(cal["judge"].get("metric"))
    if name not in metrics:
        raise InputError(
            f"the calibrator is for metric {name!r}, which --metrics does not score",
            path=path,
            field="judge.metric",
        )
    info = metric_info(name, backbone=backbone, **options.get(name, {}))
    check_signature(cal, name, str(info["signature"]), path)
    return cal


def calibrated_score_rows(cal: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of ``<metric>.calibrated`` for the scored rows of the calibrator's metric."""
    import numpy as np

    from metajudge.analyses.calibration.fit import (
        apply_calibrator,
        calibrated_name,
        check_signature,
    )

    name, sig = calibrated_name(cal)
    mine = [r for r in rows if r["metric"] == cal["judge"]["metric"] and r["score"] is not None]
    for r in mine:
        check_signature(cal, r["metric"], r["signature"])
    after = apply_calibrator(cal, np.array([r["score"] for r in mine], float))
    return [
        {**r, "metric": name, "score": float(s), "signature": sig, "details": {"raw": r["score"]}}
        for r, s in zip(mine, after, strict=True)
    ]


def run_score(
    metrics: Sequence[str],
    output: str | Path,
    *,
    dataset: str | None = None,
    input_file: str | None = None,
    options: Mapping[str, dict[str, Any]] | None = None,
    calibrator: str | Path | None = None,
    fresh: bool = False,
    progress: bool = True,
    data_dir: str | Path | None = None,
    backbone: Any = None,
    reference_field: str | None = None,
    source_field: str | None = None,
) -> ScoreRun:
    """Score ``metrics`` on the dataset into ``output``; see the module docstring. Without
    ``fresh``, an existing ``output`` is the cache and its rows of other metrics are kept."""
    from metajudge.data.loading import open_dataset
    from metajudge.io import check_output_file
    from metajudge.scores.files import read_scores
    from metajudge.scores.scoring import score_dataset, write_scores

    out = check_output_file(output, inputs=[input_file], field="--output")
    options = dict(options or {})
    cal = check_calibrator_file(calibrator, metrics, options, backbone) if calibrator else None
    source = open_dataset(dataset, input_file, data_dir=data_dir)
    cache = None if fresh or not out.exists() else out
    # rows of other metrics already in the file are kept as they are (one file can accumulate metrics)
    others = (
        [r for r in read_scores(cache, allow_empty=True) if r["metric"] not in metrics]
        if cache
        else []
    )
    rows = score_dataset(
        source,
        list(metrics),
        options=options,
        progress=progress,
        cache_path=cache,
        data_dir=data_dir,
        backbone=backbone,
        reference_field=reference_field,
        source_field=source_field,
    )
    if cal is not None:
        rows += calibrated_score_rows(cal, rows)
    n = write_scores(out, others + rows)
    return ScoreRun(out, n, len(others), rows)
