"""``calibrate conformal``: split-conformal intervals for ratings, and how they hold on
held-out rows.

Methods (``alpha`` the miscoverage). Every interval is clipped to the scale and then given the
ordinal boundary adjustment: its ends move inwards to the nearest values of the table's label
grid (:func:`~metajudge.analyses.calibration.table.label_grid`: every value a human score can
take on the scale, seen in calibration or not), which cannot lose coverage of a score on that
grid; a continuous scale has no grid and no adjustment. When the calibration rows are too few
for ``alpha`` (fewer than :func:`~metajudge.stats.calibration.min_calibration_rows`: the exact
conformal quantile is infinite) the interval is the whole scale, and the result warns.

What each guarantee covers (:data:`GUARANTEES`): every method targets coverage >= 1 - alpha
*marginally*, averaged over all test items and calibration draws; none targets coverage given
the human score, so items with rare human scores can be covered far less often (the result
shows the coverage per human-score bin, :func:`human_bins`).

- ``split``: |human - judge's expected score| residuals, interval score +- q;
- ``binned``: the same, with q computed separately per bin of the predicted score (``bins``
  quantile bins of the calibration rows' predictions; a bin with fewer than ``min_bin`` rows
  uses the pooled q) — approximately conditional on the judge's score bin;
- ``dist-quantile`` (formerly ``cqr``): the judge's OWN distribution's alpha/2 and 1 - alpha/2
  quantiles, widened by the conformal quantile of max(lo - y, y - hi) (needs the
  distribution). CQR's conformity score, but no quantile regression is fitted: the quantiles
  are the judge's;
- ``isotonic-split`` / ``isotonic-binned``: calibrate-then-conformal: an isotonic map fitted on
  ``fit_fraction`` of the calibration rows, conformal on the rest, centred on the calibrated score;
- ``auto``: the method chosen on the calibration rows only: each candidate is run on a seeded
  half of them and measured on the other half; the narrowest one covering >= 1 - alpha there is
  used (ties: list order); measured over ``inner_repeats`` seeded halvings (mean coverage
  and mean width); fewer than 4 calibration rows cannot be halved: ``split``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.analyses.calibration import maps
from metajudge.analyses.calibration.shift import score_shift
from metajudge.analyses.calibration.table import FArr, RatingTable, check_alpha, splits
from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats.bootstrap import halves
from metajudge.stats.calibration import (
    conformal_quantile,
    min_calibration_rows,
    quantile_bin_edges,
)

CONFORMAL_METHODS = ("split", "binned", "dist-quantile", "isotonic-split", "isotonic-binned")
AUTO = "auto"

#: What each method's guarantee covers, one sentence each (the output and the guide show them).
GUARANTEES = {
    "split": "marginal: >= 1 - alpha averaged over all items; nothing per item or per human score",
    "binned": "marginal, and approximately within each bin of the judge's score that has "
    "min_bin calibration rows; not per human score",
    "dist-quantile": "marginal only; the width follows the judge's own spread (CQR's score on the "
    "judge's distribution quantiles, no quantile regression fitted)",
    "isotonic-split": "marginal only, around the isotonic-calibrated score",
    "isotonic-binned": "marginal, and approximately within each bin of the calibrated score; not "
    "per human score",
    "auto": "marginal, approximately (the choice is made on the same calibration rows); the "
    "chosen method's conditional property, if any",
}


@dataclass(frozen=True)
class Options:
    """Settings of every method (stated in the output)."""

    alpha: float = 0.1
    bins: int = 3
    min_bin: int = 30
    fit_fraction: float = 0.5
    seed: int = 0
    inner_repeats: int = 3


def human_bins(scale: tuple[float, float]) -> tuple[FArr, list[str]]:
    """The human-score bins the coverage is shown per: unit bins on an integer scale spanning 2
    to 10 (``[1, 2)`` ... ``[4, 5]``), else 4 equal-width bins; (inner edges, labels).

    >>> human_bins((1.0, 5.0))[1]
    ['[1, 2)', '[2, 3)', '[3, 4)', '[4, 5]']
    """
    lo, hi = scale
    span = hi - lo
    if float(lo).is_integer() and float(hi).is_integer() and 2 <= span <= 10:
        cuts = lo + np.arange(int(span) + 1, dtype=float)
    else:
        cuts = lo + span * np.linspace(0, 1, 5)
    labels = [f"[{a:g}, {b:g})" for a, b in itertools.pairwise(cuts)]
    labels[-1] = labels[-1][:-1] + "]"
    return cuts[1:-1], labels


def _adjust(
    lo: FArr, hi: FArr, center: FArr, grid: FArr | None, scale: tuple[float, float]
) -> tuple[FArr, FArr]:
    lo = np.clip(lo, *scale)
    hi = np.clip(hi, *scale)
    if grid is None:
        return lo, hi
    i = np.searchsorted(grid, lo - 1e-9)
    j = np.searchsorted(grid, hi + 1e-9) - 1
    lo2 = grid[np.minimum(i, len(grid) - 1)]
    hi2 = grid[np.maximum(j, 0)]
    empty = lo2 > hi2  # no grid value inside: the grid value nearest the centre
    near = grid[np.abs(np.clip(center, *scale)[:, None] - grid[None, :]).argmin(axis=1)]
    return np.where(empty, near, lo2), np.where(empty, near, hi2)


def _bin_q(center_cal: FArr, resid: FArr, center_test: FArr, o: Options) -> FArr:
    pooled = conformal_quantile(resid, o.alpha)
    if len(center_cal) < max(o.min_bin, 1):  # no bin can reach min_bin rows: the pooled q
        return np.full(len(center_test), pooled)
    edges = quantile_bin_edges(center_cal, o.bins)
    bc = np.searchsorted(edges, center_cal, side="right")
    bt = np.searchsorted(edges, center_test, side="right")
    q = np.full(len(edges) + 1, pooled)
    for b in range(len(edges) + 1):
        m = bc == b
        if m.sum() >= o.min_bin:
            q[b] = conformal_quantile(resid[m], o.alpha)
    return q[bt]


def _dist_quantile(probs: FArr, values: FArr, level: float) -> FArr:
    cdf = np.cumsum(probs, axis=1)
    return values[np.minimum((cdf < level - 1e-12).sum(axis=1), len(values) - 1)]


def _grid(cal: RatingTable, test: RatingTable) -> FArr | None:
    """The label grid of both tables (None when either scale is continuous)."""
    if cal.grid is None or test.grid is None:
        return None
    if cal.grid is test.grid:
        return cal.grid
    return np.unique(np.concatenate([cal.grid, test.grid]))


def intervals(method: str, cal: RatingTable, test: RatingTable, o: Options) -> tuple[FArr, FArr]:
    """The intervals ``method`` gives the rows of ``test``, calibrated on ``cal``."""
    lo, hi, _ = intervals_q(method, cal, test, o)
    return lo, hi


def intervals_q(
    method: str, cal: RatingTable, test: RatingTable, o: Options
) -> tuple[FArr, FArr, FArr]:
    """:func:`intervals`, and per test row its conformal quantile q (``inf``: too few
    calibration rows, the interval is the whole scale)."""
    grid = _grid(cal, test)
    if method in ("isotonic-split", "isotonic-binned"):
        k = min(len(cal), max(2, round(o.fit_fraction * len(cal))))
        perm = np.random.default_rng([o.seed, 1]).permutation(len(cal))
        first, rest = halves(perm, k)
        fit, cal = cal.take(first), cal.take(rest)
        params = maps.fit_map("isotonic", fit.pred, fit.human)
        c_cal = maps.apply_map("isotonic", params, cal.pred)
        c_test = maps.apply_map("isotonic", params, test.pred)
        inner = "split" if method == "isotonic-split" else "binned"
        return _centred(inner, c_cal, cal.human, c_test, grid, cal.scale, o)
    if method in ("split", "binned"):
        return _centred(method, cal.pred, cal.human, test.pred, grid, cal.scale, o)
    if method == "dist-quantile":
        if cal.probs is None or cal.values is None or test.probs is None:
            raise InputError(
                "dist-quantile needs the judge's rating distribution", field="--method"
            )
        a = o.alpha / 2
        lo_c, hi_c = (
            _dist_quantile(cal.probs, cal.values, a),
            _dist_quantile(cal.probs, cal.values, 1 - a),
        )
        q = conformal_quantile(np.maximum(lo_c - cal.human, cal.human - hi_c), o.alpha)
        lo_t, hi_t = (
            _dist_quantile(test.probs, cal.values, a),
            _dist_quantile(test.probs, cal.values, 1 - a),
        )
        lo, hi = _adjust(lo_t - q, hi_t + q, test.pred, grid, cal.scale)
        return lo, hi, np.full(len(test), q)
    raise InputError(
        f"unknown method {method!r} (known: {', '.join(CONFORMAL_METHODS + (AUTO,))})",
        field="--method",
    )


def _centred(
    method: str,
    c_cal: FArr,
    y: FArr,
    c_test: FArr,
    grid: FArr | None,
    scale: tuple[float, float],
    o: Options,
) -> tuple[FArr, FArr, FArr]:
    resid = np.abs(y - c_cal)
    q = conformal_quantile(resid, o.alpha) if method == "split" else _bin_q(c_cal, resid, c_test, o)
    lo, hi = _adjust(c_test - q, c_test + q, c_test, grid, scale)
    return lo, hi, np.broadcast_to(np.asarray(q, float), c_test.shape)


def candidates(table: RatingTable) -> tuple[str, ...]:
    """The methods ``table`` allows (dist-quantile needs a distribution)."""
    return tuple(m for m in CONFORMAL_METHODS if m != "dist-quantile" or table.probs is not None)


def choose_method(cal: RatingTable, o: Options) -> str:
    """``auto``'s choice, made on the calibration rows only (module docstring)."""
    if len(cal) < 4:  # too few rows to halve
        return "split"
    inner = splits(len(cal), seed=o.seed + 7919, repeats=o.inner_repeats)
    best, best_w = "split", np.inf
    for m in candidates(cal):
        got = [
            coverage_and_width(*intervals(m, cal.take(a), cal.take(b), o), cal.human[b])
            for a, b in inner
        ]
        cov, width = float(np.mean([c for c, _ in got])), float(np.mean([w for _, w in got]))
        if cov >= 1 - o.alpha and width < best_w - 1e-12:
            best, best_w = m, width
    return best


