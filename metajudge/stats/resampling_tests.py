"""Perm-Sys/Inp/Both and Boot-Sys/Inp/Both: is metric X's correlation with humans above Y's?

Deutsch, Dror & Roth (2021), "A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods" (TACL): scores as (systems × inputs) matrices X, Y (two metrics) and Z
(humans); the correlation r(·, Z) at a level (:data:`MATRIX_LEVELS`); Δ = r(X, Z) − r(Y, Z).

- **Perm-{Sys,Inp,Both}**: under H0 the two metrics are exchangeable, so X and Y (each
  z-standardised over all cells, as nlpstats does, to share a scale) swap whole systems (rows),
  whole inputs (columns), or both (a cell swaps when exactly one of its row and column is
  swapped). p = (#{|Δ*| ≥ |Δ|} + 1)/(k + 1) (add-one, Davison & Hinkley 1997, eq. 4.11;
  nlpstats reports #{|Δ*| ≥ |Δ|}/k).
- **Boot-{Sys,Inp,Both}**: systems, inputs or both resampled with replacement (as counts); the
  p-value is metajudge's one bootstrap rule :func:`~metajudge.stats.bootstrap_p_value`.

Missing cells: a cell missing in any of X, Y, Z is missing in all three (nlpstats requires
identical NaN positions); the levels then drop it as :mod:`metajudge.analyses.metric_vs_human.levels` states.
Pearson is vectorised over resamples from masked moment sums; other statistics loop.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.results import Result
from metajudge.stats.bootstrap import bootstrap_p_value
from metajudge.stats.correlation import pearson_from_sums, statistic

MATRIX_LEVELS: tuple[str, ...] = ("global", "item", "system-grouped", "system")
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


def _standardize(X: np.ndarray) -> np.ndarray:
    return (X - np.nanmean(X)) / np.nanstd(X)


def level_correlation(X: np.ndarray, Z: np.ndarray, level: str, stat: str = "pearson") -> float:
    """r(X, Z) of (systems × inputs) matrices at a level; NaN cells dropped (levels.py rules).

    >>> X = np.array([[1.0, 2, 3], [2.0, 2, 5]]); Z = np.array([[1.0, 3, 2], [2.0, 4, 6]])
    >>> level_correlation(X, Z, "item"), level_correlation(X, Z, "system")  # column 2: constant
    (1.0, 1.0)
    """
    if level == "global":
        ok = np.isfinite(X) & np.isfinite(Z)
        return statistic(stat, X[ok], Z[ok])
    if level == "system":
        with np.errstate(invalid="ignore"):
            x, z = np.nanmean(X, axis=1), np.nanmean(Z, axis=1)
        ok = np.isfinite(x) & np.isfinite(z)
        return statistic(stat, x[ok], z[ok])
    A, B = (X.T, Z.T) if level == "item" else (X, Z)
    if level not in ("item", "system-grouped"):
        raise ValueError(f"unknown level {level!r} (expected one of {MATRIX_LEVELS})")
    vals = []
    for a, b in zip(A, B, strict=True):
        ok = np.isfinite(a) & np.isfinite(b)
        if ok.sum() >= 2:
            v = statistic(stat, a[ok], b[ok])
            if math.isfinite(v):
                vals.append(v)
    return float(np.mean(vals)) if vals else math.nan


def _r(
    n: np.ndarray, sx: np.ndarray, sz: np.ndarray, sxx: np.ndarray, szz: np.ndarray, sxz: np.ndarray
) -> np.ndarray:
    """Pearson's r from raw sums (n·sums centred, then
    :func:`~metajudge.stats.correlation.pearson_from_sums`)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        vx, vz = n * sxx - sx * sx, n * szz - sz * sz
        ok = (vx > 1e-12 * n * n) & (vz > 1e-12 * n * n) & (n >= 2)
    return pearson_from_sums(n * sxz - sx * sz, vx, vz, ok)


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
    """Pearson at ``level`` of each resample, from (weighted) moment sums (vectorised)."""
    if level == "global":
        return _r(n, sx, sz, sxx, szz, sxz)
    if level in ("item", "system-grouped"):
        return _group_mean(_r(n, sx, sz, sxx, szz, sxz), col_w if level == "item" else row_w)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, mz = sx / n, sz / n
    k = np.isfinite(mx) & np.isfinite(mz)
    w = (np.ones_like(mx) if row_w is None else np.broadcast_to(row_w, mx.shape)) * k
    mx, mz = np.where(k, mx, 0.0), np.where(k, mz, 0.0)
    return _r(
        w.sum(1),
        (w * mx).sum(1),
        (w * mz).sum(1),
        (w * mx * mx).sum(1),
        (w * mz * mz).sum(1),
        (w * mx * mz).sum(1),
    )


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
    if level not in MATRIX_LEVELS:
        raise ValueError(f"unknown level {level!r} (expected one of {MATRIX_LEVELS})")
    if method not in PERM_METHODS:
        raise ValueError(f"unknown method {method!r} (expected one of {PERM_METHODS})")
    if stat not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"statistic {stat!r}: expected pearson, spearman or kendall")
    if k < 1:
        raise ValueError("n_resamples must be >= 1")


