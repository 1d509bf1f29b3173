"""RAGChecker meta-evaluation from the command line (issue 29: "still under 5 s").

Runs the REAL command of ``make demo``'s first step in a subprocess,

    metajudge meta-eval --dataset ragchecker_meta_eval --metrics bleu,rouge_l,meteor,bertscore --out OUT

with its scores cached in ``OUT/scores.jsonl`` (a first, untimed run computes them), ``--rounds``
times, plots and ``report.html`` included (``--no-plots`` adds the same runs without plots).
Printed per run: wall time, CPU of the child (user + sys) and the load average; then the median
wall and CPU and the wall's ratio to the 5 s target. ``--src DIR`` times the metajudge of another
checkout (a baseline commit) in alternation with this one, on the same cached scores, and prints
the ratios of the medians (this / baseline). Needs the dataset (``METAJUDGE_DATA_DIR``).

Run: ``python benchmarks/bench_ragchecker.py [--rounds 3] [--src /path/to/baseline/checkout]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 5.0
COMMAND = [
    "meta-eval",
    "--dataset",
    "ragchecker_meta_eval",
    "--metrics",
    "bleu,rouge_l,meteor,bertscore",
    "--paths-only",
]


def run_once(src: Path, out: Path, extra: list[str]) -> dict[str, float]:
    """One ``metajudge meta-eval`` of ``src`` into ``out``: wall, child CPU, load before."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "metajudge", *COMMAND, "--out", str(out), *extra],
        env=env,
        cwd=src,  # ``python -m`` puts the working directory first on sys.path, before PYTHONPATH
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "load": load}


def series(srcs: dict[str, Path], folders: dict[str, Path], extra: list[str], rounds: int) -> dict:
    """``rounds`` runs of each source, alternating, printed as they finish."""
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in srcs}
    for r in range(rounds):
        for name, src in srcs.items():
            t = run_once(src, folders[name], extra)
            runs[name].append(t)
            print(
                f"  {name:8s} {' '.join(extra) or 'plots':9s} round {r + 1}: wall {t['wall']:.2f} s, "
                f"CPU {t['cpu']:.2f} s (load {t['load']:.2f})",
                flush=True,
            )
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--src", type=Path, help="a baseline checkout, timed in alternation")
    ap.add_argument("--no-plots", action="store_true", help="also time the runs without plots")
    args = ap.parse_args()
    if not os.environ.get("METAJUDGE_DATA_DIR"):
        print("bench_ragchecker: skipped, METAJUDGE_DATA_DIR is not set (the RAGChecker labels)")
        return 0
    srcs = {"this": REPO, **({"baseline": args.src.resolve()} if args.src else {})}
    tmp = Path(tempfile.mkdtemp(prefix="bench-ragchecker-"))
    try:
        folders = {name: tmp / name for name in srcs}
        print("scoring once (untimed: BLEU, ROUGE-L, METEOR, BERTScore into scores.jsonl) ...")
        run_once(REPO, folders["this"], ["--no-plots"])
        for name in srcs:  # an untimed warm-up each (a baseline rescoring would show here)
            if name != "this":
                folders[name].mkdir(parents=True)
                shutil.copy(folders["this"] / "scores.jsonl", folders[name] / "scores.jsonl")
                print(f"warm-up of {name}: {run_once(srcs[name], folders[name], [])['wall']:.1f} s")
        for extra in [[]] + ([["--no-plots"]] if args.no_plots else []):
            runs = series(srcs, folders, extra, args.rounds)
            med = {k: statistics.median(t["wall"] for t in v) for k, v in runs.items()}
            cpu = {k: statistics.median(t["cpu"] for t in v) for k, v in runs.items()}
            line = (
                f"median wall {med['this']:.2f} s = {med['this'] / TARGET_S:.2f} x the 5 s target"
                f", median CPU {cpu['this']:.2f} s"
            )
            if "baseline" in med:
                line += (
                    f"; baseline {med['baseline']:.2f} s (CPU {cpu['baseline']:.2f} s), ratio"
                    f" {med['this'] / med['baseline']:.2f} (CPU {cpu['this'] / cpu['baseline']:.2f})"
                )
            print(f"{' '.join(extra) or 'with plots'}: {line}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