def coverage_and_width(lo: FArr, hi: FArr, y: FArr) -> tuple[float, float]:
    """The conformal coverage (share of ratings ``y`` inside their interval [lo, hi]) and the
    intervals' mean width: what ``calibrate conformal`` reports per method.

    >>> coverage_and_width(np.array([1.0, 2.0]), np.array([2.0, 3.0]), np.array([1.5, 4.0]))
    (0.5, 1.0)
    """
    return float(np.mean(_covered(lo, hi, y))), float(np.mean(hi - lo))


def _covered(lo: FArr, hi: FArr, y: FArr) -> Any:
    return (y >= lo - 1e-9) & (y <= hi + 1e-9)


@dataclass
class ConformalResult(Result):
    """Per method: mean coverage and mean width over the repeats (and their sd), the coverage
    and mean width per human-score bin (``by_human``, pooled over the repeats), the share of whole-scale
    intervals from too few calibration rows (``whole_scale``) and what its guarantee covers;
    ``chosen``: what ``auto`` picked in each repeat; ``target``: the same on another dataset,
    if given; ``warnings``: what the numbers cannot carry (too few calibration rows)."""

    judge: str
    n: int
    options: dict[str, Any]
    protocol: dict[str, Any]
    methods: list[dict[str, Any]]
    chosen: dict[str, int] = field(default_factory=dict)
    target: dict[str, Any] | None = None
    items: list[dict[str, Any]] = field(default_factory=list, repr=False)
    grid: list[float] | None = None
    warnings: list[str] = field(default_factory=list)


