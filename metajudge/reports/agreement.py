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


JUDGE_COLUMNS = (
    "dimension",
    "judge",
    "units",
    "α annotators",
    "α annotators + judge",
    "mean α judge–annotator",
    "mean α annotator–annotator",
)

PER_ANNOTATOR = (
    "dimension",
    "judge",
    "annotator",
    "shared units",
    "α judge–annotator",
    "α annotator–others",
    "κ judge–annotator",
    "κ annotator–others",
)


def judge_tables(res: AgreementResult) -> tuple[list[list[str]], list[list[str]]]:
    """The judges-beside-humans pool table and the per-annotator table (header first)."""
    pool = [list(JUDGE_COLUMNS)]
    per = [list(PER_ANNOTATOR)]
    for j in res.judges:
        pool.append(
            [
                j.dimension,
                j.judge,
                str(j.units),
                _f(j.alpha_humans),
                _f(j.alpha_with_judge),
                _f(j.judge_alpha_mean),
                _f(j.human_alpha_mean),
            ]
        )
        for i, n in enumerate(j.shared):
            cells = (j.judge_alpha[i], j.human_alpha[i], j.judge_kappa[i], j.human_kappa[i])
            per.append([j.dimension, j.judge, str(i + 1), str(n), *(_f(c) for c in cells)])
    return pool, per


def _judge_csv(res: AgreementResult) -> str:
    buf = io.StringIO()
    w = CsvWriter(buf, lineterminator="\n")
    w.writerow([*PER_ANNOTATOR, "α annotators", "α annotators + judge"])
    for j in res.judges:
        for i, n in enumerate(j.shared):
            cells = (j.judge_alpha[i], j.human_alpha[i], j.judge_kappa[i], j.human_kappa[i])
            w.writerow([j.dimension, j.judge, i + 1, n, *cells, j.alpha_humans, j.alpha_with_judge])
    return buf.getvalue()


def _tables(tables: list[list[list[str]]], fmt: str) -> str:
    out = []
    for t in tables:
        if fmt == "md":
            lines = [md_row(r) for r in t]
            lines.insert(1, "|" + "---|" * len(t[0]))
        else:
            widths = [max(len(r[i]) for r in t) for i in range(len(t[0]))]
            lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in t]
        out.append("\n".join(lines))
    return "\n\n".join(out)


def render_agreement(res: AgreementResult, fmt: str = "text") -> str:
    """``text`` (aligned, for the screen), ``md``, ``csv`` or ``json``."""
    if fmt == "json":
        return res.to_json(indent=2) + "\n"
    if fmt == "csv" and res.judges:  # judge columns: one row per dimension, judge, annotator
        return _judge_csv(res)
    if fmt == "csv":
        buf = io.StringIO()
        w = CsvWriter(buf, lineterminator="\n")
        rows = [asdict(r) for r in res.rows]
        w.writerow(list(rows[0]) if rows else [])
        w.writerows([list(r.values()) for r in rows])
        return buf.getvalue()
    head = f"Agreement between annotators: {res.dataset} ({res.label_kind} labels)"
    foot = "\n".join(f"- {n}" for n in res.notes)
    body = _tables([agreement_table(res)], fmt)
    if res.judges:
        pool, per = judge_tables(res)
        body += "\n\nJudges beside the annotators\n\n" + _tables([pool], fmt)
        body += "\n\nPer annotator\n\n" + _tables([per], fmt)
    sep = "\n\n" if fmt == "md" else "\n"
    return f"{head}{sep}{body}{sep}{foot}\n"
