"""Drift between two runs of a judge on the same frozen anchor items, with a pass/fail gate.

On aligned data (:class:`~metajudge.metaeval.swap.SwapData` with the two runs as "backbones"):

- flip rate of the per-pair decisions (d = s(b) − s(a) → {−1, 0, 1}, tie band ε) and Cohen's κ
  on them (:mod:`metajudge.metaeval.agreement`);
- McNemar on agreement with humans (McNemar 1947; exact binomial when b + c < 25,
  :func:`~metajudge.metaeval.verdict_stats.mcnemar`): b = pairs right before and wrong after,
  c = the reverse; human ties left out, a judge tie counts as wrong;
- the mean score shift (after − before) over responses scored by both, with a percentile
  bootstrap CI over items (Efron 1979).

Gate (for CI pipelines): *fail* when the flip rate exceeds ``max_flip_rate`` or McNemar's p is
below ``alpha`` or, when ``max_shift`` is set, |shift| exceeds it with a CI that excludes 0.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from metajudge.metaeval import stats
from metajudge.metaeval.agreement import cohen_kappa, flip_rate
from metajudge.metaeval.swap import SwapData
from metajudge.metaeval.verdict_stats import mcnemar


@dataclass(frozen=True)
class DriftGate:
    """The user's thresholds."""

    max_flip_rate: float = 0.10
    alpha: float = 0.05
    max_shift: float | None = None


@dataclass
class DriftResult:
    before: str
    after: str
    n_pairs: int
    flip_rate: float
    n_decisive: int
    kappa: float
    mcnemar: dict[str, Any]
    shift: dict[str, Any]
    gate: DriftGate
    passed: bool
    reasons: list[str] = field(default_factory=list)
    #: the judge runs' summaries (calls, cache hits, tokens, time) when decide ran the judge
    runs: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()
        }

    def sentence(self) -> str:
        state = "PASS" if self.passed else "FAIL"
        why = "; ".join(self.reasons) if self.reasons else "within every threshold"
        return (
            f"Drift gate {state} ({self.after} vs {self.before} on {self.n_pairs} anchor pairs): "
            f"flip rate {self.flip_rate:.3f}, κ {self.kappa:.3f}, McNemar p {self.mcnemar['p']:.3g}, "
            f"mean shift {self.shift['value']:+.3f} [{self.shift['ci'][0]:+.3f}, {self.shift['ci'][1]:+.3f}] — {why}."
        )


def drift(
    data: SwapData,
    *,
    gate: DriftGate | None = None,
    rng: np.random.Generator,
    n_boot: int = 1000,
    eps: float = 0.0,
) -> DriftResult:
    """Compare the two runs in ``data`` (first = before, second = after); apply ``gate``."""
    gate = gate or DriftGate()
    v, s = data.view, data.scores
    d0, d1 = (stats.tie_decisions(s[k][v.pair_b] - s[k][v.pair_a], eps) for k in (0, 1))
    fr, n_dec = flip_rate(d0, d1)
    both = np.isfinite(d0) & np.isfinite(d1)
    kappa = cohen_kappa(d0[both], d1[both], labels=(-1.0, 0.0, 1.0))
    h = stats.tie_decisions(stats.annotator_mean(data.human_pair))
    m = both & np.isfinite(h) & (h != 0)
    b, c, p, how = mcnemar(d0[m] == h[m], d1[m] == h[m])
    diff = s[1] - s[0]
    ok = np.isfinite(diff)
    W = stats.bootstrap_weights(v.n_items, n_boot, rng)[:, v.resp_item[ok]]
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = W @ diff[ok] / W.sum(axis=1)
    lo, hi = stats.percentile_ci(reps)
    shift = {
        "value": float(diff[ok].mean()) if ok.any() else math.nan,
        "ci": [lo, hi],
        "n": int(ok.sum()),
    }
    reasons = []
    if math.isfinite(fr) and fr > gate.max_flip_rate:
        reasons.append(f"flip rate {fr:.3f} > {gate.max_flip_rate:g}")
    if p < gate.alpha:
        reasons.append(f"McNemar p {p:.3g} < {gate.alpha:g}")
    if gate.max_shift is not None and abs(shift["value"]) > gate.max_shift and not lo <= 0 <= hi:
        reasons.append(
            f"|mean shift| {abs(shift['value']):.3f} > {gate.max_shift:g} (CI excludes 0)"
        )
    mc = {"only_before_right": b, "only_after_right": c, "p": p, "method": how, "n": int(m.sum())}
    return DriftResult(
        data.backbones[0],
        data.backbones[1],
        int(both.sum()),
        fr,
        n_dec,
        kappa,
        mc,
        shift,
        gate,
        not reasons,
        reasons,
    )
