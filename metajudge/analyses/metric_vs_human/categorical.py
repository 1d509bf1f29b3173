"""Meta-evaluation on categorical and binary datasets: a judge's labels vs the majority label.

What ``metajudge meta-eval`` runs when the dataset's label kind (``DatasetCard.label_kind``) is
``categorical`` or ``binary``. A score column must hold *labels*: the card's label strings
(matched case-insensitively), or their integer codes ``0..k-1`` (the position in the card's
label list). Per column and dimension:

- accuracy, Cohen's κ, macro-F1 and the confusion matrix against the majority human label
  (:mod:`metajudge.stats.classification`, tested against scikit-learn), the majority from
  :func:`gold_labels` (ties left out and counted);
- percentile bootstrap CIs resampling items (all responses of an input move together;
  :func:`metajudge.stats.bootstrap.bootstrap_weights`, seeded);
- the inter-annotator reference: Krippendorff's α and the leave-one-annotator-out comparison
  matched to the same target (:func:`matched_label_reference`).

The human side:

- :func:`gold_labels` — the majority label of each item
  (:func:`metajudge.stats.classification.majority_label`: a tie of two or more labels has no
  majority, the item is left out and counted). A JUDGE-BENCH file ships its own
  ``majority_human`` per item (``meta['majority_human']``); :func:`gold_labels` uses that when
  present, so the numbers are comparable with the paper's.
- :func:`matched_label_reference` — leave-one-annotator-out: each annotator (a position in the
  label lists) against the majority of the *other* annotators of the same item, and the judge
  against that same target on the same items (accuracy and Cohen's κ; means over annotators).
  The judge and the humans are thus compared with one target, as issue 12 asks of every
  inter-human ceiling.
- :func:`alpha_of` — Krippendorff's α of the annotators (level from the label kind:
  :func:`metajudge.stats.agreement.dimension_level`), the same code path as
  ``metajudge agreement``.

A label that is not on the card's scale, or a missing row, is an *invalid* label: counted, shown,
and left out of every statistic — never guessed. Numeric scores (e.g. ROUGE) are refused: a
correlation or a min-max normalisation of nominal labels has no meaning, and metajudge does not
pick a threshold that turns a score into a label for you (write the labels you mean to test).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats.classification import (
    accuracy,
    categorical_scores,
    confusion_scores,
    kappa,
    majority_label,
)

if TYPE_CHECKING:
    import pandas as pd

    from metajudge.data.registry import Dataset

CATEGORICAL_KINDS = ("categorical", "binary")
STATS = ("accuracy", "cohen_kappa", "macro_f1")
RESULT_KIND = "categorical"


def _match(raw: Any, labels: Sequence[str]) -> str | None:
    low = {x.lower(): x for x in labels}
    return None if raw is None else low.get(str(raw).strip().lower())


@dataclass(frozen=True)
class Gold:
    """Per-record majority labels of one dimension (``None``: tie or no label) and how read."""

    labels: tuple[str | None, ...]
    source: str  # "shipped majority_human" | "majority of the annotators"
    ties: int


def gold_labels(ds: Dataset, dim: str) -> Gold:
    """The majority label of each record of ``ds`` for ``dim`` (module docstring)."""
    scale = ds.card.scale_of(dim)
    labels = scale.labels or ()
    shipped = any(dim in (r.meta.get("majority_human") or {}) for r in ds.records)
    out: list[str | None] = []
    ties = 0
    for r in ds.records:
        vals = [v for v in r.scores.get(dim, ()) if v is not None]  # type: ignore[union-attr]
        if shipped:
            g = _match((r.meta.get("majority_human") or {}).get(dim), labels)
        else:
            g = majority_label([str(v) for v in vals])
            ties += g is None and bool(vals)
        out.append(g)
    src = "shipped majority_human" if shipped else "majority of the annotators (ties left out)"
    return Gold(tuple(out), src, ties)


@dataclass(frozen=True)
class MatchedReference(Result):
    """Leave-one-annotator-out means (module docstring) and the annotators' α."""

    dimension: str
    alpha_level: str
    alpha: float
    published_alpha: float | None
    annotators: int  # annotators with at least one target item
    items: int  # (annotator, item) comparisons
    annotator_accuracy: float
    annotator_kappa: float
    judge_accuracy: float
    judge_kappa: float


