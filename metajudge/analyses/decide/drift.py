"""Drift between two runs of a judge on the same frozen anchor items, with a pass/fail gate.

On aligned data (:class:`~metajudge.analyses.backbone_swap.SwapData` with the two runs as "backbones"):

- **per-response change rate**: the share of responses scored by both runs whose score moved by
  more than ``tolerance`` (|after − before| > tolerance), with a percentile bootstrap CI over
  items (Efron 1979; the responses of one item are resampled together). This is the statistic
  that sees drift in per-response scores even when every pair is a tie;
- the mean score shift (after − before) with the same bootstrap CI, and a paired test of it:
  Wilcoxon's signed-rank test (Wilcoxon 1945; ``scipy.stats.wilcoxon``, zero differences
  dropped) on the per-item mean differences (items are the independent units);
- flip rate of the per-pair decisions (d = s(b) − s(a) → {−1, 0, 1}, tie band ε; only pairs both
  runs decide), the decision change rate (ties included: a decided pair that becomes a tie
  counts) and Cohen's κ on them (:mod:`metajudge.stats.agreement`). Both are undefined (NaN,
  shown as n/a) when the runs tie every pair — e.g. a small judge that gives one score to all;
- McNemar on agreement with humans (McNemar 1947; exact binomial when b + c < 25,
  :func:`~metajudge.analyses.verdict_accuracy.mcnemar`): b = pairs right before and wrong after,
  c = the reverse; human ties left out, a judge tie counts as wrong.

Gate rule ``any-evidence`` (for CI pipelines; exit 1 on *fail*): the gate fails when any of

1. change rate > ``max_change_rate`` (point estimate; default 0.10);
2. Wilcoxon p < ``alpha`` and |mean shift| > ``max_shift`` (default 0: any significant shift);
3. flip rate > ``max_flip_rate`` (default 0.10);
4. McNemar p < ``alpha``.

A rerun of an unchanged judge (served from the cache) changes no score: change rate 0, no
shift, no flip — it passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from metajudge import stats
from metajudge.analyses.backbone_swap import SwapData
from metajudge.analyses.verdict_accuracy import mcnemar
from metajudge.engine import Resamples, resampled_row_sums
from metajudge.results import Result, finite
from metajudge.stats.agreement import cohen_kappa, decision_disagreement, flip_rate

GATE_RULE = "any-evidence"


@dataclass(frozen=True)
class DriftGate:
    """The user's thresholds (module docstring: the ``any-evidence`` rule)."""

    max_flip_rate: float = 0.10
    alpha: float = 0.05
    max_shift: float | None = None
    max_change_rate: float = 0.10
    tolerance: float = 0.0


@dataclass
class DriftResult(Result):
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
    #: per-response change rate (value, ci, n, tolerance)
    change: dict[str, Any] = field(default_factory=dict)
    #: per-pair decision change rate, ties included (value, n)
    decision_change: dict[str, Any] = field(default_factory=dict)
    rule: str = GATE_RULE

    def to_dict(self) -> dict[str, Any]:
        return finite(asdict(self))  # type: ignore[no-any-return]

    def sentence(self) -> str:
        state = "PASS" if self.passed else "FAIL"
        why = "; ".join(self.reasons) if self.reasons else "within every threshold"
        c, s = self.change, self.shift
        return (
            f"Drift gate {state} ({self.after} vs {self.before}, rule {self.rule}, "
            f"{c.get('n', 0)} responses, {self.n_pairs} pairs): "
            f"change rate {_n(c.get('value'))} {_ci(c.get('ci'))}, "
            f"mean shift {_n(s['value'], '+.3f')} {_ci(s['ci'], '+.3f')} "
            f"(Wilcoxon p {_n(s.get('p'), '.3g')}), flip rate {_n(self.flip_rate)}, "
            f"κ {_n(self.kappa)}, McNemar p {_n(self.mcnemar['p'], '.3g')} — {why}."
        )


def _n(v: Any, fmt: str = ".3f") -> str:
    return "n/a" if v is None or not math.isfinite(v) else format(v, fmt)


