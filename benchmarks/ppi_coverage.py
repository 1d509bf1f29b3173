"""PPI coverage by simulation on fully human-labelled data (LFTQA-Eval, G-Eval as the judge).

For n in {25, 50, 100, 200}: draw n labelled responses at random 1,000 times (the rest are the
judge-only pool); report the share of 95% CIs covering the full-data human mean and the mean CI
width, for PPI++, human-only and judge-only, with z and t critical values.

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/ppi_coverage.py
"""

from __future__ import annotations

import json
import sys

import numpy as np

from metajudge import stats
from metajudge.runs.backbone_swap import load_swap_data
from metajudge.stats.ppi import coverage_simulation


def lftqa_judge_and_human(backbone: str = "gpt-4o") -> tuple[np.ndarray, np.ndarray]:
    """Annotator-mean faithfulness and one G-Eval backbone's score per response (both present)."""
    data, _, _ = load_swap_data(
        "lftqa_eval", "geval_faithfulness", external=[backbone, "gpt-4o-mini"]
    )
    h = stats.annotator_mean(data.human_resp)
    j = data.scores[0]
    m = np.isfinite(h) & np.isfinite(j)
    return h[m], j[m]


def main(draws: int = 1000) -> dict:
    h, j = lftqa_judge_and_human()
    out: dict = {"target": float(h.mean()), "N": int(h.size), "draws": draws}
    for crit in ("t", "z"):
        out[crit] = {
            n: coverage_simulation(
                h, j, n, draws=draws, rng=np.random.default_rng(n), critical=crit
            )
            for n in (25, 50, 100, 200)
        }
    return out


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000), indent=1))
