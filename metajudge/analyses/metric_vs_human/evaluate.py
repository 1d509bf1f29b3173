"""The meta-evaluation: metrics against human labels, one table of cells with CIs and tests.

:func:`meta_evaluate` aligns the dataset and the score rows (:mod:`metajudge.analyses.metric_vs_human.aligned`),
draws one set of seeded bootstrap resamples of items shared by every metric, dimension and the
inter-human reference (so CIs and metric-vs-metric differences are paired), computes each cell
(:mod:`metajudge.analyses.metric_vs_human.cells`), the inter-human reference (:mod:`metajudge.stats.estimates`)
and the comparisons (:mod:`metajudge.analyses.metric_vs_human.compare`). The options are one
:class:`~metajudge.analyses.metric_vs_human.protocol.Protocol`; the result (:class:`MetaEvalResult`) is plain
JSON that :mod:`metajudge.reports` renders (published numbers are attached there).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metajudge import stats as st
from metajudge.analyses.metric_vs_human.aligned import AlignedView, align_dataset, index_score_rows
from metajudge.analyses.metric_vs_human.cells import (
    CellCalc,
    Run,
    evaluate_cell,
    jnum,
    run_deferred,
)
from metajudge.analyses.metric_vs_human.compare import HOLM_FAMILY, compare_metrics, p_floors
from metajudge.analyses.metric_vs_human.levels import (
    LEVEL_NAMES,
    MISSING_CELLS,
    human_reference,
    loo_matched,
    prefetch_pooled,
)
from metajudge.analyses.metric_vs_human.partial import control_for, control_json, partial_cell
from metajudge.analyses.metric_vs_human.pointwise import (
    check_pointwise,
    matched_reference,
    pointwise_cell,
    ref_entry,
    response_values,
)
from metajudge.analyses.metric_vs_human.protocol import (
    AGGREGATIONS,
    COMPARE_STATS,
    WILLIAMS_WORDS,
    Protocol,
)
from metajudge.analyses.metric_vs_human.result import SCHEMA, MetaEvalResult
from metajudge.analyses.metric_vs_human.trivial import is_trivial
from metajudge.engine import Resamples
from metajudge.errors import InputError
from metajudge.scores.readers.rows import collapse_families, metric_for_dimension
from metajudge.stats import intervals

__all__ = ["AGGREGATIONS", "COMPARE_STATS", "SCHEMA", "MetaEvalResult", "Protocol", "meta_evaluate"]


def _option_name(key: str, value: Any) -> str:
    """``level=0.9`` (a number) is the legacy spelling of ``ci_level``; ``level="item"`` is the
    correlation level (:mod:`metajudge.analyses.metric_vs_human.levels`)."""
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return "ci_level" if key == "level" and numeric else key


def _protocol(protocol: Protocol | None, options: Mapping[str, Any]) -> Protocol:
    opts = {_option_name(k, v): v for k, v in options.items()}
    if protocol is None:
        return Protocol.from_dict(opts)
    return protocol.with_options(**opts) if opts else protocol


def _check_dataset(dataset: Any, dimensions: Sequence[str] | None) -> list[str]:
    card = dataset.card
    if card.kind not in ("pairwise", "likert"):
        raise InputError(
            f"dataset {card.name!r} is a {card.kind} dataset without human judgments",
            field="dataset",
        )
    dims = list(dimensions) if dimensions else list(card.dimensions)
    bad = [d for d in dims if d not in card.dimensions]
    if bad:
        raise InputError(
            f"unknown dimension(s) {bad} (dataset has {', '.join(card.dimensions)})",
            field="dimensions",
        )
    return dims


def _protocol_json(run: Run, compare_note: str | None) -> dict[str, Any]:
    p, view = run.proto, run.view
    unit = ("response" if view.kind == "likert" else "pair") if p.grouped else None
    if p.correlate == "pointwise":
        unit = "response"
    return {
        "correlate": p.correlate,
        "correlation_level": p.level,
        "level_name": LEVEL_NAMES[p.level],
        "missing_cells": MISSING_CELLS[p.level],
        "normalize": p.normalize,
        "aggregation": p.aggregation,
        "missing": p.missing_rule,
        "grouped": p.grouped,
        "grouped_unit": unit,
        "epsilon": f"learned by {p.cv_folds}-fold CV" if p.learn_epsilon else p.epsilon,
        "half_width": view.half_width,
        "n_boot": p.n_boot,
        "n_perm": p.permutations if p.compare else 0,
        "comparison_scope": compare_note
        or ("all pairs of metrics" if p.compare else "not requested"),
        "comparisons_skipped": bool(compare_note and compare_note.startswith("skipped")),
        "control": control_json(run),
        "seed": p.seed,
        "level": p.ci_level,
        "bootstrap_unit": _bootstrap_unit(p),
        "bootstrap_p": "2*min(#{d<=0}+1, #{d>=0}+1)/(B+1), capped at 1 (add-one smoothing)",
        "fisher_n": _fisher_n(p),
        "ci_method": _ci_method_json(p),
        "williams_n": (
            "number of units (pairs; responses under the pointwise protocol) both metrics "
            "scored" + (", less the control's parameters" if p.control else "")
        ),
        "accuracy": "sign of the raw difference m(b)-m(a) with tie band epsilon vs sign of the human label",
        "holm": f"{HOLM_FAMILY} (the comparisons of one dimension and statistic form one "
        "family), per test",
        "williams_sided": WILLIAMS_WORDS[p.williams],
        "permutation": "item swaps (fair coin flips) shared by every comparison of a dimension, "
        "as the bootstrap resamples are; a pair whose metrics' rows differ draws its own",
        "ci_row_limits": _row_limits_json(p),
        "ceiling": _ceiling_definition(p, view),
    }


def _bootstrap_unit(p: Protocol) -> str:
    """The one resampling unit of every value's CI and every comparison of the run."""
    if p.correlate == "pointwise" and p.level == "system-grouped":
        return (
            "item (input), the same draw within every system (value and comparison CIs alike; "
            "the CI counts inputs, not systems)"
        )
    return "item (input): all pairs and annotator rows of an item together"


