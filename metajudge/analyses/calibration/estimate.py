"""``calibrate estimate``: each system's mean quality on the label scale, from a judge's scores on
every response and human labels on some, with the gates that say when the level cannot be
trusted.

Per system s with n responses (judge score S, label Y on the labelled ones) and the cross-fitted
calibration f (:mod:`.crossfit`; f₋ₖ fitted without fold k, f_oof(i) = f₋ₖ₍ᵢ₎ for a labelled row):

- **augmented** (s has labels of its own, n_L of them, p = n_L/n): the calibrated mean plus the
  mean labelled residual, AIPW / PPI style (Robins et al. 1994; Angelopoulos et al. 2023):
  θ̂ = mean f(S) + mean_L (Y − f_oof(S)). Its per-row pseudo-outcome
  ψᵢ = f(Sᵢ) + c + 1[i ∈ L]·(rᵢ − c)/p (r = Y − f_oof(S), c = mean r) averages to θ̂;
- **labels** (every response labelled): the labels' mean, no calibration needed;
- **ipw** (``--plan``: labels collected by a label plan of :mod:`.plan`, each candidate selected
  with its probability π): every used label weighted by 1/q, q = p₀ + (1 − p₀)π its probability
  of a label (:func:`inclusion_probability`; p₀ the share labelled before the plan, those rows
  taking the π of the nearest candidate by judge score), the residual centred on its weighted
  mean c: θ̂ = mean f(S) + c, ψᵢ = f(Sᵢ) + c + ξᵢ(rᵢ − c)/qᵢ (ξ: used; Zrnic & Candès 2024). A
  uniform plan gives the augmented estimate exactly;
- **borrowed** (no labels of its own): θ̂ = mean f(S), the calibration learnt on the other
  systems' labels, assumed to transfer. Its CI holds only the calibration's uncertainty, not
  the system's own residual mean (on SummEval and HANNA such CIs covered 0.52–0.75), so its level
  claim is refused unless a transport audit PASSes ("no labels of its own: label ≥
  :data:`MIN_OWN_LABELS` of its items").

The interval adds the calibration's own uncertainty to the sampling variance: the CR1 variance
of mean ψ clustered by prompt (df: labelled clusters − 1 when augmented, clusters − 1 when
borrowed; augmented, at least the residual variance over n_L — the larger of the pooled
out-of-fold residual variance and its binned value averaged over the system's judge scores
(:func:`residual_var_at`), scaled to the residuals' variance within systems (the term is
centred on the system's own mean residual) — so that a system with a handful of labels cannot
claim a residual variance near 0; a floored variance takes the df of :func:`floor_df`
(Welch–Satterthwaite of the part the system's own labels show, their mean squared residual
scaled as the floor is, df their clusters, and the part the pool adds, df all labelled
clusters − 1), for a system's residuals may vary more than the pool's: SummEval coherence's S8
about twice, and with the pooled df its CI covered 0.90 at 5% labels; ipw (df: all labelled
clusters − 1), at least the floor under the plan's design, (1/n²) Σ u²/q over the rows, u² that
residual variance at the row's judge score (the plan's own uncertainty model), so that it
shrinks where the plan put its labels, scaled to the within-system share as above
(``CrossFit.within_share``: its term too is centred on the system's own mean residual)) plus the
delete-a-fold jackknife variance of θ̂ re-estimated with each f₋ₖ (df K − 1);
Student's t with the Welch–Satterthwaite df (:mod:`metajudge.stats.clustered`), clipped to the
label scale (a difference to ± its span; the output says so). The method is
that of CJE (Landesberg et al. 2025, arXiv 2512.11150; the cje-eval package), written here anew.

Beside it: the raw judge mean with its naive clustered CI (judge units), and for a binary judge
with binary labels the Rogan–Gladen pass rate (:func:`metajudge.stats.ppi.rogan_gladen_ci`, the
judge's TPR/TNR on the labelled rows). Paired differences between systems (influence values of
both over shared prompts; jackknife of the difference), Holm-adjusted.

Gates: **score support**, the share of a system's judge scores outside the labelled range; at or
above ``support_threshold`` (default 0.05, CJE's) the level claim is refused, the ranking kept.
**Transport** (:func:`transport_audit`): on held-out labelled probes of a system, the mean residual
Y − f(S) with its clustered t CI against ``±margin``: PASS inside, FAIL wholly outside,
INCONCLUSIVE otherwise or with fewer than 20 clusters. A FAIL refuses the level claim too.
**Selection** (:func:`selection_gate`): were the labels chosen by outcome? The labelled rows'
judge scores against all rows', beyond what the labelling design explains; said beside every
estimate. A paired difference names the systems whose level claim was refused.

:func:`estimate_mean` is the command's one analysis over its ``--method``: this estimate
(``aipw``), or PPI++ / Rogan–Gladen on labels drawn from a fully labelled set (``ppi``,
``rogan-gladen``; :func:`metajudge.stats.ppi.ppi_on_labels`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt

from metajudge.analyses.calibration.crossfit import (
    DEFAULT_FOLDS,
    CrossFit,
    EstimateRows,
    FArr,
    fit_crossfit,
)
from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats import clustered as cl
from metajudge.stats import holm

#: CJE's coverage-badge threshold: judge-score mass outside the labelled range that refuses a level
SUPPORT_THRESHOLD = 0.05
#: fewest probe clusters a transport audit needs to PASS
MIN_PROBE_CLUSTERS = 20
#: labels of its own a borrowed system is told to collect before its level is claimed: the
#: fewest per system at which bench_estimate_coverage.py shows coverage (5% of SummEval's 100
#: responses a system)
MIN_OWN_LABELS = 5
#: the selection gate's level (:func:`selection_gate`)
GATE_ALPHA = 0.01


@dataclass(frozen=True)
class Settings:
    """``alpha`` of every interval and test; the gates' ``support_threshold`` and ``margin``;
    ``seed`` (folds, the Rogan–Gladen bootstrap) and ``folds``."""

    alpha: float = 0.05
    support_threshold: float = SUPPORT_THRESHOLD
    margin: float = 0.05
    seed: int = 0
    folds: int = DEFAULT_FOLDS
    n_boot: int = 2000


@dataclass
class _Fit:
    """One system's estimate internals: pseudo-outcomes, jackknife estimates, sampling df."""

    value: float
    psi: FArr  # per row (empty from sums, :mod:`.sums`, where the CR1 variance is summed)
    jack: FArr
    df_sampling: float
    var_floor: float = 0.0  # pooled residual variance / own labels (augmented)
    own_var: float = 0.0  # the system's own mean squared residual / own labels (augmented)
    own_df: float = 0.0  # own_var's df: its labelled clusters (a mean of squares about 0)


