"""Scores computed elsewhere that ship with a dataset ("external" metrics, DESIGN.md §3).

:func:`load_external_scores` returns ``{metric: {(record id, system): score}}`` keyed exactly like
the dataset's canonical records, so a later step can look up the score of either side of a pair
(``(pair.id, pair.a.system)``) or of a Likert record (``(rec.id, rec.system)``):

- ``ragchecker_meta_eval``: RAGChecker's own scores (baseline_ragchecker.json,
  ``model{1,2}.ragchecker.<dim>_label``) as metrics ``ragchecker_correctness`` /
  ``ragchecker_completeness`` / ``ragchecker_overall``, keyed by (instance id, model_name).
- ``lftqa_eval``: every ``scores/<subset>/metric_scores/<metric>.json`` (BLEU, ROUGE, METEOR,
  BERTScore, AutoACU, TAPAS, G-Eval per backbone), keyed by (example_id, model).
- ``hanna``: the 72 automatic metrics and the LLM judges' ratings of hanna_metric_scores_llm.csv
  (every column except Model, the mean and per-rater human columns), keyed by (story index, system).

:func:`load_external_verdicts` returns judge verdicts on pairwise items,
``{judge: {pair id: -1 | 0 | 1 | None}}`` (None = the judge's output could not be parsed):
PandaLM's GPT-3.5-turbo and PandaLM-7B outputs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from metajudge.errors import InputError

ScoreTable = dict[tuple[str, str], float | None]

_EXTERNAL = ("ragchecker_meta_eval", "lftqa_eval", "hanna")


def _num(v: Any, path: Path, field: str) -> float | None:
    from metajudge.data.converters import _num as conv_num

    return conv_num(v, path, field)


def _json(name: str, rel: str, data_dir: str | Path | None) -> tuple[Path, Any]:
    from metajudge.data.registry import resolve_file

    p = resolve_file(name, rel, data_dir)
    try:
        return p, json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(f"malformed JSON: {e.msg}", path=p, line=e.lineno, field="<json>") from None


def list_external_metrics(name: str) -> list[str]:
    """Names of the external metrics that :func:`load_external_scores` offers for ``name``."""
    from metajudge.data.fetch import local_relpath
    from metajudge.data.registry import load_card

    if name == "ragchecker_meta_eval":
        return [f"ragchecker_{d}" for d in ("correctness", "completeness", "overall")]
    if name == "lftqa_eval":
        rels = [local_relpath(sf) for sf in load_card(name).files]
        return sorted({r.rsplit("/", 1)[-1][: -len(".json")] for r in rels if "/metric_scores/" in r})
    if name == "hanna":
        return list(_hanna_metric_columns(None).values())
    return []


def load_external_scores(name: str, data_dir: str | Path | None = None) -> dict[str, ScoreTable]:
    """``{metric: {(record id, system): score}}`` for the scores shipped with dataset ``name``."""
    if name == "ragchecker_meta_eval":
        return _ragchecker(data_dir)
    if name == "lftqa_eval":
        return _lftqa_eval(data_dir)
    if name == "hanna":
        return _hanna(data_dir)
    raise InputError(f"dataset {name!r} ships no external per-response scores (those that do: {', '.join(_EXTERNAL)})", field="name")


def _ragchecker(data_dir: str | Path | None) -> dict[str, ScoreTable]:
    p, rows = _json("ragchecker_meta_eval", "baseline_ragchecker.json", data_dir)
    if not isinstance(rows, list):
        raise InputError("expected a JSON list", path=p, field="<root>")
    out: dict[str, ScoreTable] = {f"ragchecker_{d}": {} for d in ("correctness", "completeness", "overall")}
    for i, r in enumerate(rows):
        for side in ("model1", "model2"):
            m = r.get(side) if isinstance(r, dict) else None
            if not isinstance(m, dict) or "model_name" not in m or not isinstance(m.get("ragchecker"), dict):
                raise InputError("missing model_name or ragchecker scores", path=p, field=f"[{i}].{side}")
            for d in ("correctness", "completeness", "overall"):
                key = (str(r.get("instance_id")), str(m["model_name"]))
                out[f"ragchecker_{d}"][key] = _num(m["ragchecker"].get(f"{d}_label"), p, f"[{i}].{side}.ragchecker.{d}_label")
    return out


def _lftqa_eval(data_dir: str | Path | None) -> dict[str, ScoreTable]:
    from metajudge.data.fetch import local_relpath
    from metajudge.data.registry import load_card

    out: dict[str, ScoreTable] = {}
    for sf in load_card("lftqa_eval").files:
        rel = local_relpath(sf)
        if "/metric_scores/" not in rel:
            continue
        metric = rel.rsplit("/", 1)[-1][: -len(".json")]
        p, rows = _json("lftqa_eval", rel, data_dir)
        if not isinstance(rows, list):
            raise InputError("expected a JSON list", path=p, field="<root>")
        table = out.setdefault(metric, {})
        for i, r in enumerate(rows):
            if not isinstance(r, dict) or "example_id" not in r or "model" not in r:
                raise InputError("missing example_id or model", path=p, field=f"[{i}]")
            key = (str(r["example_id"]), str(r["model"]))
            if key in table:
                raise InputError(f"duplicate (example_id, model) {key!r}", path=p, field=f"[{i}].example_id")
            table[key] = _num(r.get("score"), p, f"[{i}].score")
    return out


_HUMAN_COL = re.compile(r"^(Human( Avg)? \d+ [A-Z]{2}|Relevance|Coherence|Empathy|Surprise|Engagement|Complexity|Model)$")


def _clean_hanna_name(col: str) -> str:
    """'BLEU Ξ§' -> 'BLEU': drop the trailing category marker (non-ASCII token) of HANNA's columns."""
    head, _, tail = col.rpartition(" ")
    return head if head and tail and not tail.isascii() else col


