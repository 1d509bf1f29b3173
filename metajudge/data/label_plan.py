"""The label plan ``calibrate plan --out DIR`` writes (``DIR/selection.csv``), read back by ``calibrate estimate --plan``.

A CSV with a header, one row per candidate (a row that was unlabelled when the plan was made):
``system``, ``item``, ``cluster``, ``judge_score``, ``probability`` (its selection probability,
in (0, 1]) and ``selected`` (1 when the plan's draw selected it, else 0). :func:`read_plan` returns
``{(system, item): (probability, selected, line)}``; a bad row is an ``InputError`` naming file,
line and field.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

from metajudge.errors import InputError
from metajudge.io import csv_reader, read_text

PLAN_COLUMNS = ("system", "item", "cluster", "judge_score", "probability", "selected")

PlanRows = dict[tuple[str, str], tuple[float, bool, int]]

#: The smallest selection probability a plan may give: a label is weighted by 1/probability, and
#: a weight past 10^9 (one label outweighing a billion rows) only says the column is wrong (at
#: 1e-300 the estimate was 1.3e296 with no CI); ``calibrate plan`` mixes the uniform rule in,
#: so its probabilities stay far above this.
MIN_PROBABILITY = 1e-9


def _probability(text: str, path: Path, line: int) -> float:
    try:
        p = float(text)
    except ValueError:
        raise InputError(
            f"expected a number, got {text!r}", path=path, line=line, field="probability"
        ) from None
    if not (math.isfinite(p) and 0 < p <= 1):
        raise InputError(
            f"probability {text} outside (0, 1]", path=path, line=line, field="probability"
        )
    if p < MIN_PROBABILITY:
        raise InputError(
            f"probability {text} below {MIN_PROBABILITY:g}: its label would be weighted by "
            f"1/{text}; a plan's probabilities are at least {MIN_PROBABILITY:g}",
            path=path,
            line=line,
            field="probability",
        )
    return p


def read_plan(path: str | Path) -> PlanRows:
    """Every candidate of the plan file (module docstring)."""
    p = Path(path)
    reader = csv_reader(io.StringIO(read_text(p, field="--plan")), p, dicts=True, strict=True)
    missing = [
        c
        for c in ("system", "item", "probability", "selected")
        if c not in (reader.fieldnames or [])
    ]
    if missing:
        raise InputError(
            f"not a label plan: no column {', '.join(missing)} (calibrate plan --out writes "
            f"{', '.join(PLAN_COLUMNS)})",
            path=p,
            line=1,
            field="--plan",
        )
    out: PlanRows = {}
    for n, row in enumerate(reader, 2):
        key = (row["system"] or "", row["item"] or "")
        sel = (row["selected"] or "").strip()
        if sel not in ("0", "1"):
            raise InputError(f"expected 0 or 1, got {sel!r}", path=p, line=n, field="selected")
        if key in out:
            raise InputError(
                f"{key[0]}:{key[1]} again (first on line {out[key][2]})",
                path=p,
                line=n,
                field="item",
            )
        out[key] = (_probability(row["probability"] or "", p, n), sel == "1", n)
    if not out:
        raise InputError("the plan lists no candidate", path=p, field="--plan")
    return out
