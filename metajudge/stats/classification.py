"""Meta-evaluating a judge's categorical labels against the humans' majority label.

Plain functions over two equal-length label sequences (``gold``: the majority human label,
``pred``: the judge's parsed label; ``None`` = no usable judge label). Unparsed predictions are
never guessed: they are counted (``invalid``) and, in :func:`categorical_scores`, either left out
(``invalid="drop"``, JUDGE-BENCH's practice for κ and correlations, ``eval_responses.py``) or
scored as wrong (``invalid="wrong"``; the reported accuracy then covers every item).

- accuracy — share of equal labels;
- Cohen's κ — Cohen (1960), via :func:`metajudge.stats.agreement.cohen_kappa` on label codes;
- macro-F1 — the unweighted mean over classes of F1 = 2·P·R / (P + R) (Sokolova & Lapalme 2009),
  over the classes that occur in ``gold`` or ``pred`` (``sklearn.metrics.f1_score(average="macro")``);
- confusion matrix — rows = gold, columns = predicted, in the order of ``labels``;
- :func:`confusion_scores` — accuracy, κ and macro-F1 from confusion matrices, vectorised (the
  bootstrap of :mod:`metajudge.analyses.metric_vs_human.categorical`);
- :func:`majority_label` — the humans' majority label of an item (a tie has none).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metajudge.errors import InputError
from metajudge.results import Result


def _check(gold: Sequence[Any], pred: Sequence[Any]) -> None:
    if len(gold) != len(pred):
        raise InputError(
            f"gold and pred differ in length: {len(gold)} vs {len(pred)}", field="pred"
        )


def confusion(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Counts, rows = gold label, columns = predicted label, both in ``labels`` order.

    >>> confusion(["a", "b", "b"], ["a", "b", "a"], ["a", "b"]).tolist()
    [[1, 0], [1, 1]]
    """
    _check(gold, pred)
    pos = {lab: i for i, lab in enumerate(labels)}
    out = np.zeros((len(labels), len(labels)), dtype=int)
    for g, p in zip(gold, pred):
        if g not in pos or p not in pos:
            bad = g if g not in pos else p
            raise InputError(f"label {bad!r} is not one of {list(labels)}", field="labels")
        out[pos[g], pos[p]] += 1
    return out


def confusion_scores(cm: ArrayLike) -> dict[str, NDArray[np.float64]]:
    """Accuracy, Cohen's κ and macro-F1 of confusion matrices ``(..., k, k)`` (rows = gold).

    The one definition of accuracy and macro-F1 (module docstring), vectorised over leading axes
    (the bootstrap's resampled matrices): accuracy = trace / n; macro-F1 = the mean over the
    classes present in gold or predicted of 2·TP / (row + col); κ:
    :func:`metajudge.stats.agreement.kappa_from_confusion` (NaN where undefined).

    >>> {k: round(float(v), 4) for k, v in confusion_scores([[1, 0], [1, 1]]).items()}
    {'accuracy': 0.6667, 'cohen_kappa': 0.4, 'macro_f1': 0.6667}
    """
    from metajudge.stats.agreement import kappa_from_confusion

    cm = np.asarray(cm, dtype=float)
    n = cm.sum(axis=(-2, -1))
    tp = np.diagonal(cm, axis1=-2, axis2=-1)
    rows, cols = cm.sum(-1), cm.sum(-2)
    kap = kappa_from_confusion(cm)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = tp.sum(-1) / n
        present = (rows + cols) > 0
        f1 = np.where(present, 2 * tp / np.where(present, rows + cols, 1), 0.0)
        mf1 = f1.sum(-1) / present.sum(-1)
    return {"accuracy": acc, "cohen_kappa": kap, "macro_f1": mf1}


def _score(gold: Sequence[str], pred: Sequence[str], name: str) -> float:
    _check(gold, pred)
    if not gold:
        return float("nan")
    labels = sorted(set(gold) | set(pred))
    return float(confusion_scores(confusion(gold, pred, labels))[name])


def accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Share of items whose predicted label equals the gold label.

    >>> accuracy(["a", "b", "b"], ["a", "b", "a"])
    0.6666666666666666
    """
    return _score(gold, pred, "accuracy")


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Unweighted mean F1 over the classes present in gold or pred (0 where P + R = 0).

    >>> round(macro_f1(["a", "b", "b"], ["a", "b", "a"]), 4)
    0.6667
    """
    return _score(gold, pred, "macro_f1")


def kappa(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> float:
    """Cohen's κ of two label sequences (labels coded by their position in ``labels``):
    :func:`metajudge.stats.agreement.cohen_kappa`."""
    from metajudge.stats.agreement import cohen_kappa

    _check(gold, pred)
    if not gold:
        return float("nan")
    pos = {lab: float(i) for i, lab in enumerate(labels)}
    return cohen_kappa([pos[g] for g in gold], [pos[p] for p in pred])


def majority_label(labels: Sequence[str | None]) -> str | None:
    """The most frequent non-null label; ``None`` on a tie or when nobody labelled.

    >>> majority_label(["Yes", "No", "Yes", None])
    'Yes'
    >>> majority_label(["Yes", "No"]) is None
    True
    """
    counts = Counter(x for x in labels if x is not None).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


@dataclass(frozen=True)
class CategoricalScores(Result):
    n: int  # items scored
    invalid: int  # items whose judge label was None
    invalid_policy: str
    accuracy: float
    cohen_kappa: float
    macro_f1: float
    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]


def categorical_scores(
    gold: Sequence[str],
    pred: Sequence[str | None],
    labels: Sequence[str],
    *,
    invalid: Literal["drop", "wrong"] = "drop",
) -> CategoricalScores:
    """Accuracy, Cohen's κ, macro-F1 and the confusion matrix (module docstring).

    With ``invalid="wrong"`` an unparsed label counts as a miss for accuracy and macro-F1 (as an
    extra class ``"<invalid>"``) and is left out of κ and the confusion matrix.
    """
    _check(gold, pred)
    n_bad = sum(p is None for p in pred)
    keep = [(g, p) for g, p in zip(gold, pred) if p is not None]
    g2, p2 = [g for g, _ in keep], [p for _, p in keep]
    if invalid == "wrong":
        ga, pa = list(gold), [p if p is not None else "<invalid>" for p in pred]
    else:
        ga, pa = g2, p2
    cm = confusion(g2, p2, labels)  # type: ignore[arg-type]
    return CategoricalScores(
        n=len(ga),
        invalid=n_bad,
        invalid_policy=invalid,
        accuracy=accuracy(ga, pa),  # type: ignore[arg-type]
        cohen_kappa=kappa(g2, p2, labels),  # type: ignore[arg-type]
        macro_f1=macro_f1(ga, pa),  # type: ignore[arg-type]
        labels=tuple(labels),
        confusion=tuple(tuple(int(x) for x in row) for row in cm),
    )
