"""Load benchmark (issue 29): reading a canonical JSONL file and aligning it, in process.

``metajudge.data.load(FILE)`` (the loader's own check and the records) and ``align_dataset``
(the aligned view every analysis reads) on the seeded synthetic pairwise set of
``bench_scale.py`` (``--pairs`` pairs, written once as a canonical JSONL file with a card line,
in ``--data`` or a temporary folder). Printed per checkout (``--src DIR``, repeatable: e.g. a
baseline checkout and this one, run back to back in fresh child processes): load and align
wall time, the memory the records and the view keep (RSS after minus before, and with
``--tracemalloc`` the bytes Python allocated and still holds, per pair; times are then
inflated) and the peak RSS of the child.

Run: ``python benchmarks/bench_load.py --pairs 200000`` (the default, as ``make bench`` runs it);
``--src /path/to/old/checkout --src .`` compares two checkouts.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    """The resident set size of this process now, in MB (``/proc/self/status``)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def write_input(folder: Path, pairs: int) -> Path:
    """The canonical JSONL file of ``pairs`` synthetic pairs (card line first), made once."""
    sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
    from bench_scale import synthetic

    from metajudge.data.formats import write_jsonl

    path = folder / f"ds_{pairs}.jsonl"
    if not path.is_file():
        ds, _ = synthetic(pairs, 1)
        write_jsonl(path, ds.records, ds.card)
    return path


def child(path: Path, traced: bool) -> dict[str, float]:
    """Load and align ``path`` with the metajudge on ``sys.path``; times and memory."""
    import tracemalloc

    from metajudge.analyses.metric_vs_human.aligned import align_dataset
    from metajudge.data.loading import load

    gc.collect()
    base = rss_mb()
    if traced:
        tracemalloc.start()
    t0 = time.perf_counter()
    ds = load(path)
    t1 = time.perf_counter()
    gc.collect()
    out = {"load_s": t1 - t0, "records_rss_mb": rss_mb() - base}
    if traced:
        out["records_bytes"] = tracemalloc.get_traced_memory()[0]
    t2 = time.perf_counter()
    view = align_dataset(ds)
    t3 = time.perf_counter()
    gc.collect()
    out |= {"align_s": t3 - t2, "all_rss_mb": rss_mb() - base, "pairs": len(view.pair_ids)}
    if traced:
        out["all_bytes"] = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def run_child(src: Path, path: Path, traced: bool) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", str(path)] + (["--tracemalloc"] if traced else [])
    env = dict(os.environ, PYTHONPATH=str(src))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"the child for {src} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.splitlines()[-1])


def show(src: Path, m: dict[str, float]) -> None:
    n = m["pairs"]
    line = (
        f"{src}: {n:,.0f} pairs: load {m['load_s']:.2f} s, align {m['align_s']:.2f} s, "
        f"total {m['load_s'] + m['align_s']:.2f} s; RSS kept: records {m['records_rss_mb']:.0f} MB, "
        f"+ view {m['all_rss_mb']:.0f} MB; peak RSS {m['peak_rss_mb']:.0f} MB"
    )
    if "records_bytes" in m:
        line += (
            f"; traced: records {m['records_bytes'] / n:.0f} B/pair, "
            f"+ view {m['all_bytes'] / n:.0f} B/pair"
        )
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=200_000)
    ap.add_argument("--data", type=Path, help="folder for (and reuse of) the generated file")
    ap.add_argument("--input", type=Path, help="a canonical JSONL file to load instead")
    ap.add_argument("--src", type=Path, action="append", help="checkout(s) to measure")
    ap.add_argument("--tracemalloc", action="store_true", help="also trace Python's allocations")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.child, a.tracemalloc)))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench_load_") as tmp:
        folder = a.data or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = a.input or write_input(folder, a.pairs)
        print(f"input: {path} ({path.stat().st_size / 1e6:.0f} MB)")
        for src in a.src or [REPO]:
            show(src, run_child(src.resolve(), path, a.tracemalloc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
