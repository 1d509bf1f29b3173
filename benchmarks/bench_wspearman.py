"""The matched statistics of the inter-human reference (``_pair_matched``'s prefetch), old vs new.

Builds the bench's seeded synthetic pairwise set in memory (benchmarks/bench_scale.py: labels
in -2..2 from 2 annotators, metrics = latent + noise), asks ``weighted_statistics`` for what
``evaluate._pair_matched`` asks (Pearson and Spearman of each metric and of the reference
against each annotator, 1 vs 2 and 2 vs 1; ``--stats``, default Spearman) on ``Resamples`` of ``--n-boot`` resamples, with
the code of a git revision (``--old``, default main b4b3232) and with this tree, back to back,
and checks the values are bit-identical; ``--layout cells`` asks instead what a cell asks (each
metric against both annotators' labels pooled: two rows per pair). Usage:
``python benchmarks/bench_wspearman.py --pairs 200000 --metrics 5 --n-boot 1000 [--layout cells]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

_OLD_FORMULAS = "from metajudge.stats.correlation import"


def _old_modules(rev: str) -> tuple[types.ModuleType, types.ModuleType]:
    """``stats/resample.py`` and ``stats/weighted.py`` (with its ``moments.py``) of ``rev`` (a
    commit from before the engine moved to ``metajudge/engine/``) as standalone modules."""
    root = Path(__file__).resolve().parents[1]

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), "show", f"{rev}:{path}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    d = Path(tempfile.mkdtemp())
    (d / "old_resample.py").write_text(show("metajudge/stats/resample.py"))
    # (the formulas an old engine imported from stats.correlation: now re-exported by stats)
    moments_src = show("metajudge/stats/moments.py").replace(
        _OLD_FORMULAS, "from metajudge.stats import"
    )
    moments_src = moments_src.replace(
        "from metajudge.stats.resample import", "from old_resample import"
    )
    (d / "old_moments.py").write_text(moments_src)
    src = show("metajudge/stats/weighted.py").replace(_OLD_FORMULAS, "from metajudge.stats import")
    src = src.replace("from metajudge.stats.resample import", "from old_resample import")
    src = src.replace("from metajudge.stats import moments", "import old_moments as moments")
    (d / "old_weighted.py").write_text(src)
    sys.path.insert(0, str(d))
    import old_resample
    import old_weighted

    return old_resample, old_weighted


def _synthetic(pairs: int, metrics: int, seed: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """The seeded set: two annotators' labels in -2..2 per pair and ``metrics`` metric columns
    (latent + noise of growing scale)."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(0.0, 1.0, pairs)
    labels = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.8, (pairs, 2))), -2, 2)
    return labels, [latent + rng.normal(0.0, 0.5 + 0.25 * k, pairs) for k in range(metrics)]


def requests(
    pairs: int, metrics: int, stats: tuple[str, ...] = ("spearman",), seed: int = 17
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """What ``_pair_matched`` prefetches on the synthetic set (two annotators, every pair)."""
    labels, xs = _synthetic(pairs, metrics, seed)
    out = []
    for j in (0, 1):  # annotator j vs the other one (the reference)
        single, ref = labels[:, j].copy(), labels[:, 1 - j].copy()
        for x in [*xs, ref]:
            out += [(s, x, single) for s in stats]
    return out


def cell_requests(
    pairs: int, metrics: int, stats: tuple[str, ...] = ("spearman",), seed: int = 17
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """What a cell asks on the synthetic set: each metric against both annotators' labels
    pooled (two rows per pair, the pair's metric value on both: ``--layout cells``)."""
    labels, xs = _synthetic(pairs, metrics, seed)
    return [(s, np.repeat(x, 2), labels.ravel()) for x in xs for s in stats]


def run(
    weighted: types.ModuleType, resample: types.ModuleType, reqs: list, n_boot: int, per_item: int
):
    n = reqs[0][1].size // per_item
    R = resample.Resamples.draw(n, n_boot, np.random.default_rng(5), consume=False)
    R.store._fill()  # the count cache, drawn once (as in a run), outside the timing
    items = np.repeat(np.arange(n), per_item)
    views = [R[:, items] for _ in reqs]
    t0, c0 = time.perf_counter(), time.process_time()
    vals = weighted.weighted_statistics(reqs, views)
    return time.perf_counter() - t0, time.process_time() - c0, vals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=200_000)
    ap.add_argument("--metrics", type=int, default=5)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--old", default="b4b3232")
    ap.add_argument("--stats", default="spearman", help="comma-separated, e.g. pearson,spearman")
    ap.add_argument("--layout", choices=("matched", "cells"), default="matched")
    a = ap.parse_args(argv)
    from metajudge.engine import resample, weighted

    old_resample, old_weighted = _old_modules(a.old)
    make, per_item = (requests, 1) if a.layout == "matched" else (cell_requests, 2)
    reqs = make(a.pairs, a.metrics, tuple(a.stats.split(",")))
    t_old, c_old, v_old = run(old_weighted, old_resample, reqs, a.n_boot, per_item)
    t_new, c_new, v_new = run(weighted, resample, reqs, a.n_boot, per_item)
    same = all(np.array_equal(p, q, equal_nan=True) for p, q in zip(v_old, v_new, strict=True))
    diff = max(float(np.nanmax(np.abs(p - q), initial=0.0)) for p, q in zip(v_old, v_new))
    print(
        f"{a.layout}: pairs={a.pairs} metrics={a.metrics} n_boot={a.n_boot} "
        f"requests={len(reqs)}: "
        f"old ({a.old}) {t_old:.1f} s wall / {c_old:.1f} s CPU, new {t_new:.1f} s / {c_new:.1f} s, "
        f"x{t_old / t_new:.2f} wall, x{c_old / c_new:.2f} CPU; "
        f"bit-identical: {same} (max |diff| {diff:.3g})"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
