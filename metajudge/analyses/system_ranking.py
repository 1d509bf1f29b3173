"""Rank-cluster tables: each metric's correlation at a level, pairwise tests, Holm, clusters.

For one dimension of a Likert dataset: every metric's correlation with the humans at ``level``
(:func:`~metajudge.stats.resampling_tests.level_correlation`), a Perm-Both (or other
:mod:`~metajudge.stats.resampling_tests`) test for every pair of metrics, Holm over
all pairs (:func:`~metajudge.stats.holm`), and the greedy clusters of
:func:`~metajudge.stats.clusters.rank_clusters`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.analyses.metric_vs_human.matrices import ScoreMatrices
from metajudge.results import Result
from metajudge.stats import PFloor, holm
from metajudge.stats import resampling_tests as rt
from metajudge.stats.clusters import rank_clusters


@dataclass(frozen=True)
class ClusterOptions:
    """How the table is built: level, statistic, test, resamples, seed, α."""

    level: str = "system"
    statistic: str = "pearson"
    method: str = "perm-both"
    n_resamples: int = 1000
    seed: int = 0
    alpha: float = 0.05


@dataclass
class RankTable(Result):
    """Metrics with correlation and cluster rank (best first), the pairwise tests, the options."""

    dataset: str
    dimension: str
    options: ClusterOptions
    rows: list[dict[str, Any]]
    pairs: list[dict[str, Any]] = field(default_factory=list)
    n_systems: int = 0
    n_items: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "dimension": self.dimension,
            "options": self.options.__dict__,
            "n_systems": self.n_systems,
            "n_items": self.n_items,
            "p_rule": rt.P_RULE if self.options.method.startswith("perm") else "bootstrap_p_value",
            "multiple_comparisons": f"Holm over all {len(self.pairs)} pairs",
            "note": self.note,
            "p_floor": self.p_floor.to_dict(self.options.alpha),
            "rows": self.rows,
            "pairs": [p | {"p_at_floor": self.p_floor.at_floor(p["p"])} for p in self.pairs],
        }

    @property
    def p_floor(self) -> PFloor:
        """The smallest p of the pairwise tests (permutation or bootstrap rule), and after Holm."""
        k, n_pairs = self.options.n_resamples, len(self.pairs)
        perm = self.options.method.startswith("perm")
        return PFloor.permutation(k, n_pairs) if perm else PFloor.bootstrap(k, n_pairs)

    @property
    def note(self) -> str | None:
        """Why no pair can be significant, when the resamples are too few for Holm at α."""
        return self.p_floor.note(self.options.alpha)

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows)


def _tests(sm: ScoreMatrices, o: ClusterOptions) -> dict[tuple[str, str], rt.ResamplingTest]:
    kind, method = o.method.split("-", 1)
    method = {"sys": "systems", "inp": "inputs"}.get(method, method)
    fn = rt.perm_tests if kind == "perm" else rt.boot_tests
    return fn(
        sm.metrics,
        sm.human,
        level=o.level,
        method=method,
        stat=o.statistic,
        n_resamples=o.n_resamples,
        rng=o.seed,
    )


def rank_table(sm: ScoreMatrices, dataset: str, opts: ClusterOptions | None = None) -> RankTable:
    """The rank-cluster table of every metric in ``sm`` (same seed for every pair's test)."""
    o = opts or ClusterOptions()
    names = list(sm.metrics)
    vals = np.array(
        [rt.level_correlation(sm.metrics[m], sm.human, o.level, o.statistic) for m in names]
    )
    pairs, raw = [], []
    tests = _tests(sm, o)
    for i, j in itertools.combinations(range(len(names)), 2):
        t = tests[(names[i], names[j])]
        raw.append(t.p_value)
        pairs.append({"a": names[i], "b": names[j], "delta": t.delta, "p": t.p_value})
    adj = holm(raw) if raw else np.zeros(0)
    P = np.full((len(names), len(names)), np.nan)
    for (i, j), pa, d in zip(itertools.combinations(range(len(names)), 2), adj, pairs, strict=True):
        P[i, j] = P[j, i] = pa
        d["p_holm"] = float(pa)
    ranks = rank_clusters(vals, P, o.alpha)
    order = np.argsort(np.where(np.isfinite(vals), -vals, np.inf), kind="mergesort")
    rows = [
        {"metric": names[i], "correlation": float(vals[i]), "cluster": int(ranks[i])} for i in order
    ]
    return RankTable(dataset, sm.dimension, o, rows, pairs, len(sm.systems), len(sm.items))
