"""The ``metajudge stats`` commands: ``power`` (items needed to detect a correlation or a
difference of two), ``rank-clusters`` (systems ranked with significance clusters) and
``kendall`` (the Ties-Matter table).

Each run function loads what it needs, calls the statistic and returns the result; a table asked
for with ``output`` is written there atomically. The CLI (:mod:`metajudge.cli.stats`) prints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metajudge.errors import InputError


@dataclass(frozen=True)
class ScoreSource:
    """Where a ``stats`` command's scores come from: the dataset (``dataset`` name or
    ``input_file``, ``subset``), the score specs, the metrics (None: all given), the human
    dimension and the id policy of the score rows."""

    dataset: str | None = None
    input_file: str | None = None
    subset: str | None = None
    data_dir: str | Path | None = None
    scores: Sequence[str] | None = None
    metrics: Sequence[str] | None = None
    dimension: str | None = None
    ids: Any = None


def _rows(src: ScoreSource) -> tuple[Any, list[dict[str, Any]]]:
    from metajudge.data.loading import open_dataset
    from metajudge.scores.spec import gather_scores

    ds = open_dataset(src.dataset, src.input_file, subset=src.subset, data_dir=src.data_dir)
    rows = gather_scores(ds, src.scores, data_dir=src.data_dir, labels=False, ids=src.ids)
    return ds, rows


def score_matrices_of(src: ScoreSource) -> tuple[Any, Any]:
    """The dataset and its :class:`~metajudge.analyses.metric_vs_human.matrices.ScoreMatrices`
    against ``src.dimension``; refused when no metric has scores."""
    from metajudge.analyses.metric_vs_human.matrices import score_matrices

    ds, rows = _rows(src)
    metrics = list(src.metrics) if src.metrics else None
    sm = score_matrices(ds.records, rows, src.dimension, metrics)
    if not sm.metrics:
        raise InputError(
            "no metric scores: give --scores shipped or --scores FILE", field="metrics"
        )
    return ds, sm


def _differences(scores: dict[str, float | None]) -> dict[str, float | None]:
    """Per pair ``item``: the score of ``item::b`` minus that of ``item::a`` (None if either lacks one)."""
    from metajudge.data.formats import split_response_key

    sides: dict[str, dict[str, float | None]] = {}
    for key, v in scores.items():
        item, side = split_response_key(key)
        sides.setdefault(item, {})[side] = v
    out: dict[str, float | None] = {}
    for item, s in sides.items():
        a, b = s.get("a"), s.get("b")
        out[item] = None if a is None or b is None else b - a
    return out


def estimated_r12(src: ScoreSource) -> tuple[float, str]:
    """r12 from two metrics' scores (``src.metrics`` = A, B): Pearson over the responses
    (pairwise records: the pairs' differences b − a) both metrics score."""
    from metajudge.stats.power import r12_from_scores

    names = [m.strip() for m in src.metrics or () if m.strip()]
    if len(names) != 2 or not src.scores:
        raise InputError("to estimate r12 give --scores and --metrics A,B", field="metrics")
    ds, rows = _rows(src)
    by = {m: {r["key"]: r["score"] for r in rows if r["metric"] == m} for m in names}
    for m in names:
        if not by[m]:
            raise InputError(f"no scores of metric {m!r} in --scores", field="metrics")
    unit = "responses"
    if ds.card.kind == "pairwise":
        by = {m: _differences(v) for m, v in by.items()}
        unit = "pairs (score of b minus a)"
    r12, n = r12_from_scores(by[names[0]], by[names[1]])
    if not math.isfinite(r12):
        raise InputError(f"r12 is undefined on {n} {unit} scored by both metrics", field="metrics")
    return r12, f"r12 = {r12:.4f} estimated: Pearson of {names[0]} and {names[1]} over {n} {unit}"


def _power_r12(r12: float | None, src: ScoreSource, given_data: bool) -> tuple[float, str]:
    """--r12 as given, or estimated from two metrics' scores; one of them, never a default."""
    if r12 is not None and given_data:
        raise InputError("give --r12 or the scores to estimate it from, not both", field="r12")
    if r12 is not None:
        return r12, f"r12 = {r12} given"
    if not given_data:
        raise InputError(
            "--r1/--r2 need the metrics' correlation with each other: give --r12, or two "
            "metrics' scores (--dataset NAME --scores SPEC --metrics A,B) to estimate it",
            field="r12",
        )
    return estimated_r12(src)


@dataclass(frozen=True)
class PowerResult:
    """``n`` items needed to detect ``what``; ``how``: how r12 was had (empty for one r)."""

    n: float
    what: str
    how: str
    alpha: float
    power: float

    def sentence(self) -> str:
        items = "infinite" if math.isinf(self.n) else str(math.ceil(self.n))
        return (
            f"items needed to detect {self.what} at alpha={self.alpha} (two-sided) with power "
            f"{self.power}: {items} (Fisher z; exact n = {self.n:.2f})"
        )


def run_power(
    *,
    r: float | None = None,
    r1: float | None = None,
    r2: float | None = None,
    r12: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    src: ScoreSource | None = None,
    given_data: bool = False,
) -> PowerResult:
    """Items needed for a correlation ``r``, or for ``r1`` vs ``r2`` with the metrics correlated
    ``r12`` (given, or estimated from ``src`` when ``given_data``)."""
    from metajudge.stats import power as pw

    if r is not None and r1 is None and r2 is None:
        if r12 is not None:
            raise InputError("--r12 goes with --r1 and --r2, not --r", field="r12")
        n = pw.n_for_correlation(r, alpha=alpha, power=power)
        return PowerResult(n, f"a correlation of {r}", "", alpha, power)
    if r is None and r1 is not None and r2 is not None:
        r12, how = _power_r12(r12, src or ScoreSource(), given_data)
        n = pw.n_for_correlation_difference(r1, r2, r12, alpha=alpha, power=power)
        what = f"correlations {r1} vs {r2} (metrics correlated {r12:.4g})"
        return PowerResult(n, what, how, alpha, power)
    raise InputError("give either --r, or --r1 and --r2", field="r")


def _write(output: str, text: str) -> None:
    from metajudge.io import atomic_write

    with atomic_write(output) as fh:
        fh.write(text)


def run_rank_clusters(
    src: ScoreSource,
    *,
    level: str,
    statistic: str,
    method: str,
    n_resamples: int,
    seed: int,
    alpha: float,
    fmt: str,
    output: str | None = None,
    plot: str | None = None,
) -> tuple[str, Path | None]:
    """The rank table rendered in ``fmt`` (written to ``output`` when given) and the path of its
    bar plot (``plot``; None without)."""
    from metajudge.analyses.system_ranking import ClusterOptions, rank_table
    from metajudge.reports import system_ranking as rc

    ds, sm = score_matrices_of(src)
    if len(sm.metrics) < 2:
        raise InputError("rank clusters need at least two metrics' scores", field="metrics")
    opts = ClusterOptions(level, statistic, method, n_resamples, seed, alpha)
    table = rank_table(sm, ds.card.name, opts)
    text = rc.render_ranking(table, fmt)
    if output:
        _write(output, text)
    return text, (rc.plot_ranking(table, plot) if plot else None)


def run_kendall(
    src: ScoreSource,
    *,
    level: str,
    seed: int,
    cv_folds: int,
    n_perm: int,
    fmt: str,
    output: str | None = None,
) -> str:
    """The Ties-Matter table rendered in ``fmt`` (written to ``output`` when given)."""
    from metajudge.analyses.metric_vs_human.kendall_table import kendall_rows
    from metajudge.reports.kendall_table import kendall_text

    _, sm = score_matrices_of(src)
    rows = kendall_rows(sm, level, seed=seed, cv_folds=cv_folds, n_perm=n_perm)
    text = kendall_text(rows, fmt, level=level, seed=seed, n_perm=n_perm)
    if output:
        _write(output, text)
    return text
