"""Benchmark of the meta-evaluation engine (issue 4). Prints measured figures and ratios.

1. Vectorised bootstrap: 1,000 resamples of the 280 RAGChecker pairs (560 annotator rows) for
   10 metrics x 3 dimensions, Pearson + Spearman (target: under 2 s), and all five statistics.
2. The same resamples through the slow per-resample loop (``bootstrap_ci_reference``, scipy on
   the materialised resample) for a few cells, extrapolated to the 30 cells; the ratio is printed.
3. ``meta_evaluate`` end to end on the 10 metrics (CIs, ceiling, 270 metric-vs-metric tests).
4. The README's ``metajudge meta-eval --dataset ragchecker_meta_eval --metrics
   bleu,rouge_l,meteor,bertscore`` from cached scores (target: under 5 s), when a cache exists
   (``runs/demo/scores.jsonl`` from ``make demo``, or ``--cache FILE``).

Metrics: RAGChecker's own per-dimension scores, BLEU and ROUGE-L (computed here), and 7 seeded
synthetic metrics (human mean label + Gaussian noise of increasing scale) — synthetic values
only serve the timing, they are never reported as results.

Run: ``.venv/bin/python benchmarks/bench_metaeval.py`` (needs the RAGChecker data folder).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _timeit(fn, repeat: int = 3) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Best wall time and best process CPU time of ``repeat`` runs (the machine may be shared)."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best, best_cpu


def _env() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if (
        not os.environ.get("METAJUDGE_DATA_DIR")
        and (REPO.parent / "shared" / "human_labels").is_dir()
    ):
        os.environ["METAJUDGE_DATA_DIR"] = str(REPO.parent / "shared" / "human_labels")


def _synthetic_rows(view) -> list[dict]:  # type: ignore[no-untyped-def]
    """7 seeded metrics per response, so that d = m(b) - m(a) tracks the human mean label."""
    from metajudge.data.formats import response_key

    rng = np.random.default_rng(12345)
    mean_lab = np.nanmean(view.pair_labels["overall"], axis=1)
    rows = []
    for k in range(7):
        sb = mean_lab / 2 + rng.normal(0, 0.5 + 0.5 * k, mean_lab.size)
        for i, pid in enumerate(view.pair_ids):
            for side, v in (("a", 0.0), ("b", float(sb[i]))):
                rows.append(
                    {
                        "key": response_key(pid, side),
                        "metric": f"synthetic_{k}",
                        "score": v,
                        "signature": "synthetic",
                    }
                )
    return rows


def _data():  # type: ignore[no-untyped-def]
    from metajudge.analyses.metric_vs_human.aligned import align_dataset
    from metajudge.data.loading import load as load_dataset
    from metajudge.scores.scoring import score_dataset
    from metajudge.scores.shipped import shipped_scores

    ds = load_dataset("ragchecker_meta_eval")
    dims = list(ds.card.dimensions)
    rows = shipped_scores(ds) + score_dataset(ds, ["bleu", "rouge_l"], progress=False)
    view = align_dataset(ds, dims)
    rows += _synthetic_rows(view)
    metrics = ["ragchecker", "bleu", "rouge_l"] + [f"synthetic_{k}" for k in range(7)]
    return ds, dims, rows, metrics, view


def _cells(view, rows, metrics, dims) -> list:  # type: ignore[no-untyped-def]
    """The correlation rows of each cell as the protocol builds them (minmax, per annotator)."""
    from metajudge.analyses.metric_vs_human.cells import make_rows
    from metajudge.analyses.metric_vs_human.normalize import minmax
    from metajudge.scores.readers.rows import metric_for_dimension

    by: dict = {}
    for r in rows:
        by.setdefault(r["metric"], {})[r["key"]] = r["score"]
    cells = []
    for m in metrics:
        for d in dims:
            d_raw = view.differences(view.values(by[metric_for_dimension(m, d, by)]))
            x = minmax(d_raw, view.half_width).values
            cells.append(make_rows(x, d_raw, view.pair_labels[d], "per_annotator", 0.0))
    return cells


def _bench_vectorised(view, cells, B: int) -> float:  # type: ignore[no-untyped-def]
    from metajudge import stats as st

    def vectorised(stats: tuple[str, ...]) -> None:
        W_items = st.bootstrap_weights(view.n_items, B, np.random.default_rng(0))
        for c in cells:
            W = W_items[:, view.pair_item[c.pair]]
            for s in stats:
                xv = c.x if s in st.CORRELATIONS else st.tie_decisions(c.raw)
                st.percentile_ci(st.correlate([(s, xv, c.y)], W)[0])

    t_ps, c_ps = _timeit(lambda: vectorised(("pearson", "spearman")))
    t_all, c_all = _timeit(lambda: vectorised(st.STATISTICS))
    print(
        f"[1] vectorised bootstrap, {B} resamples x {len(cells)} cells, Pearson+Spearman: {t_ps:.3f} s wall, {c_ps:.3f} s CPU "
        f"(target < 2 s: {'PASS' if t_ps < 2 else 'FAIL'})"
    )
    print(
        f"    all five statistics (Pearson, Spearman, Kendall tau_b, accuracy with/without ties): {t_all:.3f} s wall, {c_all:.3f} s CPU"
    )
    return t_ps


def _bench_slow(cells, B: int, k: int, t_ps: float) -> None:  # type: ignore[no-untyped-def]
    """The slow reference loop on a few cells (same draws), extrapolated; and its agreement."""
    sys.path.insert(0, str(REPO))  # the reference loop is a test helper, not shipped
    from metajudge import stats as st
    from tests.stats.reference import bootstrap_ci_reference

    k = max(1, min(k, len(cells)))
    t0 = time.perf_counter()
    for c in cells[:k]:
        for s in ("pearson", "spearman"):
            bootstrap_ci_reference(
                c.x, c.y, statistic=s, groups=c.pair, n_resamples=B, rng=np.random.default_rng(0)
            )
    t_slow_k = time.perf_counter() - t0
    t_slow = t_slow_k / k * len(cells)
    print(
        f"[2] slow per-resample loop (scipy), Pearson+Spearman: {t_slow_k:.2f} s for {k} cells -> {t_slow:.1f} s for {len(cells)} cells (extrapolated)"
    )
    print(f"    ratio slow / vectorised: {t_slow / t_ps:.0f}x")
    c = cells[0]
    kw = {"statistic": "spearman", "groups": c.pair, "n_resamples": 200}
    a = st.bootstrap_ci(c.x, c.y, **kw, rng=np.random.default_rng(1))
    b = bootstrap_ci_reference(c.x, c.y, **kw, rng=np.random.default_rng(1))
    print(
        f"    max |vectorised - loop| over 200 resamples (Spearman): {np.nanmax(np.abs(a.samples - b.samples)):.2e}"
    )


def _bench_engine(ds, rows, metrics, dims, B: int) -> None:  # type: ignore[no-untyped-def]
    from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate

    t0, c0 = time.perf_counter(), time.process_time()
    res = meta_evaluate(ds, rows, metrics=metrics, n_boot=B, seed=0)
    t_me, c_me = time.perf_counter() - t0, time.process_time() - c0
    n_comp = len(res.data["comparisons"])
    print(
        f"[3] meta_evaluate, {len(metrics)} metrics x {len(dims)} dims, {B} resamples, {n_comp} comparisons (bootstrap + {B} permutations + Williams): {t_me:.2f} s wall, {c_me:.2f} s CPU"
    )
    t0 = time.perf_counter()
    meta_evaluate(ds, rows, metrics=metrics, n_boot=B, seed=0, compare=False)
    print(f"    without comparisons: {time.perf_counter() - t0:.2f} s")
    print(
        f"    check: RAGChecker overall Pearson/Spearman x100 = {res.value('ragchecker', 'overall') * 100:.2f}/{res.value('ragchecker', 'overall', 'spearman') * 100:.2f}"
    )


def _bench_cli(cache: Path) -> int:
    if not cache.is_file():
        print(
            f"[4] skipped: no cached scores at {cache} (run `make demo` first or pass --cache FILE)"
        )
        return 0
    import resource

    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(cache, Path(tmp) / "scores.jsonl")
        cmd = [sys.executable, "-m", "metajudge", "meta-eval", "--dataset", "ragchecker_meta_eval"]
        cmd += ["--metrics", "bleu,rouge_l,meteor,bertscore", "--out", tmp, "--paths-only"]
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        t_cli = time.perf_counter() - t0
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_cli = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    if p.returncode != 0:
        print(f"[4] meta-eval CLI failed (rc {p.returncode}): {p.stderr.strip()[-500:]}")
        return 1
    print(
        f"[4] `metajudge meta-eval --dataset ragchecker_meta_eval --metrics bleu,rouge_l,meteor,bertscore` from cached scores "
        f"(process start to exit, tables + plots): {t_cli:.2f} s wall, {cpu_cli:.2f} s CPU (target < 5 s: {'PASS' if t_cli < 5 else 'FAIL'})"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument(
        "--slow-cells", type=int, default=2, help="cells timed with the slow loop (extrapolated)"
    )
    ap.add_argument("--cache", default=str(REPO / "runs" / "demo" / "scores.jsonl"))
    args = ap.parse_args()
    _env()
    ds, dims, rows, metrics, view = _data()
    cells = _cells(view, rows, metrics, dims)
    print(
        f"data: ragchecker_meta_eval, {len(view.pair_ids)} pairs, {cells[0].x.size} annotator rows; {len(metrics)} metrics x {len(dims)} dimensions = {len(cells)} cells"
    )
    t_ps = _bench_vectorised(view, cells, args.n_boot)
    _bench_slow(cells, args.n_boot, args.slow_cells, t_ps)
    _bench_engine(ds, rows, metrics, dims, args.n_boot)
    rc = _bench_cli(Path(args.cache))
    try:
        load = os.getloadavg()[0]
        print(f"machine: {os.cpu_count()} CPUs, load average {load:.2f} at the end of the run")
    except OSError:
        pass
    return rc


if __name__ == "__main__":
    sys.exit(main())
