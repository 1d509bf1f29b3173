"""``calibrate estimate`` against cje-eval 0.9.3 on its arena sample, over cje-eval's fold seeds.

cje-eval's CI comes from a 5-fold oracle jackknife whose folds its ``calibrate_dataset`` deals
with ``random_seed`` (default 42); its automatic mode also picks monotone or two-stage calibration
by cross-validation on those folds. This prints, per fold seed, cje-eval's estimates and CI widths
(seed 42 is PROVENANCE.txt's run), their medians, and ours (seed 0, 40 folds). Needs cje-eval (the
dev extra); about 12 s per seed.

Beside them, the yardstick of the calibration's share of the variance: the bootstrap SD of each
system's calibrated mean, mean f(S), over resamples of the labelled rows (the isotonic map refitted
on each, :func:`calibration_bootstrap`), against our jackknife SE (``se_calibration``). On the
arena sample (400 resamples) parallel_universe_prompt's is 0.0096 (ours 0.0104); cje-eval's
default-seed oracle variance 3.19e-5 is an SE of 0.0056, its 5-fold jackknife's low draw.

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/bench_estimate_arena.py [SEEDS]
"""

from __future__ import annotations

import functools
import logging
import os
import statistics
import sys
from pathlib import Path

import numpy as np

from metajudge.analyses.calibration import maps
from metajudge.analyses.calibration.estimate import calibrated_estimates
from metajudge.data.source import DataSource
from metajudge.runs.calibrate_estimate import estimate_rows


def _folder() -> Path:
    return Path(os.environ.get("METAJUDGE_DATA_DIR", "../shared/human_labels")) / (
        "cje_arena_sample/fresh_draws"
    )


def cje_widths(seeds: range) -> dict[int, dict[str, tuple[float, float]]]:
    """cje-eval's (estimate, CI width) per policy for each fold seed."""
    from cje.calibration import dataset
    from cje.interface import analysis

    logging.disable(logging.WARNING)
    original = dataset.calibrate_dataset
    out = {}
    try:
        for seed in seeds:
            analysis.calibrate_dataset = functools.partial(original, random_seed=seed)
            r = analysis.analyze_dataset(fresh_draws_dir=str(_folder()))
            lo, hi = r.confidence_interval()
            pols = r.metadata["target_policies"]
            out[seed] = {
                p: (float(e), float(h - lo_))
                for p, e, lo_, h in zip(pols, r.estimates, lo, hi, strict=True)
            }
    finally:
        analysis.calibrate_dataset = original
        logging.disable(logging.NOTSET)
    return out


def calibration_bootstrap(rows: object, resamples: int, seed: int = 1) -> dict[str, float]:
    """Per system, the SD of mean f(S) over bootstrap resamples of the labelled rows (module
    docstring)."""
    lab = rows.take(rows.labelled)  # type: ignore[attr-defined]
    systems = {s: rows.of(s).judge for s in rows.systems}  # type: ignore[attr-defined]
    rng = np.random.default_rng(seed)
    means: dict[str, list[float]] = {s: [] for s in systems}
    for _ in range(resamples):
        i = rng.integers(0, len(lab), len(lab))
        m = maps.fit_map("isotonic", lab.judge[i], lab.label[i])
        for s, judge in systems.items():
            means[s].append(float(maps.apply_map("isotonic", m, judge).mean()))
    return {s: float(np.std(v, ddof=1)) for s, v in means.items()}


def main(n_seeds: int = 20) -> None:
    rows, _ = estimate_rows(DataSource(path=str(_folder())))
    res = calibrated_estimates(rows).systems
    ours = {s["system"]: (s["value"], s["hi"] - s["lo"]) for s in res}
    boot = calibration_bootstrap(rows, 400)
    for s in res:
        print(
            f"{s['system']}: calibration SE (jackknife, 40 folds) {s['se_calibration']:.4f}; "
            f"bootstrap SD of mean f(S) {boot[s['system']]:.4f}"
        )
    runs = cje_widths(range(n_seeds))
    for seed, r in runs.items():
        print(seed, {p: (round(e, 4), round(w, 4)) for p, (e, w) in r.items()})
    for p, (e, w) in ours.items():
        widths = [r[p][1] for r in runs.values()]
        print(
            f"{p}: ours {e:.4f} (width {w:.4f}); cje-eval width median {statistics.median(widths):.4f}, "
            f"range {min(widths):.4f}..{max(widths):.4f} over {len(widths)} seeds"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
