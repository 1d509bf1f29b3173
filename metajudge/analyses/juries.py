"""Juries of LLM judges on labelled data: do several judges together agree with the humans better
than the best one alone?

The responses with a human majority label and a label from every judge are split by *input*
(all responses of an input on one side; seeded) into a fitting split (``fit_fraction``) and an
evaluation split. On the fitting split: each judge's accuracy, hence the best single judge and
the weights of the weighted vote, ``w_j = log((K − 1)·acc_j / (1 − acc_j))`` (K labels; the
weighted majority that is optimal for independent judges, Nitzan & Paroush 1982; acc clipped to
``[0.5/n, 1 − 0.5/n]``). On the evaluation split only:

- **majority vote**: the most frequent label; a tie between labels goes to the tied label of the
  judge most accurate on the fitting split;
- **weighted vote**: the label with the largest weight sum (same tie rule);
- each single judge, the juries' accuracy and Cohen's κ against the majority human label;
- McNemar's test of each jury against the best single judge (paired by response);
- the Pearson correlation of every two judges' error indicators (1 = wrong), its mean ρ̄ over
  pairs, and the effective number of independent judges ``k / (1 + (k − 1)·ρ̄)`` (the design
  effect of an average of k equally correlated votes, Kish 1965).

On numeric ratings (Likert data), :func:`jury` without labels combines judge *scores*: the mean
score and a weighted mean (weights ∝ 1/MSE on the fitting split) against the human mean rating,
beside the best single judge with a paired permutation test (Perm-Inp). On label data a mean
score is the majority vote for two labels and undefined beyond, so a label jury does not compute
one. :func:`jury` is the one entry for both.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats.classification import accuracy
from metajudge.stats.correlation import pearson
from metajudge.stats.partial import partial_pearson

TIE_RULE = "a tie goes to the tied label of the judge most accurate on the fitting split"


@dataclass
class JuryResult(Result):
    dataset: str
    dimension: str
    judges: list[str]
    labels: list[str]
    n_fit: int
    n_eval: int
    dropped: dict[str, int]
    fit_accuracy: dict[str, float]
    weights: dict[str, float]
    best_single: str
    rows: list[dict[str, Any]]  # one per single judge and jury: accuracy, κ, McNemar vs best
    error_correlation: dict[str, dict[str, float]]
    mean_error_correlation: float
    effective_judges: float
    tie_rule: str = TIE_RULE
    seed: int = 0
    fit_fraction: float = 0.5
    fit_groups: list[str] = field(default_factory=list)  # the inputs of the fitting split
    notes: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        best = next(r for r in self.rows if r["name"] == self.best_single)
        jury = max((r for r in self.rows if r["kind"] == "jury"), key=lambda r: r["accuracy"])
        better = "better than" if jury["accuracy"] > best["accuracy"] else "not better than"
        return (
            f"On {self.dataset} ({self.dimension}), the {jury['name']} of {len(self.judges)} "
            f"judges agrees with the human majority on {jury['accuracy']:.3f} of {self.n_eval} "
            f"held-out responses, {better} the best single judge {self.best_single} "
            f"({best['accuracy']:.3f}; McNemar p = {jury['mcnemar_p']:.3g}); mean error "
            f"correlation {self.mean_error_correlation:.2f}, effective number of judges "
            f"{self.effective_judges:.2f}."
        )


def _split(groups: Sequence[str], fit_fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the fitting split: a seeded share of the distinct groups."""
    uniq = list(dict.fromkeys(groups))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(uniq))
    n_fit = max(1, min(len(uniq) - 1, round(fit_fraction * len(uniq))))
    fit = {uniq[i] for i in order[:n_fit]}
    return np.array([g in fit for g in groups])


def _vote(votes: Sequence[str], weights: Sequence[float], rank: Sequence[int]) -> str:
    """The label with the largest weight sum; a tie to the tied label of the best-ranked judge."""
    total: Counter[str] = Counter()
    for v, w in zip(votes, weights):
        total[v] += w
    top = max(total.values())
    tied = {lab for lab, s in total.items() if math.isclose(s, top, rel_tol=1e-12, abs_tol=1e-12)}
    for j in rank:
        if votes[j] in tied:
            return votes[j]
    raise AssertionError("unreachable")  # pragma: no cover


