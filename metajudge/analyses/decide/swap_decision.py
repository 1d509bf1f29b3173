"""The backbone decision on aligned swap data (:class:`~metajudge.analyses.backbone_swap.SwapData`).

Agreement with humans is the dataset protocol's statistic, computed exactly as the backbone swap
computes it (:mod:`metajudge.stats.estimates`): Likert data — Pearson across the systems of one
input, averaged over inputs (G-Eval; LFTQA-Eval's ``correlation_calculation.py``); pairwise data —
decision accuracy against the sign of the annotators' mean label, **human ties excluded, a judge
tie counted as wrong**. Items are resampled (all responses of one input together), with the same
resamples for X, Y and the humans, so every difference is paired.

Does the swap change conclusions?

- With systems: each system's mean score under X, Y and the humans; Kendall τ_b between the
  leaderboards with percentile CIs over the resamples; the system pairs that X and Y order
  differently, each with the bootstrap p-value of its difference under X and under Y
  (:func:`~metajudge.stats.bootstrap_p_value`): a swap is *significant* when both
  orderings are (p < α each), i.e. the two judges confidently disagree (JuStRank, Gera et al.
  2024, compares judges by the system rankings they induce).
- Always: the flip rate of per-pair decisions and Cohen's κ (:mod:`metajudge.stats.agreement`),
  and per slice (e.g. the dataset subset) the X–Y Pearson with a cluster-bootstrap CI over inputs
  and Cochran's Q (:func:`~metajudge.stats.cochran_q`) on n = inputs, for whether the
  disagreement concentrates (the responses of one input are not independent units).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge import stats
from metajudge.analyses.backbone_swap import SwapData
from metajudge.analyses.decide.noninferiority import DEFAULT_MARGIN, NonInferiority, non_inferiority
from metajudge.engine import Resamples, resampled_row_sums
from metajudge.errors import InputError
from metajudge.results import Result, finite
from metajudge.stats import estimates as est
from metajudge.stats.agreement import ORIENTATION, decision_kappa, flip_rate

ACC_POLICY = "human ties excluded; a judge tie counts as wrong"


def backbone_agreement(
    data: SwapData, k: int, W: np.ndarray | Resamples, level: float, eps: float
) -> est.Estimate:
    """Backbone ``k``'s agreement with humans under the dataset's protocol (module docstring)."""
    v = data.view
    if data.human_resp is not None:
        h = stats.annotator_mean(data.human_resp)
        return est.grouped("pearson", data.scores[k], h, v.resp_item, v.n_items, W, level)
    d = data.scores[k][v.pair_b] - data.scores[k][v.pair_a]
    h = stats.annotator_mean(data.human_pair)
    correct, m, _ = stats.pair_credit(human=h, judge=d, policy="exclude_human_ties", epsilon=eps)
    S = resampled_row_sums(W, v.pair_item[m], np.stack([correct[m], np.ones(int(m.sum()))], 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        smp = S[:, 0] / S[:, 1]
    lo, hi = stats.percentile_ci(smp, level)
    val = float(correct[m].mean()) if m.any() else math.nan
    return est.Estimate(val, lo, hi, int(m.sum()), smp)


def _system_means(
    values: np.ndarray, data: SwapData, W: np.ndarray | Resamples
) -> tuple[np.ndarray, ...]:
    """Per-system mean (point, and one row per resample) over the responses with a value."""
    v = data.view
    ok = np.isfinite(values)
    ind = np.zeros((values.size, v.n_systems))
    ind[np.arange(values.size), v.resp_system] = ok
    vals = np.where(ok, values, 0.0)
    S = resampled_row_sums(W, v.resp_item, np.hstack([vals[:, None] * ind, ind]))
    with np.errstate(invalid="ignore", divide="ignore"):
        point = (vals @ ind) / ind.sum(axis=0)
        smp = S[:, : v.n_systems] / S[:, v.n_systems :]
    return point, smp


def _tau(a: np.ndarray, b: np.ndarray, A: np.ndarray, B: np.ndarray, level: float) -> dict:
    reps = np.array([stats.kendall_tau_b(A[i], B[i]) for i in range(A.shape[0])])
    lo, hi = stats.percentile_ci(reps, level)
    return {"value": stats.kendall_tau_b(a, b), "ci": [lo, hi]}


def leaderboards(
    data: SwapData,
    ix: int,
    iy: int,
    W: np.ndarray | Resamples,
    *,
    level: float = 0.95,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """System leaderboards under X, Y and the humans, Kendall τ_b with CIs, swapped pairs."""
    if data.human_resp is None or data.view.n_systems < 3:
        return {"available": False, "reason": "no systems in the data (pairwise items)"}
    sysn = data.view.systems
    px, sx = _system_means(data.scores[ix], data, W)
    py, sy = _system_means(data.scores[iy], data, W)
    ph, sh = _system_means(stats.annotator_mean(data.human_resp), data, W)
    swaps = []
    for s in range(len(sysn)):
        for t in range(s + 1, len(sysn)):
            dx, dy, dh = px[t] - px[s], py[t] - py[s], ph[t] - ph[s]
            if np.sign(dx) * np.sign(dy) >= 0:
                continue
            p_x = stats.bootstrap_p_value(sx[:, t] - sx[:, s])
            p_y = stats.bootstrap_p_value(sy[:, t] - sy[:, s])
            swaps.append(
                {"systems": [sysn[s], sysn[t]], "diff_x": dx, "diff_y": dy, "diff_human": dh}
                | {"p_x": p_x, "p_y": p_y, "significant": bool(p_x < alpha and p_y < alpha)}
            )
    order = np.argsort(-ph)
    return {
        "available": True,
        "systems": [sysn[i] for i in order],
        "mean_x": px[order].tolist(),
        "mean_y": py[order].tolist(),
        "mean_human": ph[order].tolist(),
        "tau_xy": _tau(px, py, sx, sy, level),
        "tau_x_human": _tau(px, ph, sx, sh, level),
        "tau_y_human": _tau(py, ph, sy, sh, level),
        "swapped_pairs": swaps,
        "n_pairs": len(sysn) * (len(sysn) - 1) // 2,
        "n_significant_swaps": sum(s["significant"] for s in swaps),
    }


#: how the per-slice numbers count independent units (printed with the slice table)
SLICE_METHOD = (
    "per slice: X–Y Pearson over responses, percentile CI from the cluster bootstrap over inputs "
    "(all responses of an input together, the decision's resamples); Cochran's Q with Fisher "
    "weights n − 3 where n = the slice's inputs (the independent units), not its responses"
)


def slice_heterogeneity(
    data: SwapData,
    ix: int,
    iy: int,
    slices: Sequence[str],
    eps: float,
    W: np.ndarray | Resamples,
    level: float = 0.95,
) -> dict[str, Any]:
    """Per slice (one label per input): X–Y Pearson, flip rate; Cochran's Q (:data:`SLICE_METHOD`).

    The responses of one input are not independent (LFTQA-Eval: 10 per input), so the interval
    resamples inputs (``W``, the bootstrap counts over inputs) and Q weighs each slice by its
    number of inputs."""
    v = data.view
    lab = np.asarray(slices)
    if lab.size != v.n_items:
        raise InputError(f"{lab.size} slice labels for {v.n_items} inputs", field="slices")
    x, y = data.scores[ix], data.scores[iy]
    dx, dy = (stats.tie_decisions(s[v.pair_b] - s[v.pair_a], eps) for s in (x, y))
    rows, rs, ns = [], [], []
    for name in dict.fromkeys(lab.tolist()):
        rm = (lab[v.resp_item] == name) & np.isfinite(x) & np.isfinite(y)
        pm = lab[v.pair_item] == name
        e = est.pooled("pearson", x[rm], y[rm], v.resp_item[rm], W, level, min_n=4)
        n_inputs = int(np.unique(v.resp_item[rm]).size)
        fr, n_dec = flip_rate(dx[pm], dy[pm])
        rows.append({"slice": name, "pearson_xy": e.value, "ci": [e.lo, e.hi]})
        rows[-1] |= {"n": n_inputs, "n_inputs": n_inputs, "n_responses": int(rm.sum())}
        rows[-1] |= {"flip_rate": fr, "n_decisive": n_dec}
        rs.append(e.value)
        ns.append(n_inputs)
    h = stats.cochran_q(rs, ns)
    q = {"q": h.q, "df": h.df, "p": h.p, "i2": h.i2, "n": "inputs per slice"}
    return {"slices": rows, "cochran_q": q, "method": SLICE_METHOD}


@dataclass
class SwapDecision(Result):
    """Everything ``decide`` reports for one question "can Y replace X?" on swap data."""

    dataset: str
    protocol: dict[str, Any]
    non_inferiority: NonInferiority
    agreement: dict[str, Any]
    decisions: dict[str, Any]
    leaderboard: dict[str, Any]
    slices: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return finite(  # type: ignore[no-any-return]
            {
                "dataset": self.dataset,
                "protocol": self.protocol,
                "verdict": self.non_inferiority.sentence(),
                "non_inferiority": self.non_inferiority.to_dict(),
                "agreement": self.agreement,
                "decisions": self.decisions,
                "leaderboard": self.leaderboard,
                "slices": self.slices,
                **self.extra,
            }
        )


def _index(data: SwapData, name: str) -> int:
    if name not in data.backbones:
        raise InputError(f"no backbone {name!r} (have {', '.join(data.backbones)})", field="x/y")
    return data.backbones.index(name)


def decide_swap(
    data: SwapData,
    x: str,
    y: str,
    *,
    rng: np.random.Generator,
    n_boot: int = 1000,
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
    eps: float = 0.0,
    slices: Sequence[str] | None = None,
) -> SwapDecision:
    """Can ``y`` replace ``x``? Non-inferiority, leaderboards, flips, κ, slices (module docstring)."""
    ix, iy = _index(data, x), _index(data, y)
    v = data.view
    W = Resamples.draw(v.n_items, n_boot, rng)  # a block at a time; values as bootstrap_weights
    level = 1 - alpha
    ax, ay = (backbone_agreement(data, k, W, level, eps) for k in (ix, iy))
    stat = "grouped pearson" if data.human_resp is not None else f"pair accuracy ({ACC_POLICY})"
    assert ax.samples is not None and ay.samples is not None
    ni = non_inferiority(
        x,
        y,
        ax.value,
        ay.value,
        ax.samples,
        ay.samples,
        n=min(ax.n, ay.n),
        statistic=stat,
        margin=margin,
        alpha=alpha,
    )
    dx, dy = (
        stats.tie_decisions(data.scores[k][v.pair_b] - data.scores[k][v.pair_a], eps)
        for k in (ix, iy)
    )
    fr, n_dec = flip_rate(dx, dy)
    m = np.isfinite(dx) & np.isfinite(dy)
    kappa = decision_kappa(dx[m], dy[m])
    protocol = {
        "statistic": stat,
        "margin": margin,
        "alpha": alpha,
        "n_boot": n_boot,
        "tie_band": eps,
        "resampling_unit": "input (all responses and pairs of one input together)",
        "tests": SWAP_TESTS,
    }
    return SwapDecision(
        data.dataset,
        protocol,
        ni,
        {b: {"value": a.value, "ci": [a.lo, a.hi], "n": a.n} for b, a in ((x, ax), (y, ay))},
        {"flip_rate": fr, "n_decisive": n_dec, "kappa": kappa, "n_pairs": int(m.sum())},
        leaderboards(data, ix, iy, W, level=level, alpha=alpha),
        slice_heterogeneity(data, ix, iy, slices, eps, W, level) if slices is not None else None,
    )


SWAP_TESTS = {
    "non_inferiority": "paired bootstrap over inputs (Efron 1979), one-sided percentile bounds; "
    "verdict rule of Wellek 2010 ch. 2",
    "labels_needed": "one-sided normal sample size, Chow, Shao & Wang 2008 §3.2",
    "kendall_tau": "tau_b (Kendall 1945), percentile bootstrap CI",
    "swap_significance": "two-sided bootstrap p with add-one smoothing (Davison & Hinkley 1997 eq. 4.11)",
    "kappa": f"Cohen 1960 on decisions {{-1,0,1}}; {ORIENTATION}",
    "heterogeneity": "cluster bootstrap CI over inputs per slice; Cochran's Q on Fisher z with "
    "n = inputs (Cochran 1954; Hedges & Olkin 1985), I² (Higgins & Thompson 2002)",
}
