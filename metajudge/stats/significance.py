"""Comparing two metrics: paired bootstrap, permutation and Williams tests; Holm correction."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metajudge.engine import CHUNK_ELEMENTS, accuracy_from_sums
from metajudge.stats.bootstrap import _group_index, bootstrap_p_value, correlate, resample
from metajudge.stats.correlation import (
    CORRELATIONS,
    _as_xy,
    _rankdata,
    _tie_pairs,
    accuracy_rows,
    pearson_from_sums,
    pearson_rows,
    statistic_fn,
)
from metajudge.stats.intervals import percentile_ci


@dataclass
class DiffResult:
    """Difference ``stat(x1, y) − stat(x2, y)`` with a CI (bootstrap) and a two-sided p-value."""

    diff: float
    lo: float
    hi: float
    p_value: float
    n_resamples: int
    method: str


def paired_bootstrap_diff(
    x1: Sequence[float] | np.ndarray,
    x2: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    statistic: str = "pearson",
    groups: Sequence[object] | np.ndarray | None = None,
    n_boot: int = 1000,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
    weights: np.ndarray | None = None,
    resamples: Any = None,
    samples: tuple[np.ndarray, np.ndarray] | None = None,
    observed: tuple[float, float] | None = None,
) -> DiffResult:
    """Paired bootstrap of the difference of two metrics' correlation with the same humans.

    Both metrics are evaluated on the same item resamples (Koehn 2004; Deutsch, Dror & Roth
    2021): :func:`~metajudge.stats.bootstrap.resample` (or ``weights`` (B, n_items), or the row
    weights ``resamples``), :func:`~metajudge.stats.bootstrap.correlate`; ``samples``: both
    metrics' resampled values when already computed on those resamples; ``observed``: both
    metrics' point values on these rows when already computed (a point value of a million rows
    costs two sorts). CI: percentile interval of Δ_b. p-value:
    :func:`~metajudge.stats.bootstrap.bootstrap_p_value` (two-sided, add-one smoothing, so a
    finite bootstrap never reports p = 0).
    """
    a1, ya = _as_xy(x1, y)
    a2, _ = _as_xy(x2, y)
    if samples is None:
        W = resamples
        if W is None:
            W = resample(groups, ya.size, n_boot=n_boot, rng=rng, weights=weights)  # type: ignore[arg-type]
        s1 = correlate([(statistic, a1, ya)], W)[0]
        s2 = correlate([(statistic, a2, ya)], W)[0]
    else:
        s1, s2 = samples
    d = s1 - s2
    if observed is None:
        observed = (statistic_fn(statistic)(a1, ya), statistic_fn(statistic)(a2, ya))
    obs = observed[0] - observed[1]
    lo, hi = percentile_ci(d, level)
    p = bootstrap_p_value(d) if math.isfinite(obs) else math.nan
    return DiffResult(float(obs), lo, hi, p, int(d.size), "paired bootstrap")


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
    n_perm: int = 1000,
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
    p = (1 + #{|Δ_perm| ≥ |Δ_obs|}) / (1 + n_perm) (Phipson & Smyth 2010). No CI
    (``lo``/``hi`` are nan).
    """
    a1, ya = _as_xy(x1, y)
    a2, _ = _as_xy(x2, y)
    stat_perm = statistic
    if statistic == "spearman":
        a1, a2, ya = _rankdata(a1), _rankdata(a2), _rankdata(ya)
        stat_perm = "pearson"
    if standardize and statistic in CORRELATIONS:
        a1 = (a1 - a1.mean()) / (a1.std() or 1.0)
        a2 = (a2 - a2.mean()) / (a2.std() or 1.0)
    gi, n_items = _group_index(groups, ya.size)
    obs = statistic_fn(stat_perm)(a1, ya) - statistic_fn(stat_perm)(a2, ya)
    d = _perm_diffs(stat_perm, a1, a2, ya, gi, n_items, n_perm, rng)
    if not math.isfinite(obs):
        p = math.nan
    else:
        fin = d[np.isfinite(d)]
        p = float((1 + (np.abs(fin) >= abs(obs) - 1e-12).sum()) / (1 + fin.size))
    return DiffResult(float(obs), math.nan, math.nan, p, n_perm, "permutation")


