"""Wall time of every listing command, each in a fresh interpreter (what a user waits for).

Target (issue 26): each listing under 1 s wall on an idle 2-core machine. Before (commit 2366e07,
the issue's figures on the 2-core machine): ``data list`` 10.9 s, ``metrics list`` 11.2 s,
``matrix`` 9.6 s — they loaded every built-in dataset, and METEOR's signature loaded WordNet
through NLTK. Now ``data list`` and ``matrix`` read the counts and record facts each card carries
(kept equal to the loaded data by ``tests/data/test_card_counts.py``; ``metajudge data fetch --recount``
rewrites them) and no signature imports NLTK.

Each figure is the best of 3 runs; the load average is printed beside them (the target is for an
idle machine). Exit 1 when a listing misses the target by more than the load can explain (2x).

Run: ``.venv/bin/python benchmarks/bench_listings.py``
"""

from __future__ import annotations

import os
import sys

from bench_import import best_of  # the same fresh-interpreter timing (benchmarks/ is on sys.path)

TARGET_S = 1.0
RUNS = 3
LISTINGS = (
    ("data list", ["data", "list"]),
    ("metrics list", ["metrics", "list"]),
    ("metrics list --format json", ["metrics", "list", "--format", "json"]),
    ("backends list", ["backends", "list"]),
    ("matrix list", ["matrix", "list"]),
)


def main() -> int:
    py = sys.executable
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    start = best_of([py, "-c", "pass"], RUNS)
    print(f"{'python -c pass (interpreter start-up)':<32} {start:6.3f} s")
    worst = 0.0
    for label, args in LISTINGS:
        wall = best_of([py, "-m", "metajudge", *args], RUNS)
        worst = max(worst, wall)
        verdict = "ok" if wall < TARGET_S else "over target"
        print(
            f"metajudge {label:<22} {wall:6.3f} s  ({wall / TARGET_S:4.2f}x the 1 s target, {verdict})"
        )
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if worst < 2 * TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
