"""Accuracy of pairwise verdicts under named protocols, with CIs and paired tests.

Protocols (:data:`PROTOCOLS`), per pair, decisions in the original orientation
(:mod:`metajudge.scores.released_verdicts`):

- ``double_game`` — JudgeBench (Tan et al. 2024, ``utils/metrics.py``): +1 for each decision equal
  to the label, −1 for each equal to the opposite, 0 otherwise (tie, none); correct if the sum > 0.
  With one order it is the single-order rule;
- ``single`` — the first (original-order) decision equals the label;
- ``both_agree`` — every order was run and every decision equals the label.

Accuracy = correct / pairs (micro average; a pair with a none decision counts as judged and not
correct — never dropped). Also: position consistency (pairs judged in both orders whose two
decisions agree; :data:`~metajudge.stats.decisions.CONSISTENCY_RULE`), P(first wins) (decisive
decisions that prefer the response shown first), percentile bootstrap CIs over pairs (Efron 1979;
seeded ``numpy.random.Generator``) and McNemar's test between two judges on the same pairs
(McNemar 1947; the exact binomial form when the discordant count b + c < 25, else χ² with
continuity correction, Edwards 1948).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from metajudge.results import Result
from metajudge.scores.released_verdicts import JUDGEBENCH_CATEGORIES, JudgeVerdicts, PairVerdicts
from metajudge.stats.bootstrap import bootstrap_mean_ci
from metajudge.stats.decisions import (
    CONSISTENCY_RULE,
    ORDER_PROTOCOLS,
    OrderProtocol,
    Pref,
    p_first_wins,
    position_consistency,
    protocol_correct,
)

PROTOCOLS: tuple[str, ...] = ORDER_PROTOCOLS


def pair_correct(row: PairVerdicts, protocol: OrderProtocol) -> bool:
    """Whether ``row`` counts as correct under ``protocol``
    (:func:`metajudge.stats.decisions.protocol_correct`).

    >>> r = PairVerdicts("p", "math", Pref.A, (Pref.A, Pref.TIE))
    >>> pair_correct(r, "double_game"), pair_correct(r, "single"), pair_correct(r, "both_agree")
    (True, True, False)
    """
    if row.label is None:
        raise ValueError(f"pair {row.pair_id}: no label")
    return protocol_correct(row.label, row.orders, protocol)


def order_pairs(rows: Sequence[PairVerdicts]) -> tuple[list[Pref | None], list[Pref | None]]:
    """The two decisions of every pair judged in both orders (original orientation)."""
    two = [r for r in rows if len(r.orders) == 2]
    return [r.orders[0] for r in two], [r.orders[1] for r in two]


def first_wins(rows: Sequence[PairVerdicts]) -> tuple[float, int]:
    """P(the response shown first wins) over decisive decisions; ``(rate, n)``.

    Order 1 shows A first (a win is ``Pref.A``); order 2 shows B first (flipped back: ``Pref.B``):
    :func:`metajudge.stats.decisions.p_first_wins` on the decisions by position."""
    positional = []
    for r in rows:
        for k, d in enumerate(r.orders):
            positional.append(d if d is None or k == 0 else d.flip())
    return p_first_wins(positional)


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int, float, str]:
    """McNemar's test of two judges' correctness on the same pairs: ``(b, c, p, method)``.

    ``b`` = pairs only the first judge got right, ``c`` = only the second.

    >>> mcnemar([True] * 5 + [False] * 5, [False] * 5 + [True] * 5)[:3]
    (5, 5, 1.0)
    """
    from scipy import stats

    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    nb, nc = int((x & ~y).sum()), int((~x & y).sum())
    n = nb + nc
    if n == 0:
        return nb, nc, 1.0, "exact"
    if n < 25:
        p = float(stats.binomtest(nb, n, 0.5).pvalue)
        return nb, nc, min(1.0, p), "exact binomial"
    chi2 = (abs(nb - nc) - 1) ** 2 / n
    return nb, nc, float(stats.chi2.sf(chi2, 1)), "chi2 (continuity corrected)"


@dataclass(frozen=True)
class Accuracy:
    category: str
    n: int
    accuracy: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class JudgeReport:
    judge: str
    protocol: str
    accuracies: tuple[
        Accuracy, ...
    ]  # per category (JUDGEBENCH_CATEGORIES order, then others), then overall
    position_consistency: float
    pairs_both_orders: int
    p_first_wins: float
    decisive: int
    notes: tuple[str, ...] = ()
    #: pairs judged in both orders with an unparsed decision (counted inconsistent)
    consistency_unparsed: int = 0


@dataclass(frozen=True)
class PairedTest:
    judge_a: str
    judge_b: str
    n: int
    only_a: int
    only_b: int
    p_value: float
    method: str


@dataclass(frozen=True)
class VerdictsResult(Result):
    protocol: str
    judges: tuple[JudgeReport, ...]
    tests: tuple[PairedTest, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame(
            [{"judge": j.judge, **asdict(a)} for j in self.judges for a in j.accuracies]
        )


def judge_report(
    v: JudgeVerdicts,
    protocol: OrderProtocol,
    rng: np.random.Generator,
    *,
    n_boot: int = 1000,
) -> JudgeReport:
    """Accuracy per category and overall with CIs, position consistency and P(first wins)."""
    rows = [r for r in v.rows if r.label is not None]
    correct = np.array([pair_correct(r, protocol) for r in rows], dtype=float)
    cats = [c for _, c in JUDGEBENCH_CATEGORIES if any(r.category == c for r in rows)]
    cats += sorted({r.category for r in rows} - set(cats) - {""})
    accs = []
    for cat in [*cats, "overall"]:
        m = np.array([cat == "overall" or r.category == cat for r in rows], dtype=bool)
        lo, hi = bootstrap_mean_ci(correct[m], rng, n_resamples=n_boot)
        acc = float(correct[m].mean()) if m.any() else math.nan
        accs.append(Accuracy(cat, int(m.sum()), acc, lo, hi))
    pc = position_consistency(*order_pairs(rows))
    fw, nd = first_wins(rows)
    notes = v.notes
    if len(rows) < len(v.rows):
        notes += (f"{len(v.rows) - len(rows)} pairs without a label left out",)
    return JudgeReport(v.judge, protocol, tuple(accs), pc.rate, pc.n, fw, nd, notes, pc.unparsed)


def paired_tests(
    judges: Sequence[JudgeVerdicts], protocol: OrderProtocol
) -> tuple[PairedTest, ...]:
    """McNemar between every two judges on the pairs both judged (matched by pair id)."""
    out = []
    for i in range(len(judges)):
        for j in range(i + 1, len(judges)):
            a = {r.pair_id: r for r in judges[i].rows if r.label is not None}
            b = {r.pair_id: r for r in judges[j].rows if r.label is not None}
            common = [k for k in a if k in b]
            ca = [pair_correct(a[k], protocol) for k in common]
            cb = [pair_correct(b[k], protocol) for k in common]
            nb, nc, p, method = mcnemar(ca, cb)
            out.append(PairedTest(judges[i].judge, judges[j].judge, len(common), nb, nc, p, method))
    return tuple(out)


def evaluate_verdicts(
    judges: Sequence[JudgeVerdicts],
    protocol: OrderProtocol = "double_game",
    *,
    seed: int = 0,
    n_boot: int = 1000,
) -> VerdictsResult:
    """Reports for every judge and McNemar tests between them (module docstring)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    # a fresh generator per judge: a judge's CI does not depend on the other inputs
    reports = tuple(
        judge_report(v, protocol, np.random.default_rng(seed), n_boot=n_boot) for v in judges
    )
    notes = (
        (
            f"protocol {protocol}; accuracy = correct / pairs (none decisions count as wrong); "
            f"95% percentile bootstrap CIs over pairs ({n_boot} resamples, seed {seed})"
        ),
        (
            f"position consistency: both orders give the same decision ({CONSISTENCY_RULE}); "
            "P(first wins): decisive decisions preferring the response shown first"
        ),
    )
    return VerdictsResult(protocol, reports, paired_tests(judges, protocol), notes)
