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
- confusion matrix — rows = gold, columns = predicted, in the order of ``labels``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from metajudge.errors import InputError
from metajudge.results import Result


def _check(gold: Sequence[Any], pred: Sequence[Any]) -> None:
    if len(gold) != len(pred):
        raise InputError(
            f"gold and pred differ in length: {len(gold)} vs {len(pred)}", field="pred"
        )


def accuracy(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Share of items whose predicted label equals the gold label.

    >>> accuracy(["a", "b", "b"], ["a", "b", "a"])
    0.6666666666666666
    """
    _check(gold, pred)
    return float(np.mean([g == p for g, p in zip(gold, pred)])) if gold else float("nan")


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


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Unweighted mean F1 over the classes present in gold or pred (0 where P + R = 0).

    >>> round(macro_f1(["a", "b", "b"], ["a", "b", "a"]), 4)
    0.6667
    """
    labels = sorted(set(gold) | set(pred))
    if not labels:
        return float("nan")
    m = confusion(gold, pred, labels).astype(float)
    tp = np.diag(m)
    denom = m.sum(0) + m.sum(1)  # 2TP + FP + FN = predicted + actual
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    return float(f1.mean())


def kappa(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> float:
    """Cohen's κ of two label sequences (labels coded by their position in ``labels``)."""
    from metajudge.stats.agreement import cohen_kappa

    _check(gold, pred)
    pos = {lab: float(i) for i, lab in enumerate(labels)}
    return cohen_kappa([pos[g] for g in gold], [pos[p] for p in pred])


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
