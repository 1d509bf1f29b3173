"""``calibrate plan``: how many labels a target CI half-width needs, and which items to label next.

**Labels needed** (per system, from a pilot: the rows with the labels there are). The calibrated
estimate's variance is about V_f/N + (σ² + C)/n: V_f the variance of the calibrated scores over
the system's N responses (clustered), σ² the pooled out-of-fold residual variance of the
calibration, C/n the calibration's jackknife variance (C = pilot jackknife variance x pilot
labels), n the labels. A half-width H at level 1 − α needs n = (σ² + C) / ((H/z)² − V_f/N);
when V_f/N alone exceeds (H/z)², no number of labels reaches H (more responses would). Beside
it, labels only: n = Var(Y)/(H/z)².

**Active selection** (Zrnic & Candès 2024, "Active Statistical Inference", ICML): label item i
with probability π_i proportional to the judge's uncertainty there, u(S_i) = the root mean
squared out-of-fold residual of the labelled rows in the same judge-score bin (equal-count
bins; :meth:`~.crossfit.CrossFit.residual_sd`), mixed with the uniform rule (share ``mix``) so
that no π is near 0, scaled to the budget B = Σ π and capped at 1. The estimate that keeps this unbiased weights each new label by 1/π
(``calibrate estimate --plan``): θ̂ = mean f(S) + c, c the residuals Y − f(S) averaged with weights
1/q, q = p₀ + (1 − p₀)π each row's probability of a label (:func:`~.estimate.inclusion_probability`;
p₀ the share labelled before the plan), the residual centred on c. Before
anyone labels, the pilot predicts the half-width ratio of active to uniform selection
(:func:`predicted_ratio`); above :data:`ACTIVE_GAIN_RATIO` the plan selects uniformly and says
why. A target no number of labels reaches gets :func:`plan_advice`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from metajudge.analyses.calibration.crossfit import CrossFit, EstimateRows, FArr
from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats import clustered as cl


def labels_needed(
    r: EstimateRows,
    cf: CrossFit,
    est: dict[str, Any],
    half_width: float,
    *,
    label_var: float,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """One system's labels for ``half_width`` (module docstring), from its pilot estimate;
    ``label_var``: the labels' variance (the system's own, else the pooled)."""
    z = cl.t_quantile(math.inf, alpha)
    f = cf.predict(r.judge)
    v_f = cl.influence_se((f - f.mean()) / len(r), r.cluster) ** 2
    c = est["se_calibration"] ** 2 * cf.n_labels
    target = (half_width / z) ** 2
    if not target > 0:  # a half-width so small its square underflows (1e-300)
        raise InputError(
            f"{half_width:g} is too small to plan for: its square underflows to 0",
            field="--half-width",
        )
    room = target - v_f
    need = _count((cf.residual_var + c) / room, half_width) if room > 0 else None
    n = len(r)
    out = {
        "system": str(r.system[0]),
        "rows": n,
        "labelled_now": int(r.labelled.sum()),
        "half_width_now": (est["hi"] - est["lo"]) / 2,
        "labels_needed": need,
        "reachable": need is not None,
        "labels_only_needed": _count(label_var / target, half_width),
    }
    if need is None or need > n:  # the advice: what every response labelled reaches, or needs
        out["advice"] = {
            "half_width_all_labelled": z * math.sqrt(v_f + (cf.residual_var + c) / n),
            "residual_var_needed": room * n - c if room > 0 else None,
            "residual_var_now": cf.residual_var,
        }
    return out


def plan_advice(row: dict[str, Any]) -> str:
    """What a plan row says of its labels: the number, or why it cannot be reached and the
    nearest half-width (every response labelled), or the judge the target needs."""
    if row["reachable"] and row["labels_needed"] <= row["rows"]:
        return str(row["labels_needed"])
    a = row["advice"]
    head = (
        f"{row['labels_needed']} (more than its {row['rows']} responses)"
        if row["reachable"]
        else "not reachable (more responses)"
    )
    judge = (
        f"; or a judge whose residual variance is ≤ {a['residual_var_needed']:.3g} (now "
        f"{a['residual_var_now']:.3g})"
        if a["residual_var_needed"] and a["residual_var_needed"] > 0
        else ""
    )
    return f"{head}: every response labelled gives ±{a['half_width_all_labelled']:.3g}{judge}"


#: the active rule's default share of uniform probability
DEFAULT_MIX = 0.2
#: the predicted half-width ratio (active / uniform) above which ``calibrate plan`` selects
#: uniformly: a gain under 3% does not repay the weights' noise
ACTIVE_GAIN_RATIO = 0.97


def predicted_ratio(rows: EstimateRows, cf: CrossFit, pi: FArr, se_cal: dict[str, float]) -> float:
    """The pilot's prediction of the mean half-width ratio, active (``pi`` on the unlabelled
    rows) against uniform at the same budget: per system the variance V_f + se_calibration² +
    (1/N²) Σ u²/q, u the binned residual SD (centred), q the labelling probability of every row
    (:func:`~.estimate.inclusion_probability`), averaged over systems as half-widths."""
    from dataclasses import replace

    from metajudge.analyses.calibration.estimate import inclusion_probability, residual_var_at

    unl = ~rows.labelled
    uniform = np.full(int(unl.sum()), float(pi.mean()))
    ratios = []
    for s in rows.systems:
        half = []
        for p in (pi, uniform):
            full = np.full(len(rows), np.nan)
            full[unl] = p
            r = replace(rows, pi=full, drawn=unl).of(s)
            f = cf.predict(r.judge)
            v_f = cl.influence_se((f - f.mean()) / len(r), r.cluster) ** 2
            u2 = residual_var_at(cf, r.judge)
            resid = float(np.sum(u2 / inclusion_probability(r))) / len(r) ** 2
            half.append(math.sqrt(v_f + se_cal[s] ** 2 + resid))
        ratios.append(half[0] / half[1])
    return float(np.mean(ratios))


#: The most labels a plan counts (10^15): a target needing more is refused, not printed as a
#: 200-digit number.
MAX_LABELS = 10**15


def _count(x: float, half_width: float) -> int:
    """``ceil(x)`` labels; past :data:`MAX_LABELS` the half-width is refused (exit 2)."""
    if not x <= MAX_LABELS:
        raise InputError(
            f"{half_width:g} would need "
            + (f"about {x:.3g}" if math.isfinite(x) else "more than can be counted")
            + " labels: too small a target to plan for "
            f"(at most {MAX_LABELS:.0e} labels)",
            field="--half-width",
        )
    return math.ceil(x)


def active_probabilities(u: FArr, budget: float, mix: float = 0.2) -> FArr:
    """π_i ∝ u_i mixed with uniform (share ``mix``), Σ π = ``budget``, each capped at 1.

    >>> active_probabilities(np.array([1.0, 1.0, 2.0, 4.0]), 2.0, mix=0.0).round(3).tolist()
    [0.25, 0.25, 0.5, 1.0]
    """
    n = u.size
    if not 0 < budget < n:
        raise InputError(f"the budget must be in (0, {n}), got {budget:g}", field="--budget")
    w = (1 - mix) * u / u.sum() + mix / n
    pi = np.zeros(n)
    free = np.ones(n, bool)
    left = float(budget)
    for _ in range(n):
        pi[free] = left * w[free] / w[free].sum()
        over = free & (pi >= 1)
        if not over.any():
            break
        pi[over] = 1.0
        free &= ~over
        left = budget - float(pi[~free].sum())
    return pi


@dataclass
class PlanResult(Result):
    """``calibrate plan``'s result: labels needed per system for ``half_width``, and the active
    selection of the next ``budget`` labels among the unlabelled rows."""

    source: str
    half_width: float | None
    alpha: float
    systems: list[dict[str, Any]]
    selection: dict[str, Any]
    #: what a run folder's ``result.json`` holds (``report render`` reads it)
    kind: str = "calibrate-plan"


def label_plan(
    rows: EstimateRows,
    st: Any,
    *,
    half_width: float | None,
    budget: float | None,
    mix: float | None = None,
) -> tuple[PlanResult, list[tuple[str, str, str, float, float, int]]]:
    """The plan (module docstring) and the selection rows ``(system, item, cluster, judge, π,
    picked)`` of the unlabelled rows (empty without ``budget``). ``mix`` None: the active rule
    with 0.2, or uniform where :func:`predicted_ratio` is above :data:`ACTIVE_GAIN_RATIO`;
    given, the active rule with it whatever the prediction."""
    from metajudge.analyses.calibration.estimate import estimate_systems

    cf, systems, fits = estimate_systems(rows, st)
    cal = rows.take(rows.labelled)
    pooled = float(np.var(cal.label, ddof=1))
    out = []
    for est in systems:
        r = fits[est["system"]][0]
        own = r.label[r.labelled]
        var = float(np.var(own, ddof=1)) if own.size > 1 else pooled
        row = {"system": est["system"], "labelled_now": est["labelled"]}
        row["half_width_now"] = (est["hi"] - est["lo"]) / 2
        if half_width is not None:
            row = labels_needed(r, cf, est, half_width, label_var=var, alpha=st.alpha)
        out.append(row)
    picks: list[tuple[str, str, str, float, float, int]] = []
    sel: dict[str, Any] = {}
    if budget is not None:
        pool = rows.take(~rows.labelled)
        if not len(pool):
            raise InputError("every row is labelled: nothing to select", field="--budget")
        pi = active_probabilities(
            cf.residual_sd(pool.judge), budget, DEFAULT_MIX if mix is None else mix
        )
        ratio = predicted_ratio(rows, cf, pi, {e["system"]: e["se_calibration"] for e in systems})
        recommend = "uniform" if ratio > ACTIVE_GAIN_RATIO else "active"
        uniform = mix is None and recommend == "uniform"
        if uniform:
            pi = np.full(pi.size, budget / pi.size)
        rng = np.random.default_rng([st.seed, 42])
        picked = rng.random(pi.size) < pi
        picks = [
            (s, i, c, float(j), float(p), int(k))
            for s, i, c, j, p, k in zip(
                pool.system, pool.item, pool.cluster, pool.judge, pi, picked, strict=True
            )
        ]
        sel = {
            "budget": budget,
            "mix": mix,
            "candidates": len(pool),
            "picked": int(picked.sum()),
            "probability_range": [float(pi.min()), float(pi.max())],
            "predicted_ratio": ratio,
            "recommendation": recommend,
            "rule": "pi proportional to the judge's binned out-of-fold RMS residual, mixed with "
            "uniform; weight each new label by 1/pi",
        }
        if recommend == "uniform":
            rms = cf.resid_rms
            sel["why"] = (
                f"active selection is predicted to give {ratio:.3f} of uniform labelling's "
                f"half-width (above {ACTIVE_GAIN_RATIO}): the judge's residuals barely vary with "
                f"its score (binned RMS {min(rms):.3g} to {max(rms):.3g})"
            )
        if uniform:
            sel["mix"] = 1.0
            sel["rule"] = (
                f"uniform, every candidate alike: {sel['why']}; --mix forces the active rule"
            )
    res = PlanResult(rows.source, half_width, st.alpha, out, sel)
    return res, picks