def _perm_diffs(
    stat: str,
    a1: np.ndarray,
    a2: np.ndarray,
    y: np.ndarray,
    gi: np.ndarray | None,
    n_items: int,
    n_perm: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``stat(X1, y) − stat(X2, y)`` per permutation, a block of permutations at a time.

    The swaps are drawn block by block from the stream of one ``(n_perm, n_items)`` draw, so
    the values do not depend on the block size. Pearson (and Spearman, a Pearson of ranks) needs
    no permuted copy of the data: swapping item i adds ``Σ_rows of i (a2 − a1)`` to Σx1 (and
    the like to Σx1², Σx1·y), so each permutation's sums are the unpermuted ones plus one
    product of its swap vector with per-item sums — memory and time O(n_perm × items).
    """
    d = np.empty(n_perm)
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
    for p0 in range(0, n_perm, step):
        swap_items = rng.random((min(step, n_perm - p0), n_items)) < 0.5
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
    n_perm: int = 1000,
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
    pair — time O(n_perm × items × metrics), not × pairs. Returns, per problem, one
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
            a = (a - a.mean()) / (a.std() or 1.0)
            rs[k].append(statistic_fn("pearson")(a, yas[k]))
            bases[k].append([a.sum(), (a * a).sum(), (a * ycs[k]).sum()])
            for t, v in enumerate((a, a * a, a * ycs[k])):
                M[:, 3 * c + t] = (
                    np.bincount(gi, weights=v, minlength=n_items) if gi is not None else v
                )
        rng.bit_generator.state = start  # every chunk of metrics the same swaps
        parts.append(_shared_swap_sums(M, n_items, n_perm, rng))
        del M
    Q = np.concatenate(parts, axis=1)
    setups = [
        (np.array(rs[k]), np.array(bases[k]), float(ycs[k] @ ycs[k]), y0.size)
        for k in range(len(problems))
    ]
    out, c0 = [], 0
    for r, base, syy, n in setups:
        k = base.shape[0]
        Qp = Q[:, c0 : c0 + 3 * k].reshape(n_perm, k, 3)
        c0 += 3 * k
        res = []
        for i, j in pairs:
            delta = Qp[:, j] - Qp[:, i]
            d = _r_from_sums(base[i] + delta, n, syy) - _r_from_sums(base[j] - delta, n, syy)
            obs = float(r[i] - r[j])
            fin = d[np.isfinite(d)]
            p = (
                float((1 + (np.abs(fin) >= abs(obs) - 1e-12).sum()) / (1 + fin.size))
                if math.isfinite(obs)
                else math.nan
            )
            res.append(DiffResult(obs, math.nan, math.nan, p, n_perm, "permutation (shared swaps)"))
        out.append(res)
    return out


def _metric_chunks(n_metrics: list[int], n_items: int) -> list[list[tuple[int, int]]]:
    """The (problem, metric) pairs in order, in chunks whose per-item sums (3 columns a metric)
    fit :data:`~metajudge.stats.moments.PASS_ITEM_ELEMENTS` (one metric at least): at a million
    items 4 metrics a chunk (96 MB), not 6 metrics × 2 statistics at once (288 MB)."""
    from metajudge.engine import PASS_ITEM_ELEMENTS

    per = max(1, PASS_ITEM_ELEMENTS // (3 * max(n_items, 1)))
    pairs = [(k, i) for k, n in enumerate(n_metrics) for i in range(n)]
    return [pairs[c : c + per] for c in range(0, len(pairs), per)]


def _shared_swap_sums(
    M: np.ndarray, n_items: int, n_perm: int, rng: np.random.Generator
) -> np.ndarray:
    """``(n_perm, k)``: each permutation's swap vector (one bit per item) times ``M``. The
    swaps are drawn here, a tile of :data:`~metajudge.stats.moments.TILE_ROWS` permutations at
    a time in stream order; their products are shared among the resample threads
    (:func:`~metajudge.stats.resample.map_blocks`: each tile's are the same on any thread)."""
    from metajudge.engine import TILE_ROWS, map_blocks, one_blas_thread, ready, tile_product

    words = -(-n_items // 64)
    out = np.empty((n_perm, M.shape[1]))

    def one(p0: int, raw: np.ndarray) -> None:
        bits = np.unpackbits(raw.view(np.uint8), axis=1, count=n_items, bitorder="little")
        out[p0 : p0 + raw.shape[0]] = tile_product(bits, M)

    def tiles() -> Iterator[tuple[int, Callable[[], np.ndarray]]]:
        for p0 in range(0, n_perm, TILE_ROWS):
            rows = min(TILE_ROWS, n_perm - p0)
            yield p0, ready(rng.bit_generator.random_raw(rows * words).reshape(rows, words))

    with one_blas_thread():
        map_blocks(one, tiles())
    return out


def _r_from_sums(S: np.ndarray, n: int, syy: float) -> np.ndarray:
    """Pearson r from rows of (Σx, Σx², Σx·y_c) with y centred (Σy_c = 0) and Σy_c² = syy:
    the x sums centred, then :func:`~metajudge.stats.correlation.pearson_from_sums`."""
    sx, sxx, sxy = S[:, 0], S[:, 1], S[:, 2]
    vx = sxx - sx * sx / n
    ok = (vx > 1e-12 * np.maximum(sxx, 1e-300)) & (syy > 0)
    return pearson_from_sums(sxy, vx, syy, ok)


@dataclass
class WilliamsResult:
    """Williams' t for two dependent correlations sharing one variable."""

    t: float
    df: int
    p_two_sided: float
    p_one_sided: float  # H1: r12 > r13


def williams_test(r12: float, r13: float, r23: float, n: int) -> WilliamsResult:
    """Williams (1959) test of H0: ρ12 = ρ13 for correlations sharing variable 1 (the humans).

    r12 = corr(human, metric A), r13 = corr(human, metric B), r23 = corr(metric A, metric B), n
    observations. As used for MT metrics by Graham & Baldwin (2014) and given by Steiger (1980,
    eq. 7)::

        K = 1 − r12² − r13² − r23² + 2·r12·r13·r23
        t = (r12 − r13)·sqrt((n − 1)(1 + r23)) /
            sqrt(2K(n − 1)/(n − 3) + ((r12 + r13)²/4)·(1 − r23)³),   df = n − 3

    Example (Steiger 1980 / ``psych::r.test(103, .4, .5, .1)``): t = −0.89, df = 100.

    >>> res = williams_test(0.4, 0.5, 0.1, 103)
    >>> round(res.t, 2), res.df
    (-0.89, 100)
    """
    from scipy.special import stdtr  # Student t CDF, without importing scipy.stats

    if n <= 3 or not all(math.isfinite(v) for v in (r12, r13, r23)):
        return WilliamsResult(math.nan, max(n - 3, 0), math.nan, math.nan)
    K = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    num = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    den2 = 2 * K * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    if den2 <= 0:
        return WilliamsResult(math.nan, n - 3, math.nan, math.nan)
    t = num / math.sqrt(den2)
    df = n - 3
    p1 = float(stdtr(df, -t))  # P(T > t)
    p2 = float(min(1.0, 2 * stdtr(df, -abs(t))))
    return WilliamsResult(float(t), df, p2, p1)


def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values; NaN entries stay NaN and do not count.

    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="mergesort")]
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adj, 1.0)
    return out


