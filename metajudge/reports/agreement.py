"""The annotator-agreement table (``metajudge agreement``) as text, Markdown, CSV or JSON.

The numbers are :func:`metajudge.analyses.annotator_agreement.agreement`'s; this module only
formats them.
"""

from __future__ import annotations

import io
import math
from dataclasses import asdict
from typing import TYPE_CHECKING

from metajudge.io import CsvWriter
from metajudge.reports.sections import md_row

if TYPE_CHECKING:
    from metajudge.analyses.annotator_agreement import AgreementResult


COLUMNS = (
    "dimension",
    "level",
    "units",
    "ratings/unit min/mean/max",
    "Krippendorff α",
    "Fleiss κ",
    "Cohen κ",
    "split-half (S-B)",
)


def _f(x: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(x) else f"{x:.{digits}f}"


def agreement_table(res: AgreementResult) -> list[list[str]]:
    """Header + one row of formatted cells per dimension."""
    pub = bool(res.published)
    out = [[*COLUMNS[:5], *(["published α"] if pub else []), *COLUMNS[5:]]]
    for r in res.rows:
        ck = "-" if not r.cohen_pairs else _f(r.cohen_kappa)
        if r.cohen_pairs > 1:
            ck += f" (mean of {r.cohen_pairs})"
        out.append(
            [
                r.dimension,
                r.level,
                str(r.units),
                f"{r.ratings_min}/{r.ratings_mean:.2f}/{r.ratings_max}",
                _f(r.alpha, 4 if pub else 3),
                *([_f(res.published.get(r.dimension, math.nan), 4)] if pub else []),
                _f(r.fleiss_kappa),
                ck,
                _f(r.split_half),
            ]
        )
    return out


def render_agreement(res: AgreementResult, fmt: str = "text") -> str:
    """``text`` (aligned, for the screen), ``md``, ``csv`` or ``json``."""
    if fmt == "json":
        return res.to_json(indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = CsvWriter(buf, lineterminator="\n")
        rows = [asdict(r) for r in res.rows]
        w.writerow(list(rows[0]) if rows else [])
        w.writerows([list(r.values()) for r in rows])
        return buf.getvalue()
    t = agreement_table(res)
    head = f"Agreement between annotators: {res.dataset} ({res.label_kind} labels)"
    foot = "\n".join(f"- {n}" for n in res.notes)
    if fmt == "md":
        lines = [md_row(r) for r in t]
        lines.insert(1, "|" + "---|" * len(t[0]))
        return f"{head}\n\n" + "\n".join(lines) + f"\n\n{foot}\n"
    widths = [max(len(r[i]) for r in t) for i in range(len(t[0]))]
    body = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in t)
    return f"{head}\n{body}\n{foot}\n"
