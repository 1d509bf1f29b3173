"""Agreement between a dataset's human annotators, per dimension (``metajudge agreement``).

For every dimension the annotations form a coders × units matrix (units: one response for
per-response data, one pair for pairwise data; coders: the annotator positions of the label
lists; ``None`` = missing, so uneven annotator counts are handled). Reported:

- Krippendorff's α (Krippendorff 2011) at the level of measurement of the label kind
  (:func:`metajudge.stats.agreement.level_for`), computed by :func:`metajudge.stats.agreement.krippendorff_alpha`;
- Fleiss' κ (Fleiss 1971, "Measuring nominal scale agreement among many raters"), every distinct
  label a category (Likert grades too), units with ≥ 2 ratings, the per-unit agreement
  P_i = (Σ_j n_ij² − n_i) / (n_i (n_i − 1)) averaged over units and p_j pooled over all ratings
  (the form that allows a different number of raters per unit);
- Cohen's κ (Cohen 1960, unweighted) between annotator positions: the single κ when there are
  two, else the mean over all position pairs (Light 1971);
- split-half reliability: per unit the ratings are shuffled (seeded) and split into the first
  ⌊m/2⌋ and the rest, the half means are correlated over units (Pearson r) and corrected with
  Spearman–Brown, 2r / (1 + r); the mean over ``splits`` random splits is reported
  (not defined for nominal labels; a split whose halves are perfectly anti-correlated, r = −1,
  has no Spearman–Brown value and is left out of that mean, which is n/a when every split is
  such, e.g. two annotators who always disagree; the mean r is still given);
- the number of ratings per unit (min / mean / max).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from metajudge.results import Result
from metajudge.stats.agreement import (
    Level,
    cohen_kappa,
    dimension_level,
    krippendorff_alpha,
    rating_matrix,
)
from metajudge.stats.correlation import pearson

if TYPE_CHECKING:
    import pandas as pd

    from metajudge.data.registry import Dataset


@dataclass(frozen=True)
class AgreementOptions:
    """``level``: None = from the label kind; ``splits`` random splits for split-half (``seed``)."""

    level: Level | None = None
    seed: int = 0
    splits: int = 100


@dataclass(frozen=True)
class DimensionAgreement:
    dimension: str
    level: str
    units: int  # units with at least two ratings (the pairable ones)
    annotators: int  # annotator positions (the longest label list)
    ratings_min: int
    ratings_mean: float
    ratings_max: int
    alpha: float
    fleiss_kappa: float
    cohen_kappa: float  # two annotators: Cohen's κ; more: mean pairwise Cohen's κ
    cohen_pairs: int
    split_half: float  # Spearman–Brown corrected
    split_half_r: float  # the uncorrected half-vs-half Pearson r
    distinct_values: int = 0  # distinct labels seen
    kappa_skipped: str | None = None  # why Fleiss / Cohen κ are not given (continuous labels)


@dataclass(frozen=True)
class AgreementResult(Result):
    dataset: str
    label_kind: str
    rows: tuple[DimensionAgreement, ...]
    notes: tuple[str, ...] = field(default=())
    # published α per dimension (e.g. JUDGE-BENCH results/regular), shown beside ours
    published: Mapping[str, float] = field(default_factory=dict)
    # judge columns beside the humans (``agreement --scores``)
    judges: tuple[JudgeAgreement, ...] = ()

    def with_judges(
        self, judges: tuple[JudgeAgreement, ...], source: str, unused: tuple[str, ...] = ()
    ) -> AgreementResult:
        """This result with judge columns (from ``source``) beside the humans; ``unused``:
        columns that name no dimension (stated in the notes)."""
        note = (
            f"judges ({source}): each judge column is one more coder; per annotator: α (and "
            "Cohen κ for discrete labels) of the judge with that annotator beside that "
            "annotator's mean with the other annotators; pool: α of the annotators without and "
            "with the judge, on the units the judge rated"
        )
        miss = [f"{j.judge}/{j.dimension}: {j.missing}" for j in judges if j.missing]
        notes = (*self.notes, note)
        if miss:
            notes += ("units with human ratings but no usable judge value: " + ", ".join(miss),)
        if unused:
            notes += (
                "columns not used (several dimensions: a judge column is named JUDGE_<dimension>): "
                + ", ".join(unused),
            )
        ties = [f"{j.judge}: {j.ties}" for j in judges if j.ties]
        if ties:
            notes += ("judge ties (equal scores for a and b, verdict 0): " + ", ".join(ties),)
        return replace(self, judges=judges, notes=notes)

    def with_published(self, published: Mapping[str, float] | None, source: str) -> AgreementResult:
        """This result with a ``published α`` column (from ``source``)."""
        if not published:
            return self
        note = f"published α: {source}"
        return replace(self, published=dict(published), notes=(*self.notes, note))

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "label_kind": self.label_kind,
            "dimensions": [asdict(r) for r in self.rows],
            "notes": list(self.notes),
            **({"published_alpha": dict(self.published)} if self.published else {}),
            **({"judges": [_judge_dict(j) for j in self.judges]} if self.judges else {}),
        }

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.rows])


def _judge_dict(j: JudgeAgreement) -> dict[str, Any]:
    return {
        **asdict(j),
        "judge_alpha_mean": j.judge_alpha_mean,
        "human_alpha_mean": j.human_alpha_mean,
    }


def fleiss_kappa(x: NDArray[np.float64]) -> float:
    """Fleiss' κ of a units × coders matrix (NaN = missing); every distinct value a category.

    >>> round(fleiss_kappa(np.array([[1, 1, 2], [2, 2, 2], [1, 2, 1.0]])), 4)
    0.1
    """
    present = ~np.isnan(x)
    n_i = present.sum(1)
    keep = n_i >= 2
    x, present, n_i = x[keep], present[keep], n_i[keep]
    if not x.size:
        return float("nan")
    cats, inv = np.unique(x[present], return_inverse=True)
    counts = np.zeros((x.shape[0], cats.size))
    np.add.at(counts, (np.nonzero(present)[0], inv), 1.0)
    p_i = ((counts**2).sum(1) - n_i) / (n_i * (n_i - 1))
    p_j = counts.sum(0) / counts.sum()
    p_e = float((p_j**2).sum())
    if p_e >= 1.0:
        return float("nan")
    return (float(p_i.mean()) - p_e) / (1.0 - p_e)


def mean_pairwise_cohen(x: NDArray[np.float64]) -> tuple[float, int]:
    """Mean unweighted Cohen's κ over pairs of coder columns with ≥ 2 shared units."""
    ks = []
    for i in range(x.shape[1]):
        for j in range(i + 1, x.shape[1]):
            both = ~np.isnan(x[:, i]) & ~np.isnan(x[:, j])
            if both.sum() >= 2:
                ks.append(cohen_kappa(x[both, i], x[both, j]))
    ks = [k for k in ks if not math.isnan(k)]
    return (float(np.mean(ks)) if ks else float("nan")), len(ks)