def inclusion_probability(r: EstimateRows) -> FArr:
    """Each row's probability q of carrying a label under the design the estimate assumes.
    Without a plan the labels fell at random: q = the labelled share. Under a plan the rows
    labelled before it fell at random at their share p₀ of the rows, and every other row was a
    candidate drawn with the plan's π: q = p₀ + (1 − p₀)π, a row labelled before the plan taking
    the π of the candidate nearest in judge score (the plan's rule is a function of the judge
    score alone within a system). Per system: a plan's probabilities are each system's own; where
    they are alike within a system, its used labels are a random sample of its rows and q their
    realised share, so that a plan uniform within a system gives exactly the plain estimate, CI
    included (the design's expected share would narrow the CI where fewer labels fell than
    expected, and widen it where more did).

    >>> import numpy as np
    >>> from metajudge.analyses.calibration.crossfit import crossfit_rows
    >>> r = crossfit_rows([("a", str(i), str(i), float(i), 1.0 if i < 2 else None)
    ...                    for i in range(4)], scale=(0, 1), source="x")
    >>> inclusion_probability(r).tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    lab = r.labelled
    if r.pi is None or not np.isfinite(r.pi).any():
        return np.full(len(r), float(lab.mean()))
    if len(set(r.system.tolist())) > 1:  # a plan's probabilities are each system's own
        q = np.empty(len(r))
        for s in r.systems:
            q[r.system == s] = inclusion_probability(r.of(s))
        return q
    if np.ptp(r.pi[np.isfinite(r.pi)]) == 0:  # alike within the system: a random sample of it
        return np.full(len(r), float(_used(r).mean()))
    return design_probability(r)


def design_probability(r: EstimateRows) -> FArr:
    """One system's q = p₀ + (1 − p₀)π under its plan's design (:func:`inclusion_probability`),
    the expected share where π is alike: what a plan predicts before anyone labels."""
    lab = r.labelled
    cand = np.isfinite(r.pi)
    p0 = float((lab & ~cand).mean())
    pi = r.pi.copy()
    if not cand.all():
        order = np.argsort(r.judge[cand], kind="mergesort")
        cj, cp, x = r.judge[cand][order], r.pi[cand][order], r.judge[~cand]
        at = np.clip(np.searchsorted(cj, x), 0, cj.size - 1)
        prev = np.maximum(at - 1, 0)
        pi[~cand] = cp[np.where(np.abs(cj[prev] - x) <= np.abs(cj[at] - x), prev, at)]
    return p0 + (1 - p0) * pi


def _used(r: EstimateRows) -> npt.NDArray[np.bool_]:
    """The labelled rows the estimate weighs: all of them without a plan; under one, those
    labelled before it and the selected candidates that carry a label."""
    if r.pi is None or r.drawn is None:
        return r.labelled
    return r.labelled & (~np.isfinite(r.pi) | r.drawn)


def residual_var_at(cf: CrossFit, judge: FArr, weights: FArr | None = None) -> FArr:
    """The residual variance at each of a system's judge scores (the floors' one model): the
    binned squared residual (:meth:`~.crossfit.CrossFit.residual_sd`) scaled so that over the
    labelled rows it averages to the pooled out-of-fold residual variance (centred), and raised
    where needed so that over ``judge`` (each score counted ``weights`` times: a count per
    judge-score segment, :mod:`.sums`) it averages at least that pooled variance."""
    u2 = cf.residual_sd(judge) ** 2 * cf.residual_var / max(cf.resid_overall_rms**2, 1e-300)
    mean = float(np.mean(u2) if weights is None else np.average(u2, weights=weights))
    return u2 * max(1.0, cf.residual_var / max(mean, 1e-300))


def _ipw_fit(r: EstimateRows, cf: CrossFit, f: FArr) -> _Fit:
    """The estimate under a label plan (``calibrate estimate --plan``; :mod:`.plan`): each used
    label weighted by 1/q (:func:`inclusion_probability`; Zrnic & Candès 2024), its residual
    centred on the weighted (Hájek) mean residual c, so that θ̂ = mean f(S) + c and the
    pseudo-outcome ψ = f(S) + c + ξ(r − c)/q carries no c² term."""
    q, used = inclusion_probability(r), _used(r)
    w = 1.0 / q[used]

    def centre(f_lab: FArr) -> float:
        return float(np.sum(w * (r.label[used] - f_lab)) / np.sum(w))

    oof = cf.out_of_fold(r.judge[used], r.cluster[used])
    c = centre(oof)
    psi = f + c
    psi[used] += (r.label[used] - oof - c) * w
    jack = []
    for k in range(cf.k):
        fk = cf.predict_fold(r.judge, k)
        jack.append(float(fk.mean()) + centre(fk[used]))
    gl = len(set(r.cluster[used].tolist()))
    floor = float(np.sum(residual_var_at(cf, r.judge) / q)) / len(r) ** 2 * cf.within_share
    return _Fit(float(psi.mean()), psi, np.array(jack), max(gl - 1.0, 1.0), floor)


def _plan_weighs(r: EstimateRows) -> bool:
    """Does a label plan weigh this system's labels unequally? Not where its probabilities are
    alike within the system and every label is used: the labels are then a random sample of
    the system's rows, estimated as without a plan (floor and df included), so that a uniform
    plan gives exactly the plain estimate (:func:`inclusion_probability`)."""
    if r.pi is None or not np.isfinite(r.pi).any():
        return False
    alike = np.ptp(r.pi[np.isfinite(r.pi)]) == 0
    return not (alike and bool(np.array_equal(_used(r), r.labelled)))


def _system_fit(r: EstimateRows, cf: CrossFit) -> tuple[_Fit, str]:
    f = cf.predict(r.judge)
    lab = r.labelled
    if lab.any() and _plan_weighs(r):
        return _ipw_fit(r, cf, f), "ipw"
    if not lab.any():
        jack = np.array([cf.predict_fold(r.judge, k).mean() for k in range(cf.k)])
        g = len(set(r.cluster.tolist()))
        return _Fit(float(f.mean()), f, jack, g - 1.0), "borrowed"
    if lab.all():
        y = r.label
        return _Fit(
            float(y.mean()), y.copy(), np.zeros(cf.k), len(set(r.cluster.tolist())) - 1.0
        ), "labels"
    y, oof = r.label[lab], cf.out_of_fold(r.judge[lab], r.cluster[lab])
    res = y - oof
    c, p = float(res.mean()), lab.mean()
    psi = f + c
    psi[lab] += (res - c) / p
    jack = []
    for k in range(cf.k):
        fk = cf.predict_fold(r.judge, k)
        jack.append(fk.mean() + float(np.mean(y - fk[lab])))
    gl = len(set(r.cluster[lab].tolist()))
    floor, own = augmented_floor(cf, float(np.mean(residual_var_at(cf, r.judge))), res)
    df = max(gl - 1.0, 1.0)
    return _Fit(float(psi.mean()), psi, np.array(jack), df, floor, own, float(gl)), "augmented"


def augmented_floor(cf: CrossFit, mean_u2: float, res: FArr) -> tuple[float, float]:
    """An augmented system's variance floor and its own part (module docstring): ``mean_u2``,
    the calibration's residual variance averaged over the system's rows, scaled to the
    within-system share and divided by its labels; and the mean squared residual ``res`` of its
    own labels, measured as the floor is (scaled to the same share), divided by their number.

    >>> from types import SimpleNamespace as N
    >>> augmented_floor(N(within_share=0.8), 0.5, np.array([1.0, -1.0]))
    (0.2, 0.4)
    """
    share = cf.within_share
    return mean_u2 * share / len(res), float(np.mean(res**2)) * share / len(res)


def floor_df(fit: _Fit, n_clusters: int) -> float:
    """The df of a floored sampling variance (module docstring): Welch–Satterthwaite's of the
    part the system's own labels show (their mean squared residual as :func:`augmented_floor`
    measures it, a mean of squares about 0, not about their mean: df its labelled clusters) and
    what the pooled floor adds above it (df: all labelled clusters − 1). A floor that adds
    little above what the system's own labels show is known about as well as they know it; a
    plan's floor (no own part) keeps the pooled df.

    5 labelled clusters of 60, own part 0.1 of a floor of 0.2: 0.2² / (0.1²/5 + 0.1²/59)

    >>> round(floor_df(_Fit(0.0, np.zeros(1), np.zeros(1), 4.0, 0.2, 0.1, 5.0), 60), 2)
    18.44
    >>> floor_df(_Fit(0.0, np.zeros(1), np.zeros(1), 4.0, 0.2), 60)
    59.0
    """
    own = min(fit.own_var, fit.var_floor)
    return cl.welch_df(own, fit.own_df, fit.var_floor - own, n_clusters - 1.0)


def _interval(
    value: float,
    var_s: float,
    df_s: float,
    jack: FArr,
    k: int,
    alpha: float,
    clip: tuple[float, float],
) -> dict[str, float]:
    """The t interval of the module docstring, clipped to ``clip`` (the label scale, or ±its
    span for a difference)."""
    var_c = cl.jackknife_variance(jack)
    se = math.sqrt(var_s + var_c) if math.isfinite(var_s) else math.nan
    df = cl.welch_df(var_s, df_s, var_c, k - 1)
    lo, hi = cl.t_interval(value, se, df, alpha)
    lo, hi = max(lo, clip[0]), min(hi, clip[1])
    return {
        "value": value,
        "se": se,
        "se_sampling": math.sqrt(var_s) if math.isfinite(var_s) else math.nan,
        "se_calibration": math.sqrt(var_c),
        "df": df,
        "lo": lo,
        "hi": hi,
    }


def _support(judge: FArr, cf: CrossFit, threshold: float) -> dict[str, Any]:
    lo, hi = cf.s_range
    return support_shares(float(np.mean(judge < lo)), float(np.mean(judge > hi)), cf, threshold)


def support_shares(below: float, above: float, cf: CrossFit, threshold: float) -> dict[str, Any]:
    """The score-support gate of the shares of judge scores ``below`` and ``above`` the labelled
    range (module docstring)."""
    lo, hi = cf.s_range
    share = below + above
    return {
        "outside_share": share,
        "below": below,
        "above": above,
        "labelled_range": [lo, hi],
        "threshold": threshold,
        "status": "REFUSE-LEVEL" if share >= threshold else "OK",
    }


def _rogan_gladen(r: EstimateRows, cal: EstimateRows, st: Settings) -> dict[str, Any] | None:
    """The Rogan–Gladen pass rate when judge scores and labels are all 0/1 (else None)."""
    from metajudge.stats.ppi import rogan_gladen_ci

    binary = np.isin(cal.label, (0.0, 1.0)).all() and np.isin(cal.judge, (0.0, 1.0)).all()
    if not binary or not np.isin(r.judge, (0.0, 1.0)).all():
        return None
    rng = np.random.default_rng([st.seed, 41])
    e = rogan_gladen_ci(
        cal.label, cal.judge, r.judge, rng=rng, n_resamples=st.n_boot, alpha=st.alpha
    )
    return asdict(e)


def _naive(r: EstimateRows, alpha: float) -> dict[str, float]:
    return naive_interval(*cl.clustered_mean(r.judge, r.cluster), alpha)


def naive_interval(m: float, se: float, g: int, alpha: float) -> dict[str, float]:
    """The raw judge mean ``m`` with its clustered ``se`` over ``g`` clusters: its t interval."""
    lo, hi = cl.t_interval(m, se, g - 1.0, alpha)
    return {"value": m, "se": se, "lo": lo, "hi": hi}


def estimate_system(
    r: EstimateRows, cf: CrossFit, cal: EstimateRows, st: Settings
) -> tuple[dict[str, Any], _Fit]:
    """One system's estimate (module docstring) as a dict, and its internals."""
    fit, route = _system_fit(r, cf)
    n = len(r)
    var_s = cl.influence_se((fit.psi - fit.value) / n, r.cluster) ** 2
    counts = {
        "system": str(r.system[0]),
        "rows": n,
        "labelled": int(r.labelled.sum()),
        "clusters": len(set(r.cluster.tolist())),
    }
    gates = {
        "judge_mean": _naive(r, st.alpha),
        "support": _support(r.judge, cf, st.support_threshold),
    }
    out = system_estimate(counts, route, fit, var_s, cf, st, r.scale, gates)
    rg = _rogan_gladen(r, cal, st)
    if rg is not None:
        out["rogan_gladen"] = rg
    return out, fit


