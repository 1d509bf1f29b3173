"""PPI coverage by simulation on fully human-labelled data (LFTQA-Eval, G-Eval as the judge).

For n in {10, 25, 50, 100, 200}: draw n labelled responses at random (``draws`` times, seeded by
n; the rest are the judge-only pool) and report the share of 95% CIs covering the full-data
human mean (the guarantee's target: the population here is the dataset) and the mean CI width,
for PPI++, human-only and judge-only, with t and z critical values. Prints a table (``--json``:
the numbers as JSON). ``tests/stats/test_ppi_small_n.py`` asserts a reduced version, and the
small-n warning of ``calibrate estimate --method ppi`` quotes the n = 10 / 25 rows.

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/ppi_coverage.py [DRAWS]
"""

from __future__ import annotations

import json
import sys

import numpy as np

from metajudge import stats
from metajudge.runs.backbone_swap import load_swap_data
from metajudge.stats.ppi import coverage_simulation

SIZES = (10, 25, 50, 100, 200)


def lftqa_judge_and_human(backbone: str = "gpt-4o") -> tuple[np.ndarray, np.ndarray]:
    """Annotator-mean faithfulness and one G-Eval backbone's score per response (both present)."""
    data, _, _ = load_swap_data(
        "lftqa_eval", "geval_faithfulness", external=[backbone, "gpt-4o-mini"]
    )
    h = stats.annotator_mean(data.human_resp)
    j = data.scores[0]
    m = np.isfinite(h) & np.isfinite(j)
    return h[m], j[m]


def main(
    draws: int = 1000,
    sizes: tuple[int, ...] = SIZES,
    data: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict:
    """Coverage per critical value and n (``data``: (human, judge), default LFTQA-Eval's)."""
    h, j = data if data is not None else lftqa_judge_and_human()
    out: dict = {"target": float(h.mean()), "N": int(h.size), "draws": draws}
    for crit in ("t", "z"):
        out[crit] = {
            n: coverage_simulation(
                h, j, n, draws=draws, rng=np.random.default_rng(n), critical=crit
            )
            for n in sizes
        }
    return out


def table(out: dict) -> str:
    """One row per n: coverage (and mean width) of PPI++ and human-only with t and z."""
    lines = [
        (
            f"LFTQA-Eval, G-Eval gpt-4o as the judge: N = {out['N']}, target = full-data human "
            f"mean {out['target']:.4f}, {out['draws']} draws per n, nominal 0.95"
        ),
        "",
        "| n | PPI++ t | PPI++ z | human-only t | human-only z | judge-only | PPI++ width (t) |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in out["t"]:
        t, z = out["t"][n], out["z"][n]
        lines.append(
            f"| {n} | {t['PPI++']['coverage']:.3f} | {z['PPI++']['coverage']:.3f} | "
            f"{t['human-only']['coverage']:.3f} | {z['human-only']['coverage']:.3f} | "
            f"{t['judge-only']['coverage']:.3f} | {t['PPI++']['mean_width']:.3f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--json"]
    res = main(int(args[0]) if args else 1000)
    print(json.dumps(res, indent=1) if "--json" in sys.argv else table(res))
