"""Tables of a categorical meta-evaluation (:mod:`metajudge.analyses.metric_vs_human.categorical`).

Every function takes the result's JSON form (``CategoricalResult.to_dict()``, what
``result.json`` holds), so ``metajudge report DIR`` re-renders a run folder without recomputing.
Markdown: the main table (accuracy, κ, macro-F1 with CIs; invalid labels counted), the
inter-annotator reference beside the judge on the same target, one confusion matrix per row,
and the notes. CSV / JSON: the main table's rows.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from metajudge.analyses.metric_vs_human.categorical import STATS
from metajudge.io import CsvDictWriter
from metajudge.reports.sections import md_row

HEAD = {"accuracy": "accuracy", "cohen_kappa": "Cohen κ", "macro_f1": "macro-F1"}


def _f(x: Any, nd: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{float(x):.{nd}f}"


def _ci(row: Mapping[str, Any], s: str) -> str:
    lo_hi = (row.get("ci") or {}).get(s)
    if not lo_hi or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in lo_hi):
        return _f(row[s])
    return f"{_f(row[s])} [{_f(lo_hi[0])}, {_f(lo_hi[1])}]"


def _md(header: list[str], rows: list[list[str]]) -> str:
    out = [md_row(header), "|" + "---|" * len(header)]
    return "\n".join(out + [md_row(r) for r in rows])


def main_table(res: Mapping[str, Any]) -> str:
    head = ["metric", "dimension", "n", "invalid", *(HEAD[s] for s in STATS)]
    rows = [
        [r["metric"], r["dimension"], str(r["n"]), str(r["invalid"]), *(_ci(r, s) for s in STATS)]
        for r in res["rows"]
    ]
    return _md(head, rows)


def reference_table(res: Mapping[str, Any]) -> str:
    head = [
        "metric",
        "dimension",
        "α (level)",
        "α published",
        "annotators",
        "annotator acc",
        "annotator κ",
        "judge acc",
        "judge κ",
    ]
    rows = []
    for r in res["rows"]:
        ref = r.get("reference") or {}
        rows.append(
            [
                r["metric"],
                r["dimension"],
                f"{_f(ref.get('alpha'), 4)} ({ref.get('alpha_level', '?')})",
                _f(ref.get("published_alpha"), 4),
                str(ref.get("annotators", 0)),
                _f(ref.get("annotator_accuracy")),
                _f(ref.get("annotator_kappa")),
                _f(ref.get("judge_accuracy")),
                _f(ref.get("judge_kappa")),
            ]
        )
    return _md(head, rows)


def confusion_table(row: Mapping[str, Any]) -> str:
    """Rows = majority human label, columns = the judge's label."""
    labels = list(row["labels"])
    body = [[f"**{g}**", *(str(x) for x in cm)] for g, cm in zip(labels, row["confusion"])]
    return _md(["human \\ judge", *labels], body)


def categorical_markdown(res: Mapping[str, Any]) -> str:
    parts = [
        f"## Categorical meta-evaluation: {res['dataset']} ({res['label_kind']} labels)",
        "",
        main_table(res),
        "",
        "### Inter-annotator reference (leave-one-annotator-out, same target as the judge)",
        "",
        reference_table(res),
    ]
    for r in res["rows"]:
        parts += ["", f"### Confusion matrix: {r['metric']} / {r['dimension']}", ""]
        parts.append(confusion_table(r))
    gold = res.get("gold") or {}
    parts += ["", "### Notes", ""]
    parts += [
        f"- {d}: target = {g['source']}; {g['items']} items with a target, {g['ties']} ties"
        for d, g in gold.items()
    ]
    parts += [f"- {n}" for n in res.get("notes", ())]
    return "\n".join(parts) + "\n"


def flat_rows(res: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in res["rows"]:
        d: dict[str, Any] = {k: r[k] for k in ("metric", "dimension", "n", "invalid")}
        for s in STATS:
            lo, hi = (r.get("ci") or {}).get(s) or (None, None)
            d.update({s: r[s], f"{s}_lo": lo, f"{s}_hi": hi})
        ref = r.get("reference") or {}
        for k in ("alpha", "published_alpha", "annotator_accuracy", "annotator_kappa"):
            d[k] = ref.get(k)
        d["judge_accuracy_loo"], d["judge_kappa_loo"] = (
            ref.get("judge_accuracy"),
            ref.get("judge_kappa"),
        )
        out.append(d)
    return out


def categorical_csv(res: Mapping[str, Any]) -> str:
    rows = flat_rows(res)
    buf = io.StringIO()
    w = CsvDictWriter(buf, fieldnames=list(rows[0]) if rows else ["metric"])
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def categorical_json(res: Mapping[str, Any]) -> str:
    return json.dumps(flat_rows(res), indent=1, ensure_ascii=False, default=str)


RENDER = {"md": categorical_markdown, "csv": categorical_csv, "json": categorical_json}


def render_categorical(out_dir: str | Path, res: Mapping[str, Any]) -> dict[str, Path]:
    """``table.md``, ``table.csv`` and ``table.json`` of the run folder (atomic writes)."""
    from metajudge.run_folder import write_file

    out = Path(out_dir)
    written = {}
    for ext, fn in RENDER.items():
        p = write_file(out, f"table.{ext}", fn(res))
        written[p.name] = p
    return written


def _est(row: Mapping[str, Any], s: str) -> Any:
    """A page cell ``{"v", "lo", "hi"}`` of statistic ``s`` (None when undefined)."""
    v = row.get(s)
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return None
    lo, hi = ((row.get("ci") or {}).get(s) or [None, None])[:2]
    return {"v": round(float(v), 4), "lo": lo, "hi": hi}


def html_payload(res: Mapping[str, Any]) -> dict[str, Any]:
    """The ``report.html`` page of a categorical ``result.json``: the main table with CIs, the
    inter-annotator reference, one confusion matrix per row, and the notes as warnings."""
    rows = [
        [r["metric"], r["dimension"], *(_est(r, s) for s in STATS), r["n"], r["invalid"]]
        for r in res["rows"]
    ]
    tables = [
        {
            "title": "Agreement with the majority human label (95% CI)",
            "columns": ["metric", "dimension", *(HEAD[s] for s in STATS), "n", "invalid"],
            "rows": rows,
            "refs": [],
        }
    ]
    for r in res["rows"]:
        labels = [str(x) for x in r["labels"]]
        tables.append(
            {
                "title": f"Confusion matrix: {r['metric']} / {r['dimension']} (rows: human)",
                "columns": ["human \\ judge", *labels],
                "rows": [[g, *cm] for g, cm in zip(labels, r["confusion"])],
                "refs": [],
            }
        )
    scores = ", ".join(str(s) for s in ((res.get("data") or {}).get("run") or {}).get("scores", []))
    return {
        "kind": "categorical",
        "title": f"Categorical meta-evaluation on {res['dataset']} ({res['label_kind']} labels)",
        "question": f"How often do the judge's labels match the majority human label of "
        f"{res['dataset']}?",
        "protocol": " | ".join(f"{k}: {v}" for k, v in (res.get("options") or {}).items()),
        "signatures": [["scores", scores]] if scores else [],
        "warnings": [*res.get("notes", ())],
        "tables": tables,
    }
