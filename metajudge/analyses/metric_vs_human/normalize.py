"""Normalisation of per-pair metric differences d = m(b) − m(a) .

Modes, always named in the output:

* ``minmax`` — RAGChecker's ``data/meta_evaluation/meta_eval.py`` (Ru et al. 2024), exactly:
  min and max over the non-missing d, missing d replaced by the median d, then
  d' = ((d − min)/(max − min) − 0.5)·2·s with s the half-width of the human scale (their code
  hard-codes 4 = 2·2 for the −2..2 scale). Constant d (max = min) is undefined here: RAGChecker's
  code would fall back to the raw d, which has no defined correlation either.
* ``sign`` — the MT-RAIG wording (Section 4.2 and Appendix B.1): d → {−1, 0, 1} with a tie band |d| ≤ ε;
  ε = 0 by default, or learned by k-fold cross-validation (:func:`learn_epsilon_cv`) on folds
  that exclude the scored items (tie calibration of Deutsch et al. 2023).
* ``raw`` — d itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from metajudge.stats.decisions import tie_decisions

NormMode = Literal["minmax", "sign", "raw"]
MODES: tuple[str, ...] = ("minmax", "sign", "raw")


@dataclass
class Normalized:
    """Normalised differences (NaN where a pair is left out), and what happened on the way."""

    values: np.ndarray
    mode: str
    n_imputed: int = 0  # minmax: missing d replaced by the median
    undefined: str | None = None  # why no value could be produced (e.g. constant d)
    params: dict[str, float | list[float]] = field(default_factory=dict)


def minmax(d: np.ndarray, half_width: float, *, impute: bool = True) -> Normalized:
    """RAGChecker's linear normalisation of d onto the human scale ``[-half_width, half_width]``.

    ``impute``: missing d become the median d (RAGChecker); else they stay NaN.

    >>> minmax(np.array([0.0, 0.5, 1.0, np.nan]), 2.0).values.tolist()
    [-2.0, 0.0, 2.0, 0.0]
    """
    d = np.asarray(d, dtype=float)
    ok = np.isfinite(d)
    if not ok.any():
        return Normalized(
            np.full(d.shape, np.nan), "minmax", undefined="no pair has a score difference"
        )
    lo = float(np.min(d[ok]))
    hi = float(np.max(d[ok]))
    med = float(np.median(d[ok]))
    filled = np.where(ok, d, med) if impute else d
    n_imp = int((~ok).sum()) if impute else 0
    params: dict[str, float | list[float]] = {
        "min": lo,
        "max": hi,
        "median": med,
        "half_width": half_width,
    }
    if hi - lo == 0:
        return Normalized(
            np.full(d.shape, np.nan),
            "minmax",
            n_imp,
            undefined=f"metric difference is constant ({lo:g}) over all {int(ok.sum())} scored pairs",
            params=params,
        )
    return Normalized(
        ((filled - lo) / (hi - lo) - 0.5) * 2 * half_width, "minmax", n_imp, params=params
    )


def sign(d: np.ndarray, epsilon: float | np.ndarray = 0.0) -> Normalized:
    """d → {−1, 0, 1} with ties |d| ≤ ε (per pair when ``epsilon`` is an array). NaN stays NaN.

    >>> sign(np.array([0.3, -0.01, 0.0, np.nan]), 0.05).values.tolist()
    [1.0, 0.0, 0.0, nan]
    """
    eps = np.asarray(epsilon, dtype=float)
    out = tie_decisions(d, eps)
    p: dict[str, float | list[float]] = {"epsilon": float(eps)} if eps.ndim == 0 else {}
    return Normalized(out, "sign", params=p)


def raw(d: np.ndarray) -> Normalized:
    """d unchanged."""
    return Normalized(np.asarray(d, dtype=float).copy(), "raw")


def _best_epsilon(d: np.ndarray, h: np.ndarray, max_candidates: int = 256) -> float:
    """The tie band ε that maximises 3-way pairwise accuracy (with ties) on (d, h).

    Candidates are 0 and the distinct |d| values (subsampled to quantiles when there are many);
    the smallest ε among equally good ones is taken.
    """
    ad = np.abs(d)
    cands = np.unique(np.concatenate([[0.0], ad]))
    if cands.size > max_candidates:
        cands = np.unique(
            np.concatenate([[0.0], np.quantile(ad, np.linspace(0, 1, max_candidates))])
        )
    dec = tie_decisions(d[None, :], cands[:, None])  # one row of decisions per candidate ε
    acc = (dec == np.sign(h)[None, :]).mean(axis=1)
    return float(cands[int(np.argmax(acc))])


def learn_epsilon_cv(
    d: np.ndarray,
    h: np.ndarray,
    items: np.ndarray,
    *,
    k: int = 5,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[float]]:
    """Learn the tie band ε by k-fold cross-validation over *items*.

    ``d``, ``h``, ``items``: one entry per row (a pair's annotator rows share an item). Items
    are shuffled with ``rng`` and split into ``k`` folds; the rows of fold f get the ε that
    maximises accuracy-with-ties on the rows of the other folds, so no row's own label is ever
    used to choose its ε. Returns ``(epsilon per row, epsilon per fold)``.
    """
    d = np.asarray(d, dtype=float)
    h = np.asarray(h, dtype=float)
    uniq, inv = np.unique(np.asarray(items).astype(str), return_inverse=True)
    n_items = uniq.size
    if n_items < 2:
        raise ValueError("learning epsilon by cross-validation needs at least 2 items")
    k = max(2, min(k, n_items))
    perm = rng.permutation(n_items)
    fold_of_item = np.empty(n_items, dtype=int)
    fold_of_item[perm] = np.arange(n_items) % k
    fold = fold_of_item[inv]
    eps_rows = np.empty(d.size)
    per_fold: list[float] = []
    for f in range(k):
        test = fold == f
        train = ~test & np.isfinite(d)
        e = _best_epsilon(d[train], h[train]) if train.any() else 0.0
        per_fold.append(e)
        eps_rows[test] = e
    return eps_rows, per_fold


def impute_median(d: np.ndarray) -> tuple[np.ndarray, int]:
    """Missing entries replaced by the median of the others; returns ``(values, n_imputed)``.

    >>> impute_median(np.array([1.0, np.nan, 3.0, 4.0]))[0].tolist()
    [1.0, 3.0, 3.0, 4.0]
    """
    d = np.asarray(d, dtype=float)
    ok = np.isfinite(d)
    if ok.all() or not ok.any():
        return d.copy(), 0
    return np.where(ok, d, float(np.median(d[ok]))), int((~ok).sum())


def normalize(
    d: np.ndarray,
    mode: str,
    *,
    half_width: float,
    epsilon: float = 0.0,
    impute: bool = False,
) -> Normalized:
    """Dispatch: ``minmax`` (needs the human scale's half-width), ``sign`` (fixed ε) or ``raw``.

    ``impute``: missing d become the median d before normalising (counted in ``n_imputed``).
    """
    if mode == "minmax":
        return minmax(d, half_width, impute=impute)
    if impute:
        filled, n_imp = impute_median(d)
        out = normalize(filled, mode, half_width=half_width, epsilon=epsilon)
        out.n_imputed = n_imp
        return out
    if mode == "sign":
        if not math.isfinite(epsilon) or epsilon < 0:
            raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
        return sign(d, epsilon)
    if mode == "raw":
        return raw(d)
    raise ValueError(f"unknown normalisation {mode!r} (expected one of {', '.join(MODES)})")