def _fisher_n(p: Protocol) -> str:
    """The unit the Fisher-z CIs (and the small-n rule) count."""
    if p.correlate == "pointwise":
        return (
            "number of responses with both scores (independent units), not annotator rows"
            if p.level == "global"
            else "no Fisher-z CI at this level"
        )
    return "number of pairs, not annotator rows"


def _row_limits_json(p: Protocol) -> str | None:
    """The row limits above which a rank correlation's CI is Fisher z, not the bootstrap."""
    limits = [
        f"{name} above {limit} rows"
        for name, limit in (
            ("Kendall's tau_b", p.kendall_ci_max_rows),
            ("Spearman's rho", p.spearman_ci_max_rows),
        )
        if limit is not None
    ]
    if not limits:
        return None
    return (
        f"no bootstrap CI for {' nor for '.join(limits)} (cells, matched reference, "
        "comparisons: ci_note on each); the value's CI is its Fisher-z CI instead "
        "(ci_method names it)"
    )


def _ci_method_json(p: Protocol) -> str:
    return (
        f"percentile bootstrap from {p.small_n} independent units (ci_n) up; below: Fisher z "
        "(Spearman se^2 1.06/(n-3), Kendall 0.437/(n-4); Fieller et al. 1957), Student t on "
        f"per-group values (grouped levels) or Wilson (accuracies); none below "
        f"{intervals.MIN_CI_N} (small_n; named per value in ci_method)"
    )


def _dataset_json(
    card: Any, view: AlignedView, dims: Sequence[str], subset: str | None
) -> dict[str, Any]:
    return {
        "name": card.name,
        "subset": subset,
        "kind": card.kind,
        "scale": view.half_width,
        "label_scale": card.scale.describe(),
        "dimensions": list(dims),
        "n_pairs": len(view.pair_ids),
        "n_items": view.n_items,
        "n_responses": len(view.keys),
        "annotators": int(max((view.pair_labels[d].shape[1] for d in dims), default=1)),
    }


