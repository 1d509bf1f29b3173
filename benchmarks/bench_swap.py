"""Backbone-swap benchmarks: Krippendorff's α closed form vs the package; the whole swap analysis.

Prints measured figures and ratios (run: ``.venv/bin/python benchmarks/bench_swap.py``; needs the
local data folder for the LFTQA-Eval part, which is skipped with a note when absent).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import krippendorff
import numpy as np

from metajudge.stats.agreement import krippendorff_alpha


def _best(fn, reps: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_alpha() -> None:
    rng = np.random.default_rng(0)
    truth = rng.normal(size=3000)
    cont = np.vstack([truth + rng.normal(scale=0.5, size=truth.size) for _ in range(3)])
    binned = np.clip(np.round(cont + 3), 1, 5)
    for level in ("interval", "ordinal"):
        ours = _best(lambda lv=level: krippendorff_alpha(binned, level=lv))
        pkg = _best(
            lambda lv=level: krippendorff.alpha(reliability_data=binned, level_of_measurement=lv)
        )
        a1 = krippendorff_alpha(binned, level=level)
        a2 = krippendorff.alpha(reliability_data=binned, level_of_measurement=level)
        print(
            f"alpha {level:<8} binned 3x3000 (5 values): closed form {ours * 1e3:7.2f} ms, package {pkg * 1e3:7.2f} ms, "
            f"ratio {pkg / ours:6.1f}x, |diff| {abs(a1 - a2):.1e}"
        )
    v = np.unique(cont).size
    ours = _best(lambda: krippendorff_alpha(cont, level="interval"))
    print(
        f"alpha interval continuous 3x3000 ({v} distinct values): closed form {ours * 1e3:.2f} ms; the package's "
        f"per-unit values x values coincidence tensor would need {3000 * v * v * 8 / 2**30:,.0f} GiB (not run)"
    )


def bench_swap() -> None:
    data = os.environ.get("METAJUDGE_DATA_DIR") or str(
        Path(__file__).resolve().parents[2] / "shared" / "human_labels"
    )
    if not Path(data, "lftqa_eval").is_dir():
        print("swap: LFTQA-Eval data folder absent, skipped (set METAJUDGE_DATA_DIR)")
        return
    from metajudge.runs.backbone_swap import run_backbone_swap

    bbs = ["gpt-4o", "gpt-4o-mini", "Meta-Llama-3.1-70B-Instruct-Turbo"]
    for n_boot in (200, 1000):
        t = _best(
            lambda nb=n_boot: run_backbone_swap(
                "lftqa_eval", "geval_faithfulness", external=bbs, n_boot=nb, seed=0, data_dir=data
            ),
            reps=2,
        )
        print(
            f"judge swap lftqa_eval (2988 responses, 13392 pairs, 3 backbones), n_boot={n_boot}: {t:.2f} s"
        )


def bench_bootstrap_vs_loop() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the reference: a test helper
    from metajudge import stats
    from tests.stats.reference import bootstrap_ci_reference

    rng = np.random.default_rng(0)
    n, groups = 3000, np.repeat(np.arange(300), 10)
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    t_vec = _best(
        lambda: stats.bootstrap_ci(
            x,
            y,
            statistic="spearman",
            groups=groups,
            n_resamples=1000,
            rng=np.random.default_rng(1),
        )
    )
    t_loop = _best(
        lambda: bootstrap_ci_reference(
            x,
            y,
            statistic="spearman",
            groups=groups,
            n_resamples=1000,
            rng=np.random.default_rng(1),
        ),
        reps=1,
    )
    print(
        f"grouped Spearman bootstrap (3000 rows, 300 groups, B=1000): vectorised {t_vec:.3f} s, loop {t_loop:.3f} s, ratio {t_loop / t_vec:.1f}x"
    )


if __name__ == "__main__":
    bench_alpha()
    bench_bootstrap_vs_loop()
    bench_swap()
