"""The bootstrap count cache in memory or in a temporary file (issue 65).

A million items and 1,000 resamples make a count cache of 477 MB of nibbles
(:mod:`metajudge.engine.resample`). Past :data:`~metajudge.engine.resample.SPILL_BYTES` it is
kept in an unnamed temporary file (``TMPDIR``) and read a block of resamples at a time. This
prints, for both places, the fill's time, the time of a pass over the resamples (the per-item
sums of one Pearson, as a run's passes read them) and the process's resident memory after the
fill; the ratios are the file's against memory (the baseline: the cache as it was kept before).

Run: ``python benchmarks/bench_count_cache.py [--items 1000000] [--boot 1000] [--passes 5]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def measure(items: int, boot: int, passes: int, spill_bytes: int) -> dict[str, float]:
    from metajudge import engine
    from metajudge.engine.resample import Resamples

    R = Resamples.draw(items, boot, np.random.default_rng(0), consume=False)
    R.store.spill_bytes = spill_bytes
    before = rss_mb()
    t = time.perf_counter()
    R.store._fill()
    fill = time.perf_counter() - t
    held = rss_mb() - before
    rng = np.random.default_rng(1)
    x = rng.normal(size=items)
    y = x + rng.normal(size=items)
    times = []
    for k in range(passes):  # (a new y each pass: a value is not read from the memo)
        t = time.perf_counter()
        engine.statistics([("pearson", x, y + k)], R)
        times.append(time.perf_counter() - t)
    return {"fill": fill, "pass": float(np.median(times)), "held": held}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--where", choices=["memory", "file"], help="(one place, in this process)")
    a = ap.parse_args()
    if a.where:  # a child: one place in a fresh process, its figures as JSON
        spill = 1 << 62 if a.where == "memory" else 0
        print(json.dumps(measure(a.items, a.boot, a.passes, spill_bytes=spill)))
        return
    got = {}
    for where in ("memory", "file"):
        args = [f"--items={a.items}", f"--boot={a.boot}", f"--passes={a.passes}"]
        out = subprocess.run(
            [sys.executable, __file__, *args, f"--where={where}"],
            check=True,
            capture_output=True,
            text=True,
        )
        got[where] = json.loads(out.stdout.splitlines()[-1])
    kept, spilled = got["memory"], got["file"]
    print(f"{a.items:,} items x {a.boot:,} resamples; median of {a.passes} passes")
    for name, m in (("in memory", kept), ("in a file", spilled)):
        print(
            f"  {name:9}: fill {m['fill']:.2f} s, a pass {m['pass']:.2f} s, "
            f"memory held after the fill {m['held']:.0f} MB"
        )
    print(
        f"  file / memory: fill {spilled['fill'] / kept['fill']:.2f}x, "
        f"a pass {spilled['pass'] / kept['pass']:.2f}x "
        f"({spilled['pass'] - kept['pass']:+.2f} s), memory held "
        f"{spilled['held']:.0f} MB where {kept['held']:.0f} MB"
    )


if __name__ == "__main__":
    main()
