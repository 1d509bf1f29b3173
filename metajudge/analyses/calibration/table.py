"""What calibration works on: a judge's scores (and rating distributions) beside human scores.

A :class:`RatingTable` comes from a file in the published rating-distribution format
(:func:`from_distributions`) or from score rows read against a dataset (:func:`from_rows`, the
human score of a record = the mean of its annotators). :func:`splits` gives the seeded
calibration/test splits every procedure here uses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from metajudge.errors import InputError
from metajudge.limits import check_allocation
from metajudge.stats.bootstrap import halves

FArr = npt.NDArray[np.float64]
IArr = npt.NDArray[np.int64]


@dataclass(frozen=True)
class RatingTable:
    """One judge's scores beside human scores, row by row.

    ``pred``: the judge's score (for a distribution: its expected rating); ``probs`` (n x K) and
    ``values`` (K): the distribution over rating values, when the judge gives one; ``scale``:
    ``(min, max)`` of the human scale; ``judge``: the column name, ``signature``: the judge's
    signature (what a calibrator file must match); ``source``: where the rows came from."""

    pred: FArr
    human: FArr
    ids: tuple[str, ...]
    judge: str
    signature: str
    scale: tuple[float, float]
    source: str
    probs: FArr | None = None
    values: FArr | None = None
    grid: FArr | None = None

    def __len__(self) -> int:
        return len(self.pred)

    def data_hash(self) -> str:
        """sha256 of the (judge score, human score) pairs, sorted: what a calibrator was fitted
        on, the same whichever way the rows were read (a CSV file or a dataset's column)."""
        order = np.lexsort((self.human, self.pred))
        pairs = np.stack([self.pred[order], self.human[order]], axis=1)
        return hashlib.sha256(np.ascontiguousarray(pairs, dtype=np.float64).tobytes()).hexdigest()

    def take(self, idx: Sequence[int] | IArr) -> RatingTable:
        """The rows ``idx``."""
        i = np.asarray(idx, dtype=int)
        return replace(
            self,
            pred=self.pred[i],
            human=self.human[i],
            ids=tuple(self.ids[k] for k in i),
            probs=None if self.probs is None else self.probs[i],
        )


def from_distributions(
    dist: Any, *, judge: str, signature: str, scale: tuple[float, float] | None = None
) -> RatingTable:
    """A table from :class:`~metajudge.data.rating_csv.RatingDistributions`
    (``scale`` default: the rating values' range)."""
    lo, hi = (float(dist.values.min()), float(dist.values.max())) if scale is None else scale
    return RatingTable(
        grid=label_grid(dist.human, (lo, hi), dist.values),
        pred=dist.expected,
        human=dist.human,
        ids=tuple(f"line{n}" for n in dist.lines),
        judge=judge,
        signature=signature,
        scale=(lo, hi),
        source=str(dist.path),
        probs=dist.probs,
        values=dist.values,
    )


def from_rows(
    rows: Sequence[Mapping[str, Any]],
    records: Sequence[Any],
    *,
    dimension: str,
    scale: tuple[float, float],
    source: str,
) -> tuple[RatingTable, dict[str, int]]:
    """A table of ONE judge column of score ``rows`` against ``records``' mean human score on
    ``dimension``, and the counts of what was left out (no score, no human score)."""
    metrics = sorted({str(r["metric"]) for r in rows})
    if len(metrics) != 1:
        raise InputError(
            f"give exactly one judge column (got {', '.join(metrics) or 'none'}); pick one with "
            "--scores PATH:COLUMN",
            field="--scores",
        )
    human: dict[str, float] = {}
    for rec in records:
        vals = [v for v in (getattr(rec, "scores", {}) or {}).get(dimension, []) if v is not None]
        if vals:
            human[f"{rec.id}::{rec.system}"] = float(np.mean(vals))
    keep, dropped = [], {"no_score": 0, "no_human_score": 0}
    for r in rows:
        if r.get("score") is None:
            dropped["no_score"] += 1
        elif r["key"] not in human:
            dropped["no_human_score"] += 1
        else:
            keep.append(r)
    if len(keep) < 4:
        raise InputError(
            f"only {len(keep)} responses have both a judge score and a human {dimension} score",
            field="--dimension",
        )
    probs, values = _distributions(keep)
    table = RatingTable(
        pred=np.array([float(r["score"]) for r in keep]),
        human=np.array([human[r["key"]] for r in keep]),
        ids=tuple(str(r["key"]) for r in keep),
        judge=metrics[0],
        signature=str(keep[0].get("signature") or metrics[0]),
        scale=scale,
        source=source,
        probs=probs,
        values=values,
        grid=label_grid([human[r["key"]] for r in keep], scale),
    )
    return table, dropped


def _distributions(rows: Sequence[Mapping[str, Any]]) -> tuple[FArr | None, FArr | None]:
    """The rows' ``details.probs`` over ``details.values`` when every row has them."""
    ds = [r.get("details") or {} for r in rows]
    if not all("probs" in d and "values" in d for d in ds):
        return None, None
    return np.array([d["probs"] for d in ds], float), np.array(ds[0]["values"], float)


#: the finest refinement of the rating step :func:`label_grid` looks for (the mean of 12 ratings)
MAX_RATERS = 12


def label_grid(
    human: Sequence[float] | FArr, scale: tuple[float, float], values: FArr | None = None
) -> FArr | None:
    """Every value a human score can take, from the scale's min to its max whether or not a row
    holds it: the rating step (the spacing of the rating ``values``, else 1 on an integer scale)
    divided by the smallest k <= :data:`MAX_RATERS` that puts every score of ``human`` on the
    grid (the mean of 3 ratings: thirds). None when there is no such step (a continuous scale).

    >>> label_grid([1.0, 4 / 3, 5.0], (1.0, 5.0)).round(2).tolist()[:5]
    [1.0, 1.33, 1.67, 2.0, 2.33]
    >>> label_grid([0.25, 0.5], (0.0, 1.0)).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> label_grid([0.123], (0.0, 1.0)) is None
    True
    """
    lo, hi = scale
    step = None
    if values is not None and len(values) > 1:
        d = np.diff(np.sort(np.asarray(values, float)))
        step = float(d[0]) if np.allclose(d, d[0]) and d[0] > 0 else None
    elif float(lo).is_integer() and float(hi).is_integer():
        step = 1.0
    if step is None or hi <= lo:
        return None
    h = (np.asarray(human, float) - lo) / step
    for k in range(1, MAX_RATERS + 1):
        if np.allclose(h * k, np.round(h * k), atol=1e-6):
            n = round((hi - lo) / step * k)
            return (lo * k + np.arange(n + 1) * step) / k
    return None


def splits(n: int, *, seed: int, repeats: int, fraction: float = 0.5) -> list[tuple[IArr, IArr]]:
    """``repeats`` seeded random splits of ``range(n)``: (first ``round(fraction * n)`` rows of a
    permutation, the rest); repeat r uses ``numpy.random.default_rng([seed, r])``. The memory
    the splits need is checked first (:func:`~metajudge.limits.check_allocation`, ``--repeats``)."""
    check_allocation(repeats, n, field="--repeats")
    if not 0 < fraction < 1:
        raise InputError(
            f"the split fraction must be in (0, 1), got {fraction}", field="--fraction"
        )
    k = round(fraction * n)
    if k < 2 or n - k < 2:
        raise InputError(
            f"{n} rows are too few to split {fraction:g}/{1 - fraction:g}", field="--fraction"
        )
    return [halves(np.random.default_rng([seed, r]).permutation(n), k) for r in range(repeats)]


def check_alpha(alpha: float, field: str = "--alpha") -> float:
    """``alpha`` in (0, 1), else an InputError naming ``field``."""
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}", field=field)
    return float(alpha)
