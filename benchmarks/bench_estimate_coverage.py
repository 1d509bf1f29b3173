"""Coverage of ``calibrate estimate``'s CIs by a seeded simulation on fully labelled shipped data.

Five judge × dimension sets (issue 63): SummEval coherence and consistency rated by gpt-4o-mini
and relevance by Qwen (conformal_judge_sheng2025: 16 systems x 100 documents, the expected
rating of the released distributions), HANNA coherence by ChatGPT (run 1; 11 systems x 96
stories) and TriviaQA answer correctness by Llama-7B's True/False verdicts
(judging_the_judges_thakur2024: 8 systems x 400 questions). Keep 5%, 10% and 25% of the labels
at random (the rest are unlabelled), estimate every system, and count how often each system's
95% CI covers that system's full-label mean: over all systems, the worst system, and the
systems that drew no label of their own (borrowed: their coverage, and how often a level is
claimed for them — never without a transport PASS). Beside it the naive CI around the raw judge
mean and the labels-only CI (the mean of the kept labels, clustered t).

:func:`gate_rates`: the selection gate
(:func:`~metajudge.analyses.calibration.estimate.selection_gate`) at 10% labels, drawn at random
and drawn with a response whose human score is above the dataset's median 4x as likely: the
share of draws it flags. :func:`beside_cje`: ours beside cje-eval 0.9.3 on the same draws
(``--cje``; needs the dev extra).

    PYTHONPATH=. METAJUDGE_DATA_DIR=../shared/human_labels python benchmarks/bench_estimate_coverage.py [DRAWS] [--seed N] [--cje]

``--seed``: the draws' seed (default 0). The small-label variance rule (the floor's df,
:func:`~metajudge.analyses.calibration.estimate.floor_df`) was chosen on seeds 1 and 3 and is
reported on seed 4 (docs/calibrating.md). Beside every calibrated interval its baseline
(:func:`pooled_df_interval`: a floored variance with the pooled df, the rule before
``floor_df``) on the same draws, and the mean width's change against it (``widening``).

Default 500 draws per fraction; tests/analyses/test_estimate_coverage.py runs a reduced version.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.analyses.calibration import estimate as est
from metajudge.analyses.calibration.estimate import Settings, estimate_systems, level_claims
from metajudge.data.source import DataSource
from metajudge.runs.calibrate_estimate import estimate_rows
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.stats import clustered as cl

DATASETS = {
    "summeval_coherence_4omini": (
        "conformal_judge_sheng2025",
        "shipped:sheng.4omini_coherence",
        "coherence",
    ),
    "summeval_consistency_4omini": (
        "conformal_judge_sheng2025",
        "shipped:sheng.4omini_consistency",
        "consistency",
    ),
    "summeval_relevance_qwen": (
        "conformal_judge_sheng2025",
        "shipped:sheng.qwen_relevance",
        "relevance",
    ),
    "hanna_coherence_chatgpt": ("hanna", "shipped:hanna.chatgpt_avg_run1", "coherence"),
    "triviaqa_llama7b": ("judging_the_judges_thakur2024", "shipped:Llama-7B", None),
}
FRACTIONS = (0.05, 0.10, 0.25)


def full_rows(name: str) -> Any:
    dataset, scores, dim = DATASETS[name]
    src = DataSource(dataset=dataset, scores=(scores,), dimension=dim, ids=IdPolicy())
    rows, _ = estimate_rows(src)
    return rows.take(rows.labelled)


def _labels_only(rows: Any, system: str, alpha: float) -> tuple[float, float] | None:
    r = rows.of(system)
    r = r.take(r.labelled)
    if len(set(r.cluster.tolist())) < 2:
        return None
    m, se, g = cl.clustered_mean(r.label, r.cluster)
    return cl.t_interval(m, se, g - 1.0, alpha)


def simulate(rows: Any, fraction: float, draws: int, *, seed: int = 0, folds: int = 40) -> dict:
    """Coverage of each method's CIs over ``draws`` random keeps of ``fraction`` of the labels."""
    target = {s: float(rows.of(s).label.mean()) for s in rows.systems}
    hit = {"calibrated": 0, "pooled_df": 0, "naive": 0, "labels_only": 0, "borrowed": 0}
    width = dict.fromkeys(hit, 0.0)
    n = dict.fromkeys(hit, 0)
    per_system = dict.fromkeys(rows.systems, 0)
    claimed = 0
    rng = np.random.default_rng([seed, int(fraction * 1000)])
    k = max(4, round(fraction * len(rows)))
    for d in range(draws):
        keep = np.zeros(len(rows), bool)
        keep[rng.choice(len(rows), size=k, replace=False)] = True
        part = replace(rows, label=np.where(keep, rows.label, np.nan))
        cf, systems, fits = estimate_systems(part, Settings(seed=d, folds=folds))
        level_claims(systems, [])  # no probes: no transport audit
        for s in systems:
            t = target[s["system"]]
            cis = {
                "calibrated": (s["lo"], s["hi"]),
                "pooled_df": pooled_df_interval(s, fits[s["system"]][1], cf, rows.scale),
                "naive": (s["judge_mean"]["lo"], s["judge_mean"]["hi"]),
            }
            if s["route"] == "borrowed":
                cis["borrowed"] = (s["lo"], s["hi"])
                claimed += s["level_claim"] == "ok"
            lo_only = _labels_only(part, s["system"], 0.05)
            if lo_only is not None:
                cis["labels_only"] = lo_only
            for m, (lo, hi) in cis.items():
                hit[m] += lo <= t <= hi
                width[m] += hi - lo
                n[m] += 1
            per_system[s["system"]] += s["lo"] <= t <= s["hi"]
    return {
        "fraction": fraction,
        "labels": k,
        "draws": draws,
        **{
            m: {
                "coverage": hit[m] / n[m] if n[m] else None,
                "mean_width": width[m] / n[m] if n[m] else None,
                "cis": n[m],
            }
            for m in hit
        },
        "widening": width["calibrated"] / width["pooled_df"] - 1.0,
        "borrowed_level_claims": claimed,
        "min_system_coverage": min(per_system.values()) / draws,
        "system_coverage": {s: h / draws for s, h in per_system.items()},
        "seed": seed,
    }


