"""``calibrate estimate`` from sums: every system's estimate (:mod:`.estimate`) without holding
its unlabelled rows, for judge scores read in a streaming scan (:mod:`metajudge.data.judge_table`).

The calibration is fitted on the labelled rows only (held in memory: a few thousand). Every map
the estimate applies to a judge score S — the full isotonic map f, each fold's f₋ₖ, the identity
(the raw judge mean), the residual model's steps (:func:`.estimate.residual_var_at`) and the
labelled range's ends (the support gate) — is linear between the points of one sorted set, the
**breaks** (:func:`breaks_of`: the maps' thresholds, the range's ends, and the residual bins'
edges each followed by its next float so that a segment never straddles one). A row in segment j
(breaks[j−1] ≤ S < breaks[j]) has t = S − oⱼ from the segment's origin oⱼ, and any of those maps is
aⱼ + bⱼ·t there. So per (system, segment) three sums of the scan, :class:`ScoreSums`

- the count nⱼ, Σt and Σt²,

give every sum the estimate needs over a system's rows: Σ g(S) = Σⱼ aⱼnⱼ + bⱼΣt (the mean f, each
fold's mean f₋ₖ for the jackknife, the judge mean) and Σ (g(S) − m)² = Σⱼ nⱼ(aⱼ − m)² +
2(aⱼ − m)bⱼΣt + bⱼ²Σt² (the CR1 variance of ψ = f + c on the unlabelled rows, of the judge
mean; the selection gate's). The labelled rows add their own terms from memory. The sums feed
the in-memory path's formulas (:func:`.estimate.system_estimate`,
:func:`.estimate.naive_interval`, :func:`.estimate.support_shares`,
:func:`.estimate.selection_verdict`, :func:`.estimate.estimate_result`), so the estimates are
the in-memory path's to rounding (a test checks 1e-12).

The CR1 variance sums squared *cluster* sums: here each row is its own cluster, which holds when
every (system, prompt) has one judge score — the layout of a judge log with one response per
prompt and system (several draws of a prompt need per-(system, prompt) sums first: docs/scale.md).
The paired differences between systems need per-prompt sums across systems (a group-by over the
prompts) and are not computed here; the result says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metajudge.analyses.calibration import estimate as est
from metajudge.analyses.calibration.crossfit import CrossFit, EstimateRows, FArr
from metajudge.errors import InputError
from metajudge.stats import clustered as cl

IArr = npt.NDArray[np.int64]


def breaks_of(cf: CrossFit) -> FArr:
    """The sorted breaks of every map the estimate applies (module docstring)."""
    lo, hi = cf.s_range
    pts = [cf.full["x"], *(m["x"] for m in cf.folds), [lo, hi, np.nextafter(hi, np.inf)]]
    pts.append(np.nextafter(np.asarray(cf.resid_edges, float), np.inf))
    return np.unique(np.concatenate([np.asarray(p, float) for p in pts]))


@dataclass
class ScoreSums:
    """Per (system, segment of :attr:`breaks`): the count ``n``, ``t1`` = Σt and ``t2`` = Σt²
    (t = S − the segment's origin); per system the smallest and largest score."""

    breaks: FArr
    systems: list[str] = field(default_factory=list)
    n: IArr = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    t1: FArr = field(default_factory=lambda: np.zeros((0, 0)))
    t2: FArr = field(default_factory=lambda: np.zeros((0, 0)))
    low: FArr = field(default_factory=lambda: np.zeros(0))
    high: FArr = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        b = self.breaks
        #: each segment's origin (segment 0, below the breaks: the first break)
        self.origins = np.concatenate([b[:1], b])
        #: a point inside each segment (where a step function is read)
        self.points = np.concatenate([[np.nextafter(b[0], -np.inf)], b])
        self._index = {s: i for i, s in enumerate(self.systems)}
        seg = b.size + 1
        if self.n.shape[1] != seg:
            self.n = np.zeros((len(self.systems), seg), np.int64)
            self.t1, self.t2 = np.zeros(self.n.shape), np.zeros(self.n.shape)

    def _grow(self, names: list[str]) -> npt.NDArray[np.intp]:
        new = [s for s in dict.fromkeys(names) if s not in self._index]
        for s in new:
            self._index[s] = len(self.systems)
            self.systems.append(s)
        if new:
            pad = ((0, len(new)), (0, 0))
            self.n, self.t1, self.t2 = (np.pad(a, pad) for a in (self.n, self.t1, self.t2))
            self.low = np.concatenate([self.low, np.full(len(new), np.inf)])
            self.high = np.concatenate([self.high, np.full(len(new), -np.inf)])
        return np.array([self._index[s] for s in names], dtype=np.intp)

    def add(self, names: list[str], codes: npt.NDArray[np.integer], judge: FArr) -> None:
        """Add a batch: row i of system ``names[codes[i]]`` with judge score ``judge[i]``."""
        code = self._grow(names)[codes]
        seg = np.searchsorted(self.breaks, judge, side="right")
        t = judge - self.origins[seg]
        width = self.breaks.size + 1
        key = code * width + seg
        size = len(self.systems) * width
        shape = (len(self.systems), width)
        self.n += np.bincount(key, minlength=size).reshape(shape)
        self.t1 += np.bincount(key, weights=t, minlength=size).reshape(shape)
        self.t2 += np.bincount(key, weights=t * t, minlength=size).reshape(shape)
        np.minimum.at(self.low, code, judge)
        np.maximum.at(self.high, code, judge)

    def rows(self, i: int) -> int:
        return int(self.n[i].sum())

    def curve(self, params: dict[str, Any]) -> tuple[FArr, FArr]:
        """An isotonic map's (:meth:`.crossfit.CrossFit.predict`) value at each segment's
        origin and its slope in the segment (flat beyond its thresholds and below the breaks)."""
        xs, ys = np.asarray(params["x"], float), np.asarray(params["y"], float)
        a = np.interp(self.origins, xs, ys)
        at = np.searchsorted(xs, self.origins, side="right") - 1
        inside = (at >= 0) & (at < xs.size - 1)
        inside[0] = False
        j = np.clip(at, 0, max(xs.size - 2, 0))
        b = np.zeros_like(a)
        if xs.size > 1:
            b[inside] = ((ys[j + 1] - ys[j]) / (xs[j + 1] - xs[j]))[inside]
        return a, b

    def identity(self) -> tuple[FArr, FArr]:
        return self.origins, np.ones_like(self.origins)

    def total(self, i: int | list[int], a: FArr, b: FArr) -> float:
        """Σ (a + b·t) over the rows of system(s) ``i``."""
        n, t1, _ = self._of(i)
        return float(np.sum(a * n) + np.sum(b * t1))

    def square_dev(self, i: int | list[int], a: FArr, b: FArr, m: float) -> float:
        """Σ (a + b·t − m)² over the rows of system(s) ``i``."""
        n, t1, t2 = self._of(i)
        d = a - m
        return float(np.sum(n * d * d) + np.sum(2 * d * b * t1) + np.sum(b * b * t2))

    def _of(self, i: int | list[int]) -> tuple[FArr, FArr, FArr]:
        if isinstance(i, int):
            return self.n[i].astype(float), self.t1[i], self.t2[i]
        return self.n[i].sum(0).astype(float), self.t1[i].sum(0), self.t2[i].sum(0)


def _fit(lab: EstimateRows, sums: ScoreSums, i: int, cf: CrossFit) -> tuple[est._Fit, float, str]:
    """System ``i``'s fit (:func:`.estimate._system_fit`, borrowed or augmented) and
    Σ (ψ − θ̂)² over its rows, from its labelled rows ``lab`` and the sums."""
    n = sums.rows(i)
    full = sums.curve(cf.full)
    folds = [sums.curve(p) for p in cf.folds]
    mean_f = sums.total(i, *full) / n
    none = np.empty(0)
    if not len(lab):
        jack = np.array([sums.total(i, *fk) / n for fk in folds])
        return est._Fit(mean_f, none, jack, n - 1.0), sums.square_dev(i, *full, mean_f), "borrowed"
    y, oof = lab.label, cf.out_of_fold(lab.judge, lab.cluster)
    res = y - oof
    c, p = float(res.mean()), len(lab) / n
    value = mean_f + c
    f_lab = cf.predict(lab.judge)
    psi_lab = f_lab + c + (res - c) / p  # ψ of the labelled rows; f + c of the others
    sq = sums.square_dev(i, *full, value - c)
    sq += float(np.sum((psi_lab - value) ** 2) - np.sum((f_lab + c - value) ** 2))
    jack = np.array(
        [
            sums.total(i, *fk) / n + float(np.mean(y - cf.predict_fold(lab.judge, k)))
            for k, fk in enumerate(folds)
        ]
    )
    gl = len(set(lab.cluster.tolist()))
    u2 = est.residual_var_at(cf, sums.points, sums.n[i])
    floor, own = est.augmented_floor(cf, float(np.average(u2, weights=sums.n[i])), res)
    return est._Fit(value, none, jack, max(gl - 1.0, 1.0), floor, own, float(gl)), sq, "augmented"


def _system(
    lab: EstimateRows, sums: ScoreSums, i: int, cf: CrossFit, st: est.Settings
) -> dict[str, Any]:
    """System ``i``'s estimate dict (:func:`.estimate.system_estimate`) from the sums."""
    n = sums.rows(i)
    fit, sq, route = _fit(lab, sums, i, cf)
    judge_m = sums.total(i, *sums.identity()) / n
    judge_sq = sums.square_dev(i, *sums.identity(), judge_m)
    lo, hi = cf.s_range
    below, above = (int(sums.n[i][sums.points < lo].sum()), int(sums.n[i][sums.points > hi].sum()))
    gates = {
        "judge_mean": est.naive_interval(
            judge_m, math.sqrt(cl.cr1_variance(judge_sq / n**2, n)), n, st.alpha
        ),
        "support": est.support_shares(below / n, above / n, cf, st.support_threshold),
    }
    counts = {"system": sums.systems[i], "rows": n, "labelled": len(lab), "clusters": n}
    var_s = cl.cr1_variance(sq / n**2, n)
    return est.system_estimate(counts, route, fit, var_s, cf, st, lab.scale, gates)


def _selection(cal: EstimateRows, sums: ScoreSums) -> dict[str, Any]:
    """The selection gate (:func:`.estimate.selection_gate`, no plan) from the sums."""
    own = [sums.systems.index(s) for s in cal.systems]
    n = int(sums.n[own].sum())
    unit = float(max(np.max(np.abs(sums.low[own])), np.max(np.abs(sums.high[own])))) or 1.0
    q = len(cal) / n
    all_m = sums.total(own, *sums.identity()) / n
    sq = sums.square_dev(own, *sums.identity(), all_m)
    var = (1 - q) / q * sq / unit**2 / n**2
    return est.selection_verdict(float(np.mean(cal.judge / unit)), all_m / unit, var, unit)


def sums_estimates(
    cal: EstimateRows,
    cf: CrossFit,
    sums: ScoreSums,
    st: est.Settings,
    probes: EstimateRows | None = None,
) -> est.EstimateResult:
    """Every system's calibrated estimate and the gates (:func:`.estimate.calibrated_estimates`
    without the paired differences) from the labelled rows ``cal``, their calibration ``cf``
    (fitted on ``cal``) and the sums of every row (module docstring)."""
    if not sums.systems:
        raise InputError("no judged rows", path=cal.source)
    if float(sums.low.min()) == float(sums.high.max()):
        raise InputError(
            f"every judge score is {sums.low[0]:g}: equal scores carry no information",
            path=cal.source,
            field="judge score",
        )
    stray = sorted(set(cal.systems) - set(sums.systems))
    if stray:
        raise InputError(f"labelled rows of systems not scanned: {', '.join(stray)}")
    systems = []
    for s in sorted(sums.systems):
        i, lab = sums.systems.index(s), cal.of(s)
        if len(lab) == sums.rows(i):  # every row labelled: the rows are all in memory
            systems.append(est.estimate_system(lab, cf, cal, st)[0])
        else:
            systems.append(_system(lab, sums, i, cf, st))
    res = est.estimate_result(cal, cf, systems, [], probes, st, _selection(cal, sums))
    res.notes.append(
        f"streamed: {sum(s['rows'] for s in systems):,} judge scores summed per system and "
        "judge-score segment (docs/scale.md), each (system, prompt) taken as one row; paired "
        "differences between systems need per-prompt sums across systems and are not computed"
    )
    if np.isin(cal.label, (0.0, 1.0)).all() and np.isin(cal.judge, (0.0, 1.0)).all():
        res.notes.append(
            "the Rogan–Gladen pass rate (a bootstrap of every row) is given only for a system "
            "whose rows are all labelled"
        )
    return res