def _ceiling_definition(p: Protocol, view: AlignedView) -> str:
    if view.resp_labels is not None and (p.correlate == "pointwise" or p.level == "item"):
        return (
            f"leave-one-annotator-out on the responses at level {p.level}: each annotator vs the "
            "mean of the others, averaged; beside it each metric vs that same annotator (matched)"
        )
    per = ", per input then averaged" if p.level == "item" else ""
    return (
        "each annotator vs the mean of the others, averaged over annotators (two labels: 1 vs 2 "
        f"and 2 vs 1, so it does not depend on their order), on every pair with two or more "
        f"labels{per}"
    )


def _ceiling_one(run: Run, d: str) -> dict[str, Any]:
    v, p = run.view, run.proto
    if v.resp_labels is not None and (run.pointwise or p.level == "item"):
        # matched to the response-level correlation: leave-one-annotator-out at the same level
        cols = {m: run.resp_cache[c][0] for (m, dd), c in run.columns_of.items() if dd == d and c}
        return matched_reference(run, d, cols)
    systems = np.zeros(len(v.pair_ids), dtype=np.int64)
    loo = st.leave_one_out(v.pair_labels[d])  # once for the reference and the matched metrics
    notes = _ci_notes(run, loo[0])
    sorts: dict[int, st.SortOrders] = {}  # each comparison's: its annotator's for every metric too
    ref = human_reference(
        v.pair_labels[d],
        v.pair_item,
        systems,
        v.n_items,
        run.W,
        p.ci_level,
        p.statistics,
        unit_level=p.level,
        no_bootstrap={s for s, note in notes.items() if note},
        loo=loo,
        sorts=sorts,
    )
    stats = {s: _ref_entry(e, s, p, notes.get(s)) for s, e in ref.estimates.items()}
    return {
        "method": ref.method and (ref.method + (", per input then averaged" if p.grouped else "")),
        "n_pairs": ref.n_units,
        "stats": stats,
        "matched": _pair_matched(run, d, loo[0], sorts) if ref.method else {},
    }


def _ci_notes(run: Run, comps: list[st.HumanComparison]) -> dict[str, str | None]:
    """Per correlation, why the inter-human reference and the metrics matched to it get no
    bootstrap CI (the cells' row limits, :meth:`Protocol.ci_skipped`, on the rows of one
    comparison); None where they get one."""
    p = run.proto
    n_rows = max((c.rows.size for c in comps), default=0)
    corr = [s for s in p.statistics if s in st.CORRELATIONS]
    return {s: p.ci_skipped(s, n_rows) if run.W is not None else None for s in corr}


def _pair_matched(
    run: Run, d: str, comps: list[st.HumanComparison], first: dict[int, st.SortOrders]
) -> dict[str, Any]:
    """Each metric's normalised d against each single annotator's pair label, averaged
    (``comps``: the comparisons of :func:`~metajudge.stats.leave_one_out` of d's labels;
    ``first``: per comparison, orders whose y are its annotator's labels, sorted and ranked
    once for every metric).

    Kendall's and Spearman's bootstrap CIs follow the cells' row limits
    (:meth:`~metajudge.analyses.metric_vs_human.protocol.Protocol.ci_skipped`, on the rows of one comparison).
    """
    v, p = run.view, run.proto
    L = v.pair_labels[d]
    systems = np.zeros(len(v.pair_ids), dtype=np.int64)
    cols = {
        m: c
        for (m, dd), c in run.columns_of.items()
        if dd == d and c is not None and c in run.cache and not run.cache[c][1].undefined
    }
    xs = {m: run.cache[c][1].values for m, c in cols.items()}
    notes = _ci_notes(run, comps)
    corr = list(notes)
    if run.W is not None and p.level == "global":
        items = [_take(v.pair_item, c.rows) for c in comps]
        human = [(s, c.ref, c.single, it) for c, it in zip(comps, items, strict=True) for s in corr]
        prefetch_pooled(
            run.W,
            [
                (s, _take(x, c.rows), c.single, it)
                for x in xs.values()
                for c, it in zip(comps, items, strict=True)
                for s in corr
                if notes[s] is None
            ]
            + [h for h in human if notes[h[0]] is None],
        )
    out: dict[str, Any] = {}
    ranked = any(s != "pearson" for s in corr)
    for m, x in xs.items():
        out[m] = {}
        sorts = _matched_sorts(run.pair_order(cols[m]), x, comps if ranked else [], first)
        for s in corr:
            W = None if notes[s] else run.W
            args = (L, v.pair_item, systems, v.n_items, W, p.ci_level, p.level)
            e = loo_matched(s, *args, x, sorts, comps)
            out[m][s] = _ref_entry(e, s, p, notes[s])
    return out