def system_estimate(
    counts: dict[str, Any],
    route: str,
    fit: _Fit,
    var_s: float,
    cf: CrossFit,
    st: Settings,
    scale: tuple[float, float],
    gates: dict[str, Any],
) -> dict[str, Any]:
    """One system's estimate dict from its ``fit`` and the CR1 variance ``var_s`` of its mean ψ
    (from its rows, or from sums, :mod:`.sums`): ``counts`` (system, rows, labelled,
    clusters), the route, the interval, then ``gates`` (judge mean, support)."""
    if fit.var_floor > var_s:  # the pooled residual variance, with the df of :func:`floor_df`
        var_s, fit.df_sampling = fit.var_floor, floor_df(fit, cf.n_clusters)
    interval = _interval(fit.value, var_s, fit.df_sampling, fit.jack, cf.k, st.alpha, scale)
    return {**counts, "route": route, **interval, **gates}


def _difference(
    a: tuple[EstimateRows, _Fit], b: tuple[EstimateRows, _Fit], k: int, alpha: float
) -> dict[str, Any]:
    (ra, fa), (rb, fb) = a, b
    infl = np.concatenate([(fa.psi - fa.value) / len(ra), -(fb.psi - fb.value) / len(rb)])
    clusters = np.concatenate([ra.cluster, rb.cluster])
    var_s = max(cl.influence_se(infl, clusters) ** 2, fa.var_floor + fb.var_floor)  # as above
    span = float(ra.scale[1] - ra.scale[0])
    df_s = min(fa.df_sampling, fb.df_sampling)
    d = _interval(fa.value - fb.value, var_s, df_s, fa.jack - fb.jack, k, alpha, (-span, span))
    shared = len(set(ra.cluster.tolist()) & set(rb.cluster.tolist()))
    return {
        "a": str(ra.system[0]),
        "b": str(rb.system[0]),
        **d,
        "p": cl.t_p_value(d["value"], d["se"], d["df"]),
        "shared_clusters": shared,
    }


