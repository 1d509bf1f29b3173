"""One cell of the meta-evaluation table: a metric against one human dimension.

Pairwise-difference protocol (RAGChecker, Ru et al. 2024; MT-RAIG Section 4.4): for each pair
d = m(b) − m(a), normalised (:mod:`metajudge.analyses.metric_vs_human.normalize`), one row per annotator label
or per pair (mean label); Pearson, Spearman, Kendall τ_b and pairwise accuracy (from the tie-band
decision of the raw d) with bootstrap CIs over items and Fisher-z CIs. ``grouped``: per input,
then averaged — on the responses themselves for Likert data (LFTQA-Eval's
``correlation_calculation.py``), on the pair rows otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from metajudge import stats as st
from metajudge.analyses.metric_vs_human import normalize as norm
from metajudge.analyses.metric_vs_human.aligned import AlignedView, ColumnInfo, label_rows
from metajudge.analyses.metric_vs_human.levels import n_distinct
from metajudge.analyses.metric_vs_human.protocol import Protocol
from metajudge.errors import InputError
from metajudge.stats import estimates as est
from metajudge.stats import intervals
from metajudge.stats.partial import Control

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]


def jnum(v: float | None) -> float | None:
    """JSON-safe float: NaN/inf → None."""
    return float(v) if v is not None and math.isfinite(v) else None


@dataclass
class Rows:
    """The correlation rows of one cell (one per label or per pair)."""

    x: FArr  # normalised d' per row
    raw_d: FArr  # raw d per row (for accuracies), or per pair where ``raw_by_pair``
    y: FArr  # human label per row
    pair: IArr  # pair index per row
    eps: FArr  # tie band per row
    ann: IArr  # annotator index per row (0 for the mean)
    #: ``raw_d`` holds a value per pair (the cell's own differences), taken per row when read:
    #: a cell read once for its accuracies keeps no copy per row (16 MB at a million pairs)
    raw_by_pair: bool = False

    @property
    def raw(self) -> FArr:
        """The raw d of each row."""
        return self.raw_d[self.pair] if self.raw_by_pair else self.raw_d

    def keys(self) -> IArr:
        """A sorted key per row, (pair, annotator): rows are built in this order."""
        return self.pair.astype(np.int64) * (1 << 20) + self.ann

    def same_rows(self, other: Rows) -> bool:
        """Both cells have the same rows: their keys are equal (at once when the cells share
        their arrays, as the metrics of a dimension do when every pair has a score)."""
        if self.pair is other.pair and self.ann is other.ann:
            return True
        return bool(np.array_equal(self.keys(), other.keys()))


@dataclass
class CellCalc:
    """What comparisons need of a computed cell (kept out of the JSON). ``stat_rows``: per
    statistic, what it correlates when not ``rows.x``, ``rows.y`` — ``(statistic taken, x, y)``
    (a partial correlation's residuals); ``y_raw``: the human rows before a control removed."""

    rows: Rows
    samples: dict[str, FArr] = field(default_factory=dict)
    stat_rows: dict[str, tuple[str, FArr, FArr]] = field(default_factory=dict)
    y_raw: FArr | None = None

    def arrays(self, s: str) -> tuple[str, FArr, FArr]:
        """``(statistic taken, x, y)`` of statistic ``s`` on this cell's rows."""
        return self.stat_rows.get(s, (s, self.rows.x, self.rows.y))


@dataclass
class Run:
    """Shared state of one meta-evaluation: view, protocol, scores and the item resamples."""

    view: AlignedView
    proto: Protocol
    columns: Mapping[str, Mapping[str, float | None]]
    info: Mapping[str, ColumnInfo]
    directions: Mapping[str, str]
    W: FArr | None
    cache: dict[str, tuple[FArr, norm.Normalized, dict[str, Any]]] = field(default_factory=dict)
    resp_cache: dict[str, tuple[FArr, dict[str, Any]]] = field(default_factory=dict)
    columns_of: dict[tuple[str, str], str | None] = field(default_factory=dict)
    _label_rows: dict[str, tuple[IArr, FArr, IArr]] = field(default_factory=dict, repr=False)
    _orders: dict[str, NDArray[np.integer]] = field(default_factory=dict, repr=False)
    _last_view: tuple[IArr, Any] | None = field(default=None, repr=False)
    #: cell bootstraps waiting to be evaluated together (None: each cell evaluates its own)
    deferred: list[_Bootstrap] | None = field(default=None, repr=False)
    #: the control of a partial correlation (``--control``), per response
    control: Control | None = None

    @property
    def unit_item(self) -> IArr:
        """The item of each unit a cell's rows index: responses (pointwise) or pairs."""
        return self.view.resp_item if self.pointwise else self.view.pair_item

    @property
    def n_units(self) -> int:
        """How many units (responses or pairs) the rows' unit indices range over."""
        return len(self.view.keys) if self.pointwise else len(self.view.pair_ids)

    def label_rows(self, dim: str) -> tuple[IArr, FArr, IArr]:
        """The pair label rows of ``dim`` under the protocol's aggregation, computed once."""
        if dim not in self._label_rows:
            self._label_rows[dim] = label_rows(self.view.pair_labels[dim], self.proto.aggregation)
        return self._label_rows[dim]

    def pair_order(self, name: str) -> NDArray[np.integer]:
        """The sort order of a score column's normalised d per pair (:meth:`diffs`), sorted once
        (4 bytes a pair below 2**31 pairs): the rows of its cell and of its comparisons with each
        annotator take their order from it (:func:`~metajudge.stats.rows_order`)."""
        if name not in self._orders:
            order = np.argsort(self.diffs(name)[1].values)
            self._orders[name] = order.astype(np.int32) if order.size < 1 << 31 else order
        return self._orders[name]

    def resamples_of(self, pairs: IArr) -> Any:
        """The resamples' columns of rows at ``pairs``, the last one kept: the cells of a
        dimension whose pairs all have an x share their rows, so one view (its column index:
        16 MB at a million pairs, two labels each)."""
        last = self._last_view
        if last is None or last[0] is not pairs:
            assert self.W is not None
            last = self._last_view = (pairs, self.W[:, self.view.pair_item[pairs]])
        return last[1]

    @property
    def pointwise(self) -> bool:
        return self.proto.correlate == "pointwise"

    def diffs(self, name: str) -> tuple[FArr, norm.Normalized, dict[str, Any]]:
        """Raw and normalised differences of a score column, and its missing-score counts."""
        if name not in self.cache:
            v = self.view
            col = self.columns.get(name, {})
            d = v.differences(v.values(col), self.directions.get(name, "higher"))
            responses = n_distinct(np.concatenate([v.pair_a, v.pair_b]), len(v.keys), True)
            inf = self.info.get(name, ColumnInfo())
            miss = {
                "responses_total": int(responses.size),
                "responses_absent": v.absent(col, responses),
                "responses_unscored": inf.n_errors,
                "pairs_missing": int(np.isnan(d).sum()),
                "rows_unmatched": inf.n_unmatched,
                "errors": dict(sorted(inf.errors.items(), key=lambda kv: -kv[1])[:5]),
            }
            rule = self.proto.missing_rule
            if rule == "error" and miss["pairs_missing"]:
                raise InputError(
                    f"metric {name!r}: {miss['pairs_missing']} of {d.size} pairs lack a score "
                    "(--missing error; use --missing drop or median)",
                    field="missing",
                )
            nd = norm.normalize(
                d,
                self.proto.normalize,
                half_width=v.half_width,
                epsilon=self.proto.epsilon,
                impute=rule == "median",
            )
            miss["rule"] = rule
            miss["pairs_imputed_median"] = nd.n_imputed
            miss["pairs_dropped"] = miss["pairs_missing"] - nd.n_imputed
            self.cache[name] = (d, nd, miss)
        return self.cache[name]


def make_rows(
    x_pair: FArr,
    raw_pair: FArr,
    L: FArr,
    aggregation: str,
    eps: FArr | float,
    labelled: tuple[IArr, FArr, IArr] | None = None,
) -> Rows:
    """Rows of pairs with a finite x: one per label (``per_annotator``) or per pair (``mean``).

    ``labelled``: ``label_rows(L, aggregation)`` when the caller has it; when every pair has
    an x its arrays are shared, not copied (every metric of a dimension has the same rows)."""
    pi, y, ai = labelled if labelled is not None else label_rows(L, aggregation)
    x = x_pair[pi]
    ok = np.isfinite(x)
    if not ok.all():
        pi, y, ai, x = pi[ok], y[ok], ai[ok], x[ok]
    if np.ndim(eps) == 0:
        eps_rows = np.broadcast_to(float(eps), pi.shape)  # type: ignore[arg-type]
    else:
        eps_rows = np.asarray(eps, dtype=float)[pi]
    return Rows(x, raw_pair, y, pi, eps_rows, ai, raw_by_pair=True)


def _undefined(reason: str, statistics: tuple[str, ...]) -> dict[str, Any]:
    return {
        s: {"value": None, "ci": None, "fisher_ci": None, "undefined": reason} for s in statistics
    }


def _reason(s: str, rows: Rows, n_pairs: int, min_pairs: int) -> str | None:
    if n_pairs < min_pairs:
        return f"only {n_pairs} scored pairs (need at least {min_pairs})"
    if s in st.CORRELATIONS:
        return st.undefined_reason(rows.x, rows.y, statistic=s)
    if s == "acc_no_ties" and not (np.sign(rows.y) != 0).any():
        return "every human label is a tie"
    return None


def ci_fields(iv: intervals.Interval) -> dict[str, Any]:
    """The JSON of a value's interval: bounds, the method that gave them, its units."""
    return {"ci": iv.ci, "ci_method": iv.method, "ci_n": iv.n}


def _ci_units(s: str, rows: Rows, n_pairs: int, n_all: int) -> int:
    """Independent units of a cell's statistic: its pairs (for ``acc_no_ties`` those with a
    label that is not a tie), not its annotator rows."""
    if s == "acc_no_ties":
        return n_distinct(rows.pair[np.sign(rows.y) != 0], n_all)
    return n_pairs


def stat_block(
    run: Run, rows: Rows, by_x: IArr | None = None
) -> tuple[dict[str, Any], dict[str, FArr]]:
    """Point values, CIs and Fisher CIs of every statistic for one cell (``by_x``: the sort
    order of ``rows.x`` when the caller has it).

    The CI is :func:`~metajudge.stats.intervals.choose` on the cell's pairs (percentile
    bootstrap from ``small_n`` pairs up). The bootstrap of every statistic of the cell is
    evaluated together (:func:`~metajudge.stats.correlate`: one pass over the
    resamples for those that follow from per-item sums).
    """
    p = run.proto
    out: dict[str, Any] = {}
    n_pairs = n_distinct(rows.pair, len(run.view.pair_ids))
    dec = st.tie_decisions(rows.raw, rows.eps)
    W = run.resamples_of(rows.pair) if run.W is not None and rows.pair.size else None
    boot: list[tuple[str, FArr, FArr]] = []
    sorts = st.SortOrders(rows.x, rows.y, by_x=by_x)  # each side sorted once at most
    for s in p.statistics:
        is_corr = s in st.CORRELATIONS
        xv = rows.x if is_corr else dec
        reason = _reason(s, rows, n_pairs, p.min_pairs)
        entry: dict[str, Any] = {"value": None, "ci": None, "fisher_ci": None, "undefined": reason}
        out[s] = entry
        if reason is not None:
            continue
        v = st.statistic(s, xv, rows.y, sorts if is_corr else None)
        entry["value"] = jnum(v)
        n_ci = _ci_units(s, rows, n_pairs, len(run.view.pair_ids))
        entry.update(ci_fields(intervals.choose(s, v, n_ci, None, p.ci_level, small_n=p.small_n)))
        note = p.ci_skipped(s, rows.x.size) if W is not None else None
        if is_corr:
            fisher = intervals.fisher_interval(s, v, n_pairs, p.ci_level)
            entry["fisher_ci"] = fisher.ci
        if note is not None:
            entry["ci_note"] = note
            if is_corr and n_ci > p.small_n:  # the Fisher-z CI, shown with its method
                entry.update(ci_fields(fisher))
        elif W is not None:
            boot.append((s, xv, rows.y))
    samples: dict[str, FArr] = {}
    if boot and W is not None:
        job = _Bootstrap(boot, W, out, {s: out[s] for s, _, _ in boot}, samples)
        if run.deferred is not None:  # evaluated with the other cells' (run_deferred)
            # kept until then in the smallest exact type: the decisions {-1, 0, 1} in int8, with
            # NaN (an imputed x) in float32 (the accuracy reads them as floats,
            # :func:`~metajudge.stats.pair_credit`)
            small = dec.astype(np.float32 if np.isnan(dec).any() else np.int8)
            job.requests = [(s, small if xv is dec else xv, y) for s, xv, y in boot]
            run.deferred.append(job)
        else:
            for (s, _, _), smp in zip(boot, st.correlate(boot, W, engine=p.engine), strict=True):
                job.fill(s, smp, p)
    return out, samples


@dataclass
class _Bootstrap:
    """A cell's bootstrap requests, and where their values and intervals go."""

    requests: list[tuple[str, FArr, FArr]]
    W: Any
    out: dict[str, Any]
    entries: dict[str, dict[str, Any]]
    samples: dict[str, FArr]

    def live(self, s: str) -> bool:
        """The cell still shows this estimate of ``s`` (a grouped one may have replaced it)."""
        return self.out.get(s) is self.entries[s]

    def fill(self, s: str, smp: FArr, proto: Protocol) -> None:
        entry = self.entries[s]
        self.samples[s] = smp
        value = math.nan if entry["value"] is None else entry["value"]
        iv = intervals.choose(s, value, entry["ci_n"], smp, proto.ci_level, small_n=proto.small_n)
        entry.update(ci_fields(iv))
        entry["n_boot_undefined"] = int(np.isnan(smp).sum())


#: the statistics whose resamples may need ranks per resample (a pass of their own, after the
#: others: :func:`run_deferred`)
RANKED = ("spearman", "kendall")


def run_deferred(run: Run) -> None:
    """Evaluate every deferred cell bootstrap together — one pass over the resamples for as
    many statistics that follow from per-item sums as memory permits
    (:func:`~metajudge.stats.correlate`) — and stop deferring. Estimates
    replaced since (grouped cells) are not computed.

    Pearson's r and the accuracies first (their passes the same as with the others: those
    need ranks, or a table that joins any pass), then the statistics of :data:`RANKED`: the
    accuracies' rows as the engine takes them (a float credit and a scored flag per row, 24 MB
    each at a million pairs of three annotators) are dropped before the rank pass."""
    jobs, run.deferred = run.deferred or [], None
    live = [(j, r) for j in jobs for r in j.requests if j.live(r[0])]
    for ranked in (False, True):
        part = [(j, r) for j, r in live if (r[0] in RANKED) is ranked]
        values = st.correlate([r for _, r in part], [j.W for j, _ in part], engine=run.proto.engine)
        for (j, r), smp in zip(part, values, strict=True):
            j.fill(r[0], smp, run.proto)


def grouped_block(
    run: Run, x: FArr, y: FArr, groups: IArr
) -> tuple[dict[str, Any], dict[str, FArr]]:
    """Grouped correlations: per input, then averaged; bootstrap over inputs."""
    out: dict[str, Any] = {}
    samples: dict[str, FArr] = {}
    for s in run.proto.statistics:
        if s not in st.CORRELATIONS:
            continue
        p = run.proto
        e = est.grouped(s, x, y, groups, run.view.n_items, run.W, p.ci_level)
        iv = e.interval(s, p.ci_level, small_n=p.small_n)
        out[s] = {
            "value": jnum(e.value),
            **ci_fields(
                iv if e.undefined is None else intervals.Interval(math.nan, math.nan, None, 0)
            ),
            "fisher_ci": None,
            "undefined": e.undefined,
            "n_groups": e.n + e.n_groups_undefined,
            "n_groups_undefined": e.n_groups_undefined,
        }
        if e.samples is not None and e.undefined is None:
            samples[s] = e.samples
    return out, samples


def _grouped_rows(run: Run, column: str, dim: str, rows: Rows) -> tuple[FArr, FArr, IArr, str]:
    v = run.view
    if v.resp_labels is not None:
        x = v.values(run.columns.get(column, {}))
        ri, y, _ = label_rows(v.resp_labels[dim], run.proto.aggregation)
        return x[ri], y, v.resp_item[ri], "response"
    return rows.x, rows.y, v.pair_item[rows.pair], "pair"


def _x_and_eps(
    run: Run, d_raw: FArr, nd: norm.Normalized, L: FArr, index: int, cell: dict[str, Any]
) -> tuple[FArr, FArr | float]:
    p = run.proto
    if not p.learn_epsilon:
        return nd.values, p.epsilon
    rows0 = make_rows(d_raw, d_raw, L, p.aggregation, 0.0)
    eps_rows, per_fold = norm.learn_epsilon_cv(
        rows0.raw,
        rows0.y,
        rows0.pair,
        k=p.cv_folds,
        rng=np.random.default_rng([p.seed, 2, index]),
    )
    eps_p = np.full(d_raw.size, np.nan)
    eps_p[rows0.pair] = eps_rows
    eps_p = np.where(np.isnan(eps_p), p.epsilon, eps_p)
    cell["epsilon_per_fold"] = per_fold
    return norm.sign(d_raw, eps_p).values, eps_p


def evaluate_cell(
    run: Run, metric: str, dim: str, column: str | None, index: int
) -> tuple[dict[str, Any], CellCalc | None, FArr | None]:
    """The JSON cell, its private companion and the normalised d per pair (for plots)."""
    cell: dict[str, Any] = {
        "metric": metric,
        "dimension": dim,
        "column": column,
        "n_rows": 0,
        "n_pairs": 0,
        "n_items": 0,
        "stats": {},
    }
    stats_names = run.proto.statistics
    if column is None:
        cell["undefined"] = f"no scores for metric {metric!r} (nor {metric}_{dim})"
        cell["stats"] = _undefined(cell["undefined"], stats_names)
        return cell, None, None
    d_raw, nd, _ = run.diffs(column)
    L = run.view.pair_labels[dim]
    x_pair, eps = _x_and_eps(run, d_raw, nd, L, index, cell)
    if run.proto.missing_rule == "median" and not np.isfinite(d_raw).all():
        # RAGChecker imputes missing d with the median for correlations; accuracies need a real
        # decision, so an imputed pair's decision is a tie
        d_raw = np.where(np.isfinite(d_raw), d_raw, 0.0)
    rows = make_rows(x_pair, d_raw, L, run.proto.aggregation, eps, run.label_rows(dim))
    cell["n_rows"] = int(rows.x.size)
    cell["n_pairs"] = n_distinct(rows.pair, len(run.view.pair_ids))
    cell["n_items"] = n_distinct(run.view.pair_item[rows.pair], run.view.n_items)
    if nd.undefined:
        cell["undefined"] = nd.undefined
        cell["stats"] = _undefined(nd.undefined, stats_names)
        return cell, None, x_pair
    by_x = st.rows_order(run.pair_order(column), rows.pair) if x_pair is nd.values else None
    stats_out, samples = stat_block(run, rows, by_x)
    if run.proto.grouped:
        gx, gy, gg, unit = _grouped_rows(run, column, dim, rows)
        gstats, gsamples = grouped_block(run, gx, gy, gg)
        for s, e in gstats.items():
            stats_out[s] = e
            samples.pop(s, None)
            if s in gsamples:
                samples[s] = gsamples[s]
        cell["grouped_unit"] = unit
    cell["stats"] = stats_out
    return cell, CellCalc(rows, samples), x_pair
