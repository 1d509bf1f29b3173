"""Agreement between judges (backbones): κ, Krippendorff's α, decisions and flip rates.

Used by the backbone-swap analysis (MT-RAIG Appendix C.1 / Table 8). The
correlation statistics themselves (Pearson, Spearman, bootstrap CIs, paired tests) live in
:mod:`metajudge.stats`; this module holds what is specific to *agreement*:

- :func:`cohen_kappa` — Cohen (1960) κ, with the linear / quadratic weights of Cohen (1968)
  for ordinal scales (the same definition as ``sklearn.metrics.cohen_kappa_score``).
- :func:`krippendorff_alpha` — Krippendorff's α (Krippendorff 2011, "Computing Krippendorff's
  Alpha-Reliability") in closed form, O(N·m) for N units and m coders. The ``krippendorff``
  package builds a values × values coincidence matrix per unit; on continuous judge scores
  (~1,700 distinct values) that needs tens of GiB. The closed forms:

  * interval: δ²(c, k) = (c − k)²; D_o = (1/n) Σ_u Σ_{i≠j∈u} (v_i − v_j)² / (m_u − 1) and
    D_e = Σ_{i≠j} (v_i − v_j)² / (n (n − 1)) over all pairable values, with
    Σ_{i≠j} (v_i − v_j)² = 2 (m Σ v² − (Σ v)²).
  * ordinal: δ(c, k) = Σ_{g=c}^{k} n_g − (n_c + n_k)/2 = R(k) − R(c) with R the mid-rank of a
    value among all pairable values (R(v) = #{< v} + (n_v + 1)/2 − ½), so ordinal α is interval
    α on mid-ranks.
  * nominal: δ = 1[c ≠ k]; Σ_{i≠j∈u} δ = m_u² − Σ_c n_uc².

  All three are checked against ``krippendorff.alpha`` on binned data in the tests.
- :func:`flip_rate`, :func:`decision_disagreement` — how often two judges' pairwise decisions
  (:func:`metajudge.stats.decisions.tie_decisions`) reverse a preference.
- :func:`both_orientations`, :func:`decision_kappa` — κ and α on pairwise decisions count
  every pair in both orientations (:data:`ORIENTATION`). Which response of a pair is "a" is
  arbitrary (file order, name order), and flipping some pairs moves the marginals that κ's and
  α's chance agreement read (LFTQA-Eval backbone swap: κ 0.2415 name-sorted, 0.2470 in file
  order); with both orientations the marginals are symmetric and the value is the same for
  any orientation, while the observed agreement is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from metajudge.data.formats import DatasetCard
    from metajudge.data.registry import Dataset

Level = Literal["interval", "ordinal", "nominal"]
Weights = Literal["linear", "quadratic"] | None


def _as_1d(x: ArrayLike, name: str) -> NDArray[np.float64]:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    return a


def flip_rate(x: ArrayLike, y: ArrayLike) -> tuple[float, int]:
    """Share of pairs where both judges decide (±1) and reverse each other; returns ``(rate, n)``.

    ``n`` counts the pairs where both are decisive. NaN decisions are skipped.

    >>> flip_rate([1, -1, 1, 0], [1, 1, -1, 1])
    (0.6666666666666666, 3)
    """
    a, b = _as_1d(x, "x"), _as_1d(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"x and y differ in length: {a.size} vs {b.size}")
    m = (a != 0) & (b != 0) & ~np.isnan(a) & ~np.isnan(b)
    n = int(m.sum())
    return (float(np.mean(a[m] != b[m])) if n else float("nan")), n


def decision_disagreement(x: ArrayLike, y: ArrayLike) -> tuple[float, int]:
    """Share of pairs (both non-NaN) with different decisions, ties included; ``(rate, n)``.

    >>> decision_disagreement([1, -1, 0, 0], [1, 1, 0, -1])
    (0.5, 4)
    """
    a, b = _as_1d(x, "x"), _as_1d(y, "y")
    m = ~np.isnan(a) & ~np.isnan(b)
    n = int(m.sum())
    return (float(np.mean(a[m] != b[m])) if n else float("nan")), n


#: how κ and α on pairwise decisions treat orientation (printed with them)
ORIENTATION = (
    "each pair counted in both orientations (d and −d), so the value does not depend on which "
    "response is 'a'"
)

DECISION_LABELS = (-1.0, 0.0, 1.0)


def both_orientations(decisions: ArrayLike) -> NDArray[np.float64]:
    """Decisions ``(..., n_pairs)`` followed by the same pairs reversed: ``(..., 2 n_pairs)``.

    >>> both_orientations([[1, 0], [-1, 1]]).tolist()
    [[1.0, 0.0, -1.0, -0.0], [-1.0, 1.0, 1.0, -1.0]]
    """
    a = np.asarray(decisions, dtype=float)
    return np.concatenate([a, -a], axis=-1)


def decision_kappa(x: ArrayLike, y: ArrayLike, *, weights: Weights = None) -> float:
    """Cohen's κ of two judges' pairwise decisions {−1, 0, 1}, both orientations (:data:`ORIENTATION`).

    >>> a, b = [1, 1, 1, -1, 0], [1, 1, -1, -1, 0]
    >>> decision_kappa(a, b) == decision_kappa([-1, 1, -1, 1, 0], [-1, 1, 1, 1, 0])
    True
    """
    return cohen_kappa(
        both_orientations(_as_1d(x, "x")),
        both_orientations(_as_1d(y, "y")),
        weights=weights,
        labels=DECISION_LABELS,
    )


def cohen_kappa(
    x: ArrayLike, y: ArrayLike, *, weights: Weights = None, labels: Sequence[float] | None = None
) -> float:
    """Cohen's κ between two raters' categorical labels (NaN pairs dropped).

    κ = 1 − Σ w_ij O_ij / Σ w_ij E_ij with O the observed confusion proportions and E the
    product of the marginals; w_ij = 1[i ≠ j] (Cohen 1960), |i − j| (linear) or (i − j)²
    (quadratic, Cohen 1968) over the category *positions* in the sorted label set — as in
    ``sklearn.metrics.cohen_kappa_score``. Returns NaN when undefined (no data, one category).

    >>> round(cohen_kappa([-1, 0, 1, 1, 0], [-1, 0, 1, 0, 0], weights="quadratic"), 4)
    0.8
    """
    a, b = _as_1d(x, "x"), _as_1d(y, "y")
    if a.shape != b.shape:
        raise ValueError(f"x and y differ in length: {a.size} vs {b.size}")
    m = ~np.isnan(a) & ~np.isnan(b)
    a, b = a[m], b[m]
    if a.size == 0:
        return float("nan")
    cats = np.array(
        sorted(set(labels) if labels is not None else set(a.tolist()) | set(b.tolist())),
        dtype=float,
    )
    k = cats.size
    ia, ib = np.searchsorted(cats, a), np.searchsorted(cats, b)
    if (
        np.any(ia >= k)
        or np.any(cats[np.minimum(ia, k - 1)] != a)
        or np.any(cats[np.minimum(ib, k - 1)] != b)
    ):
        raise ValueError("a label is not in `labels`")
    obs = np.zeros((k, k))
    np.add.at(obs, (ia, ib), 1.0)
    return float(kappa_from_confusion(obs, weights=weights))


def kappa_from_confusion(cm: ArrayLike, *, weights: Weights = None) -> NDArray[np.float64]:
    """Cohen's κ of confusion matrices ``(..., k, k)`` of counts, vectorised over leading axes.

    κ = 1 − Σ w_ij O_ij / Σ w_ij E_ij (see :func:`cohen_kappa`); NaN where undefined.

    >>> float(kappa_from_confusion([[1, 0], [1, 1]]))
    0.4
    """
    cm = np.asarray(cm, dtype=float)
    k = cm.shape[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        obs = cm / cm.sum(axis=(-2, -1), keepdims=True)
        exp = obs.sum(-1)[..., :, None] * obs.sum(-2)[..., None, :]
        pos = np.arange(k, dtype=float)
        if weights is None:
            w = 1.0 - np.eye(k)
        elif weights == "linear":
            w = np.abs(pos[:, None] - pos[None, :])
        elif weights == "quadratic":
            w = (pos[:, None] - pos[None, :]) ** 2
        else:
            raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
        den = (w * exp).sum(axis=(-2, -1))
        num = (w * obs).sum(axis=(-2, -1))
        return np.where(den == 0.0, np.nan, 1.0 - num / np.where(den == 0.0, 1.0, den))


def _midranks(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """Mid-ranks (1-based, ties averaged) of a 1-D array."""
    order = np.argsort(v, kind="mergesort")
    sv = v[order]
    uniq_start = np.r_[True, sv[1:] != sv[:-1]]
    grp = np.cumsum(uniq_start) - 1
    starts = np.flatnonzero(uniq_start)
    ends = np.r_[starts[1:], sv.size]
    mid = (starts + 1 + ends) / 2.0
    out = np.empty_like(v)
    out[order] = mid[grp]
    return out


def krippendorff_alpha(data: ArrayLike, *, level: Level = "interval") -> float:
    """Krippendorff's α for a coders × units matrix (NaN = missing), closed form, O(N·m).

    Units with fewer than two values are not pairable and are ignored, as in Krippendorff (2011).
    ``level`` is ``"interval"`` (squared differences), ``"ordinal"`` (interval α on the mid-ranks
    of all pairable values, which equals Krippendorff's ordinal metric) or ``"nominal"``.

    >>> round(krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 4]]), 6)
    1.0
    >>> round(krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]], level="nominal"), 4)
    0.6957
    """
    x = np.asarray(data, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"data must be coders × units (2-D), got shape {x.shape}")
    present = ~np.isnan(x)
    m_u = present.sum(axis=0)
    pairable = m_u >= 2
    x, present, m_u = x[:, pairable], present[:, pairable], m_u[pairable]
    n = int(m_u.sum())
    if n < 2:
        return float("nan")
    if level == "nominal":
        vals = x[present]
        cats, inv = np.unique(vals, return_inverse=True)
        codes = np.full(x.shape, -1, dtype=np.int64)
        codes[present] = inv
        # per-unit category counts n_uc
        units = np.broadcast_to(np.arange(x.shape[1]), x.shape)[present]
        n_uc = np.zeros((x.shape[1], cats.size))
        np.add.at(n_uc, (units, inv), 1.0)
        d_o = float(((m_u**2 - (n_uc**2).sum(1)) / (m_u - 1)).sum()) / n
        n_c = n_uc.sum(0)
        d_e = float(n**2 - (n_c**2).sum()) / (n * (n - 1))
    elif level in ("interval", "ordinal"):
        if level == "ordinal":
            ranks = _midranks(x[present])
            x = x.copy()
            x[present] = ranks
        v = np.where(present, x, 0.0)
        s1 = v.sum(0)
        s2 = (v**2).sum(0)
        d_o = float((2.0 * (m_u * s2 - s1**2) / (m_u - 1)).sum()) / n
        t1, t2 = float(s1.sum()), float(s2.sum())
        d_e = 2.0 * (n * t2 - t1**2) / (n * (n - 1))
    else:
        raise ValueError(f"level must be 'interval', 'ordinal' or 'nominal', got {level!r}")
    if d_e == 0.0:
        return float("nan")
    return 1.0 - d_o / d_e


# The levels of measurement and the annotators' rating matrix of a dataset's dimension
# (used by `metajudge agreement` and the categorical reference alike).


def level_for(label_kind: str, *, has_values: bool, ordered: bool) -> Level:
    """The level of measurement of a label kind: nominal for unordered categories and binary
    labels, ordinal for graded scales with listed values, ordered categories and graded
    preferences, interval for continuous numbers."""
    if label_kind in ("categorical", "binary"):
        return "ordinal" if ordered and label_kind == "categorical" else "nominal"
    return "ordinal" if has_values else "interval"


def dimension_level(card: DatasetCard, dimension: str) -> Level:
    """:func:`level_for` of one dimension (its own scale where the card has per-dimension ones)."""
    sc = card.scale_of(dimension)
    kind = card.label_kind
    if card.dimension_scales and kind in ("categorical", "numeric"):
        kind = "categorical" if sc.labels is not None else "numeric"
    return level_for(kind, has_values=sc.values is not None, ordered=sc.ordered)


def rating_matrix(ds: Dataset, dimension: str) -> np.ndarray:
    """Units × coders matrix of one dimension (NaN = missing); categorical labels as codes."""
    from metajudge.data.formats import PairwiseRecord

    scale = ds.card.scale_of(dimension)
    rows: list[list[float]] = []
    for r in ds.records:
        vals = (r.labels if isinstance(r, PairwiseRecord) else r.scores).get(dimension)
        if vals is not None:
            rows.append([np.nan if v is None else scale.code(v) for v in vals])
    width = max((len(v) for v in rows), default=0)
    out = np.full((len(rows), width), np.nan)
    for i, v in enumerate(rows):
        out[i, : len(v)] = v
    return out