def transport_audit(
    probes: EstimateRows, cf: CrossFit, *, margin: float, alpha: float = 0.05
) -> dict[str, Any]:
    """One system's transport audit on its labelled ``probes`` (module docstring)."""
    res = probes.label - cf.predict(probes.judge)
    m, se, g = cl.clustered_mean(res, probes.cluster)
    df = max(g - 1.0, 1.0)
    lo, hi = cl.t_interval(m, se, df, alpha)
    if not math.isfinite(se):
        verdict, why = "INCONCLUSIVE", f"{g} cluster(s): no interval"
    elif g < MIN_PROBE_CLUSTERS:
        verdict, why = "INCONCLUSIVE", f"{g} clusters < {MIN_PROBE_CLUSTERS}: too few to grade"
    elif lo > margin or hi < -margin:
        verdict, why = "FAIL", f"the interval lies wholly outside ±{margin:g}"
    elif -margin <= lo and hi <= margin:
        verdict, why = "PASS", f"the interval lies within ±{margin:g}"
    else:
        verdict, why = "INCONCLUSIVE", f"the interval overlaps ±{margin:g}"
    return {
        "system": str(probes.system[0]),
        "probes": len(probes),
        "clusters": g,
        "delta": m,
        "se": se,
        "df": df,
        "lo": lo,
        "hi": hi,
        "margin": margin,
        "verdict": verdict,
        "reason": why,
    }


