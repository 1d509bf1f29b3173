"""The human side of a categorical meta-evaluation: the majority label and the matched reference.

- :func:`majority` — the most frequent label of an item's annotators; a tie (two or more labels
  equally frequent) is ``None``: the item has no majority and is left out, counted as a tie.
  A JUDGE-BENCH file ships its own ``majority_human`` per item (``meta['majority_human']``);
  :func:`gold_labels` uses that when present, so the numbers are comparable with the paper's.
- :func:`matched_reference` — leave-one-annotator-out: each annotator (a position in the label
  lists) against the majority of the *other* annotators of the same item, and the judge against
  that same target on the same items (accuracy and Cohen's κ; means over annotators). The judge
  and the humans are thus compared with one target, as issue 12 asks of every inter-human ceiling.
- :func:`alpha_of` — Krippendorff's α of the annotators (level from the label kind:
  :func:`metajudge.analyses.annotator_agreement.dimension_level`), the same code path as
  ``metajudge agreement``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from metajudge.results import Result

if TYPE_CHECKING:
    from metajudge.data.registry import Dataset


def majority(labels: Sequence[str | None]) -> str | None:
    """The most frequent non-null label; ``None`` on a tie or when nobody labelled.

    >>> majority(["Yes", "No", "Yes", None])
    'Yes'
    >>> majority(["Yes", "No"]) is None
    True
    """
    counts = Counter(x for x in labels if x is not None).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


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
            g = majority([str(v) for v in vals])
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
    from metajudge.analyses.annotator_agreement import dimension_level, rating_matrix
    from metajudge.stats.agreement import krippendorff_alpha

    level = dimension_level(ds.card, dim)
    return krippendorff_alpha(rating_matrix(ds, dim).T, level=level), level


def _kappa(a: Sequence[str], b: Sequence[str], labels: Sequence[str]) -> float:
    from metajudge.stats.classification import kappa

    return kappa(a, b, labels) if a else math.nan


def matched_reference(
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
            t = majority([str(v) for k, v in enumerate(row) if k != j and v is not None])
            if t is not None:
                hum.append(str(row[j]))
                tgt.append(t)
                jud.append(p)
        if not tgt:
            continue
        n_items += len(tgt)
        acc_h.append(float(np.mean([h == t for h, t in zip(hum, tgt)])))
        acc_j.append(float(np.mean([h == t for h, t in zip(jud, tgt)])))
        kap_h.append(_kappa(hum, tgt, labels))
        kap_j.append(_kappa(jud, tgt, labels))
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
