"""``calibrate estimate --method ppi|rogan-gladen``: a mean from one judge's scores on every unit
and human labels on a random few, drawn from a fully labelled dataset.

The labelled units (``--n-labelled N``, or ``--labelled-fraction F`` of those with a label) are
drawn with ``--seed``; the judge scores the rest. The estimate is PPI++ (``ppi``) or the
Rogan–Gladen pass rate (``rogan-gladen``, 0/1 labels and verdicts), each beside the human-only
and the judge-only estimates and the full-data human mean with whether each CI covers it
(:func:`metajudge.stats.ppi.ppi_on_labels`). Units: responses of a Likert dataset (optionally one
system's), or pairs of a pairwise one (side b's win rate, the judge's decision with the tie
band). The judge column comes from ``--scores`` or is scored with ``--metric`` under
``--backbones``. With ``--out``, ``ppi.md`` and ``ppi.json`` are written there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.analyses.backbone_swap import SwapData
from metajudge.errors import InputError
from metajudge.scores.spec import ScoreSpec, judge_specs, n_columns


@dataclass(frozen=True)
class LabelDraw:
    """The judge and the label draw of ``--method ppi|rogan-gladen`` (module docstring):
    ``metric`` (the dimension it tracks is the default; needed with ``backbones``), ``subset``,
    ``limit``/``first`` (the records kept), ``n_labelled`` or ``labelled_fraction``, ``system``
    (Likert data: that system's mean only), ``critical`` (``t`` or ``z``) and ``tie_band``
    (pairwise decisions)."""

    metric: str | None = None
    backbones: Sequence[str] = ()
    subset: str | None = None
    limit: int | None = None
    first: int | None = None
    n_labelled: int | None = None
    labelled_fraction: float | None = None
    system: str | None = None
    critical: str = "t"
    tie_band: float = 0.0


def drawn_estimate(
    src: Any, draw: LabelDraw, *, method: str, alpha: float, seed: int, n_boot: int
) -> dict[str, Any]:
    """The estimate (module docstring) of ``src`` (an
    :class:`~metajudge.data.source.DataSource`) under ``draw`` as a JSON-ready
    dict. Intervals are clipped to the target's scale (the dimension's, [0, 1] for a win rate)."""
    from metajudge.analyses.calibration.estimate import Settings, estimate_mean
    from metajudge.stats.ppi import ppi_units

    if src.path and Path(src.path).is_dir():
        raise InputError(
            f"--method {method} draws labels from a fully labelled dataset (--dataset, or "
            "--input FILE); a CJE folder goes with --method aipw",
            path=src.path,
            field="--input",
        )
    specs = judge_specs(src.scores or ())
    if n_columns(specs) + len(draw.backbones) != 1:
        raise InputError(
            f"--method {method} takes exactly one judge (--scores or --backbones)", field="scores"
        )
    if (draw.n_labelled is None) == (draw.labelled_fraction is None):
        raise InputError(
            f"--method {method} draws the labelled units: give exactly one of --n-labelled and "
            "--labelled-fraction",
            field="--n-labelled",
        )
    data, runs, scale = _one_judge_data(src, draw, specs, seed=seed)
    h, j, target = ppi_units(data, system=draw.system, eps=draw.tie_band)
    if data.kind != "likert":
        scale = (0.0, 1.0)
    n = draw.n_labelled
    if draw.labelled_fraction is not None:
        n = max(2, round(draw.labelled_fraction * int(np.sum(np.isfinite(h) & np.isfinite(j)))))
    try:
        st = Settings(alpha=alpha, seed=seed, n_boot=n_boot)
        out = estimate_mean(
            method, (h, j), st, n_labelled=int(n or 0), critical=draw.critical, scale=scale
        )
    except ValueError as e:
        field = "--method" if str(e).startswith("rogan-gladen") else "--n-labelled"
        raise InputError(str(e), field=field) from e
    out |= {"dataset": data.dataset, "metric": draw.metric, "judge": data.backbones[0]}
    out |= {"target": target, "seed": seed, "runs": runs}
    return out


def _dimension(card: Any, src: Any, metric: str | None) -> str:
    """``--dimension``, else the one ``metric`` tracks, else the dataset's only one."""
    from metajudge.scores.swap_sources import metric_dimension

    dims = list(card.dimensions)
    if src.dimension is not None:
        if src.dimension not in dims:
            raise InputError(
                f"unknown dimension {src.dimension!r} (known: {', '.join(dims)})",
                field="--dimension",
            )
        return str(src.dimension)
    if metric is None and len(dims) != 1:
        raise InputError(f"pass --dimension (one of {', '.join(dims)})", field="--dimension")
    return metric_dimension(metric or "", dims)


def _one_judge_data(
    src: Any, draw: LabelDraw, specs: Sequence[ScoreSpec], *, seed: int
) -> tuple[SwapData, dict[str, Any], tuple[float, float] | None]:
    """One judge's scores aligned with the records (as
    :func:`~metajudge.runs.backbone_swap.load_swap_data`, for one source), and the human
    dimension's (min, max) when its scale has a numeric range."""
    from metajudge.analyses.metric_vs_human.aligned import align, binary_as_numbers
    from metajudge.runs.backbone_swap import judge_scores, subset_records, swap_dataset
    from metajudge.scores.swap_sources import external_scores

    ds = swap_dataset(src.dataset, src.path, draw.subset, src.data_dir)
    records = subset_records(ds.records, draw.limit, draw.first, seed)
    dim = _dimension(ds.card, src, draw.metric)
    if ds.card.label_kind == "categorical":
        raise InputError(
            f"a categorical dataset ({ds.card.name}) has no mean to estimate; --method "
            "ppi|rogan-gladen takes numeric (likert), binary or pairwise labels",
            field="--dataset",
        )
    records = binary_as_numbers(records, ds.card, dim)
    ds_scale = ds.card.scale_of(dim)
    numeric = ds_scale is not None and ds_scale.labels is None and ds_scale.max > ds_scale.min
    scale = (float(ds_scale.min), float(ds_scale.max)) if numeric else None
    runs: dict[str, Any] = {}
    if specs:
        binary = ds_scale.labels if ds.card.label_kind == "binary" else None
        columns, _ = external_scores(ds, specs, dimension=dim, data_dir=src.data_dir, binary=binary)
    else:
        if draw.metric is None:
            raise InputError("--backbones runs the judge --metric: give it", field="--metric")
        columns, _, runs = judge_scores(records, draw.metric, draw.backbones, seed=seed)
    [(label, sc)] = columns.items()
    name = ds.card.name + (f"/{draw.subset}" if draw.subset else "")
    view = align(records, dimensions=[dim], dataset=name)
    s = view.values(sc)[None, :]
    return SwapData(view.dataset, draw.metric or "", dim, view, (label,), s), runs, scale


def write_drawn(out: str | Path, src: Any, payload: dict[str, Any], markdown: str) -> list[Path]:
    """``ppi.md`` and ``ppi.json`` written into ``out`` as a set; the paths written."""
    from metajudge.reports.decision_report import write_report
    from metajudge.runs.alt_test import decision_folder

    with decision_folder(out, [src.path]) as stage:
        assert stage is not None
        written = write_report(stage, "ppi", payload, markdown)
    return [Path(out) / Path(p).name for p in written]
