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
  p-value is metajudge's one bootstrap rule :func:`~metajudge.metaeval.stats.bootstrap_p_value`.

Missing cells: a cell missing in any of X, Y, Z is missing in all three (nlpstats requires
identical NaN positions); the levels then drop it as :mod:`metajudge.metaeval.levels` states.
Pearson is vectorised over resamples from masked moment sums; other statistics loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from metajudge.metaeval.stats.bootstrap import bootstrap_p_value
from metajudge.metaeval.stats.correlation import statistic

MATRIX_LEVELS: tuple[str, ...] = ("global", "item", "system-grouped", "system")
PERM_METHODS: tuple[str, ...] = ("systems", "inputs", "both")
P_RULE = "p = (#{|Δ*| >= |Δ|} + 1)/(k + 1) over k permutations (nlpstats reports #{|Δ*| >= |Δ|}/k)"


@dataclass
class ResamplingTest:
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

    def to_json(self) -> dict[str, object]:
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
    arrs = [np.asarray(m, dtype=float) for m in mats]
    if any(a.ndim != 2 or a.shape != arrs[0].shape for a in arrs):
        raise ValueError("X, Y and Z must be (systems x inputs) matrices of one shape")
    bad = ~np.all([np.isfinite(a) for a in arrs], axis=0)
    return tuple(np.where(bad, np.nan, a) for a in arrs)


def _standardize(X: np.ndarray) -> np.ndarray:
    return (X - np.nanmean(X)) / np.nanstd(X)


def level_correlation(X: np.ndarray, Z: np.ndarray, level: str, stat: str = "pearson") -> float:
    """r(X, Z) of (systems × inputs) matrices at a level; NaN cells dropped (levels.py rules)."""
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


def _r(n: np.ndarray, sx: np.ndarray, sz: np.ndarray, sxx: np.ndarray, szz: np.ndarray,
       sxz: np.ndarray) -> np.ndarray:  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        vx, vz = n * sxx - sx * sx, n * szz - sz * sz
        r = (n * sxz - sx * sz) / np.sqrt(vx * vz)
    return np.where((vx > 1e-12 * n * n) & (vz > 1e-12 * n * n) & (n >= 2), r, np.nan)


