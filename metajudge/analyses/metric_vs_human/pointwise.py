"""The pointwise protocol: each response's metric score against its human score.

G-Eval (Liu et al. 2023), JUDGE-BENCH (Bavaresco et al. 2024) and most judge papers: per
response, the metric score vs the annotators' mean (``aggregation="mean"``) or each annotator's
score (``per_annotator``: one row per label), correlated at a level
(:mod:`metajudge.analyses.metric_vs_human.levels`). Pairwise accuracy is not defined here (no pairs).

The inter-human reference is matched to the protocol, the level and the data: each annotator i
against the mean of the other annotators (leave-one-annotator-out), correlated at the same
level on the same responses, averaged over annotators — and beside it, for every metric, the
metric against that same annotator i, averaged the same way (``matched``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from metajudge import stats as st
from metajudge.analyses.metric_vs_human.aligned import label_rows
from metajudge.analyses.metric_vs_human.cells import CellCalc, Rows, Run, ci_fields, jnum
from metajudge.analyses.metric_vs_human.levels import human_reference, loo_matched
from metajudge.analyses.metric_vs_human.normalize import impute_median
from metajudge.analyses.metric_vs_human.protocol import Protocol
from metajudge.errors import InputError
from metajudge.stats import estimates as est
from metajudge.stats import intervals
from metajudge.stats.estimates import level_estimate

FArr = NDArray[np.float64]


def response_values(run: Run, column: str) -> tuple[FArr, dict[str, Any]]:
    """A column's value per response (direction applied, missing rule applied) and its counts."""
    if column not in run.resp_cache:
        run.resp_cache[column] = _response_values(run, column)
    return run.resp_cache[column]


def _response_values(run: Run, column: str) -> tuple[FArr, dict[str, Any]]:
    v = run.view
    col = run.columns.get(column, {})
    x = v.values(col)
    if run.directions.get(column, "higher") == "lower":
        x = -x
    inf = run.info.get(column)
    n_miss = int(np.isnan(x).sum())
    rule = run.proto.missing_rule
    if rule == "error" and n_miss:
        raise InputError(
            f"metric {column!r}: {n_miss} of {x.size} responses lack a score "
            "(--missing error; use --missing drop or median)",
            field="missing",
        )
    n_imp = 0
    if rule == "median":
        x, n_imp = impute_median(x)
    miss = {
        "unit": "responses",
        "responses_total": x.size,
        "responses_absent": sum(1 for k in v.keys if k not in col),
        "responses_unscored": inf.n_errors if inf else 0,
        "rows_unmatched": inf.n_unmatched if inf else 0,
        "errors": dict(sorted((inf.errors if inf else {}).items(), key=lambda kv: -kv[1])[:5]),
        "rule": rule,
        "pairs_total": x.size,
        "pairs_missing": n_miss,
        "pairs_imputed_median": n_imp,
        "pairs_dropped": n_miss - n_imp,
    }
    return x, miss


def _estimate(run: Run, stat: str, x: FArr, y: FArr, ri: NDArray[np.int64]) -> est.Estimate:
    v, p = run.view, run.proto
    return level_estimate(
        stat, x, y, v.resp_item[ri], v.resp_system[ri], v.n_items, run.W, p.ci_level, p.level
    )


def entry(e: est.Estimate, stat: str, p: Protocol, n_units: int) -> dict[str, Any]:
    """A value with its CI (:func:`~metajudge.stats.intervals.choose`) on ``n_units``
    independent units (responses at the global level, not annotator rows), and at the global
    level its Fisher-z CI on the same units."""
    out: dict[str, Any] = {"value": jnum(e.value), "ci": None, "ci_method": None, "ci_n": 0}
    out["fisher_ci"] = None
    out["undefined"] = e.undefined
    if e.undefined is None:
        out.update(ci_fields(e.interval(stat, p.ci_level, small_n=p.small_n, n=n_units)))
    if p.level == "global" and e.undefined is None:
        out["fisher_ci"] = intervals.fisher_interval(stat, e.value, n_units, p.ci_level).ci
    return out


def _units(run: Run, e: est.Estimate, ri: NDArray[np.int64], ok: NDArray[np.bool_]) -> int:
    """The independent units of a pointwise value: the responses (global level); at level
    system-grouped the inputs the bootstrap resamples within every system (issue 42: with few
    systems a CI still comes from resampling items, the unit the comparisons resample too);
    else the groups or systems the value is computed over."""
    if run.proto.level == "global":
        return int(np.unique(ri[ok]).size)
    if run.proto.level == "system-grouped":
        return int(np.unique(run.view.resp_item[ri[ok]]).size)
    return e.n


