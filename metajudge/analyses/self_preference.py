"""The self-preference check: does a judge accept the answers of its own model family more often
than the humans do on the same answers, beyond how much it over-accepts everyone else's?

For a binary verdict (``positive`` = accepted) and the responses of the family's systems
(``own``): the judge's acceptance rate minus the human rate on the same responses (its
*over-acceptance* of its own family); the same on every other system's responses; and the
difference of the two (the self-preference proper: a judge that is lenient with everyone is not
thereby self-preferring). 95% percentile CIs resample *inputs* (every response to an input moves
together, so the two groups are paired by question; :func:`~metajudge.stats.bootstrap.resample`),
seeded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from metajudge.errors import InputError
from metajudge.results import Result


@dataclass
class SelfPreference(Result):
    judge: str
    family: list[str]
    n_own: int
    n_other: int
    judge_rate_own: float
    human_rate_own: float
    over_acceptance_own: float
    over_acceptance_own_ci: tuple[float, float]
    judge_rate_other: float
    human_rate_other: float
    over_acceptance_other: float
    over_acceptance_other_ci: tuple[float, float]
    self_preference: float  # own minus other over-acceptance
    self_preference_ci: tuple[float, float]
    n_boot: int
    seed: int
    dropped: int  # responses without a human or a judge verdict

    def sentence(self) -> str:
        lo, hi = self.self_preference_ci
        olo, ohi = self.over_acceptance_own_ci
        verdict = "self-preference" if lo > 0 else "no evidence of self-preference"
        return (
            f"{self.judge} accepts {self.judge_rate_own:.3f} of {', '.join(self.family)}'s "
            f"answers where the humans accept {self.human_rate_own:.3f} "
            f"({self.over_acceptance_own:+.3f} [{olo:+.3f}, {ohi:+.3f}]), and {self.over_acceptance_other:+.3f} over the "
            f"humans on the other systems: difference {self.self_preference:+.3f} "
            f"[{lo:+.3f}, {hi:+.3f}] — {verdict}."
        )


def self_preference(
    gold: Sequence[str | None],
    judge: Sequence[str | None],
    systems: Sequence[str],
    groups: Sequence[str],
    family: Sequence[str],
    *,
    judge_name: str = "judge",
    positive: str = "True",
    n_boot: int = 2000,
    seed: int = 0,
) -> SelfPreference:
    """:class:`SelfPreference` of ``judge`` on the responses of the systems in ``family``."""
    from metajudge.stats.bootstrap import resample
    from metajudge.stats.intervals import percentile_ci

    keep = [i for i in range(len(gold)) if gold[i] is not None and judge[i] is not None]
    own = np.array([systems[i] in set(family) for i in keep])
    if not own.any() or own.all():
        raise InputError(
            f"family {list(family)} must name some but not all systems with verdicts "
            f"(systems: {', '.join(sorted(set(systems)))})",
            field="--family",
        )
    h = np.array([gold[i] == positive for i in keep], dtype=float)
    j = np.array([judge[i] == positive for i in keep], dtype=float)
    W = resample(
        [groups[i] for i in keep], len(keep), n_resamples=n_boot, rng=np.random.default_rng(seed)
    )

    def over(mask: np.ndarray) -> tuple[float, float, float, np.ndarray]:
        w = W[:, mask]
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = (w @ (j[mask] - h[mask])) / w.sum(axis=1)
        return float(j[mask].mean()), float(h[mask].mean()), float((j[mask] - h[mask]).mean()), boot

    jo, ho, oo, bo = over(own)
    jx, hx, ox, bx = over(~own)
    return SelfPreference(
        judge=judge_name,
        family=list(family),
        n_own=int(own.sum()),
        n_other=int((~own).sum()),
        judge_rate_own=jo,
        human_rate_own=ho,
        over_acceptance_own=oo,
        over_acceptance_own_ci=percentile_ci(bo),
        judge_rate_other=jx,
        human_rate_other=hx,
        over_acceptance_other=ox,
        over_acceptance_other_ci=percentile_ci(bx),
        self_preference=oo - ox,
        self_preference_ci=percentile_ci(bo - bx),
        n_boot=n_boot,
        seed=seed,
        dropped=len(gold) - len(keep),
    )
