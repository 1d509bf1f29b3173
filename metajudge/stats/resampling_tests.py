"""The resampling tests of two metrics against the same humans, and their rules, each written once.

The rules every test here shares:

- **standardising** (:func:`z_score`): a metric is z-scored over its finite cells before a
  swap, so swapping is meaningful between metrics on different scales (a correlation is
  invariant to that affine map); a constant metric is only centred.
- **Pearson from moment sums**: a permuted or resampled r comes from raw sums
  (n, Σx, Σy, Σx², Σy², Σxy) through :func:`~metajudge.stats.correlation.pearson_from_moments`
  (centring there; a side whose centred variation is below 1e-12 of its Σx² is constant: NaN).
- **the permutation p** (:func:`permutation_p_value`): p = (#{|Δ*| ≥ |Δ|} + 1)/(k + 1) over the
  k defined Δ* (add-one, Davison & Hinkley 1997, eq. 4.11; Phipson & Smyth 2010); the
  bootstrap p is :func:`~metajudge.stats.bootstrap_p_value`.

The tests:

- **paired item-swap permutation test** (:func:`permutation_test_diff`,
  :func:`shared_permutation_tests`; mt-metrics-eval's PermutationSigTest): every item's scores
  from metric 1 and metric 2 swapped with probability ½.
- **Perm-{Sys,Inp,Both}** and **Boot-{Sys,Inp,Both}** of Deutsch, Dror & Roth (2021), "A
  Statistical Analysis of Summarization Evaluation Metrics using Resampling Methods" (TACL):
  scores as (systems × inputs) matrices X, Y (two metrics) and Z (humans); the correlation
  r(·, Z) at a level (:data:`~metajudge.stats.estimates.LEVELS`); Δ = r(X, Z) − r(Y, Z). Perm: X and Y
  (standardised, as nlpstats does) swap whole systems (rows), whole inputs (columns), or both
  (a cell swaps when exactly one of its row and column is swapped); nlpstats reports
  #{|Δ*| ≥ |Δ|}/k. Boot: systems, inputs or both resampled with replacement (as counts).

Missing cells: a cell missing in any of X, Y, Z is missing in all three (nlpstats requires
identical NaN positions); the levels then drop it as :mod:`metajudge.analyses.metric_vs_human.levels` states.
Pearson is vectorised over resamples from masked moment sums; other statistics loop.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.engine import CHUNK_ELEMENTS, accuracy_from_sums, pearson_from_moments
from metajudge.results import Result
from metajudge.stats.bootstrap import _group_index, bootstrap_p_value
from metajudge.stats.correlation import (
    CORRELATIONS,
    PEARSON_MAX_ABS,
    _as_xy,
    _rankdata,
    _tie_pairs,
    accuracy_rows,
    pearson_rows,
    statistic_fn,
)
from metajudge.stats.estimates import LEVELS, MIN_POOLED_ROWS, level_estimate
from metajudge.stats.significance import DiffResult

PERM_METHODS: tuple[str, ...] = ("systems", "inputs", "both")
P_RULE = "p = (#{|Δ*| >= |Δ|} + 1)/(k + 1) over k permutations (nlpstats reports #{|Δ*| >= |Δ|}/k)"


@dataclass
class ResamplingTest(Result):
    """One test of Δ = r(X, Z) − r(Y, Z): method, level, Δ, p, resamples and seed."""

    method: str
    level: str
    statistic: str
    delta: float
    p_value: float
    n_resamples: int
    seed: int | None
    rule: str
    samples: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "level": self.level,
            "statistic": self.statistic,
            "delta": self.delta,
            "p_value": self.p_value,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "rule": self.rule,
        }


def _align(*mats: np.ndarray) -> tuple[np.ndarray, ...]:
    """The matrices with a cell missing in any of them set missing in all (nlpstats' rule)."""
    arrs = [np.asarray(m, dtype=float) for m in mats]
    if any(a.ndim != 2 or a.shape != arrs[0].shape for a in arrs):
        raise ValueError("X, Y and Z must be (systems x inputs) matrices of one shape")
    bad = ~np.all([np.isfinite(a) for a in arrs], axis=0)
    return tuple(np.where(bad, np.nan, a) for a in arrs)


def z_score(a: np.ndarray) -> np.ndarray:
    """``a`` z-scored over its finite cells (NaN stays NaN); a constant ``a`` is only centred.

    >>> z_score(np.array([1.0, 3.0, np.nan])).tolist(), z_score(np.array([2.0, 2.0])).tolist()
    ([-1.0, 1.0, nan], [0.0, 0.0])
    """
    big = float(np.nanmax(np.abs(a), initial=0.0))
    if big > PEARSON_MAX_ABS:  # (scaled first: a's squares would overflow; z is scale-free)
        a = a / big
    return (a - np.nanmean(a)) / (np.nanstd(a) or 1.0)


def level_correlation(X: np.ndarray, Z: np.ndarray, level: str, stat: str = "pearson") -> float:
    """r(X, Z) of (systems × inputs) matrices at a level: the one level correlation
    (:func:`~metajudge.stats.estimates.level_estimate`) of the matrices' cells, a response a
    cell (NaN cells dropped, as :mod:`metajudge.analyses.metric_vs_human.levels` states).

    >>> X = np.array([[1.0, 2, 3], [2.0, 2, 5]]); Z = np.array([[1.0, 3, 2], [2.0, 4, 6]])
    >>> level_correlation(X, Z, "item")  # column 2: constant metric, left out
    1.0
    >>> level_correlation(X, Z, "system")  # two systems: fewer than three rows, undefined
    nan
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r} (expected one of {LEVELS})")
    X, Z = np.asarray(X, dtype=float), np.asarray(Z, dtype=float)
    systems, items = np.indices(X.shape)
    cells = (X.ravel(), Z.ravel(), items.ravel(), systems.ravel())
    return level_estimate(stat, *cells, X.shape[1], None, 0.95, level).value


def _group_mean(r: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Mean over the defined groups of each resample (weighted by resample counts ``w``)."""
    ok = np.isfinite(r)
    wt = ok * (1.0 if w is None else np.broadcast_to(w, r.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, r, 0.0).__mul__(wt).sum(1) / wt.sum(1)


def _part(level: str) -> str:
    return {"global": "total", "item": "cols"}.get(level, "rows")


def _const(A: np.ndarray, part: str) -> np.ndarray:
    if part == "rows":
        return A.sum(1)[None, :]
    return A.sum(0)[None, :] if part == "cols" else np.array([A.sum()])


def _xor_sums(S: np.ndarray, T: np.ndarray, A: np.ndarray, part: str) -> np.ndarray:
    """Sums of M[b]∘A, M[b]_ij = S[b,i] xor T[b,j] (the cells Perm-Both swaps), per ``part``."""
    if part == "rows":
        TA = T @ A.T  # (k, m): sum_j T_bj A_ij
        return S * A.sum(1) + TA - 2 * S * TA
    SA = S @ A  # (k, n)
    if part == "cols":
        return T * A.sum(0) + SA - 2 * T * SA
    return S @ A.sum(1) + T @ A.sum(0) - 2 * (SA * T).sum(1)


def _weighted_sums(w: np.ndarray, v: np.ndarray, A: np.ndarray, part: str) -> np.ndarray:
    """Sums of A with cell weights w[b,i]·v[b,j]: rows weighted by v, columns by w."""
    if part == "rows":
        return v @ A.T
    return w @ A if part == "cols" else ((w @ A) * v).sum(1)


def _pearson_at(
    level: str,
    n: np.ndarray,
    sx: np.ndarray,
    sz: np.ndarray,
    sxx: np.ndarray,
    szz: np.ndarray,
    sxz: np.ndarray,
    row_w: np.ndarray | None,
    col_w: np.ndarray | None,
) -> np.ndarray:
    """Pearson at ``level`` of each resample, from (weighted) moment sums (vectorised).

    The rows a value needs are :func:`~metajudge.stats.estimates.level_estimate`'s: two in an
    input (item level), three in a pooled value (global, a system, the systems' means)."""
    r = pearson_from_moments(n, sx, sz, sxx, szz, sxz)
    if level == "global":
        return _min_rows(r, n)
    if level in ("item", "system-grouped"):
        if level == "system-grouped":
            r = _min_rows(r, n)
        return _group_mean(r, col_w if level == "item" else row_w)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, mz = sx / n, sz / n
    k = np.isfinite(mx) & np.isfinite(mz)
    w = (np.ones_like(mx) if row_w is None else np.broadcast_to(row_w, mx.shape)) * k
    mx, mz = np.where(k, mx, 0.0), np.where(k, mz, 0.0)
    r = pearson_from_moments(
        w.sum(1),
        (w * mx).sum(1),
        (w * mz).sum(1),
        (w * mx * mx).sum(1),
        (w * mz * mz).sum(1),
        (w * mx * mz).sum(1),
    )
    return _min_rows(r, (w > 0).sum(1))  # distinct systems


def _min_rows(r: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``r`` where at least :data:`~metajudge.stats.estimates.MIN_POOLED_ROWS` rows back it."""
    return np.where(n >= MIN_POOLED_ROWS, r, np.nan)


def _zeroed(*mats: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.nan_to_num(m, nan=0.0) for m in mats)


def _moments(x: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, ...]:
    return x, x * x, x * z


def _perm_pair_deltas(
    level: str, xs: list[np.ndarray], Z: np.ndarray, S: np.ndarray, T: np.ndarray
) -> dict[tuple[int, int], np.ndarray]:
    """Δ* of every pair of metrics under each permutation (rows of S, T), Pearson.

    A swap is linear in the moment sums: X_p = X + M∘(Y − X), so the M-sums of x, x², xz are
    computed once per metric and combined per pair.
    """
    part = _part(level)
    ok = np.isfinite(Z).astype(float)
    (z,) = _zeroed(Z)
    n, sz, szz = _const(ok, part), _const(z, part), _const(z * z, part)
    base = [[_const(a, part) for a in _moments(x, z)] for x in xs]
    msum = [[_xor_sums(S, T, a, part) for a in _moments(x, z)] for x in xs]
    out = {}
    for i, j in itertools.combinations(range(len(xs)), 2):
        px = [base[i][q] + msum[j][q] - msum[i][q] for q in range(3)]
        py = [base[j][q] - msum[j][q] + msum[i][q] for q in range(3)]
        rx = _pearson_at(level, n, px[0], sz, px[1], szz, px[2], None, None)
        ry = _pearson_at(level, n, py[0], sz, py[1], szz, py[2], None, None)
        out[(i, j)] = rx - ry
    return out


def _boot_corrs(
    level: str, xs: list[np.ndarray], Z: np.ndarray, w: np.ndarray, v: np.ndarray
) -> list[np.ndarray]:
    """r*(X, Z) of every metric on every bootstrap resample (w: system, v: input counts)."""
    part = _part(level)
    ok = np.isfinite(Z).astype(float)
    (z,) = _zeroed(Z)
    n, sz, szz = (_weighted_sums(w, v, a, part) for a in (ok, z, z * z))
    out = []
    for x in xs:
        sx, sxx, sxz = (_weighted_sums(w, v, a, part) for a in _moments(x, z))
        out.append(_pearson_at(level, n, sx, sz, sxx, szz, sxz, w, v))
    return out


def _counts(idx: np.ndarray, size: int) -> np.ndarray:
    k = idx.shape[0]
    flat = (idx + size * np.arange(k)[:, None]).ravel()
    return np.bincount(flat, minlength=k * size).reshape(k, size).astype(float)


def _check(level: str, method: str, stat: str, k: int) -> None:
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r} (expected one of {LEVELS})")
    if method not in PERM_METHODS:
        raise ValueError(f"unknown method {method!r} (expected one of {PERM_METHODS})")
    if stat not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"statistic {stat!r}: expected pearson, spearman or kendall")
    if k < 1:
        raise ValueError("n_resamples must be >= 1")


def _diff(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str, stat: str) -> float:
    return level_correlation(X, Z, level, stat) - level_correlation(Y, Z, level, stat)


def permutation_p_value(observed: float, permuted: np.ndarray) -> float:
    """The two-sided permutation p of every test here: (#{|Δ*| ≥ |Δ|} + 1)/(k + 1) over the k
    defined (finite) Δ*; a Δ* within 1e-12·max(1, |Δ|) below |Δ| counts as reaching it (the
    same value, recomputed from other sums). NaN when Δ or every Δ* is undefined.

    >>> permutation_p_value(0.5, np.array([0.1, -0.6, np.nan, 0.5 - 1e-13]))
    0.75
    >>> permutation_p_value(0.5, np.array([np.nan]))
    nan
    """
    fin = permuted[np.isfinite(permuted)]
    if not math.isfinite(observed) or fin.size == 0:
        return math.nan
    hits = int((np.abs(fin) >= abs(observed) - 1e-12 * max(1.0, abs(observed))).sum())
    return (hits + 1) / (fin.size + 1)


def _seed(rng: np.random.Generator | int | None) -> int | None:
    """The int seed a test records (None when drawn from a Generator)."""
    return int(rng) if isinstance(rng, (int, np.integer)) else None


def _draw_masks(method: str, k: int, m: int, n: int, rng: np.random.Generator) -> tuple:
    S = rng.random((k, m)) < 0.5 if method != "inputs" else np.zeros((k, m), dtype=bool)
    T = rng.random((k, n)) < 0.5 if method != "systems" else np.zeros((k, n), dtype=bool)
    return S.astype(float), T.astype(float)


def perm_tests(
    mats: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    level: str,
    method: str = "both",
    stat: str = "pearson",
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    masks: tuple[np.ndarray, np.ndarray] | None = None,
    batch: int = 1000,
) -> dict[tuple[str, str], ResamplingTest]:
    """Perm-Sys (``method="systems"``), Perm-Inp (``"inputs"``) or Perm-Both for every pair.

    The same permutations serve every pair (drawn from ``rng``: a Generator, or an int seed,
    which the result records; ``masks`` = (S (k, m), T (k, n)) 0/1 swap flags replays a
    reference implementation's draws). Each metric is z-scored over its cells first
    (:func:`z_score`, as nlpstats does). Deutsch, Dror & Roth (2021).
    """
    names = list(mats)
    arrs = _align(*(mats[a] for a in names), Z)
    Zs, xs = arrs[-1], [z_score(a) for a in arrs[:-1]]
    m, n = Zs.shape
    if masks is None:
        _check(level, method, stat, n_resamples)
        S, T = _draw_masks(method, n_resamples, m, n, np.random.default_rng(rng))
    else:
        S, T = (np.asarray(a, dtype=float) for a in masks)
    k = S.shape[0]
    _check(level, method, stat, k)
    pairs = list(itertools.combinations(range(len(names)), 2))
    if stat == "pearson":
        zx = list(_zeroed(*xs))
        parts = [
            _perm_pair_deltas(level, zx, Zs, S[b : b + batch], T[b : b + batch])
            for b in range(0, k, batch)
        ]
        dl = {p: np.concatenate([d[p] for d in parts]) for p in pairs}
    else:
        dl = {p: np.empty(k) for p in pairs}
        for b in range(k):
            M = (S[b][:, None] + T[b][None, :]) % 2 == 1
            for i, j in pairs:
                Xp, Yp = np.where(M, xs[j], xs[i]), np.where(M, xs[i], xs[j])
                dl[(i, j)][b] = _diff(Xp, Yp, Zs, level, stat)
    out = {}
    r_obs = [level_correlation(x, Zs, level, stat) for x in xs]
    for i, j in pairs:
        obs = r_obs[i] - r_obs[j]
        out[(names[i], names[j])] = ResamplingTest(
            f"perm-{method}",
            level,
            stat,
            obs,
            permutation_p_value(obs, dl[(i, j)]),
            k,
            _seed(rng),
            P_RULE,
            dl[(i, j)],
        )
    return out


def perm_test(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, **kw: Any) -> ResamplingTest:
    """:func:`perm_tests` for one pair: Δ = r(X, Z) − r(Y, Z)."""
    return perm_tests({"x": X, "y": Y}, Z, **kw)[("x", "y")]


def boot_tests(
    mats: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    level: str,
    method: str = "both",
    stat: str = "pearson",
    n_resamples: int = 1000,
    rng: np.random.Generator | int | None = None,
    draws: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[tuple[str, str], ResamplingTest]:
    """Boot-Sys, Boot-Inp or Boot-Both for every pair (Deutsch et al. 2021).

    ``rng``: a Generator, or an int seed (recorded); ``draws`` = (system indices (k, m), input
    indices (k, n)) replays a reference's draws. p: :func:`~metajudge.stats.bootstrap_p_value` of the Δ*.
    """
    names = list(mats)
    arrs = _align(*(mats[a] for a in names), Z)
    Zs, xs = arrs[-1], list(arrs[:-1])
    m, n = Zs.shape
    if draws is None:
        _check(level, method, stat, n_resamples)
        g, k = np.random.default_rng(rng), n_resamples
        ri = g.integers(0, m, (k, m)) if method != "inputs" else np.tile(np.arange(m), (k, 1))
        ci = g.integers(0, n, (k, n)) if method != "systems" else np.tile(np.arange(n), (k, 1))
    else:
        ri, ci = (np.asarray(a) for a in draws)
    k = ri.shape[0]
    _check(level, method, stat, k)
    if stat == "pearson":
        rs = _boot_corrs(level, list(_zeroed(*xs)), Zs, _counts(ri, m), _counts(ci, n))
    else:
        rs = [
            np.array(
                [
                    level_correlation(x[ri[b]][:, ci[b]], Zs[ri[b]][:, ci[b]], level, stat)
                    for b in range(k)
                ]
            )
            for x in xs
        ]
    rule = "bootstrap_p_value: p = min(1, 2(min(#Δ*<=0, #Δ*>=0) + 1)/(k + 1))"
    out = {}
    r_obs = [level_correlation(x, Zs, level, stat) for x in xs]
    for i, j in itertools.combinations(range(len(names)), 2):
        d = rs[i] - rs[j]
        obs = r_obs[i] - r_obs[j]
        out[(names[i], names[j])] = ResamplingTest(
            f"boot-{method}", level, stat, obs, bootstrap_p_value(d), k, _seed(rng), rule, d
        )
    return out


def boot_test(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, **kw: Any) -> ResamplingTest:
    """:func:`boot_tests` for one pair: Δ = r(X, Z) − r(Y, Z)."""
    return boot_tests({"x": X, "y": Y}, Z, **kw)[("x", "y")]


# ---------------------------------------------------------------------------------------------
# Paired item-swap permutation tests


def _batch_stat(name: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Statistic of each row of X (B, n) against y (n,)."""
    if name == "pearson":
        return pearson_rows(X, y)
    if name == "spearman":
        return pearson_rows(_rankdata(X), _rankdata(y))
    if name == "kendall":
        out = np.empty(X.shape[0])
        n = X.shape[1]
        chunk = max(1, 2_000_000 // max(n * n, 1))
        sy = np.sign(y[:, None] - y[None, :])
        n0 = n * (n - 1) / 2
        n2 = _tie_pairs(y)
        for b0 in range(0, X.shape[0], chunk):
            Xb = X[b0 : b0 + chunk]
            sx = np.sign(Xb[:, :, None] - Xb[:, None, :])
            s = (sx * sy[None]).sum(axis=(1, 2)) / 2
            n1 = np.array([_tie_pairs(r) for r in Xb])
            with np.errstate(invalid="ignore", divide="ignore"):
                den = np.sqrt((n0 - n1) * (n0 - n2))
                out[b0 : b0 + chunk] = np.where(den > 0, s / den, np.nan)
        return out
    if name in ("acc_ties", "acc_no_ties"):
        return _acc_rows(name, X, y)
    raise ValueError(f"unknown statistic {name!r}")


def _acc_rows(name: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The accuracy ``name`` of each row of decisions X (B, n) against labels y (n,): the
    one definition (:func:`~metajudge.stats.correlation.accuracy_rows`), row by row."""
    credit, kept = accuracy_rows(name, human=np.tile(y, X.shape[0]), judge=X.ravel())
    shape = X.shape
    return accuracy_from_sums(credit.reshape(shape).sum(1), kept.reshape(shape).sum(1))


def permutation_test_diff(
    x1: Sequence[float] | np.ndarray,
    x2: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    statistic: str = "pearson",
    groups: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = 1000,
    rng: np.random.Generator,
    standardize: bool = True,
) -> DiffResult:
    """Paired permutation test of ``stat(x1, y) − stat(x2, y)`` (mt-metrics-eval's PermutationSigTest).

    Under H0 the two metrics are exchangeable: in each permutation every item's scores from
    metric 1 and metric 2 are swapped with probability ½ (all rows of an item together) and the
    difference recomputed. With ``standardize`` both metrics are first z-scored, so swapping is
    meaningful between metrics on different scales (correlations are invariant to that affine
    map). For Spearman the swap acts on the rank-transformed (then z-scored) scores and the
    permuted statistic is the Pearson r of those with the ranks of ``y`` — the observed value is
    exactly the Spearman difference, and the test needs no re-ranking per permutation.
    p = (1 + #{|Δ_perm| ≥ |Δ_obs|}) / (1 + n_resamples) (Phipson & Smyth 2010). No CI
    (``lo``/``hi`` are nan).
    """
    a1, ya = _as_xy(x1, y)
    a2, _ = _as_xy(x2, y)
    stat_perm = statistic
    if statistic == "spearman":
        a1, a2, ya = _rankdata(a1), _rankdata(a2), _rankdata(ya)
        stat_perm = "pearson"
    if standardize and statistic in CORRELATIONS:
        a1, a2 = z_score(a1), z_score(a2)
    gi, n_items = _group_index(groups, ya.size)
    obs = statistic_fn(stat_perm)(a1, ya) - statistic_fn(stat_perm)(a2, ya)
    d = _perm_diffs(stat_perm, a1, a2, ya, gi, n_items, n_resamples, rng)
    p = permutation_p_value(obs, d)
    return DiffResult(float(obs), math.nan, math.nan, p, n_resamples, "permutation")


def _perm_diffs(
    stat: str,
    a1: np.ndarray,
    a2: np.ndarray,
    y: np.ndarray,
    gi: np.ndarray | None,
    n_items: int,
    n_resamples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``stat(X1, y) − stat(X2, y)`` per permutation, a block of permutations at a time.

    The swaps are drawn block by block from the stream of one ``(n_resamples, n_items)`` draw, so
    the values do not depend on the block size. Pearson (and Spearman, a Pearson of ranks) needs
    no permuted copy of the data: swapping item i adds ``Σ_rows of i (a2 − a1)`` to Σx1 (and
    the like to Σx1², Σx1·y), so each permutation's sums are the unpermuted ones plus one
    product of its swap vector with per-item sums — memory and time O(n_resamples × items).
    """
    d = np.empty(n_resamples)
    step = max(1, CHUNK_ELEMENTS // max(y.size, 1))
    pearson = stat == "pearson"
    if pearson:
        yc = y - y.mean()
        parts = (a2 - a1, a2 * a2 - a1 * a1, (a2 - a1) * yc)
        M = np.stack(  # (n_items, 3): per-item sums of what a swap changes
            [np.bincount(gi, weights=v, minlength=n_items) if gi is not None else v for v in parts],
            axis=1,
        )
        base1 = np.array([a1.sum(), (a1 * a1).sum(), (a1 * yc).sum()])
        base2 = np.array([a2.sum(), (a2 * a2).sum(), (a2 * yc).sum()])
        syy = float(yc @ yc)
    for p0 in range(0, n_resamples, step):
        swap_items = rng.random((min(step, n_resamples - p0), n_items)) < 0.5
        blk = slice(p0, p0 + swap_items.shape[0])
        if pearson:
            delta = np.einsum("ij,jk->ik", np.ascontiguousarray(swap_items, dtype=float), M)
            d[blk] = _r_from_sums(base1 + delta, y.size, syy) - _r_from_sums(
                base2 - delta, y.size, syy
            )
            continue
        swap = swap_items[:, gi] if gi is not None else swap_items
        X1 = np.where(swap, a2[None, :], a1[None, :])
        X2 = np.where(swap, a1[None, :], a2[None, :])
        d[blk] = _batch_stat(stat, X1, y) - _batch_stat(stat, X2, y)
    return d


def shared_permutation_tests(
    problems: Sequence[tuple[str, Sequence[np.ndarray], np.ndarray]],
    pairs: Sequence[tuple[int, int]],
    *,
    groups: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = 1000,
    rng: np.random.Generator,
) -> list[list[DiffResult]]:
    """:func:`permutation_test_diff` of every pair of metrics, with the swaps shared.

    ``problems``: ``(statistic, [x of each metric], y)`` on the same rows (Pearson or
    Spearman, standardised as in :func:`permutation_test_diff`); ``pairs``: the metric
    indices ``(i, j)`` to test, the same for every problem. One set of item swaps (fair coin
    flips: the bits of ``rng.bit_generator.random_raw``) serves every pair and problem, the way
    the paired bootstrap shares its resamples: each test is the same exact test, the tests are
    dependent (Holm's correction holds under any dependence, Holm 1979). Swapping item g of
    metrics i and j adds Σ_rows of g (a_j − a_i) to Σa_i (and the like to Σa_i², Σa_i·y), so
    per permutation the product of its swap vector with each metric's per-item sums gives every
    pair — time O(n_resamples × items × metrics), not × pairs. Returns, per problem, one
    :class:`DiffResult` per pair.
    """
    y0 = np.asarray(problems[0][2], dtype=float)
    gi, n_items = _group_index(groups, y0.size)
    rank = [_rankdata if statistic == "spearman" else np.asarray for statistic, _, _ in problems]
    yas = [
        np.asarray(f(np.asarray(p[2], dtype=float)), dtype=float) for f, p in zip(rank, problems)
    ]
    ycs = [ya - ya.mean() for ya in yas]
    rs: list[list[float]] = [[] for _ in problems]
    bases: list[list[list[float]]] = [[] for _ in problems]
    start, parts = rng.bit_generator.state, []
    for chunk in _metric_chunks([len(xs) for _, xs, _ in problems], n_items):
        M = np.empty((n_items, 3 * len(chunk)))  # per-item sums
        for c, (k, i) in enumerate(chunk):  # one metric at a time: memory O(items × metrics)
            a = np.asarray(rank[k](np.asarray(problems[k][1][i], dtype=float)), dtype=float)
            a = z_score(a)
            rs[k].append(statistic_fn("pearson")(a, yas[k]))
            bases[k].append([a.sum(), (a * a).sum(), (a * ycs[k]).sum()])
            for t, v in enumerate((a, a * a, a * ycs[k])):
                M[:, 3 * c + t] = (
                    np.bincount(gi, weights=v, minlength=n_items) if gi is not None else v
                )
        rng.bit_generator.state = start  # every chunk of metrics the same swaps
        parts.append(_shared_swap_sums(M, n_items, n_resamples, rng))
        del M
    Q = np.concatenate(parts, axis=1)
    setups = [
        (np.array(rs[k]), np.array(bases[k]), float(ycs[k] @ ycs[k]), y0.size)
        for k in range(len(problems))
    ]
    out, c0 = [], 0
    for r, base, syy, n in setups:
        k = base.shape[0]
        Qp = Q[:, c0 : c0 + 3 * k].reshape(n_resamples, k, 3)
        c0 += 3 * k
        res = []
        for i, j in pairs:
            delta = Qp[:, j] - Qp[:, i]
            d = _r_from_sums(base[i] + delta, n, syy) - _r_from_sums(base[j] - delta, n, syy)
            obs = float(r[i] - r[j])
            p = permutation_p_value(obs, d)
            res.append(
                DiffResult(obs, math.nan, math.nan, p, n_resamples, "permutation (shared swaps)")
            )
        out.append(res)
    return out


def _metric_chunks(n_metrics: list[int], n_items: int) -> list[list[tuple[int, int]]]:
    """The (problem, metric) pairs in order, in chunks whose per-item sums (3 columns a metric)
    fit :data:`~metajudge.engine.PASS_ITEM_ELEMENTS` (one metric at least): at a million
    items 4 metrics a chunk (96 MB), not 6 metrics × 2 statistics at once (288 MB)."""
    from metajudge.engine import PASS_ITEM_ELEMENTS

    per = max(1, PASS_ITEM_ELEMENTS // (3 * max(n_items, 1)))
    pairs = [(k, i) for k, n in enumerate(n_metrics) for i in range(n)]
    return [pairs[c : c + per] for c in range(0, len(pairs), per)]


def _shared_swap_sums(
    M: np.ndarray, n_items: int, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """``(n_resamples, k)``: each permutation's swap vector (one bit per item) times ``M``. The
    swaps are drawn here, a tile of :data:`~metajudge.engine.TILE_ROWS` permutations at
    a time in stream order; their products are shared among the resample threads
    (:func:`~metajudge.engine.map_blocks`: each tile's are the same on any thread)."""
    from metajudge.engine import (
        TILE_ROWS,
        BitRows,
        map_blocks,
        one_blas_thread,
        ready,
        tile_product,
    )

    words = -(-n_items // 64)
    out = np.empty((n_resamples, M.shape[1]))

    def one(p0: int, raw: np.ndarray) -> None:  # (the bits unpacked a tile of items at a time)
        out[p0 : p0 + raw.shape[0]] = tile_product(BitRows(raw.view(np.uint8), n_items), M)

    def tiles() -> Iterator[tuple[int, Callable[[], np.ndarray]]]:
        for p0 in range(0, n_resamples, TILE_ROWS):
            rows = min(TILE_ROWS, n_resamples - p0)
            yield p0, ready(rng.bit_generator.random_raw(rows * words).reshape(rows, words))

    with one_blas_thread():
        map_blocks(one, tiles())
    return out


def _r_from_sums(S: np.ndarray, n: int, syy: float) -> np.ndarray:
    """Pearson r from rows of (Σx, Σx², Σx·y_c) with y centred (Σy_c = 0, Σy_c² = ``syy``):
    :func:`~metajudge.stats.correlation.pearson_from_moments`."""
    return pearson_from_moments(n, S[:, 0], 0.0, S[:, 1], syy, S[:, 2])