class _Tally:
    """One method's measurements over the splits: (coverage, width) per split, and per
    human-score bin the covered and total test rows; rows whose interval is the whole scale."""

    def __init__(self, scale: tuple[float, float]) -> None:
        self.edges, self.labels = human_bins(scale)
        self.runs: list[tuple[float, float]] = []
        self.hit = np.zeros(len(self.labels))
        self.tot = np.zeros(len(self.labels))
        self.wid = np.zeros(len(self.labels))
        self.whole = 0
        self.rows = 0

    def add(self, lo: FArr, hi: FArr, q: FArr, y: FArr) -> None:
        self.runs.append(coverage_and_width(lo, hi, y))
        b = np.searchsorted(self.edges, y, side="right")
        self.hit += np.bincount(b, weights=_covered(lo, hi, y), minlength=len(self.labels))
        self.tot += np.bincount(b, minlength=len(self.labels))
        self.wid += np.bincount(b, weights=hi - lo, minlength=len(self.labels))
        self.whole += int(np.isinf(q).sum())
        self.rows += len(y)

    def summary(self, method: str) -> dict[str, Any]:
        cov = [c for c, _ in self.runs]
        wid = [w for _, w in self.runs]
        return {
            "method": method,
            "coverage": float(np.mean(cov)),
            "coverage_sd": float(np.std(cov)),
            "width": float(np.mean(wid)),
            "width_sd": float(np.std(wid)),
            "by_human": self.by_human(),
            "whole_scale": self.whole / self.rows if self.rows else 0.0,
            "guarantee": GUARANTEES.get(method, ""),
        }

    def by_human(self) -> list[dict[str, Any]]:
        """Per human-score bin: test rows per split (mean), coverage and mean interval width
        (pooled; None: no row)."""
        k = max(len(self.runs), 1)
        return [
            {
                "bin": lab,
                "n": t / k,
                "coverage": float(h / t) if t else None,
                "width": float(w / t) if t else None,
            }
            for lab, h, t, w in zip(self.labels, self.hit, self.tot, self.wid, strict=True)
        ]