def pooled_df_interval(
    s: dict[str, Any], fit: Any, cf: Any, scale: tuple[float, float]
) -> tuple[float, float]:
    """The baseline a width change is measured against: system ``s``'s interval (the same
    value, sampling variance and calibration jackknife) with a floored sampling variance taking
    the pooled df, all labelled clusters − 1, in place of
    :func:`~metajudge.analyses.calibration.estimate.floor_df`'s (the rule before it)."""
    var_s = s["se_sampling"] ** 2
    floored = fit.var_floor > 0 and math.isclose(var_s, fit.var_floor, rel_tol=1e-9)
    df_s = cf.n_clusters - 1.0 if floored else fit.df_sampling
    ci = est._interval(s["value"], var_s, df_s, fit.jack, cf.k, 0.05, scale)
    return ci["lo"], ci["hi"]


def beside_cje(rows: Any, fraction: float, draws: int, *, seed: int = 0) -> dict[str, Any]:
    """Ours and cje-eval 0.9.3 (a test-time cross-check, never imported by the product) on the
    same random keeps of ``fraction`` of the labels: coverage and mean width of every system's
    CI (cje-eval on labels and judge scores rescaled to [0, 1], its widths scaled back)."""
    import logging

    from bench_estimate_cje_coverage import cje

    lo_y, hi_y = rows.scale
    span = hi_y - lo_y
    j0, j1 = float(rows.judge.min()), float(rows.judge.max())
    target = {s: float(rows.of(s).label.mean()) for s in rows.systems}
    rng = np.random.default_rng([seed, int(fraction * 1000)])  # simulate()'s keeps
    k = max(4, round(fraction * len(rows)))
    got = {m: {"hit": 0, "width": 0.0, "n": 0, "undefined": 0} for m in ("ours", "cje")}
    logging.disable(logging.WARNING)
    for d in range(draws):
        keep = np.zeros(len(rows), bool)
        keep[rng.choice(len(rows), size=k, replace=False)] = True
        part = replace(rows, label=np.where(keep, rows.label, np.nan))
        _, systems, _ = estimate_systems(part, Settings(seed=d))
        cis = {"ours": {s["system"]: (s["lo"], s["hi"]) for s in systems}}
        data: dict[str, list] = {}
        for s, c, j, y in zip(part.system, part.cluster, part.judge, part.label, strict=True):
            data.setdefault(str(s), []).append(
                {
                    "prompt_id": str(c),
                    "judge_score": (float(j) - j0) / (j1 - j0),
                    "oracle_label": None if np.isnan(y) else (float(y) - lo_y) / span,
                }
            )
        cis["cje"] = {p: (lo_y + a * span, lo_y + b * span) for p, (a, b) in cje(data).items()}
        for m, per in cis.items():
            for p, (a, b) in per.items():
                got[m]["n"] += 1
                if not (np.isfinite(a) and np.isfinite(b)):  # no CI: counted, not covering
                    got[m]["undefined"] += 1
                    continue
                got[m]["hit"] += a <= target[p] <= b
                got[m]["width"] += b - a
    logging.disable(logging.NOTSET)
    return {
        m: {
            "coverage": g["hit"] / g["n"],
            "mean_width": g["width"] / max(g["n"] - g["undefined"], 1),
            "undefined": g["undefined"],
        }
        for m, g in got.items()
    } | {"fraction": fraction, "draws": draws}