def split_half(
    x: NDArray[np.float64], rng: np.random.Generator, splits: int
) -> tuple[float, float]:
    """Mean over random splits of (Spearman–Brown corrected r, r); see the module docstring."""
    present = ~np.isnan(x)
    m = present.sum(1)
    x, present, m = x[m >= 2], present[m >= 2], m[m >= 2]
    if x.shape[0] < 3:
        return float("nan"), float("nan")
    v = np.where(present, x, 0.0)
    rs = []
    for _ in range(splits):
        keys = np.where(present, rng.random(x.shape), np.inf)
        rank = np.argsort(np.argsort(keys, axis=1), axis=1)
        first = present & (rank < (m // 2)[:, None])
        second = present & ~first
        h1 = (v * first).sum(1) / first.sum(1)
        h2 = (v * second).sum(1) / second.sum(1)
        if h1.std() == 0 or h2.std() == 0:
            continue
        rs.append(pearson(h1, h2))  # the one Pearson (metaeval/stats/correlation.py)
    if not rs:
        return float("nan"), float("nan")
    sb = [2 * r / (1 + r) for r in rs if r > -1.0]  # r = -1: Spearman–Brown is undefined
    return (float(np.mean(sb)) if sb else float("nan")), float(np.mean(rs))


#: κ treats every distinct label as a category: it is given for nominal labels and for numeric
#: labels with at most this many distinct values (a Likert grade), not for continuous ones
KAPPA_MAX_VALUES = 10


def kappa_skipped(level: str, distinct: int) -> str | None:
    """Why κ is not computed for labels of ``level`` with ``distinct`` values, or None.

    >>> kappa_skipped("ordinal", 5) is None, kappa_skipped("interval", 37)[:30]
    (True, '37 distinct values: continuous')
    """
    if level == "nominal" or distinct <= KAPPA_MAX_VALUES:
        return None
    return (
        f"{distinct} distinct values: continuous labels, where κ would count every distinct "
        f"value as its own category (κ is given up to {KAPPA_MAX_VALUES}); Krippendorff α at "
        f"level {level} and split-half reliability measure agreement here"
    )


def dimension_agreement(
    ds: Dataset, dimension: str, level: Level, rng: np.random.Generator, splits: int
) -> DimensionAgreement:
    x = rating_matrix(ds, dimension)
    n = (~np.isnan(x)).sum(1) if x.size else np.zeros(0, dtype=int)
    distinct = int(np.unique(x[~np.isnan(x)]).size) if x.size else 0
    skipped = kappa_skipped(level, distinct)
    ck, pairs = mean_pairwise_cohen(x) if skipped is None else (float("nan"), 0)
    sb, r = split_half(x, rng, splits) if level != "nominal" else (float("nan"), float("nan"))
    return DimensionAgreement(
        dimension=dimension,
        level=level,
        units=int((n >= 2).sum()),
        annotators=int(x.shape[1]),
        ratings_min=int(n.min()) if n.size else 0,
        ratings_mean=float(n.mean()) if n.size else 0.0,
        ratings_max=int(n.max()) if n.size else 0,
        alpha=krippendorff_alpha(x.T, level=level),
        fleiss_kappa=fleiss_kappa(x) if skipped is None else float("nan"),
        cohen_kappa=ck,
        cohen_pairs=pairs,
        split_half=sb,
        split_half_r=r,
        distinct_values=distinct,
        kappa_skipped=skipped,
    )


def agreement(ds: Dataset, options: AgreementOptions | None = None) -> AgreementResult:
    """Per-dimension agreement of ``ds``'s annotators (see the module docstring)."""
    from metajudge.errors import InputError

    opts = options or AgreementOptions()
    card = ds.card
    if card.label_kind == "none":
        raise InputError(f"{card.name} has no human labels (a benchmark)", field="dataset")
    levels = {d: opts.level or dimension_level(card, d) for d in card.dimensions}
    level = ", ".join(dict.fromkeys(levels.values()))
    rng = np.random.default_rng(opts.seed)
    rows = tuple(dimension_agreement(ds, d, levels[d], rng, opts.splits) for d in card.dimensions)
    unit = "pair" if card.label_kind == "pairwise" else "response"
    notes = (
        f"unit = one {unit}; coders = annotator positions in the label lists (null = missing); "
        f"level of measurement {level}" + ("" if opts.level else " (from the label kind)"),
        (
            "Fleiss κ: every distinct label a category; Cohen κ: unweighted, between annotator "
            "positions (mean over position pairs when more than two)"
        ),
        (
            f"split-half: per unit ratings shuffled (seed {opts.seed}), first ⌊m/2⌋ vs the rest, "
            f"Pearson r of the half means, Spearman–Brown 2r/(1+r), mean of {opts.splits} splits"
        ),
    )
    notes += tuple(f"{r.dimension}: no κ: {r.kappa_skipped}" for r in rows if r.kappa_skipped)
    notes += tuple(
        f"{r.dimension}: split-half n/a: the halves are perfectly anti-correlated (r = "
        f"{r.split_half_r:.3f}), where Spearman–Brown 2r/(1+r) is undefined"
        for r in rows
        if math.isnan(r.split_half) and r.split_half_r <= -1.0 + 1e-12
    )
    if all(r.units == 0 for r in rows):
        notes += ("no unit has two ratings: agreement is not defined (one label per unit)",)
    return AgreementResult(card.name, card.label_kind, rows, notes)


# --- a judge column as one more annotator (``agreement --scores``) -------------------------


@dataclass(frozen=True)
class JudgeAgreement:
    """One judge column on one dimension, beside the humans (``agreement --scores``).

    Per annotator position i: Krippendorff α (at the dimension's level) of the judge with
    annotator i over the units both rated (``judge_alpha``), and the mean α of annotator i
    with every other annotator (``human_alpha``, the inter-human figure for the same person);
    Cohen κ likewise when the labels are discrete. Pool: α of all humans (``alpha_humans``)
    and of all humans with the judge as one more coder (``alpha_with_judge``), on the units
    the judge rated.
    """

    dimension: str
    judge: str
    units: int  # units with a judge value
    missing: int  # units with a human rating but no usable judge value (counted, not used)
    alpha_humans: float
    alpha_with_judge: float
    judge_alpha: tuple[float, ...]  # per annotator position
    human_alpha: tuple[float, ...]  # per annotator position: mean α with the other humans
    judge_kappa: tuple[float, ...]  # NaN when the labels are continuous
    human_kappa: tuple[float, ...]
    shared: tuple[int, ...]  # units the judge and annotator i both rated
    ties: int = 0  # pairwise data: units where the judge's two sides scored the same (a tie, 0)

    @property
    def judge_alpha_mean(self) -> float:
        return _nanmean(self.judge_alpha)

    @property
    def human_alpha_mean(self) -> float:
        return _nanmean(self.human_alpha)


def _nanmean(xs: tuple[float, ...]) -> float:
    v = [x for x in xs if not math.isnan(x)]
    return float(np.mean(v)) if v else float("nan")


def _judge_value(ds: Dataset, dim: str, rows: list[Mapping[str, Any]]) -> float | None:
    """One unit's judge value on the dimension's codes: a label's code, a score, or for a
    pairwise unit the sign of side b minus side a (the card's direction: positive = b)."""
    scale = ds.card.scale_of(dim)
    if ds.card.label_kind == "pairwise":
        side = {r.get("side"): r.get("score") for r in rows}
        if side.get("a") is None or side.get("b") is None:
            return None
        return float(np.sign(float(side["b"]) - float(side["a"])))
    (row,) = rows
    if row.get("label") is not None:
        lab = str(row["label"])
        return scale.code(lab) if scale.labels is not None and lab in scale.labels else None
    return None if row.get("score") is None or scale.labels is not None else float(row["score"])


def judge_rating_columns(
    ds: Dataset, dim: str, score_rows: list[Mapping[str, Any]]
) -> dict[str, list[float]]:
    """Each judge column of ``dim`` as a list over :func:`rating_matrix`'s units (NaN = none).

    A column ``J_<dim>`` (or ``J`` on a one-dimension dataset) is judge ``J`` on ``dim``."""
    from metajudge.data.formats import PairwiseRecord

    several = len(ds.card.dimensions) > 1
    by: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
    for r in score_rows:
        m = str(r["metric"])
        if several and not m.endswith(f"_{dim}"):
            continue
        judge = m[: -len(dim) - 1] if several else m
        unit = str(r["item"]) if r.get("side") else str(r["key"])
        by.setdefault(judge, {}).setdefault(unit, []).append(r)
    out: dict[str, list[float]] = {}
    for judge, cells in by.items():
        col: list[float] = []
        for rec in ds.records:
            pairwise = isinstance(rec, PairwiseRecord)
            if (rec.labels if pairwise else rec.scores).get(dim) is None:
                continue
            got = cells.get(rec.id if pairwise else f"{rec.id}::{rec.system}")
            v = _judge_value(ds, dim, got) if got else None
            col.append(np.nan if v is None else v)
        out[judge] = col
    return out


def _pair_stats(a: NDArray[np.float64], b: NDArray[np.float64], level: Level, kappa: bool):
    both = ~np.isnan(a) & ~np.isnan(b)
    if both.sum() < 2:
        return float("nan"), float("nan"), int(both.sum())
    al = krippendorff_alpha(np.vstack([a[both], b[both]]), level=level)
    k = cohen_kappa(a[both], b[both]) if kappa else float("nan")
    return al, k, int(both.sum())


def judge_agreement(
    ds: Dataset, dim: str, level: Level, judge: str, col: list[float]
) -> JudgeAgreement:
    """The judge column ``col`` of ``dim`` beside the humans (see :class:`JudgeAgreement`)."""
    x = rating_matrix(ds, dim)
    j = np.asarray(col, dtype=float)
    has_h = (~np.isnan(x)).any(1)
    rated = ~np.isnan(j)
    both = np.concatenate([x[~np.isnan(x)], j[rated]])
    kappa = kappa_skipped(level, int(np.unique(both).size)) is None
    ja, hk, jk, ha, shared = [], [], [], [], []
    for i in range(x.shape[1]):
        a, k, n = _pair_stats(j, x[:, i], level, kappa)
        ja.append(a)
        jk.append(k)
        shared.append(n)
        others = [_pair_stats(x[:, i], x[:, o], level, kappa) for o in range(x.shape[1]) if o != i]
        ha.append(_nanmean(tuple(s[0] for s in others)))
        hk.append(_nanmean(tuple(s[1] for s in others)))
    sub = x[rated]
    return JudgeAgreement(
        dimension=dim,
        judge=judge,
        units=int(rated.sum()),
        missing=int((has_h & ~rated).sum()),
        alpha_humans=krippendorff_alpha(sub.T, level=level) if sub.size else float("nan"),
        alpha_with_judge=krippendorff_alpha(np.column_stack([sub, j[rated]]).T, level=level),
        judge_alpha=tuple(ja),
        human_alpha=tuple(ha),
        judge_kappa=tuple(jk),
        human_kappa=tuple(hk),
        shared=tuple(shared),
        ties=int((j[rated] == 0).sum()) if ds.card.label_kind == "pairwise" else 0,
    )


def judges_beside_humans(
    ds: Dataset, score_rows: list[Mapping[str, Any]], options: AgreementOptions | None = None
) -> tuple[tuple[JudgeAgreement, ...], tuple[str, ...]]:
    """Every judge column of ``score_rows`` on every dimension it covers, beside the humans,
    and the columns that cover none (named for no dimension of a several-dimension dataset).
    No usable column at all is an ``InputError``."""
    from metajudge.errors import InputError

    opts = options or AgreementOptions()
    out = []
    for d in ds.card.dimensions:
        level = opts.level or dimension_level(ds.card, d)
        for judge, col in judge_rating_columns(ds, d, score_rows).items():
            out.append(judge_agreement(ds, d, level, judge, col))
    dims = ds.card.dimensions
    metrics = dict.fromkeys(str(r["metric"]) for r in score_rows)
    unused = tuple(
        m for m in metrics if len(dims) > 1 and not any(m.endswith(f"_{d}") for d in dims)
    )
    if not out:
        raise InputError(
            f"no judge column matches a dimension of {ds.card.name} ({', '.join(dims)}; "
            f"columns: {', '.join(metrics) or 'none'})",
            field="scores",
        )
    return tuple(out), unused
