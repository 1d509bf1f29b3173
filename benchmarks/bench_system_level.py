"""System level vs summary (item) level meta-evaluation, equal work (issue 64).

A seeded synthetic dialogue-summarisation file the shape of the issue's: 14 systems x 100
inputs (1,400 responses), three annotators, four Likert dimensions, ``--metrics`` metric
columns (human mean + Gaussian noise; the values only serve the timing). Times
``meta_evaluate`` under the pointwise protocol at level ``item`` and level ``system`` with the
same options (``--aggregation mean``, ``--n-boot``, comparisons on) and prints both and their
ratio (target: system within 2x the item level).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_system_level.py [--metrics 32]
[--n-boot 1000] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
from metajudge.analyses.metric_vs_human.protocol import Protocol
from metajudge.data.formats import DatasetCard, Input, LikertRecord, Scale
from metajudge.data.registry import Dataset

DIMS = ("coherence", "consistency", "fluency", "relevance")


def synthetic(n_sys: int = 14, n_items: int = 100, n_metrics: int = 32, seed: int = 0):  # type: ignore[no-untyped-def]
    """The dataset and its score rows."""
    rng = np.random.default_rng(seed)
    card = DatasetCard(
        name="bench_dialogsum", kind="likert", description="", repository="", commit="",
        files=(), license="", dimensions=DIMS, scale=Scale(1, 5), annotators=3,
        direction="higher = better",
    )  # fmt: skip
    recs, rows = [], []
    for i in range(n_items):
        for s in range(n_sys):
            t = rng.normal(size=len(DIMS)) + 0.2 * s
            labels = {
                d: tuple(
                    float(np.clip(round(3 + t[k] + rng.normal(scale=0.8)), 1, 5)) for _ in range(3)
                )
                for k, d in enumerate(DIMS)
            }
            recs.append(LikertRecord(id=f"d{i}", input=Input(question="q"), system=f"s{s}", response="r", scores=labels))  # fmt: skip
            for m in range(n_metrics):
                score = float(t.mean() + rng.normal(scale=0.3 + 0.1 * m))
                rows.append({"key": f"d{i}::s{s}", "metric": f"m{m:02d}", "score": score})
    return Dataset(card=card, records=recs), rows


def timed(ds, rows, level: str, n_boot: int) -> float:  # type: ignore[no-untyped-def]
    proto = Protocol(correlate="pointwise", aggregation="mean", level=level, n_boot=n_boot)
    t = time.perf_counter()
    meta_evaluate(ds, rows, proto)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--metrics", type=int, default=32)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--profile", action="store_true", help="profile the system level")
    a = ap.parse_args()
    ds, rows = synthetic(n_metrics=a.metrics)
    print(
        f"{len(ds.records)} responses, {len(DIMS)} dimensions, {a.metrics} metrics, {a.n_boot} resamples"
    )
    item = timed(ds, rows, "item", a.n_boot)
    if a.profile:
        prof = cProfile.Profile()
        prof.enable()
    system = timed(ds, rows, "system", a.n_boot)
    if a.profile:
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    print(
        f"item (summary) level: {item:.2f} s; system level: {system:.2f} s; ratio {system / item:.2f}x (target <= 2x)"
    )


if __name__ == "__main__":
    main()
