"""THE check of a judge's class probabilities (one place for every reader: rating CSVs with
``--distribution probs``, the Trust-or-Escalate released format, judge columns of selective
judging and prediction sets).

The rule (README, docs/calibrating.md): each probability is a finite number in [0, 1] and they
sum to 1 within :data:`SUM_TOL`. The fault named first is a value outside [0, 1] (so [1.5, -0.5],
which sums to 1, is refused for its values, not its sum); then a sum off 1. The released format
alone may sum to less than 1 (the rest of the mass went to other tokens); its reader renormalises
and counts such rows (``deficit_ok``).

>>> check_probabilities([0.25, 0.75])
1.0
>>> check_probabilities([1.5, -0.5])
Traceback (most recent call last):
...
metajudge.errors.InputError: probability 1.5 outside [0, 1] (in [1.5, -0.5])
>>> check_probabilities([0.3, 0.1], field="probs")
Traceback (most recent call last):
...
metajudge.errors.InputError: field probs: probabilities [0.3, 0.1] sum to 0.4, not 1 (tolerance 1e-06)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from metajudge.errors import InputError

#: tolerance on probabilities that must sum to 1 (released files, rating CSVs, judge columns)
SUM_TOL = 1e-6


def check_probabilities(
    probs: Sequence[float],
    *,
    path: str | Path | None = None,
    line: int | None = None,
    field: str | None = None,
    where: str = "",
    deficit_ok: bool = False,
    fields: Sequence[str] | None = None,
) -> float:
    """Their sum, once every value is finite and in [0, 1] and the sum is 1 ± :data:`SUM_TOL`
    (``deficit_ok``: at most 1 + SUM_TOL and above 0); else an InputError naming ``path``,
    ``line`` and ``field`` (``fields``: each value's own field, named for a value out of range),
    ``where`` (e.g. "judge 'x', item 'p3': ") prefixed to the message."""
    vals = [float(p) for p in probs]
    shown = [p if isinstance(p, int | float) else float(p) for p in probs]
    for i, p in enumerate(vals):
        if not (math.isfinite(p) and 0.0 <= p <= 1.0):
            raise InputError(
                f"{where}probability {p!r} outside [0, 1] (in {shown})",
                path=path,
                line=line,
                field=fields[i] if fields is not None and i < len(fields) else field,
            )
    total = math.fsum(vals)
    low = total <= 0.0 if deficit_ok else total < 1.0 - SUM_TOL
    if low or total > 1.0 + SUM_TOL:
        raise InputError(
            f"{where}probabilities {shown} sum to {total:.9g}, not 1 (tolerance {SUM_TOL:g})",
            path=path,
            line=line,
            field=field,
        )
    return total
