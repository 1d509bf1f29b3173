"""Benchmark inputs without human labels: MuDABench questions and the MT-RAIG precursor items.

They feed the benchmark-style metrics (MuDABench process / final / full accuracy, MT-RAIG Eval):
questions, gold answers, gold atomic facts, tables and reference insights.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from metajudge.data.formats import Table
from metajudge.errors import InputError


@dataclass(frozen=True)
class MudaQuestion:
    """One MuDABench question (Zhanli-Li/MuDABench data/{simple,complex}.json).

    ``question_id`` is upstream's (``'q_' + sha256(question, metadata)[:16]``); it repeats for
    two exact-duplicate entries in simple.json, so ``index`` (position in the file) is the unique key.
    ``gold_facts`` are upstream's ``source_answer`` atomic facts.
    """

    question_id: str
    question: str
    final_answer: str
    gold_facts: tuple[str, ...]
    metadata: tuple[dict[str, Any], ...]
    variant: str
    index: int


@dataclass(frozen=True)
class MTRaigItem:
    """One multi-table question with its reference insight (KWONDU/mtr-lftqa-dataset)."""

    id: str
    question: str
    reference: str
    tables: tuple[Table, ...]
    table_ids: tuple[str, ...] = field(default=())


def _json(name: str, relpath: str, data_dir: str | Path | None) -> tuple[Path, Any]:
    from metajudge.data.registry import upstream_json

    return upstream_json(name, relpath, data_dir)


def _req(obj: Any, key: str, path: Path, where: str) -> Any:
    if not isinstance(obj, dict):
        raise InputError(f"expected an object, got {type(obj).__name__}", path=path, field=where)
    if key not in obj:
        raise InputError("missing required field", path=path, field=f"{where}.{key}")
    return obj[key]


def load_mudabench(
    variant: Literal["simple", "complex"] = "simple", data_dir: str | Path | None = None
) -> list[MudaQuestion]:
    """MuDABench questions of one variant (166 each): gold answer, gold atomic facts, document metadata."""
    if variant not in ("simple", "complex"):
        raise InputError(f"variant must be 'simple' or 'complex', got {variant!r}", field="variant")
    p, rows = _json("mudabench", f"{variant}.json", data_dir)
    if not isinstance(rows, list) or not rows:
        raise InputError("expected a non-empty JSON list", path=p, field="<root>")
    out = []
    for i, r in enumerate(rows):
        w = f"[{i}]"
        facts = _req(r, "source_answer", p, w)
        meta = _req(r, "metadata", p, w)
        if not isinstance(facts, list) or not all(isinstance(f, str) for f in facts):
            raise InputError("expected a list of strings", path=p, field=f"{w}.source_answer")
        if not isinstance(meta, list) or not all(isinstance(m, dict) for m in meta):
            raise InputError("expected a list of objects", path=p, field=f"{w}.metadata")
        out.append(
            MudaQuestion(
                question_id=str(_req(r, "question_id", p, w)),
                question=str(_req(r, "question", p, w)),
                final_answer=str(_req(r, "final_answer", p, w)),
                gold_facts=tuple(facts),
                metadata=tuple(meta),
                variant=variant,
                index=i,
            )
        )
    return out


def _cell(v: Any) -> str:
    return "" if v is None else str(v)


def load_mtraig_tables(data_dir: str | Path | None = None) -> dict[str, Table]:
    """The 672 tables of modified_multitabqa_tables.json by id (title = 'db | table')."""
    p, rows = _json("mtraig_precursor_kwondu", "modified_multitabqa_tables.json", data_dir)
    if not isinstance(rows, list) or not rows:
        raise InputError("expected a non-empty JSON list", path=p, field="<root>")
    out: dict[str, Table] = {}
    for i, t in enumerate(rows):
        w = f"[{i}]"
        header = _req(t, "header", p, w)
        cells = _req(t, "cell", p, w)
        if (
            not isinstance(header, list)
            or not isinstance(cells, list)
            or not all(isinstance(r, list) for r in cells)
        ):
            raise InputError("header must be a list and cell a list of rows", path=p, field=w)
        tid = str(_req(t, "id", p, w))
        if tid in out:
            raise InputError(f"duplicate table id {tid!r}", path=p, field=f"{w}.id")
        out[tid] = Table(
            title=str(t.get("metadata", "")),
            header=tuple(_cell(h) for h in header),
            rows=tuple(tuple(_cell(c) for c in r) for r in cells),
        )
    return out


def load_mtraig_items(data_dir: str | Path | None = None) -> list[MTRaigItem]:
    """The 1,401 multi-table questions with tables and reference insights; id = list index."""
    tables = load_mtraig_tables(data_dir)
    p, rows = _json("mtraig_precursor_kwondu", "low_header_sim_dataset.json", data_dir)
    if not isinstance(rows, list) or not rows:
        raise InputError("expected a non-empty JSON list", path=p, field="<root>")
    out = []
    for i, r in enumerate(rows):
        w = f"[{i}]"
        ids = _req(r, "gold_table_id_set", p, w)
        if not isinstance(ids, list) or not ids:
            raise InputError(
                "expected a non-empty list of table ids", path=p, field=f"{w}.gold_table_id_set"
            )
        missing = [t for t in ids if str(t) not in tables]
        if missing:
            raise InputError(
                f"unknown table id {missing[0]!r}", path=p, field=f"{w}.gold_table_id_set"
            )
        out.append(
            MTRaigItem(
                id=str(i),
                question=str(_req(r, "question", p, w)),
                reference=str(_req(r, "answer", p, w)),
                tables=tuple(tables[str(t)] for t in ids),
                table_ids=tuple(str(t) for t in ids),
            )
        )
    return out


def load_benchmark_items(name: str, data_dir: str | Path | None = None) -> list[Any]:
    """All items of a benchmark-input dataset (MuDABench: simple then complex)."""
    if name == "mudabench":
        return [*load_mudabench("simple", data_dir), *load_mudabench("complex", data_dir)]
    if name == "mtraig_precursor_kwondu":
        return list(load_mtraig_items(data_dir))
    raise InputError(f"{name!r} is not a benchmark-input dataset", field="name")
