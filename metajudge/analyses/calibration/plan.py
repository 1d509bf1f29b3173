"""``calibrate plan``: how many labels a target CI half-width needs, and which items to label next.

**Labels needed** (per system, from a pilot: the rows with the labels there are). The calibrated
estimate's variance is about V_f/N + (σ² + C)/n: V_f the variance of the calibrated scores over
the system's N responses (clustered), σ² the pooled out-of-fold residual variance of the
calibration, C/n the calibration's jackknife variance (C = pilot jackknife variance x pilot
labels), n the labels. A half-width H at level 1 − α needs n = (σ² + C) / ((H/z)² − V_f/N);
when V_f/N alone exceeds (H/z)², no number of labels reaches H (more responses would). Beside
it, labels only: n = Var(Y)/(H/z)².

**Active selection** (Zrnic & Candès 2024, "Active Statistical Inference", ICML), here a
balanced design. Nearly all of a system's interval is the sampling variance of its labelled
residuals (on the five benchmark sets of bench_estimate_active.py the calibration's jackknife
variance is under 4% of it), about u²/n,
and n, left to chance by uniform labelling, spreads widely at a few labels per system (a 5% pilot
plus 10% of the rest of SummEval: 14.5 labels a system, sd 3); the half-width is convex in n, so
labels that fall unevenly widen the average interval. The plan therefore (1) tops each system's
labels up to its share of the rows (:func:`system_budgets`: a system the pilot over-labelled
gets none); (2) within a system spreads its budget alike, or, where the pilot predicts a
narrower mean interval from it, with probability π_i proportional to the judge's uncertainty there, u(S_i) =
the root mean squared out-of-fold residual of the labelled rows in the same judge-score bin
(equal-count bins; :meth:`~.crossfit.CrossFit.residual_sd`), mixed with the uniform rule (share
``mix``) so that no π is near 0, capped at 1 (:func:`balanced_probabilities`); (3) draws
systematically along the judge score within each system (:func:`balanced_draw`): each row with
probability π, a fixed count per system, spread evenly over the judge scores (which also steadies
the calibration map). The estimate that keeps this unbiased weights each new label by 1/π
(``calibrate estimate --plan``): θ̂ = mean f(S) + c, c the residuals Y − f(S) averaged with
weights 1/q, q = p₀ + (1 − p₀)π each row's probability of a label
(:func:`~.estimate.inclusion_probability`; p₀ the share labelled before the plan), the residual
centred on c; with π alike within a system this is the plain estimate on that system's labels.
Before anyone labels, the pilot predicts the mean half-width of this design against plain
uniform labelling of as many rows estimated by plain ``calibrate estimate``
(:func:`predicted_ratio`; both by :func:`_expected_half`, each with the variance floor, its df
and the calibration's variance after the new labels as the estimate will have them); above
:data:`ACTIVE_GAIN_RATIO` the plan selects uniformly and says why. A target no number of labels reaches gets :func:`plan_advice`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from metajudge.analyses.calibration.crossfit import CrossFit, EstimateRows, FArr
from metajudge.data.label_plan import MIN_PROBABILITY
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
#: the predicted half-width ratio (the plan's design / plain uniform labelling) above which
#: ``calibrate plan`` selects uniformly: a gain under 3% is within the prediction's error
ACTIVE_GAIN_RATIO = 0.97


def _expected_half(n: FArr, base: float, u2: float, clusters: float, own: bool) -> FArr:
    """The expected half-width of a system's interval with ``n`` labels (an array), as the
    estimate makes it: its own residual variance, estimated as X·u² with X ~ χ²ₙ₋₁/(n − 1)
    (u² the floor's residual variance), or the floor u² where that is larger, over n, plus
    ``base``; Student's t with n − 1 df on its own variance, on the floor's the df the
    estimate gives it (:func:`~.estimate.floor_df`, over ``clusters`` labelled clusters; ``own``:
    whether the floor has a part the system's own labels show, as the plain estimate's has and
    a plan's weighted one has not). Averaged over 32 quantiles of X."""
    from scipy import stats as ss

    from metajudge.analyses.calibration.estimate import _Fit, floor_df

    df = np.maximum(n - 1.0, 1.0)[:, None]
    x = ss.chi2.ppf((np.arange(32) + 0.5) / 32, df) / df
    none = np.zeros(0)
    fdf = np.array(
        [
            [
                floor_df(_Fit(0.0, none, none, d, u2 / m, xi * u2 / m if own else 0.0), clusters)
                for xi in row
            ]
            for d, m, row in zip(df[:, 0], n, np.minimum(x, 1.0), strict=True)
        ]
    )
    t = np.where(x > 1, ss.t.ppf(0.975, df), ss.t.ppf(0.975, fdf))
    return np.mean(t * np.sqrt(base + np.maximum(x, 1.0) * u2 / n[:, None]), axis=1)


def _clusters_after(rows: EstimateRows, pi: FArr) -> float:
    """The expected number of labelled clusters after the unlabelled rows are drawn with
    probabilities ``pi``: those labelled now, plus each other cluster's chance of a label."""
    unl = ~rows.labelled
    have = set(rows.cluster[rows.labelled].tolist())
    miss: dict[str, float] = {}
    for c, p in zip(rows.cluster[unl].tolist(), pi.tolist(), strict=True):
        if c not in have:
            miss[c] = miss.get(c, 1.0) * (1.0 - p)
    return len(have) + sum(1.0 - m for m in miss.values())


def _design_halves(rows: EstimateRows, cf: CrossFit, pi: FArr, se_cal: dict[str, float]) -> FArr:
    """Each system's predicted half-width under the probabilities ``pi`` of the unlabelled rows
    (:func:`_expected_half`): its labels counted as the n that gives the floor (1/N²) Σ u²/q
    (u² the residual variance at each row's judge score, :func:`~.estimate.residual_var_at`;
    q each row's probability of a label, :func:`~.estimate.design_probability`), the floor's
    u² scaled to the residuals' variance within systems (``CrossFit.within_share``) as the
    estimate scales it, the base V_f + se_calibration²."""
    from dataclasses import replace

    from metajudge.analyses.calibration.estimate import (
        _plan_weighs,
        design_probability,
        residual_var_at,
    )

    unl = ~rows.labelled
    full = np.full(len(rows), np.nan)
    full[unl] = pi
    clusters = _clusters_after(rows, pi)
    out = []
    for s in rows.systems:
        r = replace(rows, pi=full, drawn=unl).of(s)
        u2 = residual_var_at(cf, r.judge)
        n = len(r) ** 2 * float(np.mean(u2)) / float(np.sum(u2 / design_probability(r)))
        base = _v_f(cf, r) + se_cal[s] ** 2
        u2_floor = float(np.mean(u2)) * cf.within_share
        half = _expected_half(np.array([n]), base, u2_floor, clusters, own=not _plan_weighs(r))
        out.append(float(half[0]))
    return np.array(out)


def _v_f(cf: CrossFit, r: EstimateRows) -> float:
    f = cf.predict(r.judge)
    return cl.influence_se((f - f.mean()) / len(r), r.cluster) ** 2


def _plain_halves(
    rows: EstimateRows, cf: CrossFit, budget: float, se_cal: dict[str, float]
) -> FArr:
    """Each system's expected half-width (:func:`_expected_half`) under plain uniform labelling
    of ``budget`` rows, estimated by plain ``calibrate estimate``: its labels n = those now +
    Binomial(its unlabelled rows, budget / all unlabelled rows), averaged over n (labels that
    fall unevenly widen the average interval: the half-width is convex in n)."""
    from scipy import stats as ss

    from metajudge.analyses.calibration.estimate import residual_var_at

    p = budget / int((~rows.labelled).sum())
    clusters = _clusters_after(rows, np.full(int((~rows.labelled).sum()), p))
    out = []
    for s in rows.systems:
        r = rows.of(s)
        have, free = int(r.labelled.sum()), int((~r.labelled).sum())
        k = np.arange(free + 1)
        w = ss.binom.pmf(k, free, p)
        k, w = k[w > 1e-9], w[w > 1e-9]
        base = _v_f(cf, r) + se_cal[s] ** 2
        u2 = float(np.mean(residual_var_at(cf, r.judge))) * cf.within_share
        half = _expected_half(np.maximum(have + k, 2).astype(float), base, u2, clusters, True)
        out.append(float(np.sum(w * half) / np.sum(w)))
    return np.array(out)


def predicted_ratio(
    rows: EstimateRows,
    cf: CrossFit,
    pi: FArr,
    se_cal: dict[str, float],
    against: FArr | None = None,
) -> float:
    """The pilot's prediction of the mean half-width, the design ``pi`` (on the unlabelled rows)
    against ``against`` (another design's probabilities), or else against plain uniform labelling
    of as many rows estimated by plain ``calibrate estimate`` (:func:`_plain_halves`): the ratio
    of the systems' mean predicted half-widths. The calibration's jackknife variance is that
    after the new labels, the pilot's scaled by its labels over the labels after them (C/n, as
    :func:`labels_needed` counts it), in both designs."""
    now = int(rows.labelled.sum())
    shrink = math.sqrt(now / (now + float(pi.sum())))
    se_cal = {s: v * shrink for s, v in se_cal.items()}
    mine = _design_halves(rows, cf, pi, se_cal)
    if against is not None:
        return float(mine.mean() / _design_halves(rows, cf, against, se_cal).mean())
    return float(mine.mean() / _plain_halves(rows, cf, float(pi.sum()), se_cal).mean())


def system_budgets(rows: EstimateRows, budget: float) -> dict[str, float]:
    """Each system's share of ``budget`` new labels, so that after them every system's labels
    are in proportion to its rows (N_s): new_s = min(max(λN_s − L_s, 0), its unlabelled rows), λ
    found by bisection so that the shares sum to ``budget`` (a system the pilot over-labelled
    gets none). Uniform labelling leaves these counts to chance.

    >>> from metajudge.analyses.calibration.crossfit import crossfit_rows
    >>> r = crossfit_rows([(s, str(i), str(i), float(i), 1.0 if s == "a" and i < 3 else None)
    ...                    for s in "ab" for i in range(10)], scale=(0, 1), source="x")
    >>> {s: round(b, 3) for s, b in system_budgets(r, 5.0).items()}
    {'a': 1.0, 'b': 4.0}
    """
    size = {s: int((rows.system == s).sum()) for s in rows.systems}
    have = {s: int((rows.labelled & (rows.system == s)).sum()) for s in rows.systems}

    def shares(lam: float) -> dict[str, float]:
        return {s: min(max(lam * size[s] - have[s], 0.0), size[s] - have[s]) for s in size}

    lo, hi = 0.0, 1.0
    for _ in range(200):
        lam = (lo + hi) / 2
        lo, hi = (lam, hi) if sum(shares(lam).values()) < budget else (lo, lam)
    return shares(hi)


def balanced_probabilities(
    pool: EstimateRows, budgets: dict[str, float], u: FArr | None, mix: float
) -> FArr:
    """π of the unlabelled rows ``pool``: each system's budget spread over its rows alike, or
    with ``u`` (the judge's uncertainty) by :func:`active_probabilities` with ``mix``."""
    pi = np.empty(len(pool))
    for s, b in budgets.items():
        m = pool.system == s
        if b <= 0:
            pi[m] = MIN_PROBABILITY  # (its pilot over-labelled it)
        elif b >= m.sum():
            pi[m] = 1.0
        else:
            pi[m] = b / m.sum() if u is None else active_probabilities(u[m], b, mix)
    return pi


def balanced_draw(pool: EstimateRows, pi: FArr, rng: np.random.Generator) -> npt.NDArray[np.bool_]:
    """The plan's draw: within each system, systematic sampling along the judge score (ties in
    a seeded random order; one random start), so that each row is selected with probability π,
    a system gets ⌊Σπ⌋ or ⌈Σπ⌉ labels, and they spread evenly over its judge scores."""
    picked = np.zeros(len(pool), bool)
    for s in pool.systems:
        idx = np.flatnonzero(pool.system == s)
        order = idx[np.lexsort((rng.random(idx.size), pool.judge[idx]))]
        c = np.cumsum(pi[order])
        start = rng.random()
        picked[order] = np.floor(c - start) > np.floor(np.concatenate([[0.0], c[:-1]]) - start)
    return picked


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
    picked)`` of the unlabelled rows (empty without ``budget``). ``mix`` None: the balanced
    design (π by the judge's uncertainty within systems, mixed 0.2, where that is predicted
    narrower than π alike, else alike), or uniform where :func:`predicted_ratio` is above
    :data:`ACTIVE_GAIN_RATIO`; given, the balanced design with π by the uncertainty mixed by it,
    whatever the prediction."""
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
        se_cal = {e["system"]: e["se_calibration"] for e in systems}
        pi, picked, sel = _selection(rows, pool, cf, se_cal, budget, mix, st.seed)
        picks = [
            (s, i, c, float(j), float(p), int(k))
            for s, i, c, j, p, k in zip(
                pool.system, pool.item, pool.cluster, pool.judge, pi, picked, strict=True
            )
        ]
    res = PlanResult(rows.source, half_width, st.alpha, out, sel)
    return res, picks


def _selection(
    rows: EstimateRows,
    pool: EstimateRows,
    cf: CrossFit,
    se_cal: dict[str, float],
    budget: float,
    mix: float | None,
    seed: int,
) -> tuple[FArr, npt.NDArray[np.bool_], dict[str, Any]]:
    """The probabilities of the unlabelled rows ``pool``, the seeded draw, and what the plan says
    of them (module docstring: the balanced design, its shape within systems, the prediction)."""
    if not 0 < budget < len(pool):
        raise InputError(
            f"the budget must be in (0, {len(pool)}), got {budget:g}", field="--budget"
        )
    budgets = system_budgets(rows, budget)
    flat = balanced_probabilities(pool, budgets, None, 0.0)
    shaped = balanced_probabilities(
        pool, budgets, cf.residual_sd(pool.judge), DEFAULT_MIX if mix is None else mix
    )
    shape_gain = predicted_ratio(rows, cf, shaped, se_cal, against=flat)
    by_u = mix is not None or shape_gain < 1.0
    pi = shaped if by_u else flat
    ratio = predicted_ratio(rows, cf, pi, se_cal)
    recommend = "uniform" if ratio > ACTIVE_GAIN_RATIO else "active"
    rms = cf.resid_rms
    flat_why = (
        f"the judge's residuals barely vary with its score (binned RMS {min(rms):.3g} to "
        f"{max(rms):.3g}; π by them predicted at {shape_gain:.3f} of π alike)"
    )
    within = (
        "pi proportional to the judge's binned out-of-fold RMS residual, mixed with uniform"
        if by_u
        else f"every candidate alike, as {flat_why}"
    )
    sel: dict[str, Any] = {
        "budget": budget,
        "mix": mix,
        "candidates": len(pool),
        "predicted_ratio": ratio,
        "recommendation": recommend,
        "rule": "each system's new labels topping its labels up to its share of the rows; within "
        f"a system {within}; drawn systematically along the judge score; weight each new label "
        "by 1/pi",
    }
    rng = np.random.default_rng([seed, 42])
    if mix is None and recommend == "uniform":
        sel["why"] = (
            f"the balanced selection is predicted to give {ratio:.3f} of uniform labelling's "
            f"half-width (above {ACTIVE_GAIN_RATIO}): the systems' labels fall about evenly "
            f"without it, and {flat_why}"
        )
        pi = np.full(len(pool), budget / len(pool))
        sel["mix"] = 1.0
        sel["rule"] = f"uniform, every candidate alike: {sel['why']}; --mix forces the active rule"
        picked = rng.random(pi.size) < pi
    else:
        picked = balanced_draw(pool, pi, rng)
    sel["picked"] = int(picked.sum())
    sel["probability_range"] = [float(pi.min()), float(pi.max())]
    return pi, picked, sel