@dataclass(frozen=True)
class PFloor:
    """The smallest p-value a resampling test can report, and the smallest after Holm.

    A test on ``n_resamples`` resamples cannot report p below its floor — 2/(B + 1) for the
    two-sided bootstrap p (:func:`~metajudge.stats.bootstrap_p_value`), 1/(k + 1) for the
    permutation p — and Holm over ``n_tests`` tests multiplies the smallest by ``n_tests``
    (B = 1000 and 18 tests: 0.002 and 0.036). A p at the floor means "p ≤ floor", not p =
    floor: :meth:`text` writes it so, and :meth:`note` says when the floor keeps every test
    from reaching α. The one rule for these statements (rank clusters, meta-evaluation
    comparisons, backbone swap).

    >>> f = PFloor.bootstrap(1000, 18)
    >>> round(f.floor, 4), round(f.holm_floor, 3), f.text(f.floor), f.text(0.25)
    (0.002, 0.036, '≤0.002', '0.25')
    """

    rule: str
    floor: float
    n_resamples: int
    n_tests: int

    @classmethod
    def bootstrap(cls, n_boot: int, n_tests: int) -> PFloor:
        return cls("2/(B + 1)", 2.0 / (n_boot + 1), n_boot, n_tests)

    @classmethod
    def permutation(cls, n_perm: int, n_tests: int) -> PFloor:
        return cls("1/(k + 1)", 1.0 / (n_perm + 1), n_perm, n_tests)

    @property
    def holm_floor(self) -> float:
        return min(1.0, self.n_tests * self.floor)

    def at_floor(self, p: float | None) -> bool:
        """Whether the raw ``p`` is the floor (the true p may be anything below it)."""
        return p is not None and math.isfinite(p) and p <= self.floor * (1 + 1e-9)

    def text(self, p: float | None, raw: float | None = None) -> str:
        """``p`` (``raw``: its unadjusted p when ``p`` is Holm-adjusted) as ``≤p`` at the floor."""
        if p is None or not math.isfinite(p):
            return "—"
        return f"≤{p:.3g}" if self.at_floor(p if raw is None else raw) else f"{p:.3g}"

    def needed(self, alpha: float) -> int:
        """The fewest resamples whose Holm floor over these tests is below ``alpha``: the
        floor's numerator (2 for the bootstrap, 1 for permutations) times the tests / alpha,
        rounded down.

        >>> PFloor.bootstrap(1000, 132).needed(0.05)
        5280
        """
        numerator = 2 if self.rule.startswith("2/") else 1
        return max(math.floor(numerator * self.n_tests / alpha), 1)

    def note(self, alpha: float) -> str | None:
        """Why no test can be significant at ``alpha`` after Holm, or None when one can."""
        if self.n_tests and self.holm_floor > alpha:
            return (
                f"with {self.n_resamples} resamples the smallest p is {self.rule} = "
                f"{self.floor:.3g}; Holm over {self.n_tests} tests cannot fall below "
                f"{self.holm_floor:.3g}, so it cannot reach alpha {alpha}: use at least "
                f"{self.needed(alpha)} resamples, or fewer tests (meta-eval: --n-boot "
                f"{self.needed(alpha)}, or --compare-to METRIC)"
            )
        return None

    def to_dict(self, alpha: float) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "floor": self.floor,
            "n_resamples": self.n_resamples,
            "n_tests": self.n_tests,
            "holm_floor": self.holm_floor,
            "meaning": "a p at the floor is reported as <= floor (the test cannot resolve below)",
            "note": self.note(alpha),
        }


