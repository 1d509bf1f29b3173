"""``calibrate conformal``: split-conformal intervals for ratings, and how they hold on
held-out rows.

Methods (``alpha`` the miscoverage; every interval is clipped to the scale and then given the
ordinal boundary adjustment: its ends move inwards to the nearest human score values seen in the
calibration rows, which cannot lose coverage of a score on that grid):

- ``split``: |human - judge's expected score| residuals, interval score +- q;
- ``binned``: the same, with q computed separately per bin of the predicted score (``bins``
  quantile bins of the calibration rows' predictions; a bin with fewer than ``min_bin`` rows
  uses the pooled q) — conditional on the judge's score;
- ``cqr``: conformalised quantile regression on the judge's distribution: its alpha/2 and
  1 - alpha/2 quantiles, widened by the conformal quantile of max(lo - y, y - hi) (needs the
  distribution);
- ``isotonic-split`` / ``isotonic-binned``: calibrate-then-conformal: an isotonic map fitted on
  ``fit_fraction`` of the calibration rows, conformal on the rest, centred on the calibrated score;
- ``auto``: the method chosen on the calibration rows only: each candidate is run on a seeded
  half of them and measured on the other half; the narrowest one covering >= 1 - alpha there is
  used (ties: list order); measured over ``inner_repeats`` seeded halvings (mean coverage
  and mean width).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.analyses.calibration import maps
from metajudge.analyses.calibration.shift import score_shift
from metajudge.analyses.calibration.table import FArr, RatingTable, check_alpha, splits
from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats.calibration import conformal_quantile, quantile_bin_edges

CONFORMAL_METHODS = ("split", "binned", "cqr", "isotonic-split", "isotonic-binned")
AUTO = "auto"


@dataclass(frozen=True)
class Options:
    """Settings of every method (stated in the output)."""

    alpha: float = 0.1
    bins: int = 3
    min_bin: int = 30
    fit_fraction: float = 0.5
    seed: int = 0
    inner_repeats: int = 3


def _adjust(
    lo: FArr, hi: FArr, center: FArr, grid: FArr, scale: tuple[float, float]
) -> tuple[FArr, FArr]:
    lo = np.clip(lo, *scale)
    hi = np.clip(hi, *scale)
    i = np.searchsorted(grid, lo - 1e-9)
    j = np.searchsorted(grid, hi + 1e-9) - 1
    lo2 = grid[np.minimum(i, len(grid) - 1)]
    hi2 = grid[np.maximum(j, 0)]
    empty = lo2 > hi2  # no grid value inside: the grid value nearest the centre
    near = grid[np.abs(np.clip(center, *scale)[:, None] - grid[None, :]).argmin(axis=1)]
    return np.where(empty, near, lo2), np.where(empty, near, hi2)


def _bin_q(center_cal: FArr, resid: FArr, center_test: FArr, o: Options) -> FArr:
    pooled = conformal_quantile(resid, o.alpha)
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


def intervals(method: str, cal: RatingTable, test: RatingTable, o: Options) -> tuple[FArr, FArr]:
    """The intervals ``method`` gives the rows of ``test``, calibrated on ``cal``."""
    grid = np.unique(cal.human)
    if method in ("isotonic-split", "isotonic-binned"):
        k = max(2, round(o.fit_fraction * len(cal)))
        perm = np.random.default_rng([o.seed, 1]).permutation(len(cal))
        fit, cal = cal.take(np.sort(perm[:k])), cal.take(np.sort(perm[k:]))
        params = maps.fit_map("isotonic", fit.pred, fit.human)
        c_cal = maps.apply_map("isotonic", params, cal.pred)
        c_test = maps.apply_map("isotonic", params, test.pred)
        inner = "split" if method == "isotonic-split" else "binned"
        return _centred(inner, c_cal, cal.human, c_test, grid, cal.scale, o)
    if method in ("split", "binned"):
        return _centred(method, cal.pred, cal.human, test.pred, grid, cal.scale, o)
    if method == "cqr":
        if cal.probs is None or cal.values is None or test.probs is None:
            raise InputError("cqr needs the judge's rating distribution", field="--method")
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
        return _adjust(lo_t - q, hi_t + q, test.pred, grid, cal.scale)
    raise InputError(
        f"unknown method {method!r} (known: {', '.join(CONFORMAL_METHODS + (AUTO,))})",
        field="--method",
    )


def _centred(
    method: str,
    c_cal: FArr,
    y: FArr,
    c_test: FArr,
    grid: FArr,
    scale: tuple[float, float],
    o: Options,
) -> tuple[FArr, FArr]:
    resid = np.abs(y - c_cal)
    q = conformal_quantile(resid, o.alpha) if method == "split" else _bin_q(c_cal, resid, c_test, o)
    return _adjust(c_test - q, c_test + q, c_test, grid, scale)


def candidates(table: RatingTable) -> tuple[str, ...]:
    """The methods ``table`` allows (cqr needs a distribution)."""
    return tuple(m for m in CONFORMAL_METHODS if m != "cqr" or table.probs is not None)


def choose_method(cal: RatingTable, o: Options) -> str:
    """``auto``'s choice, made on the calibration rows only (module docstring)."""
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
    return float(np.mean((y >= lo - 1e-9) & (y <= hi + 1e-9))), float(np.mean(hi - lo))