def alpha_of(ds: Dataset, dim: str) -> tuple[float, str]:
    """Krippendorff's α of ``dim`` at the label kind's level (as ``metajudge agreement``)."""
    from metajudge.stats.agreement import dimension_level, krippendorff_alpha, rating_matrix

    level = dimension_level(ds.card, dim)
    return krippendorff_alpha(rating_matrix(ds, dim).T, level=level), level


def matched_label_reference(
    ds: Dataset, dim: str, pred: Sequence[str | None], published: Mapping[str, float] | None
) -> MatchedReference:
    """Each annotator and the judge against the majority of the other annotators."""
    labels = ds.card.scale_of(dim).labels or ()
    rows = [list(r.scores.get(dim, ())) for r in ds.records]  # type: ignore[union-attr]
    width = max((len(x) for x in rows), default=0)
    acc_h, kap_h, acc_j, kap_j = [], [], [], []
    n_items = 0
    for j in range(width):
        hum, tgt, jud = [], [], []
        for row, p in zip(rows, pred):
            if j >= len(row) or row[j] is None or p is None:
                continue
            t = majority_label([str(v) for k, v in enumerate(row) if k != j and v is not None])
            if t is not None:
                hum.append(str(row[j]))
                tgt.append(t)
                jud.append(p)
        if not tgt:
            continue
        n_items += len(tgt)
        acc_h.append(accuracy(hum, tgt))
        acc_j.append(accuracy(jud, tgt))
        kap_h.append(kappa(hum, tgt, labels))
        kap_j.append(kappa(jud, tgt, labels))
    alpha, level = alpha_of(ds, dim)

    def mean(xs: list[float]) -> float:
        fin = [x for x in xs if math.isfinite(x)]
        return float(np.mean(fin)) if fin else math.nan

    return MatchedReference(
        dimension=dim,
        alpha_level=level,
        alpha=alpha,
        published_alpha=(published or {}).get(dim),
        annotators=len(acc_h),
        items=n_items,
        annotator_accuracy=mean(acc_h),
        annotator_kappa=mean(kap_h),
        judge_accuracy=mean(acc_j),
        judge_kappa=mean(kap_j),
    )


@dataclass(frozen=True)
class CategoricalOptions:
    """Bootstrap resamples of items (0: no CIs), seed of the Generator, CI level."""

    n_boot: int = 1000
    seed: int = 0
    ci_level: float = 0.95


@dataclass(frozen=True)
class CategoricalRow:
    """One score column on one dimension."""

    metric: str
    dimension: str
    n: int  # items with a majority label and a valid judge label
    invalid: int  # items with a majority label but no valid judge label
    accuracy: float
    cohen_kappa: float
    macro_f1: float
    ci: Mapping[str, tuple[float, float]]
    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    codes: bool = False  # the column held integer codes
    reference: MatchedReference | None = None


@dataclass
class CategoricalResult(Result):
    """A categorical meta-evaluation (module docstring); ``data`` holds run metadata."""

    dataset: str
    label_kind: str
    rows: tuple[CategoricalRow, ...]
    gold: Mapping[str, Mapping[str, Any]]  # dimension -> {source, ties, items}
    notes: tuple[str, ...]
    options: CategoricalOptions
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = RESULT_KIND
        return d

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        recs = []
        for r in self.rows:
            rec: dict[str, Any] = {"metric": r.metric, "dimension": r.dimension, "n": r.n}
            rec["invalid"] = r.invalid
            for s in STATS:
                lo, hi = r.ci.get(s, (math.nan, math.nan))
                rec.update({s: getattr(r, s), f"{s}_lo": lo, f"{s}_hi": hi})
            if r.reference is not None:
                ref = r.reference
                rec.update(
                    alpha=ref.alpha,
                    published_alpha=ref.published_alpha,
                    annotator_accuracy=ref.annotator_accuracy,
                    annotator_kappa=ref.annotator_kappa,
                    judge_accuracy_loo=ref.judge_accuracy,
                    judge_kappa_loo=ref.judge_kappa,
                )
            recs.append(rec)
        return pd.DataFrame(recs)