@dataclass
class EstimateResult(Result):
    """``calibrate estimate``'s result: the calibration, per-system estimates with their gates,
    paired differences (Holm), transport audits, and the settings."""

    source: str
    scale: list[float]
    calibration: dict[str, Any]
    systems: list[dict[str, Any]]
    differences: list[dict[str, Any]]
    transport: list[dict[str, Any]]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    #: the label plan read back (``--plan``): its file, candidates, selected, probabilities
    plan: dict[str, Any] | None = None
    #: whether the labelled rows' judge scores differ from all rows' (:func:`selection_gate`)
    selection_gate: dict[str, Any] | None = None
    #: what a run folder's ``result.json`` holds (``report render`` reads it)
    kind: str = "calibrate-estimate"


def level_claims(systems: list[dict[str, Any]], audits: list[dict[str, Any]]) -> None:
    verdicts = {a["system"]: a["verdict"] for a in audits}
    for s in systems:
        why = []
        if s["support"]["status"] == "REFUSE-LEVEL":
            why.append(
                f"{s['support']['outside_share']:.1%} of judge scores outside the labelled range"
            )
        if verdicts.get(s["system"]) == "FAIL":
            why.append("transport audit FAIL")
        elif s["route"] == "borrowed" and verdicts.get(s["system"]) != "PASS":
            why.append(f"no labels of its own: label ≥ {MIN_OWN_LABELS} of its items")
        s["transport"] = verdicts.get(s["system"], "not audited")
        s["level_claim"] = "refused: " + "; ".join(why) if why else "ok"
        s["transport_verified"] = s["route"] != "borrowed" or s["transport"] == "PASS"


