"""How long ``import metajudge`` and ``metajudge --help`` take in a fresh interpreter.

Target (issue 2): ``import metajudge`` under 0.3 s. Each figure is the best of 5 fresh
subprocesses; the interpreter's own start-up (``python -c pass``) is printed for reference and is
included in the figures (what a user waits for).

Run: ``.venv/bin/python benchmarks/bench_import.py``
"""

from __future__ import annotations

import subprocess
import sys
import time

TARGET_S = 0.3
RUNS = 5


def best_of(cmd: list[str], runs: int = RUNS) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    py = sys.executable
    cases = [
        ("python -c pass (interpreter start-up)", [py, "-c", "pass"]),
        ("python -c 'import metajudge'", [py, "-c", "import metajudge"]),
        (
            "python -c 'import metajudge.data' + list_datasets()",
            [py, "-c", "from metajudge.data import list_datasets; list_datasets()"],
        ),
        ("metajudge --help", [py, "-m", "metajudge", "--help"]),
        ("metajudge data --help", [py, "-m", "metajudge", "data", "--help"]),
    ]
    print(f"best of {RUNS} fresh subprocesses; target for 'import metajudge': {TARGET_S:.2f} s")
    for label, cmd in cases:
        s = best_of(cmd)
        print(f"{label:55s} {s:7.3f} s   ratio to target {s / TARGET_S:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