def _matched_sorts(
    order: np.ndarray,
    x: np.ndarray,
    comps: list[st.HumanComparison],
    first: dict[int, st.SortOrders],
) -> dict[int, st.SortOrders]:
    """Each comparison's rows of ``x`` (a metric's d per pair, ``order`` its sort order) and
    labels, with their sort orders and ranks: each annotator's labels sorted and ranked once for
    every metric (``first``: the first metric's orders, per comparison), and x once for every
    comparison on every pair."""
    sorts: dict[int, st.SortOrders] = {}
    for k, c in enumerate(comps):
        full = c.rows.size == x.size
        on_all = [j for j in range(k) if comps[j].rows.size == x.size]
        by_x = None if full and on_all else order if full else st.rows_order(order, c.rows)
        sorts[k] = st.SortOrders(_take(x, c.rows), c.single, by_x=by_x)
        if full and on_all:
            sorts[k].sharing(sorts[on_all[0]], "x")
        if k in first:
            sorts[k].sharing(first[k], "y")
        first.setdefault(k, sorts[k])
    return sorts


def _ref_entry(e: Any, stat: str, p: Protocol, note: str | None) -> dict[str, Any]:
    """:func:`ref_entry`; where the bootstrap was skipped (``note``, the row limits), the note
    and, at the global level, the Fisher-z CI it points to (``fisher_ci``, on the estimate's
    units: the pairs of one comparison)."""
    out = ref_entry(e, stat, p)
    if note:
        out["ci_note"] = note
        defined = e.undefined is None and p.level == "global"
        fisher = intervals.fisher_interval(stat, e.value, e.n, p.ci_level) if defined else None
        out["fisher_ci"] = fisher.ci if fisher else None
        if fisher is not None and e.n > p.small_n:  # shown as the value's CI, with its method
            out.update({"ci": fisher.ci, "ci_method": fisher.method, "ci_n": fisher.n})
    return out