def calibrate_conformal(
    table: RatingTable,
    methods: Sequence[str] = (*CONFORMAL_METHODS, AUTO),
    *,
    options: Options = Options(),
    repeats: int = 50,
    fraction: float = 0.5,
    target: RatingTable | None = None,
    shift_alpha: float = 0.05,
    keep_items: bool = False,
) -> ConformalResult:
    """Coverage and mean width of each method over ``repeats`` seeded calibration/test splits
    (``fraction`` of the rows calibrate); with ``target``: calibrated on every row of ``table``,
    measured on ``target``, with a KS two-sample test of the two tables' judge scores.
    ``keep_items``: keep each test row's interval of the first split (``items``)."""
    o = options
    _check(table, methods, o)
    tally = {m: _Tally(table.scale) for m in methods}
    chosen: dict[str, int] = {}
    items: list[dict[str, Any]] = []
    parts = splits(len(table), seed=o.seed, repeats=repeats, fraction=fraction)
    for r, (cal_i, test_i) in enumerate(parts):
        cal, test = table.take(cal_i), table.take(test_i)
        for m in methods:
            use = choose_method(cal, o) if m == AUTO else m
            if m == AUTO:
                chosen[use] = chosen.get(use, 0) + 1
            lo, hi, q = intervals_q(use, cal, test, o)
            tally[m].add(lo, hi, q, test.human)
            if keep_items and r == 0:
                items += _items(test, m, lo, hi)
    res = ConformalResult(
        judge=table.judge,
        n=len(table),
        options={
            "alpha": o.alpha,
            "bins": o.bins,
            "min_bin": o.min_bin,
            "fit_fraction": o.fit_fraction,
        },
        protocol={"repeats": repeats, "fraction": fraction, "seed": o.seed},
        methods=[tally[m].summary(m) for m in methods],
        chosen=chosen,
        items=items,
        grid=None if table.grid is None else [float(g) for g in table.grid],
    )
    res.warnings = _too_few(res, len(parts[0][0]), table.scale, o)
    if target is not None:
        res.target = _on_target(table, target, methods, o, shift_alpha)
    return res


def _check(table: RatingTable, methods: Sequence[str], o: Options) -> None:
    check_alpha(o.alpha)
    if not 0 < o.fit_fraction < 1:
        raise InputError(f"must be in (0, 1), got {o.fit_fraction}", field="--fit-fraction")
    allowed = candidates(table) + (AUTO,)
    for m in methods:
        if m not in allowed:
            raise InputError(
                f"method {m!r} is not available here (available: {', '.join(allowed)})",
                field="--method",
            )


def _too_few(res: ConformalResult, n_cal: int, scale: tuple[float, float], o: Options) -> list[str]:
    """The warning of methods whose calibration rows were too few for alpha (whole-scale
    intervals), naming the rows they needed."""
    hit = [m for m in res.methods if m["whole_scale"] > 0]
    if not hit:
        return []
    need = min_calibration_rows(o.alpha)
    which = ", ".join(f"{m['method']} {m['whole_scale']:.0%}" for m in hit)
    text = (
        f"too few calibration rows for alpha {o.alpha:g}: the conformal quantile needs at least "
        f"{need} rows (isotonic-*: in the conformal part, {1 - o.fit_fraction:g} of them; binned: "
        f"per bin or pooled), these splits calibrate on {n_cal}; the share of intervals that are "
        f"the whole scale [{scale[0]:g}, {scale[1]:g}] (coverage 1, no information): {which}"
    )
    return [text]


def _items(test: RatingTable, method: str, lo: FArr, hi: FArr) -> list[dict[str, Any]]:
    """Each test row's interval: id, judge score, bounds, width, human score, its bin
    (:func:`human_bins`), covered."""
    edges, labels = human_bins(test.scale)
    b = np.searchsorted(edges, test.human, side="right")
    return [
        {
            "id": test.ids[i],
            "method": method,
            "judge": float(test.pred[i]),
            "lo": float(lo[i]),
            "hi": float(hi[i]),
            "width": float(hi[i] - lo[i]),
            "human": float(test.human[i]),
            "human_bin": labels[b[i]],
            "covered": bool(lo[i] - 1e-9 <= test.human[i] <= hi[i] + 1e-9),
        }
        for i in range(len(test))
    ]


def _on_target(
    table: RatingTable, target: RatingTable, methods: Sequence[str], o: Options, shift_alpha: float
) -> dict[str, Any]:
    rows = []
    for m in methods:
        use = choose_method(table, o) if m == AUTO else m
        if use == "dist-quantile" and target.probs is None:
            continue
        t = _Tally(target.scale)
        t.add(*intervals_q(use, table, target, o), target.human)
        s = t.summary(m)
        rows.append({"method": m, "used": use} | {k: s[k] for k in ("coverage", "width")})
        rows[-1]["by_human"] = s["by_human"]
    return {
        "source": target.source,
        "n": len(target),
        **score_shift(table.pred, target.pred, shift_alpha),
        "methods": rows,
    }