def estimate_systems(
    rows: EstimateRows, st: Settings
) -> tuple[CrossFit, list[dict[str, Any]], dict[str, tuple[EstimateRows, _Fit]]]:
    """The calibration and every system's estimate (no differences, no gates of transport)."""
    cf = fit_crossfit(rows, seed=st.seed, folds=st.folds)
    cal = rows.take(rows.labelled)
    systems, fits = [], {}
    for s in rows.systems:
        r = rows.of(s)
        est, fit = estimate_system(r, cf, cal, st)
        systems.append(est)
        fits[s] = (r, fit)
    return cf, systems, fits


def calibrated_estimates(
    rows: EstimateRows,
    probes: EstimateRows | None = None,
    st: Settings | None = None,
    *,
    design: dict[str, Any] | None = None,
) -> EstimateResult:
    """Every system's calibrated estimate, the differences and the gates (module docstring);
    ``design``: what the label plan in ``rows.pi`` held (said in the result)."""
    st = st or Settings()
    if np.ptp(rows.judge) == 0:
        raise InputError(
            f"every judge score is {rows.judge[0]:g}: equal scores carry no information",
            path=rows.source,
            field="judge score",
        )
    cf, systems, fits = estimate_systems(rows, st)
    cal = rows.take(rows.labelled)
    diffs = [_difference(fits[a], fits[b], cf.k, st.alpha) for a, b in combinations(fits, 2)]
    return estimate_result(cal, cf, systems, diffs, probes, st, selection_gate(rows), design)


