"""Categorical judge statistics against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from metajudge.errors import InputError
from metajudge.stats.classification import (
    accuracy,
    categorical_scores,
    confusion,
    kappa,
    macro_f1,
)

LABELS = ["No", "Yes", "Unsure"]


@pytest.mark.parametrize("seed", range(5))
def test_against_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gold = list(rng.choice(LABELS, size=200, p=[0.6, 0.3, 0.1]))
    pred = [g if rng.random() < 0.6 else str(rng.choice(LABELS)) for g in gold]
    assert accuracy(gold, pred) == pytest.approx(skm.accuracy_score(gold, pred))
    assert kappa(gold, pred, LABELS) == pytest.approx(skm.cohen_kappa_score(gold, pred))
    assert macro_f1(gold, pred) == pytest.approx(skm.f1_score(gold, pred, average="macro"))
    assert (confusion(gold, pred, LABELS) == skm.confusion_matrix(gold, pred, labels=LABELS)).all()


def test_invalid_counted_not_guessed() -> None:
    gold = ["No", "Yes", "No", "Yes"]
    pred = ["No", None, "No", "No"]
    drop = categorical_scores(gold, pred, ["No", "Yes"])
    assert drop.n == 3 and drop.invalid == 1 and drop.accuracy == pytest.approx(2 / 3)
    wrong = categorical_scores(gold, pred, ["No", "Yes"], invalid="wrong")
    assert wrong.n == 4 and wrong.accuracy == 0.5
    assert wrong.macro_f1 == pytest.approx(
        skm.f1_score(gold, ["No", "<invalid>", "No", "No"], average="macro")
    )
    assert drop.confusion == ((2, 0), (1, 0))


def test_bad_labels() -> None:
    with pytest.raises(InputError, match="not one of"):
        confusion(["a"], ["c"], ["a", "b"])
    with pytest.raises(InputError, match="differ in length"):
        accuracy(["a"], ["a", "b"])
