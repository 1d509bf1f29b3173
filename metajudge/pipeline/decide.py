"""``metajudge decide`` end to end: load data, decide, write the decision report.

- :func:`run_decide` — "can Y replace X?" on a dataset with per-backbone scores
  (:func:`~metajudge.pipeline.swap.load_swap_data`), slices = the dataset's subsets.
- :func:`run_decide_verdicts` — released pairwise verdicts (JudgeBench ``outputs/*.jsonl``).
- :func:`run_frontier_table` — the frontier of a published judge table (AlpacaEval's).
- :func:`run_drift` — two runs of a judge on the same anchor items, with the gate.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.metaeval.decide.drift import DriftGate, DriftResult, drift
from metajudge.metaeval.decide.frontier import Frontier, alpaca_eval_frontier, plot_frontier
from metajudge.metaeval.decide.noninferiority import DEFAULT_MARGIN
from metajudge.metaeval.decide.swap_decision import SwapDecision, decide_swap
from metajudge.metaeval.decide.verdict_decision import (
    VerdictDecision,
    decide_verdicts,
    estimated_costs,
)
from metajudge.pipeline.swap import load_swap_data


def run_decide(
    dataset: str | None,
    metric: str,
    x: str,
    y: str,
    *,
    external: Sequence[str] = (),
    backbones: Sequence[str] = (),
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    eps: float = 0.0,
    **load: Any,
) -> SwapDecision:
    """Can backbone ``y`` replace ``x``? Scores as for ``backbone-swap`` (``external``/``backbones``)."""
    data, runs, records = load_swap_data(
        dataset, metric, external=external, backbones=backbones, seed=seed, **load
    )
    sub = {r.id: str(r.meta.get("subset", "")) for r in records}
    slices = [sub.get(i, "") for i in data.view.items]
    res = decide_swap(
        data,
        x,
        y,
        rng=np.random.default_rng(seed),
        n_boot=n_boot,
        margin=margin,
        alpha=alpha,
        eps=eps,
        slices=slices if len(set(slices)) > 1 else None,
    )
    if runs:
        res.extra["runs"] = runs
    return res


def _texts(path: Path) -> tuple[int, int]:
    """Characters each judge call reads (question + both responses, per order) and writes."""
    cin = cout = 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            js = d.get("judgments") or []
            base = (
                len(d.get("question", ""))
                + len(d.get("response_A", ""))
                + len(d.get("response_B", ""))
            )
            cin += base * max(len(js), 1)
            cout += sum(len(str((j.get("judgment") or {}).get("response", ""))) for j in js)
    return cin, cout


def run_decide_verdicts(
    paths: Sequence[str | Path],
    *,
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
) -> VerdictDecision:
    """Rank released judges, non-inferiority against the best, cost frontier (stated prices)."""
    from metajudge.metaeval.verdicts import read_judgebench_outputs

    judges = [read_judgebench_outputs(p) for p in paths]
    texts = {v.judge: _texts(Path(p)) for v, p in zip(judges, paths, strict=True)}
    costs = estimated_costs(judges, texts)
    return decide_verdicts(
        judges,
        rng=np.random.default_rng(seed),
        margin=margin,
        alpha=alpha,
        n_boot=n_boot,
        costs=costs,
    )


def run_frontier_table(
    path: str | Path | None = None, *, data_dir: str | Path | None = None, alpha: float = 0.05
) -> Frontier:
    """The cost–agreement frontier of AlpacaEval's judge leaderboard (or a table like it)."""
    return alpaca_eval_frontier(path, data_dir=data_dir, alpha=alpha)


def run_drift(
    dataset: str | None,
    metric: str,
    *,
    external: Sequence[str] = (),
    backbones: Sequence[str] = (),
    gate: DriftGate | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    eps: float = 0.0,
    **load: Any,
) -> DriftResult:
    """Drift between two score sources (before, after) on the same anchor items."""
    if len(external) + len(backbones) != 2:
        from metajudge.errors import InputError

        raise InputError("drift compares exactly two runs (before, after)", field="external")
    data, _, _ = load_swap_data(
        dataset, metric, external=external, backbones=backbones, seed=seed, **load
    )
    return drift(data, gate=gate, rng=np.random.default_rng(seed), n_boot=n_boot, eps=eps)


def write_frontier_plot(fr: Frontier, out_dir: str | Path, stem: str = "frontier") -> Path:
    return plot_frontier(fr, Path(out_dir) / f"{stem}.png")