def _bootstrap(
    gold: Sequence[int],
    pred: Sequence[int],
    groups: Sequence[str],
    k: int,
    opts: CategoricalOptions,
) -> dict[str, tuple[float, float]]:
    from metajudge.stats.bootstrap import _group_index, bootstrap_weights
    from metajudge.stats.intervals import percentile_ci

    if opts.n_boot == 0 or not gold:
        return {}
    gidx, n_groups = _group_index(list(groups), len(gold))
    w = bootstrap_weights(n_groups, opts.n_boot, np.random.default_rng(opts.seed))
    onehot = np.zeros((len(gold), k * k))
    onehot[np.arange(len(gold)), np.asarray(gold) * k + np.asarray(pred)] = 1.0
    cms = (w[:, gidx] @ onehot).reshape(opts.n_boot, k, k)
    return {s: percentile_ci(v, opts.ci_level) for s, v in confusion_scores(cms).items()}


def _column_labels(
    rows: Sequence[Mapping[str, Any]], metric: str, labels: Sequence[str]
) -> tuple[dict[str, str | None], bool]:
    """``key -> label`` of a column (None = no usable label) and whether it held codes."""
    nums = [r["score"] for r in rows if r.get("score") is not None]
    codes = bool(nums) and all(float(x).is_integer() and 0 <= x < len(labels) for x in nums)
    if nums and not codes:
        raise InputError(
            f"score column {metric!r} holds numeric scores (e.g. {nums[0]!r}); a categorical "
            f"dataset is meta-evaluated on labels: give a column of the card's labels "
            f"({', '.join(labels)}) or their codes 0..{len(labels) - 1} with --scores FILE "
            "(numeric scores are not thresholded into labels)",
            field="scores",
        )
    low = {x.lower(): x for x in labels}
    out: dict[str, str | None] = {}
    for r in rows:
        if r.get("label") is not None:
            out[r["key"]] = low.get(str(r["label"]).strip().lower())
        elif r.get("score") is not None:
            out[r["key"]] = labels[int(r["score"])]
        else:
            out[r["key"]] = None
    return out, codes


def evaluate_column(
    ds: Dataset,
    dim: str,
    metric: str,
    rows: Sequence[Mapping[str, Any]],
    opts: CategoricalOptions,
    published: Mapping[str, float] | None = None,
) -> CategoricalRow:
    """One score column against the majority label of ``dim`` (module docstring)."""
    from metajudge.data.formats import response_key

    labels = tuple(ds.card.scale_of(dim).labels or ())
    by_key, codes = _column_labels(rows, metric, labels)
    gold = gold_labels(ds, dim).labels
    pred = [by_key.get(response_key(r.id, r.system)) for r in ds.records]  # type: ignore[union-attr]
    keep = [i for i, g in enumerate(gold) if g is not None]
    g, p = [gold[i] for i in keep], [pred[i] for i in keep]
    cs = categorical_scores(g, p, labels)  # type: ignore[arg-type]
    valid = [i for i in keep if pred[i] is not None]
    pos = {lab: i for i, lab in enumerate(labels)}
    ci = _bootstrap(
        [pos[gold[i]] for i in valid],  # type: ignore[index]
        [pos[pred[i]] for i in valid],  # type: ignore[index]
        [ds.records[i].id for i in valid],
        len(labels),
        opts,
    )
    ref = matched_label_reference(ds, dim, pred, published)
    return CategoricalRow(
        metric=metric,
        dimension=dim,
        n=cs.n,
        invalid=cs.invalid,
        accuracy=cs.accuracy,
        cohen_kappa=cs.cohen_kappa,
        macro_f1=cs.macro_f1,
        ci=ci,
        labels=labels,
        confusion=cs.confusion,
        codes=codes,
        reference=ref,
    )