def estimate_result(
    cal: EstimateRows,
    cf: CrossFit,
    systems: list[dict[str, Any]],
    diffs: list[dict[str, Any]],
    probes: EstimateRows | None,
    st: Settings,
    gate: dict[str, Any],
    design: dict[str, Any] | None = None,
) -> EstimateResult:
    """The result of the systems' estimates and their paired differences (Holm-adjusted here),
    with the transport audits on ``probes`` and the level claims; ``cal``: the labelled rows,
    ``gate``: the selection gate's."""
    for d, p in zip(diffs, holm([d["p"] for d in diffs]), strict=True):
        d["p_holm"] = float(p)
    audits = []
    if probes is not None:
        audits = [
            transport_audit(probes.of(s), cf, margin=st.margin, alpha=st.alpha)
            for s in probes.systems
        ]
    level_claims(systems, audits)
    unverified = {s["system"] for s in systems if not s["transport_verified"]}
    refused = {s["system"] for s in systems if s["level_claim"] != "ok"}
    for d in diffs:
        d["conditional_on_transport"] = bool({d["a"], d["b"]} & unverified)
        d["level_refused"] = sorted({d["a"], d["b"]} & refused)
    return EstimateResult(
        source=cal.source,
        scale=list(cal.scale),
        calibration=cf.summary() | {"systems_with_labels": sorted(set(cal.system.tolist()))},
        systems=systems,
        differences=diffs,
        transport=audits,
        settings=asdict(st),
        notes=_notes(systems, design, cal.scale),
        plan=design,
        selection_gate=gate,
    )


#: ``calibrate estimate --method``: the calibrated AIPW estimate on the labels the data has (the
#: default); PPI++ and Rogan–Gladen on labels drawn from a fully labelled dataset
ESTIMATE_METHODS = ("aipw", "ppi", "rogan-gladen")


def estimate_mean(
    method: str,
    data: Any,
    st: Settings | None = None,
    *,
    probes: EstimateRows | None = None,
    design: dict[str, Any] | None = None,
    n_labelled: int = 0,
    critical: str = "t",
    scale: tuple[float, float] | None = None,
) -> Any:
    """``calibrate estimate``'s one analysis: a mean from a judge's scores and a few labels by
    ``method`` (:data:`ESTIMATE_METHODS`). ``aipw``: ``data`` the :class:`EstimateRows` (labels on some
    rows), :func:`calibrated_estimates` with ``probes`` and ``design``. ``ppi`` /
    ``rogan-gladen``: ``data`` the ``(human, judge)`` arrays of a fully labelled set,
    :func:`metajudge.stats.ppi.ppi_on_labels` with ``n_labelled`` labels drawn by ``st.seed``,
    ``critical``, ``st.n_boot`` and the target's ``scale`` (a JSON-ready dict; ValueError on
    what it refuses)."""
    st = st or Settings()
    if method not in ESTIMATE_METHODS:
        raise InputError(
            f"unknown method {method!r} (one of {', '.join(ESTIMATE_METHODS)})", field="--method"
        )
    if method == "aipw":
        return calibrated_estimates(data, probes, st, design=design)
    from metajudge.stats.ppi import ppi_on_labels

    human, judge = data
    return ppi_on_labels(
        human,
        judge,
        n_labelled,
        rng=np.random.default_rng(st.seed),
        alpha=st.alpha,
        critical=critical,  # type: ignore[arg-type]
        n_resamples=st.n_boot,
        scale=scale,
        method=method,  # type: ignore[arg-type]
    )