def _ci(ci: Any, fmt: str = ".3f") -> str:
    return "" if not ci else f"[{_n(ci[0], fmt)}, {_n(ci[1], fmt)}]"


def _item_boot(values: np.ndarray, items: np.ndarray, W: np.ndarray | Resamples) -> list[float]:
    """Percentile CI of the mean of per-response ``values`` under item bootstrap weights ``W``."""
    if values.size == 0:
        return [math.nan, math.nan]
    S = resampled_row_sums(W, items, np.stack([values, np.ones(values.size)], axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = S[:, 0] / S[:, 1]
    lo, hi = stats.percentile_ci(reps)
    return [lo, hi]


def score_change(
    data: SwapData, *, rng: np.random.Generator, n_boot: int, tolerance: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per-response change rate and mean shift (with CIs; Wilcoxon on per-item means)."""
    from scipy import stats as ss

    v, s = data.view, data.scores
    diff = s[1] - s[0]
    ok = np.isfinite(diff)
    d, items = diff[ok], v.resp_item[ok]
    W = Resamples.draw(v.n_items, n_boot, rng)  # a block at a time; values as bootstrap_weights
    changed = (np.abs(d) > tolerance).astype(float)
    n = int(ok.sum())
    change = {
        "value": float(changed.mean()) if n else math.nan,
        "ci": _item_boot(changed, items, W),
        "n": n,
        "n_changed": int(changed.sum()),
        "tolerance": tolerance,
    }
    uniq, inv = np.unique(items, return_inverse=True)
    per_item = np.bincount(inv, weights=d, minlength=uniq.size) / np.bincount(inv)
    if np.any(np.abs(per_item) > 0):
        p = float(ss.wilcoxon(per_item, zero_method="wilcox").pvalue)
    else:
        p = 1.0
    shift = {
        "value": float(d.mean()) if n else math.nan,
        "ci": _item_boot(d, items, W),
        "n": n,
        "p": p,
        "test": "Wilcoxon signed-rank on per-item mean differences",
    }
    return change, shift


def _reasons(gate: DriftGate, change: dict, shift: dict, fr: float, p_mcnemar: float) -> list[str]:
    """The ``any-evidence`` rule (module docstring)."""
    out = []
    if math.isfinite(change["value"]) and change["value"] > gate.max_change_rate:
        out.append(f"change rate {change['value']:.3f} > {gate.max_change_rate:g}")
    lim = gate.max_shift or 0.0
    if shift["p"] < gate.alpha and abs(shift["value"]) > lim:
        out.append(
            f"|mean shift| {abs(shift['value']):.3f} > {lim:g}, Wilcoxon p {shift['p']:.3g} < {gate.alpha:g}"
        )
    if math.isfinite(fr) and fr > gate.max_flip_rate:
        out.append(f"flip rate {fr:.3f} > {gate.max_flip_rate:g}")
    if p_mcnemar < gate.alpha:
        out.append(f"McNemar p {p_mcnemar:.3g} < {gate.alpha:g}")
    return out


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
    dc, n_dc = decision_disagreement(d0, d1)
    both = np.isfinite(d0) & np.isfinite(d1)
    kappa = cohen_kappa(d0[both], d1[both], labels=(-1.0, 0.0, 1.0))
    h = stats.annotator_mean(data.human_pair)
    # each run right or wrong on the pairs both decided and the humans did not tie
    c0, k0, _ = stats.pair_credit(human=h, judge=d0, policy="exclude_human_ties", unjudged="drop")
    c1, k1, _ = stats.pair_credit(human=h, judge=d1, policy="exclude_human_ties", unjudged="drop")
    m = k0 & k1
    b, c, p, how = mcnemar(c0[m] == 1, c1[m] == 1)
    change, shift = score_change(data, rng=rng, n_boot=n_boot, tolerance=gate.tolerance)
    reasons = _reasons(gate, change, shift, fr, p)
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
        change=change,
        decision_change={"value": dc, "n": n_dc},
    )