@dataclass
class ConformalResult(Result):
    """Per method: mean coverage and mean width over the repeats (and their sd); ``chosen``:
    what ``auto`` picked in each repeat; ``target``: the same on another dataset, if given."""

    judge: str
    n: int
    options: dict[str, Any]
    protocol: dict[str, Any]
    methods: list[dict[str, Any]]
    chosen: dict[str, int] = field(default_factory=dict)
    target: dict[str, Any] | None = None
    items: list[dict[str, Any]] = field(default_factory=list, repr=False)


def _summary(method: str, runs: Sequence[tuple[float, float]]) -> dict[str, Any]:
    cov = [c for c, _ in runs]
    wid = [w for _, w in runs]
    return {
        "method": method,
        "coverage": float(np.mean(cov)),
        "coverage_sd": float(np.std(cov)),
        "width": float(np.mean(wid)),
        "width_sd": float(np.std(wid)),
    }


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
    runs: dict[str, list[tuple[float, float]]] = {m: [] for m in methods}
    chosen: dict[str, int] = {}
    items: list[dict[str, Any]] = []
    parts = splits(len(table), seed=o.seed, repeats=repeats, fraction=fraction)
    for r, (cal_i, test_i) in enumerate(parts):
        cal, test = table.take(cal_i), table.take(test_i)
        for m in methods:
            use = choose_method(cal, o) if m == AUTO else m
            if m == AUTO:
                chosen[use] = chosen.get(use, 0) + 1
            lo, hi = intervals(use, cal, test, o)
            runs[m].append(coverage_and_width(lo, hi, test.human))
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
        methods=[_summary(m, runs[m]) for m in methods],
        chosen=chosen,
        items=items,
    )
    if target is not None:
        res.target = _on_target(table, target, methods, o, shift_alpha)
    return res


def _items(test: RatingTable, method: str, lo: FArr, hi: FArr) -> list[dict[str, Any]]:
    """Each test row's interval: id, judge score, bounds, width, human score, covered."""
    return [
        {
            "id": test.ids[i],
            "method": method,
            "judge": float(test.pred[i]),
            "lo": float(lo[i]),
            "hi": float(hi[i]),
            "width": float(hi[i] - lo[i]),
            "human": float(test.human[i]),
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
        if use == "cqr" and target.probs is None:
            continue
        cov, width = coverage_and_width(*intervals(use, table, target, o), target.human)
        rows.append({"method": m, "used": use, "coverage": cov, "width": width})
    return {
        "source": target.source,
        "n": len(target),
        **score_shift(table.pred, target.pred, shift_alpha),
        "methods": rows,
    }