def not_applicable() -> dict[str, Any]:
    """A pairwise accuracy in a pointwise cell: not a column of the protocol (no pairs), so
    flagged ``not_applicable`` and left out of the undefined-values notes."""
    why = "pairwise accuracy needs pairs (the pairwise-difference protocol)"
    return {"value": None, "ci": None, "fisher_ci": None, "undefined": why, "not_applicable": True}


def pointwise_cell(
    run: Run, metric: str, dim: str, column: str, x: FArr
) -> tuple[dict[str, Any], CellCalc]:
    """The JSON cell of one metric and dimension, and the resamples comparisons need."""
    v, p = run.view, run.proto
    assert v.resp_labels is not None
    ri, y, ai = label_rows(v.resp_labels[dim], p.aggregation)
    xr = x[ri]
    ok = np.isfinite(xr)
    stats_out: dict[str, Any] = {}
    samples: dict[str, FArr] = {}
    for s in p.statistics:
        if s not in st.CORRELATIONS:
            stats_out[s] = not_applicable()
            continue
        e = _estimate(run, s, xr, y, ri)
        stats_out[s] = entry(e, s, p, _units(run, e, ri, ok & np.isfinite(y)))
        if e.samples is not None and e.undefined is None:
            samples[s] = e.samples
    cell = {
        "metric": metric,
        "dimension": dim,
        "column": column,
        "n_rows": int(ok.sum()),
        "n_pairs": 0,
        "n_responses": int(np.unique(ri[ok]).size),
        "n_items": int(np.unique(v.resp_item[ri[ok]]).size),
        "stats": stats_out,
    }
    rows = Rows(xr[ok], xr[ok], y[ok], ri[ok], np.zeros(int(ok.sum())), ai[ok])
    return cell, CellCalc(rows, samples)


def matched_reference(run: Run, dim: str, metric_values: dict[str, FArr]) -> dict[str, Any]:
    """Leave-one-annotator-out reference at the protocol's level, and each metric beside it."""
    v, p = run.view, run.proto
    assert v.resp_labels is not None
    L = v.resp_labels[dim]
    stats_names = [s for s in p.statistics if s in st.CORRELATIONS]
    args = (L, v.resp_item, v.resp_system, v.n_items, run.W, p.ci_level)
    loo = st.leave_one_out(L)  # (once for the reference, every metric and statistic)
    ref = human_reference(*args, stats_names, unit_level=p.level, unit_name="responses", loo=loo)
    units = v.n_items if p.level == "system-grouped" else None  # resampled within systems
    out: dict[str, Any] = {
        "method": None,
        "n_pairs": ref.n_units,
        "stats": {s: ref_entry(e, s, p, units) for s, e in ref.estimates.items()},
        "matched": {},
    }
    if ref.method is None:
        why = next(iter(ref.estimates.values())).undefined if ref.estimates else "no labels"
        out["stats"] = {s: {"value": None, "ci": None, "undefined": why} for s in p.statistics}
        return out
    out["method"] = (
        f"leave-one-annotator-out at level {p.level}: each of {L.shape[1]} annotators vs the "
        "mean of the others, averaged over annotators; 'matched': each metric vs that same "
        "annotator, averaged the same way"
    )
    comps = loo[0]
    for m, x in metric_values.items():
        sorts: dict[int, st.SortOrders] = {}  # each comparison's rows sorted once
        out["matched"][m] = {
            s: ref_entry(loo_matched(s, *args, p.level, x, sorts, comps), s, p, units)
            for s in stats_names
        }
    return out


def ref_entry(e: est.Estimate, stat: str, p: Protocol, units: int | None = None) -> dict[str, Any]:
    """A reference value with its CI (:func:`~metajudge.stats.intervals.choose` on the
    estimate's units, or ``units`` when the bootstrap resamples others)."""
    out: dict[str, Any] = {"value": jnum(e.value), "ci": None, "ci_method": None, "ci_n": 0}
    if e.undefined is None:
        out.update(ci_fields(e.interval(stat, p.ci_level, small_n=p.small_n, n=units)))
    out["undefined"] = e.undefined
    return out


def check_pointwise(run: Run, name: str) -> None:
    """The pointwise protocol needs per-response human scores."""
    if run.view.resp_labels is None:
        raise InputError(
            f"dataset {name!r} has pairwise preferences, not per-response scores: the pointwise "
            "protocol needs a Likert dataset (use --protocol pairwise-difference)",
            field="protocol",
        )
    if len(run.view.keys) < 3:
        raise InputError(
            f"dataset {name!r} has {len(run.view.keys)} responses; at least 3 are needed",
            field="records",
        )
