"""Rendering of the metric × dataset matrix (:class:`metajudge.runs.matrix.table.Matrix`):
Markdown (a grid of statuses, the applicable cells with their results, the reasons of the
others, the dataset columns) and CSV (one row per cell)."""

from __future__ import annotations

import io
from dataclasses import asdict, fields
from typing import Any

from metajudge.io import CsvDictWriter
from metajudge.reports.sections import md_cell

#: grid codes, in the order a status is tested
CODES: tuple[tuple[str, str, str], ...] = (
    ("stored (subset", "s", "stored for a seeded subset"),
    ("stored", "S", "stored (all items)"),
    ("not run", "·", "applies, not run (reason below)"),
    ("n/a", "–", "does not apply (reason below)"),
)


def _esc(text: Any) -> str:
    return md_cell(text)


def code(status: str) -> str:
    """The one-character grid code of a cell status."""
    return next(c for prefix, c, _ in CODES if status.startswith(prefix))


def _value(c: Any) -> str:
    if c.value is None:
        return "undefined" if c.stored else ""
    txt = f"{c.value:.3f}"
    if c.ci and None not in c.ci:
        txt += f" [{c.ci[0]:.3f}, {c.ci[1]:.3f}]"
    method = getattr(c, "ci_method", None)
    if method and method != "percentile bootstrap":
        txt += f" ({method})"
    return txt


def _grid(m: Any) -> list[str]:
    names = [d.name for d in m.datasets]
    out = ["| metric | " + " | ".join(map(md_cell, names)) + " |", "|---" * (len(names) + 1) + "|"]
    for r in m.rows:
        out.append(
            f"| {md_cell(r)} | " + " | ".join(code(m.cell(r, d).status) for d in names) + " |"
        )
    legend = "; ".join(f"`{c}` {what}" for _, c, what in CODES)
    return [*out, "", legend]


def _applicable(m: Any) -> list[str]:
    head = (
        "| metric | dataset | status | statistic (dimension) | value [95% CI] | published | n "
        "| protocol | backbone | date | wall s | calls | tokens | signature |"
    )
    out = [head, "|---" * 14 + "|"]
    for c in m.cells:
        if not c.applies:
            continue
        stat = f"{c.statistic} ({c.dimension})" if c.statistic else ""
        vals = (
            c.metric,
            c.dataset,
            c.status,
            stat,
            _value(c),
            "" if c.published is None else f"{c.published:.3f}",
            c.n if c.n is not None else "",
            c.protocol or "",
            c.backbone or "",
            (c.date or "")[:10],
            "" if c.wall_s is None else f"{c.wall_s:.0f}",
            "" if c.calls is None else c.calls,
            "" if c.tokens is None else c.tokens,
            f"`{c.signature}`" if c.signature else "",
        )
        out.append("| " + " | ".join(_esc(v) for v in vals) + " |")
    return out


def _not_applicable(m: Any) -> list[str]:
    by_reason: dict[str, list[str]] = {}
    for c in m.cells:
        if not c.applies:
            by_reason.setdefault(c.status.removeprefix("n/a: "), []).append(
                f"{c.metric} × {c.dataset}"
            )
    out = ["| reason | cells |", "|---|---|"]
    for why, cells in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        out.append(f"| {_esc(why)} | {len(cells)}: {_esc(', '.join(cells))} |")
    return out


def _datasets(m: Any) -> list[str]:
    out = [
        "| dataset | kind | labels | records | items | responses/input | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in m.datasets:
        note = m.notes.get(d.name, "" if d.source == "built-in" else f"--input {d.source}")
        vals = (d.name, d.kind, d.label_kind, d.records, d.items, d.responses_per_input, note)
        out.append("| " + " | ".join(_esc(v) for v in vals) + " |")
    return out


def matrix_markdown(m: Any) -> str:
    """The whole matrix as Markdown."""
    n_app = sum(c.applies for c in m.cells)
    n_st = sum(c.stored for c in m.cells)
    lines = [
        "# The metric × dataset matrix",
        "",
        (
            f"{len(m.rows)} metrics × {len(m.datasets)} datasets = {len(m.cells)} cells: "
            f"{n_app} apply, {n_st} stored, {n_app - n_st} not run."
        ),
        "",
        *_grid(m),
        "",
        "## Cells that apply",
        "",
        *_applicable(m),
        "",
        "## Cells that do not apply",
        "",
        *_not_applicable(m),
        "",
        "## Datasets",
        "",
        *_datasets(m),
    ]
    return "\n".join(lines) + "\n"


def matrix_csv(m: Any) -> str:
    """One CSV row per cell (every field of :class:`~metajudge.runs.matrix.table.Cell`)."""
    buf = io.StringIO()
    names = [f.name for f in fields(type(m.cells[0]))] if m.cells else []
    w = CsvDictWriter(buf, fieldnames=names, lineterminator="\n")
    w.writeheader()
    for c in m.cells:
        row = asdict(c)
        row["ci"] = "" if not c.ci else f"{c.ci[0]};{c.ci[1]}"
        w.writerow(row)
    return buf.getvalue()


def _cell_value(r: dict[str, Any]) -> str:
    if r.get("value") is None:
        return f"undefined ({r['undefined']})" if r.get("undefined") else "undefined"
    txt = f"{r['value']:.3f}"
    ci = r.get("ci")
    if ci and None not in ci:
        txt += f" [{ci[0]:.3f}, {ci[1]:.3f}]"
    return txt


def cell_markdown(cell: dict[str, Any]) -> str:
    """``table.md`` of one ``matrix run`` cell: what ran (metric, dataset, backbone, protocol,
    the subset), every dimension × statistic with its CI, CI method and n, the cost, and the
    command that reproduces it."""
    sub, proto, led = cell["subset"], cell["protocol"], cell["ledger"]
    head = cell["headline"]
    lines = [
        f"# {cell['metric']} × {cell['dataset']}",
        "",
        (
            f"Backbone: {cell.get('backbone') or 'none'}; protocol: {proto['correlate']} | "
            f"{proto['level']}; headline: {head['statistic']} ({head['dimension']})"
        ),
        f"Subset: {sub['n']} of {sub['N']} {sub['unit']}, {sub['how']} (seed {sub['seed']})",
        f"Signature: `{cell['signature']}`",
        "",
        "| dimension | statistic | value [95% CI] | CI method | n |",
        "|---|---|---|---|---|",
    ]
    for r in cell["results"]:
        lines.append(
            f"| {_esc(r['dimension'])} | {_esc(r['statistic'])} | {_esc(_cell_value(r))} | "
            f"{_esc(r.get('ci_method') or '')} | {r['n']} |"
        )
    lines += [
        "",
        (
            f"Cost: {led['calls']} model calls, {led['cached']} cached, {led['prompt_tokens']} + "
            f"{led['completion_tokens']} tokens, {cell['wall_s']} s"
        ),
        "",
        f"Command: `{cell['command']}`",
        "",
    ]
    return "\n".join(lines)
