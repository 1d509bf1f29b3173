"""Pairwise decisions: the one decision type, the tie band, pairwise accuracy, position consistency.

**The decision type.** A decision on a pair (a, b) is a :class:`Pref`: ``A = −1`` (a better),
``TIE = 0``, ``B = +1`` (b better) — the sign convention of every human pair label in metajudge
(positive = b better). In arrays a decision is a float in {−1, 0, 1} and NaN = no decision
(an unparsed reply, a missing score). :func:`to_pref` reads every spelling metajudge meets —
``"A>B"``/``"B>A"``/``"A=B"`` (released verdicts), ``"A"``/``"B"``/``"tie"`` and ``"a"``/``"b"``
(always in the pair's *own* orientation: A = a), numbers (their sign). Each file format's words
are one table of :data:`SPELLINGS`, read by :func:`to_pref` at the reader and written back by
:func:`spell` where a user reads them; :func:`unswap` maps a decision on the swapped
presentation back; :func:`tie_decisions` turns score differences into decisions.

**The tie band.** A difference d = m(b) − m(a) becomes 0 when |d| <= ε (a tie), else the sign of
d. This is the ``sign`` normalisation of MT-RAIG (Section 4.4) and the tie calibration of Deutsch
et al. (2023, "Ties Matter"). NaN stays NaN.

**Pairwise accuracy** (:func:`pairwise_accuracy`) against the sign of the human label, under a
named tie policy (:data:`TIE_POLICIES`):

- ``three_way`` — a tie is a class: every pair counts, correct iff decision == sign(human), so a
  judge tie is right only on a human tie (PandaLM's accuracy; the meta-evaluation's ``acc_ties``);
- ``exclude_human_ties`` — pairs the humans tie are dropped; a judge tie counts as wrong
  (LLMBar / JudgeBench style; the meta-evaluation's ``acc_no_ties``);
- ``half_credit`` — human ties dropped; a judge tie earns ½ (AlpacaEval's win-rate convention).

Pairs without a human preference (NaN) are left out; a pair without a judge decision counts as
wrong (``unjudged="wrong"``, counted) or is left out (``unjudged="drop"``).

**Verdict protocols** (:data:`ORDER_PROTOCOLS`, :func:`protocol_correct`): whether the decisions
of one pair judged in one or two presentation orders (each in the pair's own orientation) count
as correct — ``double_game`` (JudgeBench, Tan et al. 2024, ``utils/metrics.py``: +1 per decision
equal to the label, −1 per decision equal to the opposite, correct if the sum > 0), ``single``
(the first order's decision) and ``both_agree`` (two orders, both equal to the label).

**Position consistency** (:func:`position_consistency`; Zheng et al. 2023, MT-Bench §3.3): the
share of pairs judged in both orders whose two decisions (in the pair's own orientation) agree,
tie = tie, a pair with an unparsed decision counting as inconsistent (:data:`CONSISTENCY_RULE`);
and :func:`p_first_wins`, the share of decisive decisions that prefer the response shown first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray


class Pref(IntEnum):
    """A decision on a pair: ``A`` (a better, −1), ``TIE`` (0), ``B`` (b better, +1)."""

    A = -1
    TIE = 0
    B = 1

    def flip(self) -> Pref:
        """The decision seen with the two responses swapped."""
        return Pref(-self.value)


#: The file spellings of a decision, one table per format — the one place a spelling meets
#: :class:`Pref`. ``released``: JudgeBench / Arena-Hard / verdict tables (``A>B``);
#: ``positional``: the pairwise judge's answer (A = the response shown first); ``side``: a
#: record's sides; ``pandalm``: PandaLM's released outputs (``1`` = a better, ``2`` = b better).
SPELLINGS: dict[str, dict[Pref, str]] = {
    "released": {Pref.A: "A>B", Pref.B: "B>A", Pref.TIE: "A=B"},
    "positional": {Pref.A: "A", Pref.B: "B", Pref.TIE: "tie"},
    "side": {Pref.A: "a", Pref.B: "b", Pref.TIE: "tie"},
    "pandalm": {Pref.A: "1", Pref.B: "2", Pref.TIE: "0"},
}
#: other words a format's readers accept for a decision (``None``: no decision)
_ALIASES: dict[str, dict[str, Pref | None]] = {
    "released": {"tie": Pref.TIE, "none": None, "": None},
    "pandalm": {"tie": Pref.TIE},
}
_ANY_TEXT = ("released", "positional", "side")
_READ: dict[str, dict[str, Pref | None]] = {
    fmt: {**{v.lower(): p for p, v in table.items()}, **_ALIASES.get(fmt, {})}
    for fmt, table in SPELLINGS.items()
}
_READ_ANY: dict[str, Pref | None] = {
    k: v for f in _ANY_TEXT for k, v in _READ[f].items() if v is not None
}


def to_pref(x: Any, fmt: str | None = None) -> Pref | None:
    """The :class:`Pref` of ``x`` (module docstring); ``None`` for ``None`` and NaN.

    ``fmt`` names a format of :data:`SPELLINGS` whose words alone are read (with its aliases,
    e.g. ``"none"`` in ``released``); without it every text spelling but PandaLM's is read, and
    a number by its sign. A word no format knows raises ``ValueError``.

    >>> to_pref("A>B"), to_pref("b"), to_pref("tie"), to_pref(-0.3), to_pref(None)
    (<Pref.A: -1>, <Pref.B: 1>, <Pref.TIE: 0>, <Pref.A: -1>, None)
    >>> to_pref("2", "pandalm"), to_pref("none", "released")
    (<Pref.B: 1>, None)
    """
    if x is None:
        return None
    if isinstance(x, Pref):
        return x
    if isinstance(x, str):
        table = _READ_ANY if fmt is None else _READ[fmt]
        key = x.strip().lower()
        if key not in table:
            raise ValueError(f"not a pairwise decision: {x!r}")
        return table[key]
    if fmt is not None:
        raise ValueError(f"not a {fmt} decision: {x!r}")
    v = float(x)
    if math.isnan(v):
        return None
    return Pref(int(np.sign(v)))


def spell(p: Pref | None, fmt: str) -> str | None:
    """``p`` in the words of format ``fmt`` (:data:`SPELLINGS`); ``None`` stays ``None``.

    >>> spell(Pref.B, "released"), spell(Pref.TIE, "positional"), spell(None, "side")
    ('B>A', 'tie', None)
    """
    return None if p is None else SPELLINGS[fmt][Pref(p)]


def unswap(p: Pref | None, order: str) -> Pref | None:
    """A decision given with the pair shown in ``order`` (``"ab"``: a first, ``"ba"``: b first),
    in the pair's own orientation: the swapped order is flipped back.

    >>> unswap(Pref.A, "ba"), unswap(Pref.B, "ab"), unswap(None, "ba")
    (<Pref.B: 1>, <Pref.B: 1>, None)
    """
    if order not in ("ab", "ba"):
        raise ValueError(f"order must be 'ab' or 'ba', got {order!r}")
    if p is None or order == "ab":
        return p
    return p.flip()


def pref_array(xs: Sequence[Any]) -> NDArray[np.float64]:
    """Decisions as floats {−1, 0, 1}, NaN where :func:`to_pref` gives ``None``.

    >>> pref_array(["a", "tie", None, "B>A"]).tolist()
    [-1.0, 0.0, nan, 1.0]
    """
    out = np.full(len(xs), np.nan)
    for i, x in enumerate(xs):
        p = to_pref(x)
        if p is not None:
            out[i] = float(p)
    return out


def tie_decisions(d: ArrayLike, epsilon: float | ArrayLike = 0.0) -> NDArray[np.float64]:
    """Decisions {−1, 0, 1} of differences ``d`` with tie band ``|d| <= epsilon``; NaN stays NaN.

    ``epsilon`` may be a scalar or one band per entry.

    >>> tie_decisions([0.3, -2.0, 0.0, 0.05, float("nan")], 0.1).tolist()
    [1.0, -1.0, 0.0, 0.0, nan]
    """
    a = np.asarray(d, dtype=float)
    eps = np.asarray(epsilon, dtype=float)
    with np.errstate(invalid="ignore"):
        out = np.where(np.abs(a) <= eps, 0.0, np.sign(a))
    return np.where(np.isnan(a), np.nan, out)


# ---------------------------------------------------------------------------------------------
# Pairwise accuracy

TiePolicy = Literal["three_way", "exclude_human_ties", "half_credit"]
TIE_POLICIES: tuple[str, ...] = ("exclude_human_ties", "three_way", "half_credit")
Unjudged = Literal["wrong", "drop"]


@dataclass(frozen=True)
class AccuracyTally:
    """A pairwise accuracy: ``value`` = credit / n over the ``n`` pairs scored, ``unjudged`` of
    them (counted wrong) or beside them (dropped) without a judge decision."""

    value: float
    n: int
    unjudged: int
    policy: str


def pair_credit(
    human: ArrayLike,
    judge: ArrayLike,
    *,
    policy: TiePolicy = "three_way",
    epsilon: float | ArrayLike = 0.0,
    unjudged: Unjudged = "wrong",
) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_]]:
    """Per pair: the credit (1 right, ½ a judge tie under ``half_credit``, 0 wrong), whether the
    pair is scored under ``policy`` / ``unjudged`` (module docstring) and whether it has no judge
    decision. The per-pair form of :func:`accuracy_tally`, for resampling the pairs.

    >>> c, keep, _ = pair_credit([1, 1, 0], [1, 0, -1], policy="half_credit")
    >>> c.tolist(), keep.tolist()
    ([1.0, 0.5, 0.0], [True, True, False])
    """
    if policy not in TIE_POLICIES:
        raise ValueError(f"unknown tie policy {policy!r}; choose one of {', '.join(TIE_POLICIES)}")
    dec = tie_decisions(np.asarray(judge, dtype=float).ravel(), epsilon)
    hs = np.sign(np.asarray(human, dtype=float).ravel())
    if dec.shape != hs.shape:
        raise ValueError(f"human and judge differ in length: {hs.size} vs {dec.size}")
    keep = ~np.isnan(hs)
    if policy != "three_way":
        keep &= hs != 0
    missing = keep & np.isnan(dec)
    if unjudged == "drop":
        keep &= ~missing
    credit = (dec == hs).astype(float)
    if policy == "half_credit":
        credit[(dec == 0) & (hs != 0)] = 0.5  # a judge tie on a pair the humans did not tie
    return credit, keep, missing


def accuracy_tally(
    human: ArrayLike,
    judge: ArrayLike,
    *,
    policy: TiePolicy = "three_way",
    epsilon: float | ArrayLike = 0.0,
    unjudged: Unjudged = "wrong",
) -> AccuracyTally:
    """Pairwise accuracy of ``judge`` against ``human`` under ``policy`` (module docstring).

    ``human``: labels (positive = b better; their sign is used); ``judge``: score differences
    m(b) − m(a) (decided with the tie band ``epsilon``) or decisions (unchanged at
    ``epsilon = 0``). The truth comes first, as everywhere in :mod:`metajudge.stats`.

    >>> t = accuracy_tally([1, -1, 0, 2, 1], [1, 1, 0, 0, np.nan], policy="half_credit")
    >>> t.value, t.n, t.unjudged
    (0.375, 4, 1)
    """
    credit, keep, missing = pair_credit(
        human, judge, policy=policy, epsilon=epsilon, unjudged=unjudged
    )
    n = int(keep.sum())
    value = float(credit[keep].mean()) if n else math.nan
    return AccuracyTally(value, n, int(missing.sum()), policy)


def pairwise_accuracy(
    human: ArrayLike,
    judge: ArrayLike,
    policy: TiePolicy | None = None,
    *,
    epsilon: float | ArrayLike = 0.0,
    unjudged: Unjudged = "wrong",
    ties: bool | None = None,
) -> float:
    """The value of :func:`accuracy_tally`; ``nan`` when no pair is left.

    ``ties`` is the old spelling of the policy (``True``: ``three_way``, ``False``:
    ``exclude_human_ties``), kept for one release.

    >>> pairwise_accuracy([1, -2, 0, -1], [0.5, -0.2, 0.0, 0.3])
    0.75
    >>> pairwise_accuracy([1, -2, 0, -1], [0.5, -0.2, 0.0, 0.3], "exclude_human_ties")
    0.6666666666666666
    """
    if policy is None:
        policy = "exclude_human_ties" if ties is False else "three_way"
    return accuracy_tally(human, judge, policy=policy, epsilon=epsilon, unjudged=unjudged).value


# ---------------------------------------------------------------------------------------------
# Verdicts in one or two presentation orders

OrderProtocol = Literal["double_game", "single", "both_agree"]
ORDER_PROTOCOLS: tuple[str, ...] = ("double_game", "single", "both_agree")


def protocol_correct(label: Pref, orders: Sequence[Pref | None], protocol: OrderProtocol) -> bool:
    """Whether decisions ``orders`` (first: original order) count as correct (module docstring).

    >>> protocol_correct(Pref.A, (Pref.A, Pref.TIE), "double_game")
    True
    >>> protocol_correct(Pref.A, (Pref.A, Pref.TIE), "both_agree")
    False
    """
    if protocol == "single":
        return orders[0] == label
    if protocol == "both_agree":
        return len(orders) == 2 and all(d == label for d in orders)
    if protocol == "double_game":
        opp = label.flip()
        return sum((d == label) - (d == opp) for d in orders) > 0
    raise ValueError(f"unknown protocol {protocol!r} (known: {', '.join(ORDER_PROTOCOLS)})")


#: the one rule for an unparsed decision in position consistency, as outputs state it
CONSISTENCY_RULE = "a pair with an unparsed decision in either order counts as inconsistent"


class Consistency(NamedTuple):
    """Position consistency: ``rate`` = consistent / ``n`` over the ``n`` pairs judged in both
    orders, ``unparsed`` of them with an unparsed decision (counted inconsistent)."""

    rate: float
    n: int
    unparsed: int


def position_consistency(
    first: Sequence[Pref | None], second: Sequence[Pref | None]
) -> Consistency:
    """Share of pairs whose decisions in the two orders agree (:data:`CONSISTENCY_RULE`).

    Both decisions are in the pair's own orientation (the swapped order mapped back). A pair with
    an unparsed decision (``None``) in either order counts as inconsistent and is counted in
    ``unparsed``: a judge cannot look consistent by failing to answer.

    >>> position_consistency([Pref.A, Pref.B, None], [Pref.A, Pref.A, Pref.A])
    Consistency(rate=0.3333333333333333, n=3, unparsed=1)
    """
    if len(first) != len(second):
        raise ValueError(f"{len(first)} decisions in one order, {len(second)} in the other")
    both = list(zip(first, second))
    ok = sum(x is not None and x == y for x, y in both)
    unparsed = sum(x is None or y is None for x, y in both)
    return Consistency(ok / len(both) if both else math.nan, len(both), unparsed)


def p_first_wins(positional: Sequence[Pref | None]) -> tuple[float, int]:
    """P(the response shown first wins) over the decisive decisions; ``(rate, n)``.

    ``positional``: decisions by presentation position (``Pref.A`` = the response shown first
    won); ties and unparsed decisions are not decisive. 0.5 = no position preference (Wang et al.
    2023, "Large Language Models are not Fair Evaluators").

    >>> p_first_wins([Pref.A, Pref.A, Pref.B, Pref.TIE, None])
    (0.6666666666666666, 3)
    """
    decisive = [p for p in positional if p is not None and p != Pref.TIE]
    n = len(decisive)
    return (sum(p == Pref.A for p in decisive) / n if n else math.nan), n