def _error_correlation(
    names: Sequence[str], wrong: np.ndarray, control: np.ndarray | None = None
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for a in range(len(names)):
        out[names[a]] = {}
        for b in range(len(names)):
            x, y = wrong[a], wrong[b]
            ok = x.std() > 0 and y.std() > 0
            if not ok:
                out[names[a]][names[b]] = math.nan
            elif control is None:
                out[names[a]][names[b]] = pearson(x, y)
            else:
                out[names[a]][names[b]] = partial_pearson(x, y, control)
    return out


def _redundancy(
    names: Sequence[str], errors: np.ndarray, control: np.ndarray | None = None
) -> tuple[dict[str, dict[str, float]], float, float]:
    """The judges' error correlation matrix (with ``control``, the human score, partialled out),
    its mean ρ̄ over pairs and the effective number of judges ``k / (1 + (k − 1)·ρ̄)`` (module
    docstring)."""
    corr = _error_correlation(names, errors, control)
    off = [corr[a][b] for a in names for b in names if a < b and math.isfinite(corr[a][b])]
    rho = float(np.mean(off)) if off else math.nan
    n = len(names)
    return corr, rho, (n / (1 + (n - 1) * rho) if math.isfinite(rho) else math.nan)


def _kept(
    gold: Sequence[Any],
    preds: Mapping[str, Sequence[Any]],
    names: Sequence[str],
    ok: Callable[[Any], bool],
    no_human: str,
    no_judge: str,
) -> tuple[list[int], dict[str, int]]:
    """The responses with a human value and every judge's, and the dropped counts (named)."""
    keep = [i for i, g in enumerate(gold) if ok(g) and all(ok(preds[j][i]) for j in names)]
    dropped = {
        no_human: sum(not ok(g) for g in gold),
        no_judge: sum(
            ok(g) and any(not ok(preds[j][i]) for j in names) for i, g in enumerate(gold)
        ),
    }
    return keep, dropped


def jury(
    gold: Sequence[Any],
    preds: Mapping[str, Sequence[Any]],
    groups: Sequence[str],
    labels: Sequence[str] | None = None,
    *,
    systems: Sequence[str] | None = None,
    dataset: str = "",
    dimension: str = "",
    fit_fraction: float = 0.5,
    seed: int = 0,
    n_resamples: int = 1000,
) -> JuryResult | ScoreJuryResult:
    """The juries of the judges ``preds`` (``{judge: value per response}``, aligned with ``gold``
    and ``groups``, the input of each response) against ``gold`` (module docstring) — the one
    jury entry: with ``labels``, votes on labels (:class:`JuryResult`); without, juries of
    numeric scores against the human mean (:class:`ScoreJuryResult`; ``systems``: the system of
    each response, for the permutation test; ``n_resamples`` its permutations)."""
    names = list(preds)
    if len(names) < 2:
        raise InputError(f"a jury needs at least two judges (got {names})", field="scores")
    common = {
        "dataset": dataset,
        "dimension": dimension,
        "fit_fraction": fit_fraction,
        "seed": seed,
    }
    if labels is not None:
        return _label_jury(gold, preds, groups, labels, **common)
    if systems is None:
        raise InputError("a jury of scores needs the system of each response", field="systems")
    return _score_jury(gold, preds, groups, systems, n_resamples=n_resamples, **common)


def _row(
    name: str,
    kind: str,
    gold: list[str],
    pred: list[str],
    labels: Sequence[str],
    best: list[str] | None,
) -> dict[str, Any]:
    from metajudge.analyses.verdict_accuracy import mcnemar
    from metajudge.stats.classification import categorical_scores

    cs = categorical_scores(gold, pred, labels)
    row: dict[str, Any] = {
        "name": name,
        "kind": kind,
        "accuracy": cs.accuracy,
        "cohen_kappa": cs.cohen_kappa,
    }
    if best is not None:
        right = [p == g for p, g in zip(pred, gold)]
        right_best = [p == g for p, g in zip(best, gold)]
        only_jury, only_best, p, method = mcnemar(right, right_best)
        row.update(
            vs_best=cs.accuracy - float(np.mean(right_best)),
            mcnemar_p=p,
            only_this_right=only_jury,
            only_best_right=only_best,
            mcnemar=method,
        )
    return row


def _label_jury(
    gold: Sequence[str | None],
    preds: Mapping[str, Sequence[str | None]],
    groups: Sequence[str],
    labels: Sequence[str],
    *,
    dataset: str,
    dimension: str,
    fit_fraction: float,
    seed: int,
) -> JuryResult:
    """The vote juries of :func:`jury` on labels (module docstring)."""
    names = list(preds)
    keep, dropped = _kept(
        gold, preds, names, lambda v: v is not None, "no_human_majority", "a_judge_without_label"
    )
    if len({groups[i] for i in keep}) < 2:
        raise InputError(
            "fewer than two inputs with a human majority and every judge's label", field="scores"
        )
    g = [str(gold[i]) for i in keep]
    P = {j: [str(preds[j][i]) for i in keep] for j in names}
    fit = _split([groups[i] for i in keep], fit_fraction, seed)
    n_fit = int(fit.sum())
    on_fit = np.flatnonzero(fit)
    acc = {j: accuracy([g[i] for i in on_fit], [P[j][i] for i in on_fit]) for j in names}
    k = max(len(labels), 2)
    lo, hi = 0.5 / n_fit, 1 - 0.5 / n_fit
    weights = {
        j: math.log((k - 1) * min(max(a, lo), hi) / (1 - min(max(a, lo), hi)))
        for j, a in acc.items()
    }
    rank = sorted(range(len(names)), key=lambda j: -acc[names[j]])
    ev = np.flatnonzero(~fit)
    ge = [g[i] for i in ev]
    pe = {j: [P[j][i] for i in ev] for j in names}
    best = max(names, key=lambda j: acc[j])
    votes = [[pe[j][t] for j in names] for t in range(len(ev))]
    majority = [_vote(v, [1.0] * len(names), rank) for v in votes]
    weighted = [_vote(v, [weights[j] for j in names], rank) for v in votes]
    rows = [_row(j, "single", ge, pe[j], labels, None if j == best else pe[best]) for j in names]
    rows += [
        _row("majority vote", "jury", ge, majority, labels, pe[best]),
        _row("weighted vote", "jury", ge, weighted, labels, pe[best]),
    ]
    wrong = np.array([[p != t for p, t in zip(pe[j], ge)] for j in names], dtype=float)
    corr, rho, effective = _redundancy(names, wrong)
    return JuryResult(
        dataset=dataset,
        dimension=dimension,
        judges=names,
        labels=list(labels),
        n_fit=n_fit,
        n_eval=len(ev),
        dropped=dropped,
        fit_accuracy=acc,
        weights=weights,
        best_single=best,
        rows=rows,
        error_correlation=corr,
        mean_error_correlation=rho,
        effective_judges=effective,
        seed=seed,
        fit_fraction=fit_fraction,
        fit_groups=sorted({groups[i] for i, f in zip(keep, fit) if f}),
    )


# --- juries of numeric scores (Likert / ratings) -------------------------------------------

SCORE_TEST = (
    "Perm-Inp (Deutsch, Dror & Roth 2021): the jury's and the best judge's scores of whole "
    "inputs swapped at random, global Pearson r with the human mean, two-sided add-one p"
)


@dataclass
class ScoreJuryResult(Result):
    """Juries of numeric judge scores against the human mean rating (:func:`jury`, no labels)."""

    dataset: str
    dimension: str
    judges: list[str]
    n_fit: int
    n_eval: int
    dropped: dict[str, int]
    fit_pearson: dict[str, float]
    fit_mse: dict[str, float]
    weights: dict[str, float]
    best_single: str
    rows: list[dict[str, Any]]  # one per single judge and jury: Pearson, Kendall, test vs best
    # the errors' correlation with the human mean partialled out (the errors score − human
    # share the −human term, which alone correlates them); the raw mean beside it
    error_correlation: dict[str, dict[str, float]]
    mean_error_correlation: float
    effective_judges: float
    mean_raw_error_correlation: float = math.nan
    test: str = SCORE_TEST
    n_resamples: int = 1000
    seed: int = 0
    fit_fraction: float = 0.5
    fit_groups: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        best = next(r for r in self.rows if r["name"] == self.best_single)
        jury = max((r for r in self.rows if r["kind"] == "jury"), key=lambda r: r["pearson"])
        better = "above" if jury["pearson"] > best["pearson"] else "not above"
        return (
            f"On {self.dataset} ({self.dimension}), the {jury['name']} of {len(self.judges)} "
            f"judges correlates with the human mean at Pearson r = {jury['pearson']:.3f} on "
            f"{self.n_eval} held-out responses, {better} the best single judge "
            f"{self.best_single} ({best['pearson']:.3f}; Perm-Inp p = {jury['p_value']:.3g}); "
            f"mean error correlation {self.mean_error_correlation:.2f} with the human mean "
            f"partialled out ({self.mean_raw_error_correlation:.2f} raw), effective number of "
            f"judges {self.effective_judges:.2f}."
        )


def _matrix(v: np.ndarray, systems: Sequence[str], groups: Sequence[str]) -> np.ndarray:
    """Values as a systems × inputs matrix (NaN where a system has no response to an input)."""
    si = {s: k for k, s in enumerate(dict.fromkeys(systems))}
    gi = {g: k for k, g in enumerate(dict.fromkeys(groups))}
    out = np.full((len(si), len(gi)), np.nan)
    for x, s, g in zip(v, systems, groups, strict=True):
        out[si[s], gi[g]] = x
    return out


def _score_row(
    name: str, kind: str, pred: np.ndarray, gold: np.ndarray, best: np.ndarray | None, ctx: Any
) -> dict[str, Any]:
    from metajudge.stats.correlation import pearson, statistic
    from metajudge.stats.resampling_tests import perm_test

    row: dict[str, Any] = {
        "name": name,
        "kind": kind,
        "pearson": pearson(pred, gold),
        "kendall": statistic("kendall", judge=pred, human=gold),
        "rmse": float(np.sqrt(np.mean((pred - gold) ** 2))),
    }
    if best is not None:
        systems, groups, n_resamples, seed = ctx
        Z = _matrix(gold, systems, groups)
        t = perm_test(
            _matrix(pred, systems, groups),
            _matrix(best, systems, groups),
            Z,
            level="global",
            method="inputs",
            n_resamples=n_resamples,
            rng=seed,
        )
        row.update(vs_best=t.delta, p_value=t.p_value)
    return row


def _finite(v: Any) -> bool:
    return v is not None and math.isfinite(float(v))


def _inverse_mse_weights(mse: Mapping[str, float]) -> dict[str, float]:
    """``w_j ∝ 1 / MSE_j`` summing to 1 (an MSE of 0 counts as 1e-12)."""
    inv = {j: 1.0 / max(m, 1e-12) for j, m in mse.items()}
    return {j: v / sum(inv.values()) for j, v in inv.items()}


def _score_jury(
    gold: Sequence[float | None],
    preds: Mapping[str, Sequence[float | None]],
    groups: Sequence[str],
    systems: Sequence[str],
    *,
    dataset: str,
    dimension: str,
    fit_fraction: float,
    seed: int,
    n_resamples: int,
) -> ScoreJuryResult:
    """The score juries of :func:`jury` on numeric judge scores (``{judge: score per response}``)
    against ``gold`` (the human mean per response), split by input (``groups``) as votes are:

    - **mean score**: the plain mean of the judges' scores;
    - **weighted mean**: weights ``w_j ∝ 1 / MSE_j`` (squared error against the human mean on
      the fitting split; the minimum-variance combination of independent unbiased errors),
      normalised to sum to 1;
    - the best single judge: the highest Pearson r on the fitting split;
    - on the evaluation split: Pearson r, Kendall τ_b and RMSE of each; each jury against the
      best single judge by Perm-Inp (:data:`SCORE_TEST`, paired by response); the partial
      correlation of the judges' errors (score − human mean) given the human mean (errors share
      the −human term, which alone would correlate them), ρ̄ and ``k / (1 + (k − 1)·ρ̄)``; the
      raw mean error correlation beside it.
    """
    names = list(preds)
    keep, dropped = _kept(gold, preds, names, _finite, "no_human_rating", "a_judge_without_score")
    if len({groups[i] for i in keep}) < 2:
        raise InputError(
            "fewer than two inputs with a human rating and every judge's score", field="scores"
        )
    g = np.array([float(gold[i]) for i in keep])
    P = {j: np.array([float(preds[j][i]) for i in keep]) for j in names}
    grp = [groups[i] for i in keep]
    fit = _split(grp, fit_fraction, seed)
    fr = {j: pearson(P[j][fit], g[fit]) for j in names}
    mse = {j: float(np.mean((P[j][fit] - g[fit]) ** 2)) for j in names}
    weights = _inverse_mse_weights(mse)
    best = max(names, key=lambda j: fr[j])
    ev = ~fit
    ge = g[ev]
    pe = {j: P[j][ev] for j in names}
    ctx = ([systems[i] for i, e in zip(keep, ev) if e], [x for x, e in zip(grp, ev) if e])
    ctx = (*ctx, n_resamples, seed)
    mean = np.mean([pe[j] for j in names], axis=0)
    wmean = np.sum([weights[j] * pe[j] for j in names], axis=0)
    rows = [_score_row(j, "single", pe[j], ge, None if j == best else pe[best], ctx) for j in names]
    rows += [
        _score_row("mean score", "jury", mean, ge, pe[best], ctx),
        _score_row("weighted mean", "jury", wmean, ge, pe[best], ctx),
    ]
    errors = np.array([pe[j] - ge for j in names])
    corr, rho, effective = _redundancy(names, errors, control=ge)
    raw = _redundancy(names, errors)[1]
    return ScoreJuryResult(
        dataset=dataset,
        dimension=dimension,
        judges=names,
        n_fit=int(fit.sum()),
        n_eval=int(ev.sum()),
        dropped=dropped,
        fit_pearson=fr,
        fit_mse=mse,
        weights=weights,
        best_single=best,
        rows=rows,
        error_correlation=corr,
        mean_error_correlation=rho,
        effective_judges=effective,
        mean_raw_error_correlation=raw,
        n_resamples=n_resamples,
        seed=seed,
        fit_fraction=fit_fraction,
        fit_groups=sorted({x for x, f in zip(grp, fit) if f}),
    )
