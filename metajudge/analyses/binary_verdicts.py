"""A binary (pass/fail) judge's error rates and the pass rates corrected for them.

The judge's true-positive rate (it passes what the humans pass) and true-negative rate (it fails
what they fail), each with Wilson's interval, on the labelled responses; its complement, the
share of wrong answers it accepts ("accepts 52% of wrong answers"). Then the pass rate, over
every response and per system: the judge's own (every response it judged), the humans' (the
labelled ones), and the judge's corrected for its errors:

- Rogan–Gladen (Rogan & Gladen 1978): the judge's observed rate on the system's responses
  corrected by the TPR and TNR of every labelled response (the judge's errors assumed the same
  across systems), a percentile bootstrap CI (:func:`metajudge.stats.ppi.rogan_gladen_ci`);
- PPI++ (Angelopoulos et al. 2023, :func:`metajudge.stats.ppi.ppi_mean`): the labelled
  responses' human rate debiased by the judge on the unlabelled ones — only where some
  responses carry no label (with every response labelled the human rate is measured directly).

These are the estimators ``calibrate estimate --method rogan-gladen|ppi`` runs on labels drawn
from a fully labelled set; here the labels are the ones the data has. Nothing is rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from metajudge.errors import InputError
from metajudge.results import Result

ALL = "all responses"
NOTE_RATES = (
    "TPR/TNR with Wilson 95% intervals on the labelled responses; Rogan-Gladen with a "
    "percentile bootstrap (2000 resamples) using the TPR/TNR of every labelled response"
)


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n`` with Wilson's 95% interval."""

    value: float | None
    lo: float | None
    hi: float | None
    k: int
    n: int


def rate(k: int, n: int) -> Rate:
    from metajudge.stats.intervals import wilson_ci

    if n < 1:
        return Rate(None, None, None, k, n)
    lo, hi = wilson_ci(k / n, n)
    return Rate(k / n, lo, hi, k, n)


@dataclass(frozen=True)
class RateEstimate:
    value: float | None
    lo: float | None
    hi: float | None


@dataclass(frozen=True)
class PassRate:
    """One scope's pass rates (module docstring); ``excess``: the judge's rate minus the
    Rogan–Gladen corrected one (> 0: the judge passes too much)."""

    scope: str
    responses: int
    labelled: int
    judge: Rate
    human: Rate
    rogan_gladen: RateEstimate
    ppi: RateEstimate | None
    excess: float | None


@dataclass(frozen=True)
class BinaryVerdicts(Result):
    judge: str
    positive: str
    negative: str
    labelled: int  # labelled responses with a verdict
    tpr: Rate
    tnr: Rate
    accepts_wrong: Rate  # 1 - TNR: wrong answers passed
    rejects_right: Rate  # 1 - TPR: right answers failed
    pass_rates: tuple[PassRate, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _est(e: Any) -> RateEstimate:
    v = [None if x is None or not np.isfinite(x) else float(x) for x in (e.value, e.lo, e.hi)]
    return RateEstimate(*v)


def _scope(
    name: str, y: np.ndarray, f: np.ndarray, mask: np.ndarray, labelled: np.ndarray, seed: int
) -> PassRate:
    """The pass rates of the responses in ``mask`` (``y``: human 0/1, NaN unlabelled; ``f``:
    the judge's 0/1, NaN where it gave none); TPR/TNR from every labelled response."""
    from metajudge.stats.ppi import ppi_mean, rogan_gladen_ci

    judged = mask & np.isfinite(f)
    lab_all = labelled & np.isfinite(f)
    lab = lab_all & mask
    unl = judged & ~labelled
    rng = np.random.default_rng(seed)
    rg = rogan_gladen_ci(y[lab_all], f[lab_all], f[judged], rng=rng)
    ppi = None
    if unl.sum() >= 2 and lab.sum() >= 2:
        ppi = _est(ppi_mean(y[lab], f[lab], f[unl]).ppi)
    jr = rate(int(f[judged].sum()), int(judged.sum()))
    corrected = _est(rg)
    excess = None if corrected.value is None or jr.value is None else jr.value - corrected.value
    return PassRate(
        name,
        int(mask.sum()),
        int(lab.sum()),
        jr,
        rate(int(y[lab].sum()), int(lab.sum())),
        corrected,
        ppi,
        excess,
    )


def binary_verdicts(
    gold: Sequence[str | None],
    pred: Sequence[str | None],
    systems: Sequence[str],
    labels: Sequence[str],
    *,
    judge: str,
    seed: int = 0,
) -> BinaryVerdicts:
    """The judge's error rates and the pass rates (module docstring) of ``pred`` (its verdict
    per response, None where none) against ``gold`` (the human label, None unlabelled);
    ``labels``: the card's two labels, the negative first; ``systems``: each response's."""
    if len(labels) != 2:
        raise InputError(f"binary verdicts need two labels, got {list(labels)}", field="scale")
    neg, pos = labels
    code = {neg: 0.0, pos: 1.0}
    y = np.array([np.nan if g is None else code[g] for g in gold])
    f = np.array([np.nan if p is None else code[p] for p in pred])
    labelled = np.isfinite(y)
    both = labelled & np.isfinite(f)
    if not both.any():
        raise InputError("no labelled response has a verdict of the judge", field="scores")
    yp, fp = y[both] == 1, f[both] == 1
    tp, tn = int((yp & fp).sum()), int((~yp & ~fp).sum())
    npos, nneg = int(yp.sum()), int((~yp).sum())
    every = np.ones(len(y), dtype=bool)
    sys_arr = np.asarray(systems)
    scopes = [_scope(ALL, y, f, every, labelled, seed)]
    names = sorted(set(systems))
    if len(names) > 1:
        scopes += [_scope(s, y, f, sys_arr == s, labelled, seed) for s in names]
    return BinaryVerdicts(
        judge=judge,
        positive=pos,
        negative=neg,
        labelled=int(both.sum()),
        tpr=rate(tp, npos),
        tnr=rate(tn, nneg),
        accepts_wrong=rate(nneg - tn, nneg),
        rejects_right=rate(npos - tp, npos),
        pass_rates=tuple(scopes),
        notes=(
            NOTE_RATES,
            "PPI++ only where some responses are unlabelled (else the human rate is measured)",
        ),
    )