def benjamini_yekutieli(pvalues: Sequence[float] | np.ndarray, q: float = 0.05) -> np.ndarray:
    """Rejections of the Benjamini–Yekutieli (2001) step-up procedure at FDR ``q`` (valid under
    any dependence): reject the k smallest p-values, k the largest with
    ``p_(k) <= k·q / (m·H_m)``, ``H_m = 1 + 1/2 + … + 1/m``. NaN entries are not rejected and
    do not count in m.

    >>> benjamini_yekutieli([0.001, 0.02, 0.04, 0.5], q=0.05).tolist()
    [True, False, False, False]
    >>> benjamini_yekutieli([0.001, 0.008, 0.04, 0.5], q=0.05).tolist()
    [True, True, False, False]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.zeros(p.shape, dtype=bool)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="mergesort")]
    ranks = np.arange(1, m + 1)
    below = np.flatnonzero(p[order] <= ranks * q / (m * np.sum(1.0 / ranks)))
    if below.size:
        out[order[: below[-1] + 1]] = True
    return out


def t_test_less(x: Sequence[float] | np.ndarray, mu: float) -> tuple[float, float]:
    """One-sample t-test of H0: mean(x) >= ``mu`` against H1: mean(x) < ``mu``: ``(t, p)``,
    ``p = P(T_{n-1} <= t)`` (as ``scipy.stats.ttest_1samp(x, mu, alternative='less')``). With no
    spread, t is ±inf (p 0 or 1) or, when mean(x) = mu, NaN; fewer than two values give NaN.

    >>> t, p = t_test_less([0.0, 0.1, -0.1, 0.2, 0.0], 0.2)
    >>> round(t, 3), round(p, 4)
    (-3.138, 0.0175)
    """
    from scipy.special import stdtr

    a = np.asarray(x, dtype=float)
    n = a.size
    if n < 2:
        return math.nan, math.nan
    diff = float(a.mean()) - mu
    sd = float(a.std(ddof=1))
    if sd == 0.0 or not math.isfinite(sd):
        if diff == 0.0:
            return math.nan, math.nan
        return (-math.inf, 0.0) if diff < 0 else (math.inf, 1.0)
    t = diff / (sd / math.sqrt(n))
    return t, float(stdtr(n - 1, t))