def _group_mean(r: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Mean over the defined groups of each resample (weighted by resample counts ``w``)."""
    ok = np.isfinite(r)
    wt = ok * (1.0 if w is None else np.broadcast_to(w, r.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, r, 0.0).__mul__(wt).sum(1) / wt.sum(1)


@dataclass(frozen=True)
class _Sums:
    """Sums of one cell quantity per resample: per system (k, m), per input (k, n), overall (k,)."""

    rows: np.ndarray
    cols: np.ndarray
    total: np.ndarray

    def __add__(self, o: _Sums) -> _Sums:
        return _Sums(self.rows + o.rows, self.cols + o.cols, self.total + o.total)

    def __sub__(self, o: _Sums) -> _Sums:
        return _Sums(self.rows - o.rows, self.cols - o.cols, self.total - o.total)


def _const(A: np.ndarray) -> _Sums:
    return _Sums(A.sum(1)[None, :], A.sum(0)[None, :], np.array([A.sum()]))


def _xor_sums(S: np.ndarray, T: np.ndarray, A: np.ndarray) -> _Sums:
    """Sums of M[b]∘A with M[b]_ij = S[b,i] xor T[b,j] (the cells Perm-Both swaps)."""
    TA = T @ A.T  # (k, m): sum_j T_bj A_ij
    SA = S @ A  # (k, n)
    rows = S * A.sum(1) + TA - 2 * S * TA
    return _Sums(rows, T * A.sum(0) + SA - 2 * T * SA, rows.sum(1))


def _weighted_sums(w: np.ndarray, v: np.ndarray, A: np.ndarray) -> _Sums:
    """Sums of A with cell weights w[b,i]·v[b,j]: rows weighted by v, columns by w."""
    cols = w @ A
    return _Sums(v @ A.T, cols, (cols * v).sum(1))


def _pearson_at(level: str, n: _Sums, sx: _Sums, sz: _Sums, sxx: _Sums, szz: _Sums,
                sxz: _Sums, row_w: np.ndarray | None, col_w: np.ndarray | None) -> np.ndarray:  # fmt: skip
    """Pearson at ``level`` of each resample, from (weighted) moment sums (vectorised)."""
    if level == "global":
        return _r(n.total, sx.total, sz.total, sxx.total, szz.total, sxz.total)
    if level == "item":
        r = _r(n.cols, sx.cols, sz.cols, sxx.cols, szz.cols, sxz.cols)
        return _group_mean(r, col_w)
    if level == "system-grouped":
        r = _r(n.rows, sx.rows, sz.rows, sxx.rows, szz.rows, sxz.rows)
        return _group_mean(r, row_w)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, mz = sx.rows / n.rows, sz.rows / n.rows
    k = np.isfinite(mx) & np.isfinite(mz)
    w = (np.ones_like(mx) if row_w is None else np.broadcast_to(row_w, mx.shape)) * k
    mx, mz = np.where(k, mx, 0.0), np.where(k, mz, 0.0)
    return _r(w.sum(1), (w * mx).sum(1), (w * mz).sum(1), (w * mx * mx).sum(1),
              (w * mz * mz).sum(1), (w * mx * mz).sum(1))  # fmt: skip


def _zeroed(*mats: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.nan_to_num(m, nan=0.0) for m in mats)


def _perm_deltas(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str,
                 S: np.ndarray, T: np.ndarray) -> np.ndarray:  # fmt: skip
    """Δ* of every permutation (rows of S, T: 0/1 swap flags of systems and inputs), Pearson."""
    ok = np.isfinite(Z).astype(float)
    x, y, z = _zeroed(X, Y, Z)
    d = y - x
    n, sz, szz = _const(ok), _const(z), _const(z * z)
    m_d, m_sq, m_dz = _xor_sums(S, T, d), _xor_sums(S, T, y * y - x * x), _xor_sums(S, T, d * z)
    rx = _pearson_at(level, n, _const(x) + m_d, sz, _const(x * x) + m_sq, szz,
                     _const(x * z) + m_dz, None, None)  # fmt: skip
    ry = _pearson_at(level, n, _const(y) - m_d, sz, _const(y * y) - m_sq, szz,
                     _const(y * z) - m_dz, None, None)  # fmt: skip
    return rx - ry


def _boot_deltas(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str,
                 w: np.ndarray, v: np.ndarray) -> np.ndarray:  # fmt: skip
    """Δ* of every bootstrap resample (w: system counts, v: input counts), Pearson."""
    ok = np.isfinite(Z).astype(float)
    x, y, z = _zeroed(X, Y, Z)

    def ws(A: np.ndarray) -> _Sums:
        return _weighted_sums(w, v, A)

    n, sz, szz = ws(ok), ws(z), ws(z * z)
    rx = _pearson_at(level, n, ws(x), sz, ws(x * x), szz, ws(x * z), w, v)
    ry = _pearson_at(level, n, ws(y), sz, ws(y * y), szz, ws(y * z), w, v)
    return rx - ry


def _counts(idx: np.ndarray, size: int) -> np.ndarray:
    k = idx.shape[0]
    flat = (idx + size * np.arange(k)[:, None]).ravel()
    return np.bincount(flat, minlength=k * size).reshape(k, size).astype(float)


def _generic(stat: str, level: str, pairs_of: Callable[[int], tuple[np.ndarray, ...]],
             Z: np.ndarray, k: int) -> np.ndarray:  # fmt: skip
    out = np.empty(k)
    for b in range(k):
        xp, yp, zp = pairs_of(b)
        out[b] = level_correlation(xp, zp, level, stat) - level_correlation(yp, zp, level, stat)
    return out


def _check(level: str, method: str, stat: str, k: int) -> None:
    if level not in MATRIX_LEVELS:
        raise ValueError(f"unknown level {level!r} (expected one of {MATRIX_LEVELS})")
    if method not in PERM_METHODS:
        raise ValueError(f"unknown method {method!r} (expected one of {PERM_METHODS})")
    if stat not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"statistic {stat!r}: expected pearson, spearman or kendall")
    if k < 1:
        raise ValueError("n_resamples must be >= 1")


def perm_test(
    X: np.ndarray,
    Y: np.ndarray,
    Z: np.ndarray,
    *,
    level: str,
    method: str = "both",
    stat: str = "pearson",
    n_resamples: int = 1000,
    rng: np.random.Generator | None = None,
    seed: int | None = None,
    masks: tuple[np.ndarray, np.ndarray] | None = None,
) -> ResamplingTest:
    """Perm-Sys (``method="systems"``), Perm-Inp (``"inputs"``) or Perm-Both (Deutsch et al. 2021).

    ``masks``: the swap flags (S (k, m), T (k, n)) to use instead of drawing them from ``rng``
    (a reference implementation's draws can be replayed).
    """
    X, Y, Z = _align(X, Y, Z)
    X, Y = _standardize(X), _standardize(Y)
    m, n = X.shape
    if masks is None:
        _check(level, method, stat, n_resamples)
        rng = rng if rng is not None else np.random.default_rng(seed)
        S = rng.random((n_resamples, m)) < 0.5 if method != "inputs" else np.zeros((n_resamples, m))
        T = (
            rng.random((n_resamples, n)) < 0.5
            if method != "systems"
            else np.zeros((n_resamples, n))
        )
    else:
        S, T = masks
    S, T = np.asarray(S, dtype=float), np.asarray(T, dtype=float)
    k = S.shape[0]
    _check(level, method, stat, k)
    if stat == "pearson":
        obs = float(_perm_deltas(X, Y, Z, level, np.zeros((1, m)), np.zeros((1, n)))[0])
        dl = _perm_deltas(X, Y, Z, level, S, T)
    else:
        obs = level_correlation(X, Z, level, stat) - level_correlation(Y, Z, level, stat)

        def swapped(b: int) -> tuple[np.ndarray, ...]:
            M = (S[b][:, None] + T[b][None, :]) % 2 == 1
            return np.where(M, Y, X), np.where(M, X, Y), Z

        dl = _generic(stat, level, swapped, Z, k)
    fin = dl[np.isfinite(dl)]
    hits = int((np.abs(fin) >= abs(obs) - 1e-12 * max(1.0, abs(obs))).sum())
    p = (hits + 1) / (fin.size + 1) if math.isfinite(obs) else math.nan
    return ResamplingTest(f"perm-{method}", level, stat, obs, p, k, seed, P_RULE, dl)


def boot_test(
    X: np.ndarray,
    Y: np.ndarray,
    Z: np.ndarray,
    *,
    level: str,
    method: str = "both",
    stat: str = "pearson",
    n_resamples: int = 1000,
    rng: np.random.Generator | None = None,
    seed: int | None = None,
    draws: tuple[np.ndarray, np.ndarray] | None = None,
) -> ResamplingTest:
    """Boot-Sys, Boot-Inp or Boot-Both (Deutsch et al. 2021): Δ* on resampled systems/inputs.

    ``draws``: (system indices (k, m), input indices (k, n)) instead of drawing from ``rng``.
    p: :func:`~metajudge.metaeval.stats.bootstrap_p_value` of the Δ*.
    """
    X, Y, Z = _align(X, Y, Z)
    m, n = X.shape
    if draws is None:
        _check(level, method, stat, n_resamples)
        rng = rng if rng is not None else np.random.default_rng(seed)
        k = n_resamples
        ri = rng.integers(0, m, (k, m)) if method != "inputs" else np.tile(np.arange(m), (k, 1))
        ci = rng.integers(0, n, (k, n)) if method != "systems" else np.tile(np.arange(n), (k, 1))
    else:
        ri, ci = (np.asarray(a) for a in draws)
    k = ri.shape[0]
    _check(level, method, stat, k)
    obs = level_correlation(X, Z, level, stat) - level_correlation(Y, Z, level, stat)
    if stat == "pearson":
        dl = _boot_deltas(X, Y, Z, level, _counts(ri, m), _counts(ci, n))
    else:

        def drawn(b: int) -> tuple[np.ndarray, ...]:
            return tuple(a[ri[b]][:, ci[b]] for a in (X, Y, Z))

        dl = _generic(stat, level, drawn, Z, k)
    rule = "bootstrap_p_value: p = min(1, 2(min(#Δ*<=0, #Δ*>=0) + 1)/(k + 1))"
    return ResamplingTest(f"boot-{method}", level, stat, obs, bootstrap_p_value(dl), k, seed,
                          rule, dl)  # fmt: skip