def _hanna_metric_columns(data_dir: str | Path | None) -> dict[str, str]:
    from metajudge.data.converters import _Source, read_hanna_table
    from metajudge.data.registry import load_card

    _p, table = read_hanna_table(_Source(load_card("hanna"), data_dir, {}))
    cols = list(table[0][2].keys()) if table else []
    return {c: _clean_hanna_name(c) for c in cols if not _HUMAN_COL.match(c)}


def _hanna(data_dir: str | Path | None) -> dict[str, ScoreTable]:
    from metajudge.data.converters import _Source, parse_list_cell, read_hanna_table
    from metajudge.data.registry import load_card

    p, table = read_hanna_table(_Source(load_card("hanna"), data_dir, {}))
    out: dict[str, ScoreTable] = {}
    for line, system, row in table:
        for col, val in row.items():
            if col is None or _HUMAN_COL.match(col):
                continue
            vals = parse_list_cell(val, p, col, line=line)
            t = out.setdefault(_clean_hanna_name(col), {})
            for i, v in enumerate(vals):
                t[(str(i), system)] = v
    return out


_PANDALM_VERDICT = {"1": -1.0, "2": 1.0, "0": 0.0, "Tie": 0.0, "tie": 0.0}


def load_external_verdicts(name: str, data_dir: str | Path | None = None) -> dict[str, dict[str, float | None]]:
    """``{judge: {pair id: -1 | 0 | 1 | None}}``; positive = b better, None = unparseable output."""
    if name != "pandalm_testset":
        raise InputError(f"dataset {name!r} ships no judge verdicts (those that do: pandalm_testset)", field="name")
    out: dict[str, dict[str, float | None]] = {}
    for judge, rel, key in (
        ("gpt-3.5-turbo", "gpt-3.5-turbo-testset-v1.json", "gpt_result"),
        ("pandalm-7b", "pandalm-7b-testset-v1.json", "pandalm_result"),
    ):
        p, rows = _json(name, rel, data_dir)
        if not isinstance(rows, list):
            raise InputError("expected a JSON list", path=p, field="<root>")
        table: dict[str, float | None] = {}
        for i, r in enumerate(rows):
            if not isinstance(r, dict) or "idx" not in r or key not in r:
                raise InputError(f"missing idx or {key}", path=p, field=f"[{i}]")
            table[str(r["idx"])] = _PANDALM_VERDICT.get(str(r[key]).strip())
        out[judge] = table
    return out
