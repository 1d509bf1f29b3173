"""The pairwise decision type, tie policies, verdict protocols and position consistency."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metajudge.stats.decisions import (
    TIE_POLICIES,
    Pref,
    accuracy_tally,
    p_first_wins,
    pair_credit,
    pairwise_accuracy,
    position_consistency,
    pref_array,
    protocol_correct,
    tie_decisions,
    to_pref,
)


def test_every_spelling_reads_to_one_type() -> None:
    for spellings, want in (
        (("A>B", "A", "a", -2.5, -1), Pref.A),
        (("B>A", "B", "b", 0.1, 1), Pref.B),
        (("A=B", "tie", "TIE", 0.0, 0), Pref.TIE),
    ):
        assert {to_pref(x) for x in spellings} == {want}
    assert to_pref(None) is None and to_pref(math.nan) is None
    assert Pref.A.flip() is Pref.B and Pref.TIE.flip() is Pref.TIE
    with pytest.raises(ValueError, match="not a pairwise decision"):
        to_pref("maybe")
    got = pref_array(["a", "B>A", None, "tie"])
    assert got[[0, 1, 3]].tolist() == [-1.0, 1.0, 0.0] and math.isnan(got[2])
    # score differences: the tie band gives the same type as floats
    assert tie_decisions([0.2, -0.05, 0.05], 0.1).tolist() == [1.0, 0.0, 0.0]


def test_tie_policies_by_hand() -> None:
    judge = [1.0, 1.0, 0.0, 0.0, -1.0, math.nan]
    human = [1.0, -3.0, 0.0, 2.0, 0.0, 1.0]
    want = {
        # all six: right on 0 (b=b) and 2 (tie=tie); the NaN judge counts wrong
        "three_way": (2 / 6, 6),
        # human ties (2, 4) out: pairs 0, 1, 3, 5 -> right on 0
        "exclude_human_ties": (1 / 4, 4),
        # as above, the judge tie on 3 earns a half
        "half_credit": (1.5 / 4, 4),
    }
    assert set(want) == set(TIE_POLICIES)
    for policy, (value, n) in want.items():
        t = accuracy_tally(human, judge, policy=policy)  # type: ignore[arg-type]
        assert (t.value, t.n, t.unjudged) == (pytest.approx(value), n, 1)
        assert pairwise_accuracy(human, judge, policy) == pytest.approx(value)  # type: ignore[arg-type]
    dropped = accuracy_tally(human, judge, policy="exclude_human_ties", unjudged="drop")
    assert (dropped.value, dropped.n, dropped.unjudged) == (pytest.approx(1 / 3), 3, 1)
    # a pair without a human preference is never scored
    assert accuracy_tally(human=[1.0, math.nan], judge=[1.0, 1.0]).n == 1
    # the old spelling of the policy
    assert pairwise_accuracy(human, judge, ties=False) == pytest.approx(1 / 4)
    with pytest.raises(ValueError, match="tie policy"):
        accuracy_tally(human, judge, policy="lenient")  # type: ignore[arg-type]


def test_pair_credit_is_the_tally_per_pair() -> None:
    rng = np.random.default_rng(0)
    d = rng.normal(size=200)
    h = rng.integers(-1, 2, size=200).astype(float)
    for policy in TIE_POLICIES:
        c, keep, _ = pair_credit(human=h, judge=d, policy=policy, epsilon=0.3)  # type: ignore[arg-type]
        t = accuracy_tally(human=h, judge=d, policy=policy, epsilon=0.3)  # type: ignore[arg-type]
        assert t.value == c[keep].mean() and t.n == keep.sum()


def test_protocols_over_two_orders() -> None:
    a, b, tie = Pref.A, Pref.B, Pref.TIE
    cases = [
        ((a, a), (True, True, True)),
        ((a, b), (False, True, False)),  # a position flip sums to 0
        ((tie, a), (True, False, False)),
        ((None, None), (False, False, False)),
        ((a,), (True, True, False)),  # one order only
    ]
    for orders, want in cases:
        got = tuple(protocol_correct(a, orders, p) for p in ("double_game", "single", "both_agree"))
        assert got == want, orders
    with pytest.raises(ValueError, match="protocol"):
        protocol_correct(a, (a,), "best_of_three")  # type: ignore[arg-type]


def test_position_consistency_and_first_wins() -> None:
    first = [Pref.A, Pref.B, Pref.TIE, None, Pref.A]
    second = [Pref.A, Pref.A, Pref.TIE, Pref.B, None]
    # the one rule (CONSISTENCY_RULE): an unparsed decision counts as inconsistent, and is counted
    assert position_consistency(first, second) == (2 / 5, 5, 2)
    assert position_consistency([None], [None]) == (0.0, 1, 1)
    assert math.isnan(position_consistency([], []).rate)
    with pytest.raises(ValueError):
        position_consistency([Pref.A], [])
    assert p_first_wins([Pref.A, Pref.B, Pref.TIE, None, Pref.A]) == (2 / 3, 3)
    assert math.isnan(p_first_wins([Pref.TIE])[0])


def test_decision_kappa_is_the_same_for_any_pair_orientation() -> None:
    """κ on decisions counts each pair in both orientations (issue 25 item 8)."""
    from metajudge.stats.agreement import cohen_kappa, decision_kappa

    rng = np.random.default_rng(3)
    x = rng.choice([-1.0, 0.0, 1.0], size=300, p=[0.2, 0.2, 0.6])
    y = np.where(rng.random(300) < 0.7, x, rng.choice([-1.0, 0.0, 1.0], size=300))
    flip = np.where(rng.random(300) < 0.5, -1.0, 1.0)
    assert decision_kappa(x * flip, y * flip) == pytest.approx(decision_kappa(x, y), abs=1e-12)
    plain = (cohen_kappa(x, y), cohen_kappa(x * flip, y * flip))
    assert abs(plain[0] - plain[1]) > 0.01  # the one-orientation κ moves
    both = np.concatenate([x, -x]), np.concatenate([y, -y])
    assert decision_kappa(x, y, weights="quadratic") == pytest.approx(
        cohen_kappa(*both, weights="quadratic"), abs=1e-12
    )
