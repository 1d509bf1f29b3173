"""Partial correlation: the one place a control variable is removed from a metric and a human
score before they are correlated (FRANK, Pagnoni et al. 2021; SummaC- and QAGS-era studies).

A control is one field per unit (the summarisation ``system``, or any record or ``meta`` field):
**categorical** values enter as one-hot columns (removing them subtracts each category's mean),
**numeric** values as one linear column (least squares with an intercept). Residuals are taken
on the rows given, so a caller passes only the rows both scores exist for.

Two Spearman definitions under a control (:data:`SPEARMAN_METHODS`):

* ``residuals`` (default; FRANK's ``evaluate.py``): Spearman's ρ of the two residuals after the
  control is removed from the raw metric and human scores;
* ``ranks`` (pingouin's ``partial_corr(method="spearman")``): the metric, the human score and a
  numeric control are ranked first, the control removed from the ranks, and Pearson's r taken of
  those residuals (a one-hot control is not ranked: its columns span the same space ranked).

Partial Pearson is Pearson's r of the residuals (= pingouin's ``partial_corr``). The
correlations themselves are those of :mod:`.correlation`; the bootstrap of them is
:func:`~metajudge.stats.correlation.correlate` on the residual rows (the control fitted once on
all the rows, then the rows resampled).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from metajudge.stats.correlation import _rankdata, pearson

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]

#: the definitions of Spearman's ρ under a control (module docstring)
SPEARMAN_METHODS: tuple[str, ...] = ("residuals", "ranks")
SPEARMAN_WORDS: dict[str, str] = {
    "residuals": "Spearman of the residuals (FRANK)",
    "ranks": "rank-based partial Spearman (Pearson of rank residuals, pingouin)",
}


@dataclass(frozen=True)
class Control:
    """A control field's value per unit: ``codes`` (categorical: index into ``levels``) or
    ``values`` (numeric)."""

    name: str
    kind: str  # "categorical" | "numeric"
    codes: IArr | None = None
    levels: tuple[str, ...] = ()
    values: FArr | None = None

    def describe(self) -> str:
        """``system (categorical, 11 values, one-hot)`` or ``length (numeric, linear)``."""
        if self.kind == "numeric":
            return f"{self.name} (numeric, linear)"
        return f"{self.name} (categorical, {len(self.levels)} values, one-hot)"

    def parameters(self, units: IArr) -> int:
        """Parameters the control takes from ``units`` besides the intercept (one per category
        present less one; one for a numeric control): what a test's degrees of freedom lose."""
        if self.kind == "numeric":
            return 1
        assert self.codes is not None
        return max(int(np.unique(self.codes[units]).size) - 1, 0)


def control_of(name: str, values: Sequence[Any]) -> Control:
    """The :class:`Control` of ``values`` (one per unit, none missing): numeric when every
    value is a number (not a bool), categorical otherwise.

    >>> control_of("system", ["a", "b", "a"]).describe()
    'system (categorical, 2 values, one-hot)'
    >>> control_of("len", [3, 4.5, 1]).describe()
    'len (numeric, linear)'
    """
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    if numeric and all(math.isfinite(float(v)) for v in values):
        return Control(name, "numeric", values=np.asarray(values, dtype=float))
    text = [str(v) for v in values]
    levels = tuple(dict.fromkeys(text))
    at = {v: i for i, v in enumerate(levels)}
    codes = np.fromiter((at[v] for v in text), dtype=np.int64, count=len(text))
    return Control(name, "categorical", codes=codes, levels=levels)


def residualize(v: FArr, control: Control, units: IArr, *, rank_control: bool = False) -> FArr:
    """``v`` (one value per row) less its least-squares fit on the control of each row's unit
    (``units``) with an intercept: a categorical control subtracts each category's mean; a
    numeric one (ranked first when ``rank_control``) its linear fit.

    >>> c = control_of("s", ["a", "a", "b", "b"])
    >>> residualize(np.array([1.0, 3.0, 10.0, 14.0]), c, np.arange(4)).tolist()
    [-1.0, 1.0, -2.0, 2.0]
    """
    v = np.asarray(v, dtype=float)
    if control.kind == "categorical":
        assert control.codes is not None
        g = control.codes[units]
        n = len(control.levels)
        sums = np.bincount(g, weights=v, minlength=n)
        counts = np.bincount(g, minlength=n)
        means = np.divide(sums, counts, out=np.zeros(n), where=counts > 0)
        return v - means[g]
    assert control.values is not None
    z = control.values[units]
    if rank_control:
        z = _rankdata(z)
    design = np.column_stack([np.ones(v.size), z])
    coef, *_ = np.linalg.lstsq(design, v, rcond=None)
    return v - design @ coef


def partial_rows(
    statistic: str, x: FArr, y: FArr, control: Control, units: IArr, spearman: str = "residuals"
) -> tuple[str, FArr, FArr]:
    """What the partial ``statistic`` correlates: ``(statistic to take, x rows, y rows)``.

    Pearson: Pearson of the residuals; Spearman ``residuals``: Spearman of the residuals;
    Spearman ``ranks``: Pearson of the residuals of the ranks (module docstring). Rows are
    those given (the caller drops rows lacking a score first)."""
    if statistic == "spearman" and spearman == "ranks":
        rx = residualize(_rankdata(x), control, units, rank_control=True)
        ry = residualize(_rankdata(y), control, units, rank_control=True)
        return "pearson", rx, ry
    if statistic not in ("pearson", "spearman"):
        raise ValueError(f"no partial {statistic} (Pearson and Spearman only)")
    return statistic, residualize(x, control, units), residualize(y, control, units)


def partial_pearson(
    x: Sequence[float] | FArr, y: Sequence[float] | FArr, control: Sequence[float] | FArr
) -> float:
    """Pearson's r of ``x`` and ``y`` with a numeric ``control`` (one value per row) partialled
    out: :func:`pearson` of their :func:`residualize` residuals (equal to
    (r_xy − r_xz·r_yz) / √((1 − r_xz²)(1 − r_yz²)), and to ``pingouin.partial_corr``); ``nan``
    when undefined (a residual without variance).

    >>> round(partial_pearson([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5], [1, 3, 2, 5, 4, 6]), 4)
    0.9817
    """
    c = Control("control", "numeric", values=np.asarray(control, dtype=float))
    units = np.arange(c.values.size)  # type: ignore[union-attr]
    rx = residualize(np.asarray(x, dtype=float), c, units)
    ry = residualize(np.asarray(y, dtype=float), c, units)
    return pearson(rx, ry)