def gate_rates(
    rows: Any, draws: int, *, fraction: float = 0.10, odds: float = 4.0, seed: int = 0
) -> dict[str, float]:
    """The share of draws the selection gate flags: labels at random, and labels drawn with a
    response above the median human score ``odds`` times as likely (module docstring)."""
    from metajudge.analyses.calibration.estimate import selection_gate

    rng = np.random.default_rng([seed, 63])
    y = rows.label
    w = np.where(y > np.median(y), odds, 1.0)
    k = round(fraction * len(rows))
    flags = {"uniform": 0, "outcome": 0}
    for _ in range(draws):
        for m, p in (("uniform", None), ("outcome", w / w.sum())):
            keep = np.zeros(len(rows), bool)
            keep[rng.choice(len(rows), size=k, replace=False, p=p)] = True
            part = replace(rows, label=np.where(keep, y, np.nan))
            flags[m] += selection_gate(part)["flagged"]
    return {m: f / draws for m, f in flags.items()} | {"draws": draws, "fraction": fraction}


def main(draws: int = 500, fractions: tuple[float, ...] = FRACTIONS, *, seed: int = 0) -> dict:
    out = {}
    for name in DATASETS:
        rows = full_rows(name)
        out[name] = {
            "coverage": [simulate(rows, f, draws, seed=seed) for f in fractions],
            "gate": gate_rates(rows, draws, seed=seed),
        }
    return out


def table(res: dict) -> str:
    lines = [
        (
            "| Dataset | Labels kept | Calibrated: coverage (width) | Worst system | Pooled df: "
            "coverage (width) | Width change | Borrowed: coverage (CIs) | Naive judge mean | "
            "Labels only |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r_ in res.items():
        for r in r_["coverage"]:
            cell = {
                m: f"{r[m]['coverage']:.3f} ({r[m]['mean_width']:.3f})"
                for m in ("calibrated", "pooled_df", "naive", "labels_only")
            }
            b = r["borrowed"]
            bor = "—"
            if b["cis"]:
                bor = (
                    f"{b['coverage']:.3f} ({b['cis']}; level claimed {r['borrowed_level_claims']})"
                )
            lines.append(
                f"| {name} | {r['fraction']:.0%} ({r['labels']}) | {cell['calibrated']} | "
                f"{r['min_system_coverage']:.3f} | {cell['pooled_df']} | {r['widening']:+.1%} | "
                f"{bor} | {cell['naive']} | "
                f"{cell['labels_only']} |"
            )
    lines += ["", "| Dataset | Gate flags: random labels | labels chosen by outcome (4x) |"]
    lines += ["|---|---:|---:|"]
    for name, r_ in res.items():
        g = r_["gate"]
        lines.append(f"| {name} | {g['uniform']:.3f} | {g['outcome']:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 500
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 0
    if "--cje" in sys.argv:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        for name in DATASETS:
            rows = full_rows(name)
            for f in (0.05, 0.10):
                r = beside_cje(rows, f, n, seed=seed)
                print(
                    f"{name} {f:.0%}: ours {r['ours']['coverage']:.3f} "
                    f"({r['ours']['mean_width']:.3f}), cje-eval {r['cje']['coverage']:.3f} "
                    f"({r['cje']['mean_width']:.3f}; {r['cje']['undefined']} CIs undefined, "
                    f"counted as not covering), {n} draws",
                    flush=True,
                )
        sys.exit(0)
    res = main(n, seed=seed)
    print(table(res))
    print(json.dumps(res, indent=1))