def _diff(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str, stat: str) -> float:
    return level_correlation(X, Z, level, stat) - level_correlation(Y, Z, level, stat)


def _perm_p(obs: float, dl: np.ndarray) -> float:
    fin = dl[np.isfinite(dl)]
    if not math.isfinite(obs) or fin.size == 0:
        return math.nan
    hits = int((np.abs(fin) >= abs(obs) - 1e-12 * max(1.0, abs(obs))).sum())
    return (hits + 1) / (fin.size + 1)


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
    seed: int | None = None,
    rng: np.random.Generator | None = None,
    masks: tuple[np.ndarray, np.ndarray] | None = None,
    batch: int = 1000,
) -> dict[tuple[str, str], ResamplingTest]:
    """Perm-Sys (``method="systems"``), Perm-Inp (``"inputs"``) or Perm-Both for every pair.

    The same permutations serve every pair (drawn from ``rng`` or ``seed``; ``masks`` = (S (k, m),
    T (k, n)) 0/1 swap flags replays a reference implementation's draws). Each metric is
    z-standardised over its cells first (as nlpstats does). Deutsch, Dror & Roth (2021).
    """
    names = list(mats)
    arrs = _align(*(mats[a] for a in names), Z)
    Zs, xs = arrs[-1], [_standardize(a) for a in arrs[:-1]]
    m, n = Zs.shape
    if masks is None:
        _check(level, method, stat, n_resamples)
        S, T = _draw_masks(method, n_resamples, m, n, rng or np.random.default_rng(seed))
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
            _perm_p(obs, dl[(i, j)]),
            k,
            seed,
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
    seed: int | None = None,
    rng: np.random.Generator | None = None,
    draws: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[tuple[str, str], ResamplingTest]:
    """Boot-Sys, Boot-Inp or Boot-Both for every pair (Deutsch et al. 2021).

    ``draws`` = (system indices (k, m), input indices (k, n)) replays a reference's draws.
    p: :func:`~metajudge.stats.bootstrap_p_value` of the Δ*.
    """
    names = list(mats)
    arrs = _align(*(mats[a] for a in names), Z)
    Zs, xs = arrs[-1], list(arrs[:-1])
    m, n = Zs.shape
    if draws is None:
        _check(level, method, stat, n_resamples)
        g, k = rng or np.random.default_rng(seed), n_resamples
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
            f"boot-{method}", level, stat, obs, bootstrap_p_value(d), k, seed, rule, d
        )
    return out


def boot_test(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, **kw: Any) -> ResamplingTest:
    """:func:`boot_tests` for one pair: Δ = r(X, Z) − r(Y, Z)."""
    return boot_tests({"x": X, "y": Y}, Z, **kw)[("x", "y")]
