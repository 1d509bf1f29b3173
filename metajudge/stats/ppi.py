"""Estimates that stay valid with a cheap judge: prediction-powered inference and Rogan–Gladen.

PPI++ for a mean (Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient Prediction-Powered
Inference", arXiv 2311.01453, §2 and Example 1), as ``ppi_py.ppi_mean_ci`` computes it: n human
labels Y_i with judge predictions f_i, N further items with judge predictions f̃_j only;

    θ̂_λ = mean(Y) + λ·(mean f̃ − mean f),
    λ̂ = Cov(Y, f) / ((1 + n/N)·Var(f ∪ f̃)), clipped to [0, 1] (power tuning),
    CI = θ̂ ± z_{1−α/2}·√(Var(λ̂ f̃)/N + Var(Y − λ̂ f)/n)   (population variances, ddof 0).

Beside it: the human-only mean with its normal CI (λ = 0) and the judge-only estimate mean f̃
over all N + n items with its (naive) normal CI — biased whenever the judge is. The effective
sample size of PPI++ is n·Var_human/Var_PPI: the number of human labels the human-only estimate
would need for the same CI width.

Critical value: ``critical="t"`` (default) uses Student's t with n − 1 degrees of freedom for the
PPI++ and human-only intervals (the variance of both is dominated by the n labelled items);
``critical="z"`` is ppi_py's normal quantile. On LFTQA-Eval (G-Eval gpt-4o as the judge, 1,000
draws) the z interval covered the full-data mean in 92.5% of draws at n = 25, the t interval in
>= 93% (``benchmarks/ppi_coverage.py``).

Small n: below :data:`MIN_LABELS` human labels the intervals under-cover (measured coverage of the
95% CI, ``benchmarks/ppi_coverage.py``, :data:`MEASURED_COVERAGE`), so :func:`ppi_on_labels`
warns with the measured figures and gives no effective-sample-size gain (a ratio of two variances
estimated from a handful of labels). Every interval is clipped to the scale of the target when
one is given (a mean of 1–5 ratings lies in [1, 5]; clipping keeps every covering interval
covering), and the clipped ones are named. What the coverage is about: the full-data human mean
(the population the labelled units are drawn from), not a finite test set.

Binary verdicts (pass/fail): the Rogan–Gladen correction (Rogan & Gladen 1978), as the ``judgy``
package does: with the judge's TPR and TNR measured on the labelled items and the judge's pass
rate p on the unlabelled ones, θ̂ = (p + TNR − 1)/(TPR + TNR − 1), clipped to [0, 1]; CI by a
seeded percentile bootstrap that resamples the labelled and the unlabelled items.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from metajudge import stats
from metajudge.results import Result
from metajudge.stats.clustered import t_interval

#: below this many human labels the intervals under-cover: warn, and give no ESS gain
MIN_LABELS = 30
#: coverage of the 95% CI of the full-data human mean, 1,000 seeded draws of n labelled units on
#: LFTQA-Eval with G-Eval gpt-4o as the judge (``benchmarks/ppi_coverage.py``):
#: n -> (PPI++ with t, PPI++ with z); asserted in tests/stats/test_ppi_small_n.py
MEASURED_COVERAGE = {10: (0.891, 0.855), 25: (0.942, 0.925)}


def small_n_warning(n: int, alpha: float = 0.05) -> str | None:
    """The warning for ``n`` human labels below :data:`MIN_LABELS` (None from MIN_LABELS on)."""
    if n >= MIN_LABELS:
        return None
    measured = "; ".join(
        f"n = {k}: {t:.3f} with t, {z:.3f} with z" for k, (t, z) in MEASURED_COVERAGE.items()
    )
    return (
        f"only {n} human labels: below {MIN_LABELS} the intervals under-cover and no ESS gain is "
        f"given. Measured coverage of the 95% PPI++ interval of the full-data mean "
        f"(benchmarks/ppi_coverage.py, LFTQA-Eval, 1,000 draws): {measured} (nominal 0.95"
        + (f"; this run asks {1 - alpha:.3g}" if abs(alpha - 0.05) > 1e-12 else "")
        + "). Label more units"
    )


@dataclass(frozen=True)
class MeanEstimate:
    """One estimate of a mean: value, CI, its standard error."""

    method: str
    value: float
    lo: float
    hi: float
    se: float


@dataclass(frozen=True)
class PPIResult(Result):
    """PPI++ beside the human-only and the judge-only estimates, λ̂ and the effective n."""

    ppi: MeanEstimate
    human_only: MeanEstimate
    judge_only: MeanEstimate
    lam: float
    n: int
    N: int
    effective_n: float

    @property
    def ess_gain(self) -> float:
        return self.effective_n / self.n

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ess_gain": self.ess_gain}


def _normal(method: str, value: float, se: float, alpha: float, df: float) -> MeanEstimate:
    """Interval value ± q·se, q Student's t with ``df`` (the normal quantile for an infinite df):
    :func:`metajudge.stats.clustered.t_interval`."""
    return MeanEstimate(method, value, *t_interval(value, se, df, alpha), se)


def ppi_lambda(y: np.ndarray, f: np.ndarray, f_unl: np.ndarray) -> float:
    """Power-tuned λ̂ for the mean (module docstring), clipped to [0, 1]."""
    n, N = y.size, f_unl.size
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    var = float(np.var(np.concatenate([f, f_unl]), ddof=1))
    if var == 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / N) * var), 0.0, 1.0))


def ppi_mean(
    y: np.ndarray,
    f: np.ndarray,
    f_unlabelled: np.ndarray,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    critical: Literal["t", "z"] = "t",
) -> PPIResult:
    """PPI++ mean with CI, the human-only CI, the judge-only estimate (module docstring).

    >>> y = np.array([1.0, 2, 3, 4]); f = y + 1; fu = np.array([2.0, 3, 4, 5, 6])
    >>> r = ppi_mean(y, f, fu)
    >>> round(r.lam, 4), round(r.ppi.value, 4), round(r.human_only.value, 4)
    (0.3571, 2.6786, 2.5)
    """
    y, f, fu = (np.asarray(a, dtype=float) for a in (y, f, f_unlabelled))
    if y.shape != f.shape or y.size < 2 or fu.size < 1:
        raise ValueError("need >= 2 labelled items (y, f of equal length) and >= 1 unlabelled")
    n, N = y.size, fu.size
    lh = ppi_lambda(y, f, fu) if lam is None else lam
    value = float(y.mean() + lh * (fu.mean() - f.mean()))
    se = math.sqrt(np.var(lh * fu) / N + np.var(y - lh * f) / n)
    df = n - 1 if critical == "t" else math.inf
    human = _normal("human-only", float(y.mean()), math.sqrt(np.var(y) / n), alpha, df)
    allf = np.concatenate([f, fu])
    judge_se = math.sqrt(np.var(allf) / allf.size)
    judge = _normal("judge-only", float(allf.mean()), judge_se, alpha, math.inf)
    eff = n * (human.se / se) ** 2 if se > 0 else math.inf
    return PPIResult(_normal("PPI++", value, se, alpha, df), human, judge, lh, n, N, eff)


def rogan_gladen(p_obs: float, tpr: float, tnr: float) -> float:
    """Prevalence corrected for a judge's TPR and TNR (Rogan & Gladen 1978), clipped to [0, 1].

    >>> round(rogan_gladen(0.5, 0.9, 0.8), 4)
    0.4286
    """
    den = tpr + tnr - 1
    if den <= 0:
        return math.nan
    return float(min(1.0, max(0.0, (p_obs + tnr - 1) / den)))


def _rates(y: np.ndarray, f: np.ndarray) -> tuple[float, float]:
    pos, neg = y == 1, y == 0
    tpr = float(f[pos].mean()) if pos.any() else math.nan
    tnr = float(1 - f[neg].mean()) if neg.any() else math.nan
    return tpr, tnr


def rogan_gladen_ci(
    y: np.ndarray,
    f: np.ndarray,
    f_unlabelled: np.ndarray,
    *,
    rng: np.random.Generator,
    n_resamples: int = 2000,
    alpha: float = 0.05,
) -> MeanEstimate:
    """Rogan–Gladen pass rate with a percentile bootstrap CI (labelled and unlabelled resampled)."""
    y, f, fu = (np.asarray(a, dtype=float) for a in (y, f, f_unlabelled))
    tpr, tnr = _rates(y, f)
    value = rogan_gladen(float(fu.mean()), tpr, tnr)
    il = stats.bootstrap_indices(y.size, n_resamples, rng)
    iu = stats.bootstrap_indices(fu.size, n_resamples, rng)
    reps = np.array(
        [
            rogan_gladen(float(fu[iu[b]].mean()), *_rates(y[il[b]], f[il[b]]))
            for b in range(n_resamples)
        ]
    )
    lo, hi = stats.percentile_ci(reps, 1 - alpha)
    fin = reps[np.isfinite(reps)]
    return MeanEstimate(
        "Rogan-Gladen", value, lo, hi, float(fin.std(ddof=1)) if fin.size > 1 else math.nan
    )


def coverage_simulation(
    human: np.ndarray,
    judge: np.ndarray,
    n: int,
    *,
    draws: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    critical: Literal["t", "z"] = "t",
) -> dict[str, dict[str, float]]:
    """Draw n labelled items ``draws`` times (the rest unlabelled); coverage of the full mean.

    Returns per method (PPI++, human-only, judge-only) the share of draws whose CI covers the
    full-data human mean and the mean CI width, plus PPI++'s mean effective-sample-size gain.
    """
    h, j = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    target = float(h.mean())
    cover = {"PPI++": 0, "human-only": 0, "judge-only": 0}
    width = dict.fromkeys(cover, 0.0)
    gain = 0.0
    for _ in range(draws):
        perm = rng.permutation(h.size)
        lab, unl = perm[:n], perm[n:]
        r = ppi_mean(h[lab], j[lab], j[unl], alpha=alpha, critical=critical)
        for e in (r.ppi, r.human_only, r.judge_only):
            cover[e.method] += e.lo <= target <= e.hi
            width[e.method] += e.hi - e.lo
        gain += r.ess_gain
    out = {m: {"coverage": cover[m] / draws, "mean_width": width[m] / draws} for m in cover}
    out["PPI++"]["mean_ess_gain"] = gain / draws
    return out


def ppi_units(
    data: Any, *, system: str | None = None, eps: float = 0.0
) -> tuple[np.ndarray, np.ndarray, str]:
    """The units PPI estimates over, from a one-judge :class:`~metajudge.analyses.backbone_swap.SwapData`:
    ``(human, judge, target)``.

    Likert data: responses (human = mean over annotators), optionally only ``system``'s; the
    target is the mean human score. Pairwise data: pairs, 1 when side b wins, 0.5 for a tie, 0
    when a wins (the judge's decision from its score difference with tie band ``eps``); the
    target is side b's win rate.
    """
    v, s = data.view, data.scores[0]
    if data.kind == "likert":
        h, j = stats.annotator_mean(data.human_resp), np.asarray(s, dtype=float)
        if system is not None:
            if system not in v.systems:
                from metajudge.errors import InputError

                raise InputError(
                    f"no system {system!r} (have {', '.join(v.systems)})", field="system"
                )
            keep = v.resp_system == v.systems.index(system)
            h, j = h[keep], j[keep]
        return h, j, "mean human score" + (f" of {system}" if system else "")
    h = (stats.tie_decisions(stats.annotator_mean(data.human_pair)) + 1) / 2
    j = (stats.tie_decisions(s[v.pair_b] - s[v.pair_a], eps) + 1) / 2
    return h, j, "win rate of side b (tie = 0.5)"


def clip_to_scale(est: Any, scale: tuple[float, float] | None) -> tuple[Any, bool]:
    """``est`` (a :class:`MeanEstimate` or any estimate with ``lo``/``hi``) with its interval
    clipped to ``scale``, and whether it was."""
    from dataclasses import replace

    if scale is None:
        return est, False
    lo, hi = max(est.lo, scale[0]), min(est.hi, scale[1])
    if (lo, hi) == (est.lo, est.hi):
        return est, False
    return replace(est, lo=lo, hi=hi), True


def _clipped(out: dict[str, Any], ests: list[Any], scale: tuple[float, float] | None) -> list[Any]:
    """``ests`` clipped to ``scale``; ``out`` updated (its estimates, ``clipped``: the methods)."""
    keys = {"PPI++": "ppi", "human-only": "human_only", "judge-only": "judge_only"}
    keys["Rogan-Gladen"] = "rogan_gladen"
    res, names = [], []
    for e in ests:
        c, was = clip_to_scale(e, scale)
        res.append(c)
        if was:
            names.append(e.method)
            if e.method in keys:
                out[keys[e.method]] = asdict(c)
    out["scale"] = list(scale) if scale else None
    out["clipped"] = names
    return res


def ppi_on_labels(
    human: np.ndarray,
    judge: np.ndarray,
    n_labelled: int,
    *,
    rng: np.random.Generator,
    alpha: float = 0.05,
    critical: Literal["t", "z"] = "t",
    n_resamples: int = 2000,
    scale: tuple[float, float] | None = None,
    method: Literal["ppi", "rogan-gladen"] = "ppi",
) -> dict[str, Any]:
    """Draw ``n_labelled`` units with a human label at random (``rng``); PPI++ on them plus the
    judge on the rest; Rogan–Gladen too when labels and verdicts are binary. ``method``: the
    estimate the result leads with (``method`` in the result); ``rogan-gladen`` refuses labels or
    verdicts other than 0/1 (ValueError). The full-data human
    mean (known here: the dataset is fully labelled) is reported beside, with whether each CI
    covers it. Units the judge left unscored are dropped and counted. ``scale``: the target's
    range; intervals beyond it are clipped and named (``clipped``). Below :data:`MIN_LABELS` labels:
    ``warnings`` (:func:`small_n_warning`) and no ESS gain (``ess_gain``/``effective_n`` None)."""
    h, j = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    scored = np.isfinite(j)
    labelled_pool = np.flatnonzero(scored & np.isfinite(h))
    if not 2 <= n_labelled < scored.sum():
        raise ValueError(f"n_labelled must be in [2, {int(scored.sum()) - 1}], got {n_labelled}")
    if n_labelled > labelled_pool.size:
        raise ValueError(f"only {labelled_pool.size} units carry a human label")
    binary = np.isin(h[labelled_pool], (0.0, 1.0)).all() and np.isin(j[scored], (0.0, 1.0)).all()
    if method == "rogan-gladen" and not binary:
        raise ValueError("rogan-gladen needs 0/1 human labels and 0/1 judge verdicts")
    lab = rng.choice(labelled_pool, size=n_labelled, replace=False)
    unl = np.setdiff1d(np.flatnonzero(scored), lab)
    r = ppi_mean(h[lab], j[lab], j[unl], alpha=alpha, critical=critical)
    full = float(np.mean(h[labelled_pool]))
    out: dict[str, Any] = r.to_dict() | {
        "full_human_mean": full,
        "n_units": int(h.size),
        "n_unscored": int((~scored).sum()),
        "critical": critical,
        "alpha": alpha,
        "method": method,
    }
    ests = [r.ppi, r.human_only, r.judge_only]
    if binary:
        rg = rogan_gladen_ci(h[lab], j[lab], j[unl], rng=rng, n_resamples=n_resamples, alpha=alpha)
        out["rogan_gladen"] = asdict(rg)
        ests.append(rg)
    ests = _clipped(out, ests, scale)
    out["covers_full"] = {e.method: bool(e.lo <= full <= e.hi) for e in ests}
    warn = small_n_warning(n_labelled, alpha)
    out["warnings"] = [warn] if warn else []
    if warn:
        out["ess_gain"] = out["effective_n"] = None
    return out
