"""Benchmark: Perm-Both (Deutsch, Dror & Roth 2021) on LFTQA-Eval, all metric pairs (issue 14).

1. metajudge: Perm-Both with 1,000 permutations on LFTQA-Eval's faithfulness (10 systems x 300
   inputs, 2,988 responses), the 12 metrics it ships, all 66 pairs, at the global, item and
   system levels (target: under 10 s each).
2. nlpstats (``nlpstats.correlations.permutation_test``, Deutsch's reference; in the dev extra) on
   the same input: one pair with 1,000 permutations, extrapolated to the 66 pairs (its Python
   loop costs the same per pair); the ratio is printed. Skipped when nlpstats is not installed.

Run: ``.venv/bin/python benchmarks/bench_perm_both.py`` (needs METAJUDGE_DATA_DIR with lftqa_eval).
"""

from __future__ import annotations

import time
import warnings

import numpy as np


def main() -> None:
    warnings.simplefilter("ignore")  # nlpstats' scipy warns on constant inputs of some inputs
    from metajudge.analyses.metric_vs_human.matrices import score_matrices
    from metajudge.data.loading import load as load_dataset
    from metajudge.scores.shipped import shipped_scores
    from metajudge.stats import resampling_tests as rt

    ds = load_dataset("lftqa_eval")
    sm = score_matrices(ds.records, shipped_scores(ds), "faithfulness")
    n_pairs = len(sm.metrics) * (len(sm.metrics) - 1) // 2
    print(f"LFTQA-Eval faithfulness: {sm.human.shape[0]} systems x {sm.human.shape[1]} inputs, "
          f"{sm.n_cells} responses, {len(sm.metrics)} metrics, {n_pairs} pairs")  # fmt: skip
    ours = {}
    for level in ("global", "item", "system"):
        t0 = time.perf_counter()
        res = rt.perm_tests(sm.metrics, sm.human, level=level, method="both", n_resamples=1000,
                            rng=0)  # fmt: skip
        ours[level] = time.perf_counter() - t0
        ok = "under" if ours[level] < 10 else "OVER"
        p = min(t.p_value for t in res.values())
        print(f"metajudge Perm-Both, 1000 permutations, {level:6s} level: {ours[level]:.2f} s "
              f"({ok} the 10 s target; smallest p {p:.4f})")  # fmt: skip
    try:
        from nlpstats.correlations import permutation_test
    except ImportError:
        print("nlpstats not installed: no ratio (pip install nlpstats, in the dev extra)")
        return
    a, b = list(sm.metrics)[:2]
    X, Y, Z = (np.where(np.isfinite(sm.human), M, np.nan) for M in (sm.metrics[a],
               sm.metrics[b], sm.human))  # fmt: skip
    lv = {"global": "global", "item": "input", "system": "system"}
    for level in ("global", "system"):
        np.random.seed(0)
        t0 = time.perf_counter()
        permutation_test(X, Y, Z, lv[level], "pearson", "both", n_resamples=1000)
        one = time.perf_counter() - t0
        est = one * n_pairs
        print(f"nlpstats Perm-Both, {level} level: {one:.2f} s for one pair -> {est:.1f} s for "
              f"{n_pairs} pairs (extrapolated); metajudge is {est / ours[level]:.0f}x faster")  # fmt: skip
    np.random.seed(0)
    t0 = time.perf_counter()
    permutation_test(X, Y, Z, "input", "pearson", "both", n_resamples=20)
    one = (time.perf_counter() - t0) * 50
    est = one * n_pairs
    print(f"nlpstats Perm-Both, item level: {one:.1f} s for one pair (20 permutations x 50) -> "
          f"{est:.0f} s for {n_pairs} pairs (extrapolated); metajudge is "
          f"{est / ours['item']:.0f}x faster")  # fmt: skip


if __name__ == "__main__":
    main()