# options of the numeric meta-evaluation that have no meaning on nominal labels: (flag, why)
REFUSED: Mapping[str, str] = {
    "--protocol pairwise-difference": "a difference of two labels is not defined",
    "--normalize": "labels are not normalised (min-max / sign / raw apply to numeric scores)",
    "--aggregation mean": "nominal labels have no mean (the target is the majority label)",
    "--aggregation median": "nominal labels have no median (the target is the majority label)",
    "--aggregation mode-else-mean": "nominal labels have no mean (the target is the majority "
    "label)",
    "--level": "labels are compared item by item against the majority label",
    "--level item": "per-input correlations are not defined on labels",
    "--tie-band": "a tie band applies to score differences",
    "--learn-tie-band": "a tie band applies to score differences",
    "--statistics": "Pearson / Spearman / Kendall make no sense for nominal labels "
    "(reported: accuracy, Cohen's κ, macro-F1)",
}


def refuse_options(asked: Sequence[str], label_kind: str) -> None:
    """Raise naming every option in ``asked`` (``REFUSED`` keys) that nominal labels refuse."""
    bad = [a for a in asked if a in REFUSED]
    if bad:
        why = "; ".join(f"{a}: {REFUSED[a]}" for a in bad)
        raise InputError(
            f"{', '.join(bad)} make(s) no sense for {label_kind} labels ({why}); a "
            f"{label_kind} dataset reports accuracy, Cohen's κ, macro-F1 and the confusion "
            "matrix against the majority label",
            field=bad[0].split()[0].lstrip("-"),
        )


def categorical_meta_evaluate(
    ds: Dataset,
    rows: Sequence[Mapping[str, Any]],
    options: CategoricalOptions | None = None,
    *,
    metrics: Sequence[str] | None = None,
    data_dir: Any = None,
) -> CategoricalResult:
    """Every score column (``metrics``: rows to show, default all) on every dimension."""
    from metajudge.data.judge_bench import published_alpha
    from metajudge.scores.readers.rows import collapse_families, metric_for_dimension

    opts = options or CategoricalOptions()
    kind = ds.card.label_kind
    if kind not in CATEGORICAL_KINDS:
        raise InputError(f"{ds.name} has {kind} labels, not categorical", field="dataset")
    have = list(dict.fromkeys(r["metric"] for r in rows))
    names = list(metrics) if metrics else collapse_families(have, ds.card.dimensions)
    published = published_alpha(ds.card, data_dir)
    out, gold = [], {}
    for dim in ds.card.dimensions:
        g = gold_labels(ds, dim)
        gold[dim] = {
            "source": g.source,
            "ties": g.ties,
            "items": sum(x is not None for x in g.labels),
        }
        for m in names:
            col = metric_for_dimension(m, dim, have)
            if col is None:
                continue
            sel = [r for r in rows if r["metric"] == col]
            out.append(evaluate_column(ds, dim, m, sel, opts, published))
    if not out:
        raise InputError(
            f"no score column among {names} matches {ds.name}'s dimensions", field="metrics"
        )
    return CategoricalResult(ds.name, kind, tuple(out), gold, _notes(opts), opts)


def _notes(opts: CategoricalOptions) -> tuple[str, ...]:
    ci = (
        f"{opts.ci_level:.0%} percentile bootstrap CIs, {opts.n_boot} resamples of items "
        f"(seed {opts.seed})"
        if opts.n_boot
        else "no bootstrap (n_boot = 0)"
    )
    return (
        (
            "target = the majority human label per response; items whose annotators tie have no "
            "majority and are left out (counted per dimension)"
        ),
        (
            "invalid = a response with a majority label but no usable judge label (missing row, or "
            "a label not on the card's scale): counted and left out, never guessed"
        ),
        ci,
        (
            "reference (leave-one-annotator-out): each annotator vs the majority of the other "
            "annotators of the same item, and the judge vs that same target on the same items; "
            "means over annotators (annotator = position in the label lists)"
        ),
        (
            "α = Krippendorff's α of the annotators (level from the label kind, as `metajudge "
            "agreement`); published α: JUDGE-BENCH results_regular, where the set has one"
        ),
    )