def _take(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``a[rows]``, or ``a`` itself when ``rows`` (sorted, distinct) is every row: no copy."""
    return a if rows.size == a.size else a[rows]


def _ceiling(run: Run) -> list[dict[str, Any]]:
    """The inter-human reference of each dimension, with the metrics matched to it: many
    estimates read one at a time from the resamples' memo, each array's digest found once
    (:meth:`~metajudge.engine.Resamples.same_arrays`)."""
    kept = run.W.same_arrays() if isinstance(run.W, Resamples) else contextlib.nullcontext()
    with kept:
        return [{**_ceiling_one(run, d), "dimension": d} for d in run.view.dimensions]


def _points(run: Run, norm_by_column: Mapping[str, np.ndarray], limit: int = 20000) -> dict:
    """Per-unit metric values and labels, for scatter plots re-rendered from the JSON.

    Pairwise-difference: the normalised d per pair; pointwise: the score per response.
    """
    view = run.view
    if run.pointwise:
        labels, values = view.resp_labels or {}, {c: x for c, (x, _) in run.resp_cache.items()}
    else:
        labels, values = view.pair_labels, dict(norm_by_column)
    n = len(view.keys) if run.pointwise else len(view.pair_ids)
    idx = np.arange(n) if n <= limit else np.linspace(0, n - 1, limit).astype(int)

    def r(a: np.ndarray) -> list[Any]:
        return [None if not math.isfinite(v) else round(float(v), 6) for v in a]

    return {
        "unit": "responses" if run.pointwise else "pairs",
        "pairs": int(idx.size),
        "subsampled": bool(n > limit),
        "labels": {d: [r(row) for row in labels[d][idx]] for d in view.dimensions},
        "d_norm": {c: r(v[idx]) for c, v in values.items()},
    }


def _cell(
    run: Run, m: str, d: str, c: str | None, index: int
) -> tuple[dict[str, Any], CellCalc | None, np.ndarray | None, dict[str, Any] | None]:
    """One cell under the protocol in force, with its missing-score counts."""
    if c is None or not run.pointwise:
        miss = run.diffs(c)[2] if c is not None else None
        if c is not None and run.view.resp_labels is not None and run.proto.level == "item":
            response_values(run, c)  # the matched reference reads the per-response values
        cell, calc, x_pair = evaluate_cell(run, m, d, c, index)
        return cell, calc, x_pair, miss
    x, miss = response_values(run, c)
    if run.control is not None:
        cell, calc = partial_cell(run, m, d, c, x)
    else:
        cell, calc = pointwise_cell(run, m, d, c, x)
    return cell, calc, None, miss


def _cells(
    run: Run, metrics: Sequence[str], available: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[Any, Any], dict[str, np.ndarray]]:
    cells: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    calcs: dict[tuple[str, str], tuple[dict[str, Any], CellCalc]] = {}
    points: dict[str, np.ndarray] = {}
    if isinstance(run.W, Resamples):
        run.deferred = []  # every cell's bootstrap in as few passes as possible, below
    for m in metrics:
        cols = {d: metric_for_dimension(m, d, available) for d in run.view.dimensions}
        entry: dict[str, Any] = {
            "name": m,
            "columns": cols,
            "direction": run.directions.get(m, "higher"),
            "signatures": {},
            "missing": {},
        }
        for d, c in cols.items():
            run.columns_of[(m, d)] = c
            cell, calc, x_pair, miss = _cell(run, m, d, c, len(cells))
            if c is not None:
                entry["missing"][c] = miss
                entry["signatures"][c] = sorted(run.info[c].signatures if c in run.info else ())
            cells.append(cell)
            if x_pair is not None and c is not None:
                points[c] = x_pair
            if calc is not None:
                calcs[(m, d)] = (cell, calc)
        entries.append(entry)
    run_deferred(run)
    return cells, entries, calcs, points


def _check_pairs(name: str, view: Any, proto: Protocol) -> None:
    """The pairwise-difference protocol needs at least 3 pairs (a hint when responses are scored)."""
    P = len(view.pair_ids)
    if P < 3 and proto.correlate == "pairwise-difference":
        hint = (
            "; its responses have their own scores: use the pointwise protocol "
            "(--protocol pointwise)"
            if view.resp_labels is not None
            else ""
        )
        raise InputError(
            f"dataset {name!r} has {P} pairs; the pairwise-difference protocol "
            f"needs at least 3{hint}",
            field="pairs",
        )


def meta_evaluate(
    dataset: Any,
    scores_rows: Iterable[Mapping[str, Any]],
    protocol: Protocol | None = None,
    *,
    metrics: Sequence[str] | None = None,
    dimensions: Sequence[str] | None = None,
    directions: Mapping[str, str] | None = None,
    subset: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> MetaEvalResult:
    """Meta-evaluate metrics against the human labels of ``dataset``.

    ``dataset``: a :class:`metajudge.data.registry.Dataset`; ``scores_rows``: per-response score
    rows (``key``, ``metric``, ``score`` …) from ``metajudge score`` or
    :mod:`metajudge.scores.readers.upstream`. ``protocol``: the options (default
    :class:`~metajudge.analyses.metric_vs_human.protocol.Protocol()`); keyword ``options`` override single
    fields (``normalize="raw"``, ``grouped=True`` …). ``metrics``: rows of the table (default:
    every metric in the rows; ``X_<dim>`` families collapse to ``X``); ``directions``:
    ``{metric: "higher"|"lower"}``; ``subset``: restrict to ``dataset.subset(subset)``.
    ``progress``: called ``(resamples done, n_boot)`` during each pass over the bootstrap
    resamples (a display's callback, :class:`metajudge.progress.Steps`).
    """
    t0 = time.perf_counter()
    proto = _protocol(protocol, options).for_kind(dataset.card.kind)
    if subset:
        dataset = dataset.subset(subset)
    dims = _check_dataset(dataset, dimensions)
    view = align_dataset(dataset, dims)
    _check_pairs(dataset.card.name, view, proto)
    columns, info = index_score_rows(scores_rows, view.key_index)
    available = sorted(columns)
    metrics = list(
        dict.fromkeys(metrics if metrics is not None else collapse_families(available, dims))
    )
    if not metrics:
        raise InputError(
            "no metric scores for this dataset (none of the score rows matches its pairs)",
            field="metrics",
        )
    rng = np.random.default_rng(proto.seed)
    # drawn a block of resamples at a time: memory O(rows), values as bootstrap_weights; measured
    # by the run's engine wherever a statistic of them is asked for (cells, references, comparisons)
    W = (
        Resamples.draw(
            view.n_items, proto.n_boot, rng, consume=False, progress=progress, engine=proto.engine
        )
        if proto.n_boot > 0
        else None
    )
    if W is not None:
        W.prefill()  # the count cache drawn beside the cells' point values
    declared = {m: inf.direction for m, inf in info.items() if inf.direction}
    run = Run(view, proto, columns, info, {**declared, **dict(directions or {})}, W)
    if run.pointwise:
        check_pointwise(run, dataset.card.name)
    if proto.control is not None:
        run.control = control_for(dataset, view, proto.control)
    cells, entries, calcs, points = _cells(run, metrics, available)
    comparisons, compare_note = _comparisons(run, metrics, calcs)
    del calcs  # the cells' rows (x per label: 16 MB a cell at a million pairs); not read below
    data = {
        "schema": SCHEMA,
        "dataset": _dataset_json(dataset.card, view, dims, subset),
        "protocol": _protocol_json(run, compare_note),
        "options": proto.to_dict(),
        "statistics": list(proto.statistics),
        "metrics": entries,
        "cells": cells,
        "ceiling": _ceiling(run),
        "comparisons": comparisons,
        "p_floors": p_floors(
            comparisons, proto.n_boot, proto.permutations, reference=proto.compare_to
        ),
        "published": [],
        "points": _points(run, points),
        "timing_s": round(time.perf_counter() - t0, 4),
    }
    return MetaEvalResult(_jsonable(data))


def _comparisons(
    run: Run, metrics: Sequence[str], calcs: dict[Any, Any]
) -> tuple[list[dict[str, Any]], str | None]:
    """The metric-vs-metric comparisons and the scope note when some are not made: every pair
    up to ``max_compare`` metrics, or each metric against ``compare_to`` (m - 1 per dimension
    and statistic, no cap). Trivial baselines are rows, not tests."""
    proto = run.proto
    compared = [m for m in metrics if not is_trivial(m)]
    ref = proto.compare_to
    if ref is not None and ref not in compared:
        raise InputError(
            f"--compare-to {ref!r} is not a compared metric of this run "
            f"(metrics: {', '.join(compared)})",
            field="compare_to",
        )
    if not proto.compare or len(compared) < 2:
        return [], None
    if ref is not None:
        note = f"each metric against {ref} ({len(compared) - 1} per dimension and statistic)"
        return compare_metrics(run, compared, calcs, reference=ref), note
    if len(compared) > proto.max_compare:
        return [], (
            f"skipped: {len(compared)} metrics, more than max_compare={proto.max_compare} "
            f"(--compare-to METRIC tests each against one reference; --max-compare "
            f"{len(compared)} tests every pair)"
        )
    return compare_metrics(run, compared, calcs), None


def _jsonable(o: Any) -> Any:
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    if isinstance(o, set):
        return sorted(_jsonable(v) for v in o)
    if isinstance(o, (np.floating, float)):
        return jnum(float(o))
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.ndarray):
        return _jsonable(o.tolist())
    return o
