"""Tables of :class:`~metajudge.analyses.verdict_accuracy.VerdictsResult` (md / csv / json), with
JudgeBench's published accuracies (``baselines/published_judgebench.json``) beside ours."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path

from metajudge.analyses.verdict_accuracy import VerdictsResult
from metajudge.io import CsvWriter
from metajudge.reports.sections import md_row


def published_judgebench(folder: Path | None = None) -> dict[str, dict[str, float]]:
    """``{judge model: {category: accuracy %}}`` as JudgeBench reports them, from the published
    baselines (``kind: "judge_accuracy"`` entries of ``published_judgebench.json``; empty when the
    baselines folder is not there, e.g. an installed package without the repository)."""
    from metajudge.reports.published import load_published

    out: dict[str, dict[str, float]] = {}
    for e in load_published(folder, kind="judge_accuracy"):
        if e["dataset"] == "judgebench":
            out.setdefault(e["metric"], {})[e["column"]] = float(e["value"])
    return out


def accuracy_table(
    res: VerdictsResult, published: Mapping[str, Mapping[str, float]] | None = None
) -> list[list[str]]:
    """Header + one row per judge: accuracy % [95% CI] per category and overall (published in
    parentheses where known), position consistency, P(first wins)."""
    cats = list(dict.fromkeys(a.category for j in res.judges for a in j.accuracies))
    out = [["judge", *cats, "position consistency", "P(first wins)"]]
    for j in res.judges:
        by = {a.category: a for a in j.accuracies}
        pub = (published or {}).get(j.judge, {})
        cells = []
        for c in cats:
            a = by.get(c)
            cell = "-"
            if a is not None:
                cell = f"{100 * a.accuracy:.2f} [{100 * a.ci_low:.1f}, {100 * a.ci_high:.1f}]"
            if c in pub:
                cell += f" (published {pub[c]:.2f})"
            cells.append(cell)
        pc = f"{100 * j.position_consistency:.1f}% of {j.pairs_both_orders}"
        if j.consistency_unparsed:
            pc += f" ({j.consistency_unparsed} unparsed)"
        out.append([j.judge, *cells, pc, f"{100 * j.p_first_wins:.1f}% of {j.decisive}"])
    return out


def tests_table(res: VerdictsResult) -> list[list[str]]:
    out = [["judge A", "judge B", "pairs", "only A right", "only B right", "p (McNemar)", "test"]]
    for t in res.tests:
        out.append(
            [
                t.judge_a,
                t.judge_b,
                str(t.n),
                str(t.only_a),
                str(t.only_b),
                f"{t.p_value:.4f}",
                t.method,
            ]
        )
    return out


def _md(t: list[list[str]]) -> str:
    lines = [md_row(r) for r in t]
    lines.insert(1, "|" + "---|" * len(t[0]))
    return "\n".join(lines)


def render_verdicts(
    res: VerdictsResult, fmt: str = "md", published: Mapping[str, Mapping[str, float]] | None = None
) -> str:
    """``md`` (two tables and the notes), ``csv`` (one row per judge × category) or ``json``."""
    if fmt == "json":
        d = res.to_dict()
        d["published"] = {k: dict(v) for k, v in (published or {}).items()}
        return json.dumps(d, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = CsvWriter(buf, lineterminator="\n")
        w.writerow(
            ["judge", "protocol", "category", "n", "accuracy", "ci_low", "ci_high", "published"]
        )
        for j in res.judges:
            pub = (published or {}).get(j.judge, {})
            for a in j.accuracies:
                w.writerow(
                    [
                        j.judge,
                        j.protocol,
                        a.category,
                        a.n,
                        a.accuracy,
                        a.ci_low,
                        a.ci_high,
                        pub.get(a.category, ""),
                    ]
                )
        return buf.getvalue()
    notes = [*res.notes, *(n for j in res.judges for n in (f"{j.judge}: {x}" for x in j.notes))]
    if published:
        notes.append("published: JudgeBench (Tan et al. 2024), baselines/published_judgebench.json")
    head = f"Accuracy of pairwise verdicts ({res.protocol})"
    body = _md(accuracy_table(res, published))
    tests = (
        f"\n\nMcNemar between judges (same pairs)\n\n{_md(tests_table(res))}" if res.tests else ""
    )
    return f"{head}\n\n{body}{tests}\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"