def selection_gate(rows: EstimateRows, alpha: float = GATE_ALPHA) -> dict[str, Any]:
    """Were the labels chosen by outcome? Over the systems with labels of their own (which
    systems carry labels is the design's, not tested), the labelled rows' mean judge score, each
    weighted by 1/q (:func:`inclusion_probability`: the labelling design, a plan's, else labels
    at random among those rows), against all their rows' mean; z = the difference / its design
    SE, √(Σ (1 − q)/q (S − S̄)²)/N (Poisson sampling of the labels). Under random labelling the
    labelled rows are a random subset, so the test holds whatever the clustering. A flag means
    the labels are not a random draw given the design: the estimate's residual correction
    assumes they are."""
    own = [s for s in rows.systems if rows.of(s).labelled.any()]
    r = rows.take(np.isin(rows.system, own))
    q, used = inclusion_probability(r), _used(r)
    unit = float(np.max(np.abs(r.judge))) or 1.0  # z is scale-free: scores near 1e308 stay finite
    x = r.judge / unit
    w = 1.0 / q[used]
    lab_u, all_u = float(np.sum(w * x[used]) / np.sum(w)), float(x.mean())
    var = float(np.sum((1 - q) / q * (x - all_u) ** 2)) / len(r) ** 2
    return selection_verdict(lab_u, all_u, var, unit, alpha)


def selection_verdict(
    lab_u: float, all_u: float, var: float, unit: float, alpha: float = GATE_ALPHA
) -> dict[str, Any]:
    """The selection gate (:func:`selection_gate`) of the labelled rows' weighted mean judge
    score ``lab_u`` against all rows' ``all_u`` with its design variance ``var``, all in units
    of ``unit`` (the largest absolute judge score)."""
    from scipy import stats as ss

    z = (lab_u - all_u) / math.sqrt(var) if var > 0 else 0.0
    lab_m, all_m = lab_u * unit, all_u * unit
    p = float(2 * ss.norm.sf(abs(z)))
    flagged = p < alpha
    return {
        "test": "labelled rows' judge-score mean (weighted by 1/q) against all rows' of the "
        "systems with labels, design z",
        "labelled_mean": lab_m,
        "all_mean": all_m,
        "z": z,
        "p": p,
        "alpha": alpha,
        "flagged": flagged,
        "warning": (
            f"the labelled rows' judge scores differ from all rows' (mean {lab_m:.4g} against "
            f"{all_m:.4g}, z = {z:.2f}, p = {p:.2g} < {alpha:g}) beyond what the labelling "
            "design explains: the labels look chosen by outcome, and the estimates may be biased"
            if flagged
            else None
        ),
    }


def _notes(
    systems: list[dict[str, Any]],
    design: dict[str, Any] | None = None,
    scale: tuple[float, float] | None = None,
) -> list[str]:
    out = []
    if scale is not None:
        out.append(
            f"intervals are clipped to the label scale [{scale[0]:g}, {scale[1]:g}] (differences "
            f"to ±{scale[1] - scale[0]:g})"
        )
    if design is not None:
        lo, hi = design["probability_range"]
        out.append(
            f"label plan {design['file']}: {design['selected_labelled']} of its "
            f"{design['candidates']} candidates were selected and labelled; each is weighted by "
            f"1/probability (probabilities {lo:.3g} to {hi:.3g}), the rows labelled before the "
            "plan by 1"
        )
        if design["selected_unlabelled"]:
            out.append(
                f"{design['selected_unlabelled']} selected candidate(s) still have no label: "
                "they count as not selected, which biases the estimate if their labels would "
                "differ from the judge's; label them and run again"
            )
        if design["labelled_not_selected"]:
            out.append(
                f"{design['labelled_not_selected']} candidate(s) not selected carry a label: "
                "it is used by the calibration, not as a weighted residual"
            )
    borrowed = [s["system"] for s in systems if s["route"] == "borrowed"]
    if borrowed:
        has = (
            "has no labels of its own; its estimate uses"
            if len(borrowed) == 1
            else ("have no labels of their own; their estimates use")
        )
        out.append(
            f"borrowed calibration: {', '.join(borrowed)} {has} the calibration learnt on the "
            "other systems' labels, assuming it transfers; no level is claimed without "
            f"{MIN_OWN_LABELS} labels of its own or a transport audit PASS on labelled probes"
        )
    return out
