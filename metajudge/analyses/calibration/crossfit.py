"""The rows ``calibrate estimate`` works on, and the cross-fitted isotonic calibration it uses.

:class:`EstimateRows`: one row per judged response: its system, its cluster (the prompt, by
default), its id, the judge's score and the human label (NaN = unlabelled). A calibrator
(:class:`CrossFit`) is fitted on every labelled row, pooled over systems: the labelled clusters
are dealt into K folds (seeded, whole clusters), an isotonic map from judge score to label is
fitted on all labelled rows (``full``) and on each "all but fold k" (``folds[k]``). Isotonic
regression keeps the mean: on the rows it was fitted on, the calibrated scores average to the
labels' mean. The maps are :func:`metajudge.analyses.calibration.maps.fit_map`'s isotonic
(piecewise-linear between thresholds, flat beyond the ends).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from metajudge.analyses.calibration import maps
from metajudge.errors import InputError

FArr = npt.NDArray[np.float64]
SArr = npt.NDArray[np.str_]

#: fewest labelled clusters a calibration is fitted on (two folds of two clusters)
MIN_LABELLED_CLUSTERS = 4
#: cross-fitting folds, also the jackknife's groups (fewer when labelled clusters are scarce: two
#: clusters per fold at least). CJE uses 5; with 5 the jackknife variance is itself noisy (on the
#: arena sample, clone's calibration SE over 8 fold seeds: sd 0.0031 around 0.0079 with 5 folds,
#: 0.0009 around 0.0089 with 40), so 40.
DEFAULT_FOLDS = 40


@dataclass(frozen=True)
class EstimateRows:
    """Judged responses: parallel arrays, one entry per row (see the module docstring);
    ``scale``: the label scale ``(min, max)``; ``source``: where the rows came from."""

    system: SArr
    cluster: SArr
    item: SArr
    judge: FArr
    label: FArr
    scale: tuple[float, float]
    source: str
    #: a label plan's selection probability of each row it listed (NaN: not in the plan) and
    #: whether its draw selected the row (:mod:`metajudge.data.label_plan`); None: no plan
    pi: FArr | None = None
    drawn: npt.NDArray[np.bool_] | None = None

    def __len__(self) -> int:
        return int(self.judge.size)

    @property
    def labelled(self) -> npt.NDArray[np.bool_]:
        return np.isfinite(self.label)

    @property
    def systems(self) -> list[str]:
        """The systems, sorted by name."""
        return sorted(set(self.system.tolist()))

    def take(self, mask: npt.NDArray[np.bool_]) -> EstimateRows:
        """The rows where ``mask`` is true."""
        return replace(
            self,
            system=self.system[mask],
            cluster=self.cluster[mask],
            item=self.item[mask],
            judge=self.judge[mask],
            label=self.label[mask],
            pi=None if self.pi is None else self.pi[mask],
            drawn=None if self.drawn is None else self.drawn[mask],
        )

    def of(self, system: str) -> EstimateRows:
        return self.take(self.system == system)

    def counts(self) -> dict[str, dict[str, int]]:
        """Per system: rows, labelled rows, clusters."""
        out = {}
        for s in self.systems:
            r = self.of(s)
            out[s] = {
                "rows": len(r),
                "labelled": int(r.labelled.sum()),
                "clusters": len(set(r.cluster.tolist())),
            }
        return out


def crossfit_rows(
    rows: Sequence[tuple[str, str, str, float, float | None]],
    *,
    scale: tuple[float, float],
    source: str,
) -> EstimateRows:
    """:class:`EstimateRows` from ``(system, cluster, item, judge, label or None)`` tuples."""
    if not rows:
        raise InputError("no judged rows", path=source)
    sys_, clu, item, judge, label = zip(*rows, strict=True)
    return EstimateRows(
        system=np.array(sys_, dtype=str),
        cluster=np.array(clu, dtype=str),
        item=np.array(item, dtype=str),
        judge=np.array(judge, dtype=float),
        label=np.array([np.nan if v is None else v for v in label], dtype=float),
        scale=scale,
        source=source,
    )


@dataclass(frozen=True)
class CrossFit:
    """The fitted calibration (module docstring): ``full`` and ``folds`` (isotonic parameters),
    ``fold_of`` (labelled cluster -> fold), the labelled judge-score range ``s_range``."""

    full: dict[str, Any]
    folds: list[dict[str, Any]]
    fold_of: dict[str, int]
    s_range: tuple[float, float]
    n_labels: int
    n_clusters: int
    seed: int
    residual_var: float = 0.0  # variance of the out-of-fold residuals Y - f_oof(S), all labels
    #: the residual model: upper judge-score edge and root mean squared out-of-fold residual of
    #: equal-count bins of the labelled rows (:func:`residual_bins`)
    resid_edges: tuple[float, ...] = ()
    resid_rms: tuple[float, ...] = ()
    resid_overall_rms: float = 0.0
    #: the out-of-fold residuals' variance within systems, each around its own mean residual
    #: (:func:`within_system_var`): what an augmented estimate's centred residual term varies by
    residual_var_within: float = 0.0

    @property
    def k(self) -> int:
        return len(self.folds)

    @property
    def within_share(self) -> float:
        """The share of the residual variance left within systems (each residual around its
        system's own mean residual), at most 1: what a floor on a term centred on a system's
        own mean residual scales the pooled residual variance by."""
        return (
            min(self.residual_var_within / self.residual_var, 1.0) if self.residual_var > 0 else 1.0
        )

    def predict(self, x: FArr) -> FArr:
        return maps.apply_map("isotonic", self.full, x)

    def predict_fold(self, x: FArr, k: int) -> FArr:
        """The map fitted without fold ``k``."""
        return maps.apply_map("isotonic", self.folds[k], x)

    def out_of_fold(self, x: FArr, clusters: SArr) -> FArr:
        """Each labelled row's prediction by the map fitted without its cluster's fold."""
        out = np.empty(x.size)
        fold = np.array([self.fold_of[c] for c in clusters.tolist()], dtype=int)
        for k in range(self.k):
            m = fold == k
            if m.any():
                out[m] = self.predict_fold(x[m], k)
        return out

    def residual_sd(self, x: FArr) -> FArr:
        """The judge's uncertainty u(S) at each of ``x``: the root mean squared out-of-fold
        residual of the labelled rows in the same judge-score bin (10 equal-count bins, fewer
        under 200 labels), floored at a tenth of the overall RMS."""
        edges, rms = np.array(self.resid_edges), np.array(self.resid_rms)
        at = np.minimum(np.searchsorted(edges, x, side="left"), edges.size - 1)
        return np.maximum(rms[at], 0.1 * self.resid_overall_rms)

    def summary(self) -> dict[str, Any]:
        return {
            "method": "isotonic, cross-fitted by cluster",
            "labels": self.n_labels,
            "labelled_clusters": self.n_clusters,
            "folds": self.k,
            "judge_range_labelled": list(self.s_range),
            "seed": self.seed,
        }


def residual_bins(judge: FArr, resid: FArr, n_bins: int) -> tuple[FArr, FArr]:
    """Upper judge-score edge and root mean squared residual of equal-count bins."""
    order = np.argsort(judge, kind="mergesort")
    parts = [p for p in np.array_split(order, n_bins) if p.size]
    edges = np.array([judge[p].max() for p in parts])
    rms = np.array([math.sqrt(float(np.mean(resid[p] ** 2))) for p in parts])
    return edges, rms


def within_system_var(resid: FArr, system: SArr) -> float:
    """The residuals' variance pooled within systems: Σ_s Σ (r − r̄_s)² / Σ_s (n_s − 1) over
    the systems with 2 labels or more (NaN when none has)."""
    ss, dof = 0.0, 0
    for s in set(system.tolist()):
        r = resid[system == s]
        ss += float(np.sum((r - r.mean()) ** 2))
        dof += r.size - 1
    return ss / dof if dof > 0 else math.nan


def fold_assignment(clusters: Sequence[str], k: int, seed: int) -> dict[str, int]:
    """Whole clusters dealt round-robin into ``k`` folds in a seeded random order."""
    uniq = sorted(set(clusters))
    order = np.random.default_rng([seed, 40]).permutation(len(uniq))
    return {uniq[i]: r % k for r, i in enumerate(order)}


def fit_crossfit(rows: EstimateRows, *, seed: int = 0, folds: int = DEFAULT_FOLDS) -> CrossFit:
    """The cross-fitted calibration on the labelled rows of ``rows`` (module docstring)."""
    lab = rows.take(rows.labelled)
    clusters = lab.cluster.tolist()
    g = len(set(clusters))
    if g < MIN_LABELLED_CLUSTERS:
        raise InputError(
            f"{len(lab)} labelled rows in {g} cluster(s): a calibration needs labels in at least "
            f"{MIN_LABELLED_CLUSTERS} clusters, and no system has them to borrow from",
            path=rows.source,
            field="label",
        )
    if np.ptp(lab.judge) == 0:
        raise InputError(
            f"the judge gives every labelled row the same score ({lab.judge[0]:g}): no "
            "calibration can be learnt from it",
            path=rows.source,
            field="judge score",
        )
    k = max(2, min(folds, g // 2))
    fold_of = fold_assignment(clusters, k, seed)
    fid = np.array([fold_of[c] for c in clusters], dtype=int)
    full = maps.fit_map("isotonic", lab.judge, lab.label)
    per_fold = [
        maps.fit_map("isotonic", lab.judge[fid != j], lab.label[fid != j]) for j in range(k)
    ]
    cf = CrossFit(
        full=full,
        folds=per_fold,
        fold_of=fold_of,
        s_range=(float(lab.judge.min()), float(lab.judge.max())),
        n_labels=len(lab),
        n_clusters=g,
        seed=seed,
    )
    res = lab.label - cf.out_of_fold(lab.judge, lab.cluster)
    edges, rms = residual_bins(lab.judge, res, max(2, min(10, len(lab) // 20)))
    return replace(
        cf,
        residual_var=float(np.var(res, ddof=1)),
        resid_edges=tuple(edges.tolist()),
        resid_rms=tuple(rms.tolist()),
        resid_overall_rms=math.sqrt(float(np.mean(res**2))),
        residual_var_within=within_system_var(res, lab.system),
    )
