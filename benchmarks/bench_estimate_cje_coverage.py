"""Coverage of ``calibrate estimate``'s 95% CIs against cje-eval 0.9.3's, at the same labels, on a
semi-synthetic arena-like set whose truth is known.

The population is cje-eval's arena sample (``cje_arena_sample/fresh_draws``: 1,000 prompts x 4
systems, the real judge scores). Its labels are made from the 480 real ones of base: μ(S) is the
isotonic map of base's labels on the judge score, ε the 480 residuals y − μ(s), and a row with
judge score S gets the label clip(μ(S) + ε_J, 0, 1), J uniform over the 480. The truth of a system
is the mean of its expected labels, m(S) = mean_J clip(μ(S) + ε_J, 0, 1), over its 1,000 rows:
the calibration transports to every system by construction (the method's assumption), and m is
monotone (isotonic regression is well specified).

Each draw resamples the 1,000 prompts with replacement (paired over systems: the superpopulation
is the sample's prompts), labels 480 of base's rows at random (none of the other systems': they
borrow base's calibration, as on the real sample) and runs both on the same rows: ours through
:func:`~metajudge.analyses.calibration.estimate.calibrated_estimates` with its defaults (what
``calibrate estimate --input DIR`` runs), cje-eval through ``analyze_dataset(fresh_draws_data=...)``
with its defaults. Printed per system: each method's coverage of the truth and mean CI width, and
the spread (5th–95th percentile) of the widths.

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/bench_estimate_cje_coverage.py [DRAWS]

Needs cje-eval (the dev extra); about 3 s a draw. tests/analyses/test_estimate_cje_coverage.py
runs a reduced version.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.analyses.calibration import maps
from metajudge.analyses.calibration.crossfit import crossfit_rows
from metajudge.analyses.calibration.estimate import Settings, calibrated_estimates
from metajudge.data import cje_folder


def _folder() -> Path:
    return Path(os.environ.get("METAJUDGE_DATA_DIR", "../shared/human_labels")) / (
        "cje_arena_sample/fresh_draws"
    )


def population(prompts: int | None = None) -> dict[str, Any]:
    """Judge scores per system (prompts in a shared order), the label model and the truths."""
    rows = cje_folder.read_folder(_folder())
    judge: dict[str, dict[str, float]] = {}
    lab_s, lab_y = [], []
    for system, cluster, _item, s, y in rows:
        judge.setdefault(system, {})[cluster] = s
        if y is not None:
            lab_s.append(s)
            lab_y.append(y)
    ids = sorted(set.intersection(*(set(v) for v in judge.values())))[:prompts]
    scores = {p: np.array([v[i] for i in ids]) for p, v in judge.items()}
    x, y = np.array(lab_s), np.array(lab_y)
    mu = maps.fit_map("isotonic", x, y)
    eps = y - maps.apply_map("isotonic", mu, x)

    def expected(s: np.ndarray) -> np.ndarray:
        m = maps.apply_map("isotonic", mu, s)
        return np.clip(m[:, None] + eps[None, :], 0, 1).mean(axis=1)

    truth = {p: float(expected(s).mean()) for p, s in scores.items()}
    return {"scores": scores, "mu": mu, "eps": eps, "truth": truth, "labels": x.size}


def draw(pop: dict[str, Any], rng: np.random.Generator, base: str = "base") -> dict[str, list]:
    """One resample: ``{system: [{prompt_id, judge_score, oracle_label}]}`` (module docstring)."""
    n = next(iter(pop["scores"].values())).size
    idx = rng.integers(0, n, n)
    labelled = np.zeros(n, bool)
    labelled[rng.choice(n, size=min(pop["labels"], n // 2), replace=False)] = True
    out: dict[str, list] = {}
    for p, s in pop["scores"].items():
        sp = s[idx]
        y = np.clip(maps.apply_map("isotonic", pop["mu"], sp) + rng.choice(pop["eps"], n), 0, 1)
        out[p] = [
            {
                "prompt_id": f"p{j}",
                "judge_score": float(sp[j]),
                "oracle_label": float(y[j]) if p == base and labelled[j] else None,
            }
            for j in range(n)
        ]
    return out


def ours(data: dict[str, list]) -> dict[str, tuple[float, float]]:
    tuples = [
        (p, r["prompt_id"], r["prompt_id"], r["judge_score"], r["oracle_label"])
        for p, recs in data.items()
        for r in recs
    ]
    rows = crossfit_rows(tuples, scale=cje_folder.SCALE, source="simulated")
    res = calibrated_estimates(rows, None, Settings())
    return {s["system"]: (s["lo"], s["hi"]) for s in res.systems}


def cje(data: dict[str, list]) -> dict[str, tuple[float, float]]:
    from cje import analyze_dataset

    r = analyze_dataset(fresh_draws_data=data)
    lo, hi = r.confidence_interval()
    pols = r.metadata["target_policies"]
    return {p: (float(a), float(b)) for p, a, b in zip(pols, lo, hi, strict=True)}


def simulate(draws: int, *, prompts: int | None = None, seed: int = 0) -> dict[str, Any]:
    """Per method and system: coverage of the truth, mean width and the widths' 5–95% range."""
    logging.disable(logging.WARNING)
    pop = population(prompts)
    rng = np.random.default_rng([seed, 45])
    got: dict[str, dict[str, list]] = {"ours": {}, "cje": {}}
    for _ in range(draws):
        data = draw(pop, rng)
        for name, fn in (("ours", ours), ("cje", cje)):
            for p, (lo, hi) in fn(data).items():
                hit = lo <= pop["truth"][p] <= hi
                got[name].setdefault(p, []).append((hit, hi - lo))
    logging.disable(logging.NOTSET)
    out: dict[str, Any] = {"draws": draws, "truth": pop["truth"]}
    for name, per in got.items():
        out[name] = {
            p: {
                "coverage": float(np.mean([h for h, _ in v])),
                "mean_width": float(np.mean([w for _, w in v])),
                "width_p05": float(np.quantile([w for _, w in v], 0.05)),
                "width_p95": float(np.quantile([w for _, w in v], 0.95)),
            }
            for p, v in per.items()
        }
    return out


def table(res: dict[str, Any]) -> str:
    lines = [
        (
            "| System | Truth | Ours: coverage | Ours: mean width (5–95%) | cje-eval: coverage "
            "| cje-eval: mean width (5–95%) |"
        ),
        "|---|---|---|---|---|---|",
    ]
    for p, t in res["truth"].items():
        o, c = res["ours"][p], res["cje"][p]
        lines.append(
            f"| {p} | {t:.4f} | {o['coverage']:.3f} | {o['mean_width']:.4f} "
            f"({o['width_p05']:.4f}–{o['width_p95']:.4f}) | {c['coverage']:.3f} | "
            f"{c['mean_width']:.4f} ({c['width_p05']:.4f}–{c['width_p95']:.4f}) |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    res = simulate(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
    print(f"{res['draws']} draws")
    print(table(res))
    print(json.dumps(res, indent=1))
