"""Partial correlation of a metric and the human score, controlling for a field (``--control``).

The protocol of factuality-metric papers (FRANK, Pagnoni et al. 2021): the summarisation system
(or any record or ``meta`` field) is removed from both scores, then they are correlated
(:mod:`metajudge.stats.partial`: categorical one-hot, numeric linear; Spearman as FRANK's
``evaluate.py`` or rank-based as pingouin). Pointwise protocol, global level: the residuals are
taken on the rows the metric scored (rows lacking a score dropped first), the bootstrap resamples
items (inputs: all responses of an input together) as every other cell's, so comparisons
(Williams, paired bootstrap, permutation) run on the residuals unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from metajudge import stats as st
from metajudge.analyses.metric_vs_human.aligned import AlignedView, label_rows
from metajudge.analyses.metric_vs_human.cells import CellCalc, Rows, Run
from metajudge.analyses.metric_vs_human.pointwise import entry, not_applicable
from metajudge.errors import InputError
from metajudge.stats import estimates as est
from metajudge.stats.partial import SPEARMAN_WORDS, Control, control_of, partial_rows

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]
PARTIAL_STATS = ("pearson", "spearman")


def control_for(dataset: Any, view: AlignedView, name: str) -> Control:
    """The control ``name`` per response of ``view``: the record's ``system`` or ``id``, else
    its ``meta`` field; a record without it is an error naming the field and the record."""
    from metajudge.data.formats import response_key

    by_key = {response_key(r.id, r.system): r for r in dataset.records}
    values = []
    for k in view.keys:
        r = by_key[k]
        if name in ("system", "id"):
            values.append(getattr(r, name))
            continue
        v = (r.meta or {}).get(name)
        if v is None:
            lacking = sum(1 for rr in dataset.records if (rr.meta or {}).get(name) is None)
            raise InputError(
                f"--control {name}: {lacking} of {len(dataset.records)} records lack the field "
                f"(first: id {r.id!r}, system {r.system!r}); a control is 'system', 'id' or a "
                "meta field every record has",
                field=f"meta.{name}",
            )
        values.append(v)
    return control_of(name, values)


def control_json(run: Run) -> dict[str, Any] | None:
    """What ``result.json``'s protocol records of the control (None: no control)."""
    c = run.control
    if c is None:
        return None
    return {
        "field": c.name,
        "kind": c.kind,
        "describe": c.describe(),
        "spearman": run.proto.control_spearman,
        "spearman_definition": SPEARMAN_WORDS[run.proto.control_spearman],
        "pearson_definition": "Pearson of the residuals (partial Pearson)",
        "residuals": "on the rows each metric scored (missing rows dropped first); the control "
        "fitted once, the rows then resampled by item",
        "williams_n": "rows' responses less the control's parameters",
    }


def partial_cell(
    run: Run, metric: str, dim: str, column: str, x: FArr
) -> tuple[dict[str, Any], CellCalc]:
    """The JSON cell of one metric and dimension under the control, and what comparisons need."""
    v, p, control = run.view, run.proto, run.control
    assert v.resp_labels is not None and control is not None
    ri, y, ai = label_rows(v.resp_labels[dim], p.aggregation)
    ok = np.isfinite(x[ri]) & np.isfinite(y)
    ri, y, ai, xr = ri[ok], y[ok], ai[ok], x[ri][ok]
    n_units = int(np.unique(ri).size)
    k = control.parameters(ri) if ri.size else 0
    stats_out: dict[str, Any] = {}
    calc = CellCalc(Rows(xr, xr, y, ri, np.zeros(ri.size), ai), y_raw=y)
    for s in p.statistics:
        if s not in st.CORRELATIONS:
            stats_out[s] = not_applicable()
            continue
        if s not in PARTIAL_STATS:
            why = "partial correlation (--control): Pearson and Spearman only"
            stats_out[s] = {"value": None, "ci": None, "fisher_ci": None, "undefined": why}
            continue
        taken, xs, ys = partial_rows(s, xr, y, control, ri, p.control_spearman)
        calc.stat_rows[s] = (taken, xs, ys)
        e = est.pooled(taken, xs, ys, v.resp_item[ri], run.W, p.ci_level)
        stats_out[s] = entry(e, s, p, max(n_units - k, 0))
        if e.samples is not None and e.undefined is None:
            calc.samples[s] = e.samples
    _, xs, ys = calc.arrays("pearson")  # the rows' x and y: the residuals
    if "pearson" not in calc.stat_rows:
        xs, ys = partial_rows("pearson", xr, y, control, ri)[1:]
    calc.rows = Rows(xs, xr, ys, ri, np.zeros(ri.size), ai)
    cell = {
        "metric": metric,
        "dimension": dim,
        "column": column,
        "n_rows": int(ri.size),
        "n_pairs": 0,
        "n_responses": n_units,
        "n_items": int(np.unique(v.resp_item[ri]).size),
        "control_parameters": k,
        "stats": stats_out,
    }
    return cell, calc


def common_arrays(
    run: Run, s: str, c1: CellCalc, c2: CellCalc, i1: IArr, i2: IArr
) -> tuple[str, FArr, FArr, FArr]:
    """Under a control, ``(statistic taken, x1, x2, y)`` of ``s`` on the rows both cells
    scored (``i1``, ``i2`` index them in each): residuals taken again on those rows."""
    assert run.control is not None and c1.y_raw is not None
    units = c1.rows.pair[i1]
    y = c1.y_raw[i1]
    sp = run.proto.control_spearman
    taken, x1, yr = partial_rows(s, c1.rows.raw[i1], y, run.control, units, sp)
    x2 = partial_rows(s, c2.rows.raw[i2], y, run.control, units, sp)[1]
    return taken, x1, x2, yr
