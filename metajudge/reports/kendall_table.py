"""The ``stats kendall`` table as JSON, CSV or Markdown (rows of
:func:`metajudge.analyses.metric_vs_human.kendall_table.kendall_rows`)."""

from __future__ import annotations

import io
import json
from typing import Any

from metajudge.analyses.metric_vs_human.kendall_table import NOTE

#: the columns of the ``kendall`` table, in order
KENDALL_COLUMNS = (
    "metric",
    "tau_a",
    "tau_b",
    "tau_c",
    "acc23",
    "epsilon",
    "acc23_calibrated",
    "acc23_cv",
    "spa",
)


def kendall_text(
    rows: list[dict[str, Any]], fmt: str, *, level: str, seed: int, n_perm: int
) -> str:
    """The ``kendall`` rows as JSON, CSV or a Markdown table (``fmt``)."""
    cols = list(KENDALL_COLUMNS)
    if fmt == "json":
        head = {"level": level, "seed": seed, "spa_permutations": n_perm}
        return json.dumps({**head, "note": NOTE, "rows": rows}, indent=1) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        from metajudge.io import CsvDictWriter

        w = CsvDictWriter(buf, cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()
    lines = ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    for r in rows:
        lines.append("| " + " | ".join([r["metric"]] + [f"{r[c]:.4g}" for c in cols[1:]]) + " |")
    note = f"level {level}; seed {seed}; SPA with {n_perm} permutations; {NOTE}"
    return "\n".join(lines) + f"\n\n{note}\n"
