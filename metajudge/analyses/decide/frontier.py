"""Cost against agreement: the Pareto frontier of judges, from runs or from published tables.

A judge is *dominated* when another judge is no more expensive and **significantly** better
(the test is the caller's: McNemar on the same items for paired runs, a two-proportion z-test
for independent published rows); the *frontier* is the judges nobody dominates, in order of cost.
Judges without a cost cannot be placed; they are listed, not dropped silently.

:func:`read_alpaca_eval_leaderboard` reads AlpacaEval's judge leaderboard
(``alpaca_eval_evaluators/evaluators_leaderboard.csv`` in the data folder; tatsu-lab/alpaca_eval,
Dubois et al. 2023): Human agreement in percent, $ and seconds per 1000 examples, ``# parsed``.
Its known quirk — one row stores the agreement as a fraction — is detected (agreement < 1 while
the others are percentages) and that row is reported and left out, never used silently.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

from metajudge.errors import InputError
from metajudge.paths import data_dir_from_env
from metajudge.results import Result

ALPACA_FILE = Path("alpaca_eval_evaluators") / "evaluators_leaderboard.csv"


@dataclass(frozen=True)
class JudgePoint:
    """One judge on the cost–agreement plane (agreement in [0, 1]; cost in ``unit``)."""

    name: str
    agreement: float
    cost: float | None
    n: int
    ci: tuple[float, float] | None = None
    seconds: float | None = None


@dataclass
class Frontier(Result):
    """Judges with their dominators; the frontier in order of cost; what could not be placed."""

    cost_unit: str
    points: list[JudgePoint]
    dominated_by: dict[str, list[str]]
    frontier: list[str]
    unplaced: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    test: str = ""


def two_proportion_p(p1: float, n1: int, p2: float, n2: int) -> float:
    """Two-sided p of a two-proportion z-test with pooled variance (independent samples).

    >>> round(two_proportion_p(0.70, 2592, 0.65, 2592), 6)
    0.000122
    """
    pool = (p1 * n1 + p2 * n2) / (n1 + n2)
    se = math.sqrt(pool * (1 - pool) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    return 2 * (1 - NormalDist().cdf(abs(p1 - p2) / se))


def independent_better(a: JudgePoint, b: JudgePoint, alpha: float = 0.05) -> bool:
    """``a`` significantly better than ``b`` by :func:`two_proportion_p` at ``alpha``."""
    return (
        a.agreement > b.agreement and two_proportion_p(a.agreement, a.n, b.agreement, b.n) < alpha
    )


def pareto_frontier(
    points: Sequence[JudgePoint],
    better: Callable[[JudgePoint, JudgePoint], bool],
    *,
    cost_unit: str,
    test: str,
) -> Frontier:
    """Mark each placed judge's dominators (no more expensive and ``better``); the frontier."""
    placed = [p for p in points if p.cost is not None and math.isfinite(p.cost)]
    dom: dict[str, list[str]] = {}
    for p in placed:
        assert p.cost is not None
        dom[p.name] = [
            q.name
            for q in placed
            if q is not p and q.cost is not None and q.cost <= p.cost and better(q, p)
        ]
    front = [
        p.name for p in sorted(placed, key=lambda p: (p.cost, -p.agreement)) if not dom[p.name]
    ]
    unplaced = [p.name for p in points if p not in placed]
    notes = (
        [f"{len(unplaced)} judge(s) without a cost not placed: {', '.join(unplaced)}"]
        if unplaced
        else []
    )
    return Frontier(cost_unit, list(points), dom, front, unplaced, notes, test)


def _num(v: str) -> float | None:
    v = (v or "").strip()
    return float(v) if v else None


def read_alpaca_eval_leaderboard(
    path: str | Path | None = None, *, data_dir: str | Path | None = None
) -> tuple[list[JudgePoint], list[str]]:
    """The AlpacaEval judge leaderboard as points ($ per 1000 examples) and notes on its quirks."""
    if path is None:
        d = data_dir_from_env(data_dir)
        if d is None:
            raise InputError("set --data-dir or METAJUDGE_DATA_DIR to find the AlpacaEval table")
        path = d / ALPACA_FILE
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=p)
    points, notes = [], []
    with p.open(newline="") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            name = row.get("") or row.get("name") or f"row{line}"
            try:
                agr, price = _num(row["Human agreement"]), _num(row["Price [$/1000 examples]"])
                secs, n = _num(row["Time [seconds/1000 examples]"]), int(float(row["# parsed"]))
            except (KeyError, ValueError) as e:
                raise InputError(f"bad or missing column: {e}", path=p, line=line) from e
            if agr is None:
                notes.append(f"line {line} ({name}): no agreement, left out")
                continue
            if agr < 1.0:
                notes.append(
                    f"line {line} ({name}): Human agreement {agr:.4f} is stored as a fraction where "
                    "every other row uses percent (known quirk); left out of the frontier"
                )
                continue
            points.append(JudgePoint(name, agr / 100, price, n, None, secs))
    return points, notes


def alpaca_eval_frontier(
    path: str | Path | None = None, *, data_dir: str | Path | None = None, alpha: float = 0.05
) -> Frontier:
    """The cost–agreement frontier of AlpacaEval's published judge table (module docstring)."""
    points, notes = read_alpaca_eval_leaderboard(path, data_dir=data_dir)
    fr = pareto_frontier(
        points,
        lambda a, b: independent_better(a, b, alpha),
        cost_unit="$ per 1000 examples",
        test=f"two-proportion z-test on Human agreement with n = # parsed, alpha {alpha} "
        "(rows treated as independent samples; they share the 2.5k cross-annotations, so this is approximate)",
    )
    fr.notes = notes + fr.notes
    return fr
