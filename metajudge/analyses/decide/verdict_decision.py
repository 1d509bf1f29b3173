"""The decision on released pairwise verdicts (JudgeBench's judge outputs, Tan et al. 2024).

Each judge's per-pair correctness under the double-game protocol
(:func:`~metajudge.analyses.verdict_accuracy.pair_correct`); judges ranked by accuracy; every judge
tested for non-inferiority against the best with a paired bootstrap over pairs
(:mod:`.noninferiority`) and McNemar (:func:`~metajudge.analyses.verdict_accuracy.mcnemar`); the
cost–accuracy frontier with McNemar as the significance test.

Prices (:data:`PRICES`, $ per 1M tokens, input / output): o1-mini at OpenAI's list price at
release (Sept 2024: $3.00 / $12.00); the reward models have no list price, so a stated proxy
of $0.02 per billion parameters per 1M input tokens (a hosted open model's price grows roughly
linearly with size; e.g. ~$0.18 for 8B, ~$0.88 for 70B at Together AI in 2024) — the parameter
count is the real information, the $ scale is an assumption. Tokens are estimated as characters/4
of what each call reads (question + both responses, once per order judged) and of the visible
judgment; o1-mini's hidden reasoning tokens are billed but not released, so its cost is a lower
bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metajudge import stats
from metajudge.analyses.decide.frontier import Frontier, JudgePoint, pareto_frontier
from metajudge.analyses.decide.noninferiority import DEFAULT_MARGIN, NonInferiority, non_inferiority
from metajudge.analyses.verdict_accuracy import mcnemar, pair_correct
from metajudge.results import Result
from metajudge.scores.released_verdicts import JudgeVerdicts
from metajudge.stats.decisions import OrderProtocol


@dataclass(frozen=True)
class Price:
    """$ per 1M input and output tokens, and where the number comes from."""

    input: float
    output: float
    basis: str


def _rm(params_b: float) -> Price:
    return Price(0.02 * params_b, 0.0, f"proxy: {params_b:g}B parameters x $0.02/B per 1M tokens")


PRICES: dict[str, Price] = {
    "o1-mini-2024-09-12": Price(3.0, 12.0, "OpenAI list price at release (Sept 2024)"),
    "Ray2333/GRM-Gemma-2B-rewardmodel-ft": _rm(2),
    "Skywork/Skywork-Reward-Gemma-2-27B": _rm(27),
    "Skywork/Skywork-Reward-Llama-3.1-8B": _rm(8),
    "internlm/internlm2-20b-reward": _rm(20),
}


def _correct(v: JudgeVerdicts, protocol: OrderProtocol) -> dict[str, bool]:
    return {r.pair_id: pair_correct(r, protocol) for r in v.rows if r.label is not None}


@dataclass
class VerdictDecision(Result):
    """Ranking, non-inferiority against the best, McNemar, frontier."""

    protocol: str
    ranking: list[dict[str, Any]]
    best: str
    against_best: list[NonInferiority]
    mcnemar: list[dict[str, Any]]
    frontier: Frontier | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "ranking": self.ranking,
            "best": self.best,
            "against_best": [n.to_dict() for n in self.against_best],
            "mcnemar": self.mcnemar,
            "frontier": self.frontier.to_dict() if self.frontier else None,
        }


def decide_verdicts(
    judges: Sequence[JudgeVerdicts],
    *,
    rng: np.random.Generator,
    protocol: OrderProtocol = "double_game",
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
    n_boot: int = 1000,
    costs: Mapping[str, float] | None = None,
) -> VerdictDecision:
    """Rank judges, test each against the best on the pairs both judged, draw the frontier."""
    corr = {v.judge: _correct(v, protocol) for v in judges}
    common = sorted(set.intersection(*(set(c) for c in corr.values())))
    C = {j: np.array([c[k] for k in common], dtype=float) for j, c in corr.items()}
    idx = stats.bootstrap_indices(len(common), n_boot, rng)
    S = {j: c[idx].mean(axis=1) for j, c in C.items()}
    acc = {j: float(c.mean()) for j, c in C.items()}
    order = sorted(acc, key=lambda j: -acc[j])
    best = order[0]
    ranking = []
    for r, j in enumerate(order, start=1):
        lo, hi = stats.percentile_ci(S[j], 1 - alpha)
        ranking.append(
            {"rank": r, "judge": j, "accuracy": acc[j], "ci": [lo, hi], "n": len(common)}
        )
    ni, mc = [], []
    for j in order[1:]:
        ni.append(
            non_inferiority(
                best,
                j,
                acc[best],
                acc[j],
                S[best],
                S[j],
                n=len(common),
                statistic=f"{protocol} accuracy",
                margin=margin,
                alpha=alpha,
            )
        )
        b, c, p, how = mcnemar(C[best].astype(bool), C[j].astype(bool))
        mc.append({"x": best, "y": j, "only_x": b, "only_y": c, "p": p, "method": how})
    fr = None
    if costs:
        pts = [
            JudgePoint(j, acc[j], costs.get(j), len(common), tuple(ranking[i]["ci"]))
            for i, j in enumerate(order)
        ]

        def better(a: JudgePoint, b: JudgePoint) -> bool:
            x, y = C[a.name].astype(bool), C[b.name].astype(bool)
            return a.agreement > b.agreement and mcnemar(x, y)[2] < alpha

        fr = pareto_frontier(
            pts,
            better,
            cost_unit="$ per 1000 pairs",
            test=f"McNemar on the same pairs, alpha {alpha}",
        )
    return VerdictDecision(protocol, ranking, best, ni, mc, fr)


def estimated_costs(
    judges: Sequence[JudgeVerdicts],
    texts: Mapping[str, tuple[int, int]],
    prices: Mapping[str, Price] = PRICES,
) -> dict[str, float]:
    """$ per 1000 pairs from ``texts[judge] = (input chars, output chars)`` over all pairs (chars/4)."""
    out = {}
    for v in judges:
        price = prices.get(v.judge)
        if price is None or v.judge not in texts:
            continue
        cin, cout = texts[v.judge]
        n = max(len(v.rows), 1)
        out[v.judge] = 1000 / n * (cin / 4 * price.input + cout / 4 * price.output) / 1e6
    return {k: (x if math.isfinite(x) else math.nan) for k, x in out.items()}
