"""Metric-paper benchmark (issue 43): a pointwise meta-evaluation the size of a metric paper's.

A seeded synthetic Likert set (never stored): 2,246 responses (250 inputs x 9 systems, 4
responses missing), one human score per response (the mean of 3 experts on 1..5, 13 distinct
values, as SummEval's), and 15 metric columns (latent quality + Gaussian noise of growing
scale; every third one rounded to 2 decimals, so it has ties). The REAL command line

    metajudge meta-eval --input ds.jsonl --scores scores.csv --protocol pointwise --level global
        --n-boot 10000 --max-compare 15 --no-plots --out OUT

runs in a subprocess: global pointwise correlations with bootstrap CIs for Pearson, Spearman
and Kendall's tau_b, and every pair of the 15 metrics compared (105 comparisons per
statistic). Printed: wall time, CPU (user + sys) and peak RSS of the child, the load average,
the target (30 s) and a check that every metric cell has a bootstrap CI for Kendall's tau_b
(and for Pearson and Spearman), with its method.

Run: ``python benchmarks/bench_metric_paper.py`` (``make bench`` runs it);
``--n-boot``, ``--src DIR`` (another checkout's metajudge), ``--out DIR`` (keep the run).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from bench_cli_scale import check_cells, run_meta_eval

INPUTS, SYSTEMS, MISSING, METRICS, TARGET_S = 250, 9, 4, 15, 30.0


def write_inputs(folder: Path, seed: int = 43) -> tuple[Path, Path]:
    """The canonical Likert JSONL (card line + records) and the wide scores CSV."""
    from metajudge.data.formats import DatasetCard, Input, LikertRecord, Scale, write_jsonl

    rng = np.random.default_rng(seed)
    quality = rng.normal(0.0, 1.0, (INPUTS, SYSTEMS)) + np.linspace(-0.5, 0.5, SYSTEMS)
    experts = np.clip(
        np.rint(3.0 + quality[..., None] + rng.normal(0, 0.7, (INPUTS, SYSTEMS, 3))), 1, 5
    )
    human = experts.mean(axis=2)
    keep = np.ones(INPUTS * SYSTEMS, dtype=bool)
    keep[rng.choice(keep.size, MISSING, replace=False)] = False
    records, rows = [], []
    noise = rng.normal(0.0, 1.0, (METRICS, INPUTS, SYSTEMS))
    for flat in np.flatnonzero(keep):
        i, s = divmod(int(flat), SYSTEMS)
        records.append(
            LikertRecord(
                f"d{i}", Input(question=f"q{i}"), f"s{s}", "r", {"quality": (float(human[i, s]),)}
            )
        )
        vals = [quality[i, s] + (0.4 + 0.15 * k) * noise[k, i, s] for k in range(METRICS)]
        vals = [round(v, 2) if k % 3 == 2 else v for k, v in enumerate(vals)]
        rows.append([f"d{i}", f"s{s}", *(repr(float(v)) for v in vals)])
    card = DatasetCard(
        name="synthetic_metric_paper",
        kind="likert",
        description="seeded synthetic Likert set (benchmarks/bench_metric_paper.py)",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=("quality",),
        scale=Scale(1.0, 5.0),
        annotators=1,
        direction="higher = better",
    )
    ds, sc = folder / "metric_paper.jsonl", folder / "metric_paper_scores.csv"
    write_jsonl(ds, records, card)
    with open(sc, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "system", *(f"m{k}" for k in range(METRICS))])
        w.writerows(rows)
    return ds, sc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-boot", type=int, default=10_000)
    ap.add_argument("--src", type=Path, default=REPO, help="checkout whose metajudge runs")
    ap.add_argument("--out", type=Path, help="run folder (default: a temporary one)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_metric_paper_") as tmp:
        ds, sc = write_inputs(Path(tmp))
        out = a.out or Path(tmp) / "out"
        extra = ["--protocol", "pointwise", "--level", "global", "--max-compare", str(METRICS)]
        m = run_meta_eval(ds, sc, out, n_boot=a.n_boot, src=a.src.resolve(), extra=extra)
        print(f"$ {m['command']}")
        print(
            f"{INPUTS * SYSTEMS - MISSING} rows, {METRICS} metrics, {a.n_boot} resamples: wall "
            f"{m['wall_s']:.1f} s, CPU {m['cpu_s']:.1f} s (user+sys), peak RSS "
            f"{m['peak_rss_mb']:.0f} MB; load average {m['load_before']:.2f} -> "
            f"{m['load_after']:.2f}; target {TARGET_S:.0f} s: {m['wall_s'] / TARGET_S:.2f}x"
        )
        result = json.loads((out / "result.json").read_text())
        ok = check_cells(result, require_bootstrap=("pearson", "spearman", "kendall"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
