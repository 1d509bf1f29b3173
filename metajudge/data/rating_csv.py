"""A judge's distribution over ratings, as the published CSV format holds it (Sheng et al. 2025).

The format (``conformal_judge_sheng2025``'s ``summeval/<model>_<dim>.csv``, and any file like it)
is a CSV with a header: one column per rating value (``1``, ``2``, ... ``5``: numeric names) holding
the judge's log-probability of that rating token, and a LAST column holding the human score (its
name is the dimension, or ``human``), within the rating values' range (else refused). :func:`read_rating_csv` reads it as it is.

Log-probabilities must be <= 0; the released files keep a top-k of tokens with a floor of
log(1e-5), so exp(log p) sums to a little under 1 over the rating tokens: the distribution is
renormalised over the rating tokens (as G-Eval's expected score) and the mass before
renormalising is kept (``mass``). With ``distribution="probs"`` the columns are probabilities
and each row must sum to 1 within 1e-6.

>>> import numpy as np
>>> expected_score(np.array([[0.5, 0.5]]), np.array([1.0, 2.0]))
array([1.5])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from metajudge.data.probabilities import check_probabilities
from metajudge.errors import InputError
from metajudge.io import csv_reader

FArr = npt.NDArray[np.float64]
Distribution = Literal["logprobs", "probs"]


@dataclass(frozen=True)
class RatingDistributions:
    """A judge's rating distributions beside human scores, row by row of one file.

    ``values``: the rating values (the numeric column names), ``probs``: n x K (renormalised),
    ``mass``: the probability mass over the rating tokens before renormalising (1 for probs),
    ``human``: the human score of each row, ``human_column``: its column name, ``lines``: the
    physical line of each row."""

    path: Path
    values: FArr
    probs: FArr
    mass: FArr
    human: FArr
    human_column: str
    lines: tuple[int, ...]

    @property
    def expected(self) -> FArr:
        return expected_score(self.probs, self.values)


def expected_score(probs: FArr, values: FArr) -> FArr:
    """The expected rating of each row: sum_k p_k v_k."""
    return np.asarray(probs, float) @ np.asarray(values, float)


def _header(path: Path, header: list[str]) -> tuple[FArr, str]:
    if len(header) < 3:
        raise InputError(
            "expected rating columns (1, 2, ...) and a last human-score column",
            path=path,
            line=1,
            field="<header>",
        )
    try:
        values = np.array([float(h) for h in header[:-1]])
    except ValueError:
        bad = next(h for h in header[:-1] if not _is_number(h))
        raise InputError(
            "a rating column's name must be its rating value (e.g. 1..5); the human score is the "
            "LAST column",
            path=path,
            line=1,
            field=bad,
        ) from None
    return values, header[-1]


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _cell(path: Path, line: int, col: str, text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise InputError(
            f"expected a number, got {text!r}", path=path, line=line, field=col
        ) from None
    if not math.isfinite(x):
        raise InputError(f"expected a finite number, got {text!r}", path=path, line=line, field=col)
    return x


def _check_row(path: Path, line: int, header: list[str], row: FArr, kind: Distribution) -> None:
    if kind == "logprobs":
        for col, x in zip(header, row, strict=False):
            if x > 0:
                raise InputError(
                    f"log-probability {x!r} is above 0", path=path, line=line, field=col
                )
        return
    check_probabilities(
        row.tolist(), path=path, line=line, field=f"{header[0]}..{header[-1]}", fields=header
    )


def _human(path: Path, line: int, col: str, text: str, values: FArr) -> float:
    """A human score, inside the rating values' range (the scale the file's columns declare)."""
    x = _cell(path, line, col, text)
    lo, hi = float(values.min()), float(values.max())
    if not lo <= x <= hi:
        raise InputError(
            f"human score {x:g} is outside the scale {lo:g}..{hi:g} of the rating columns",
            path=path,
            line=line,
            field=col,
        )
    return x


def read_rating_csv(
    path: str | Path, *, distribution: Distribution = "logprobs"
) -> RatingDistributions:
    """The published CSV format (module docstring) read as it is; errors name file, line, field.
    A file is parsed once per (path, size, mtime) and kind (the result is read-only)."""
    p = Path(path)
    if distribution not in ("logprobs", "probs"):
        raise InputError(
            f"unknown distribution {distribution!r} (logprobs or probs)", field="--distribution"
        )
    st = p.stat()
    return _read_cached(str(p), st.st_size, st.st_mtime_ns, distribution)


@lru_cache(maxsize=64)
def _read_cached(
    path: str, size: int, mtime_ns: int, distribution: Distribution
) -> RatingDistributions:
    p = Path(path)
    with open(p, encoding="utf-8", newline="") as fh:
        rows = list(csv_reader(fh, p))
    if not rows:
        raise InputError("empty file", path=p, field="<header>")
    values, human_col = _header(p, [h.strip() for h in rows[0]])
    rating_cols = [h.strip() for h in rows[0][:-1]]
    dist, human, lines = [], [], []
    for i, raw in enumerate(rows[1:], start=2):
        if not raw or not any(c.strip() for c in raw):
            continue
        if len(raw) != len(values) + 1:
            raise InputError(
                f"expected {len(values) + 1} cells, got {len(raw)}", path=p, line=i, field="<row>"
            )
        row = np.array([_cell(p, i, c, t) for c, t in zip(rating_cols, raw, strict=False)])
        _check_row(p, i, rating_cols, row, distribution)
        dist.append(row)
        human.append(_human(p, i, human_col, raw[-1], values))
        lines.append(i)
    if not dist:
        raise InputError("no data rows", path=p, field="<rows>")
    arr = np.array(dist)
    probs = np.exp(arr) if distribution == "logprobs" else arr
    mass = probs.sum(axis=1)
    out = RatingDistributions(
        path=p,
        values=values,
        probs=probs / mass[:, None],
        mass=mass,
        human=np.array(human),
        human_column=human_col,
        lines=tuple(lines),
    )
    for a in (out.values, out.probs, out.mass, out.human):
        a.flags.writeable = False
    return out
