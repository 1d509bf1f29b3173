"""Conformal coverage by simulation at small and large calibration sizes (issue 41).

On the released GPT-4o-mini SummEval files of Sheng et al. 2025 (coherence, consistency; 1,600
rows each), for alpha in {0.1, 0.2} and n in {5, 20, 50, 100, 800} calibration rows: seeded
random splits (n rows calibrate, the other 1,600 - n measure), every method of ``calibrate
conformal`` (``calibrate_conformal`` with ``fraction = n / 1600``). Prints per cell the marginal
coverage (mean over the splits), the mean width, the share of whole-scale intervals (too few
calibration rows for alpha) and the coverage per human-score bin (pooled over the splits), and
checks that every method's marginal coverage is >= 1 - alpha - 0.01; exits 1 otherwise.

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/bench_conformal_coverage.py [--draws-scale S]

The split-conformal guarantee is exact for these draws (calibration and test rows drawn without
replacement from one finite set are exchangeable): the mean coverage is >= 1 - alpha up to
Monte-Carlo error, which the number of splits per size keeps below about 0.004.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from metajudge.analyses.calibration import conformal
from metajudge.analyses.calibration.sources import table_from_csv

DIMS = ("coherence", "consistency")
ALPHAS = (0.1, 0.2)
#: calibration rows -> seeded splits (more where one split's coverage varies more)
SIZES = {5: 100, 20: 300, 50: 200, 100: 200, 800: 40}
TOLERANCE = 0.01


def _file(dim: str) -> Path:
    root = Path(os.environ.get("METAJUDGE_DATA_DIR", "../shared/human_labels"))
    return root / "conformal_judge_sheng2025" / "summeval" / f"4omini_{dim}.csv"


def simulate(
    dim: str, alpha: float, n_cal: int, draws: int, methods: tuple[str, ...] | None = None
) -> list[dict]:
    """One cell: per method its marginal coverage, width, whole-scale share and per-bin
    coverage over ``draws`` seeded splits with ``n_cal`` calibration rows."""
    table = table_from_csv(_file(dim))
    ms = methods or (*conformal.candidates(table), conformal.AUTO)
    res = conformal.calibrate_conformal(
        table,
        ms,
        options=conformal.Options(alpha=alpha, seed=n_cal),
        repeats=draws,
        fraction=n_cal / len(table),
    )
    return [
        {"dim": dim, "alpha": alpha, "n_cal": n_cal} | m | {"warned": bool(res.warnings)}
        for m in res.methods
    ]


def _row(r: dict) -> str:
    bins = " ".join(
        "  -  " if b["coverage"] is None else f"{b['coverage']:.3f}" for b in r["by_human"]
    )
    ok = "ok" if r["coverage"] >= 1 - r["alpha"] - TOLERANCE else "LOW"
    return (
        f"{r['dim']:<12}{r['alpha']:<6g}{r['n_cal']:>5}  {r['method']:<16}{r['coverage']:.3f} "
        f"{ok:<4}{r['width']:>6.2f}{r['whole_scale']:>7.0%}  {bins}"
    )


def main(scale: float = 1.0) -> int:
    print(
        f"{'dim':<12}{'alpha':<6}{'n_cal':>5}  {'method':<16}{'cover':<10}{'width':>6}"
        f"{'whole':>7}  coverage per human-score bin [1,2) [2,3) [3,4) [4,5]"
    )
    bad = []
    t0 = time.perf_counter()
    for dim in DIMS:
        for alpha in ALPHAS:
            for n_cal, draws in SIZES.items():
                for r in simulate(dim, alpha, n_cal, max(2, round(draws * scale))):
                    print(_row(r), flush=True)
                    if r["coverage"] < 1 - alpha - TOLERANCE:
                        bad.append(r)
    print(f"wall {time.perf_counter() - t0:.0f} s")
    for r in bad:
        print(f"FAIL: {r['method']} covers {r['coverage']:.3f} < 1 - alpha - {TOLERANCE}")
    return 1 if bad else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws-scale", type=float, default=1.0, help="scale the splits per size")
    sys.exit(main(ap.parse_args().draws_scale))
