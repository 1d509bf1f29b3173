"""External judges' pairwise verdicts as an input: JudgeBench's released outputs and any
JSONL / CSV with named columns.

A verdict is a decision on one pair in one presentation order, read from the file's ``"A>B"``,
``"B>A"``, ``"A=B"`` (tie; also ``tie``) or null / ``none`` (no usable decision: an unparseable
reply, a refusal) into a :class:`~metajudge.stats.decisions.Pref` (``Pref.A``, ``Pref.B``,
``Pref.TIE``) or ``None`` — the ``released`` spelling of
:data:`metajudge.stats.decisions.SPELLINGS`, written back the same way by
:meth:`JudgeVerdicts.to_dict`. Decisions are stored in the pair's *original* orientation: a
decision given on the swapped presentation (B shown first) is flipped back when read (JudgeBench,
Tan et al. 2024, ``utils/metrics.py``: "flip the second decision"), so ``orders[1] == orders[0]``
means the judge was position-consistent.

Readers:

- :func:`read_judgebench_outputs` — JudgeBench's ``outputs/*.jsonl`` (``human_labels/judgebench/
  PROVENANCE.txt``): the pair record plus ``judgments``, a 2-element list (or its Python-literal
  string) of ``{"judgment": {judge_model, prompt, response[, scores]}, "decision"}``, original
  order then swapped; reward models carry the two scalar rewards per order in ``scores``;
- :func:`read_verdict_table` — a JSONL or CSV file with one row per (pair, order) and named
  columns (:class:`VerdictColumns`).

Accuracy protocols and statistics are in :mod:`metajudge.analyses.verdict_accuracy`.
"""

from __future__ import annotations

import ast
import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats.decisions import SPELLINGS, Pref, spell, to_pref

# JudgeBench source prefixes -> the paper's categories (Tan et al. 2024, Table 2)
JUDGEBENCH_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("mmlu-pro", "knowledge"),
    ("livebench-reasoning", "reasoning"),
    ("livebench-math", "math"),
    ("livecodebench", "coding"),
)


def category_of(source: str) -> str:
    """JudgeBench's category of a ``source`` (its prefix), else the source itself.

    >>> category_of("mmlu-pro-law"), category_of("livecodebench"), category_of("other")
    ('knowledge', 'coding', 'other')
    """
    for prefix, cat in JUDGEBENCH_CATEGORIES:
        if source.startswith(prefix):
            return cat
    return source


@dataclass(frozen=True)
class PairVerdicts:
    """One judge's decisions on one pair, each order in the original orientation."""

    pair_id: str
    category: str
    label: Pref | None  # the gold decision (original orientation); None if not known
    orders: tuple[Pref | None, ...]  # first: original order; second (if run): swapped, flipped back
    raw: tuple[str, ...] = ()  # the judge's raw reply per order, where released
    scores: tuple[tuple[float, float], ...] = ()  # reward models: (reward A, reward B) per order


@dataclass(frozen=True)
class JudgeVerdicts(Result):
    """All verdicts of one judge on one set of pairs."""

    judge: str
    source: str
    rows: tuple[PairVerdicts, ...]
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The verdicts with each decision in the file spelling (``A>B``, ``B>A``, ``A=B``)."""
        rows = []
        for r in self.rows:
            d = asdict(r)
            d["label"] = spell(r.label, "released")
            d["orders"] = tuple(spell(o, "released") for o in r.orders)
            rows.append(d)
        return {
            "judge": self.judge,
            "source": self.source,
            "notes": list(self.notes),
            "rows": rows,
        }


def _decision(v: Any, path: Path, line: int, field: str) -> Pref | None:
    """A decision cell: ``A>B``, ``B>A``, ``A=B`` (or ``tie``), empty / null / ``none`` = None."""
    if v is None:
        return None
    try:
        return to_pref(v if isinstance(v, str) else repr(v), "released")
    except ValueError:
        raise InputError(
            f"decision {v!r} is not one of {', '.join(SPELLINGS['released'].values())} or null",
            path=path,
            line=line,
            field=field,
        ) from None


def _judgments(raw: Any, path: Path, line: int) -> list[Mapping[str, Any]]:
    if isinstance(raw, str):
        try:
            raw = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            raise InputError(
                "malformed judgments string (expected a Python-literal list)",
                path=path,
                line=line,
                field="judgments",
            ) from None
    if not isinstance(raw, list) or not 1 <= len(raw) <= 2:
        raise InputError(
            "judgments: expected a list of one or two {judgment, decision} objects",
            path=path,
            line=line,
            field="judgments",
        )
    if not all(isinstance(j, Mapping) and "decision" in j for j in raw):
        raise InputError(
            "judgments: each entry needs a decision", path=path, line=line, field="judgments"
        )
    return raw


def _judgebench_row(d: Mapping[str, Any], path: Path, line: int) -> tuple[PairVerdicts, str]:
    for k in ("pair_id", "source", "label", "judgments"):
        if k not in d:
            raise InputError("missing field", path=path, line=line, field=k)
    js = _judgments(d["judgments"], path, line)
    dec = [
        _decision(j["decision"], path, line, f"judgments[{i}].decision") for i, j in enumerate(js)
    ]
    orders = tuple(d_ if i == 0 or d_ is None else d_.flip() for i, d_ in enumerate(dec))
    inner = [j.get("judgment") or {} for j in js]
    raw = tuple(str(j.get("response", "")) for j in inner)
    scores = tuple((float(j["scores"][0]), float(j["scores"][1])) for j in inner if j.get("scores"))
    judge = str(inner[0].get("judge_model") or d.get("judge_name") or "")
    row = PairVerdicts(
        pair_id=str(d["pair_id"]),
        category=category_of(str(d["source"])),
        label=_decision(d["label"], path, line, "label"),
        orders=orders,
        raw=raw if any(raw) else (),
        scores=scores,
    )
    return row, judge


def read_judgebench_outputs(path: str | Path) -> JudgeVerdicts:
    """Read one JudgeBench ``outputs/*.jsonl`` file (module docstring)."""
    from metajudge.data.formats import iter_jsonl_objects

    p = Path(path)
    rows: list[PairVerdicts] = []
    judges: set[str] = set()
    for line, d in iter_jsonl_objects(p):
        if not isinstance(d, Mapping):
            raise InputError("expected a JSON object", path=p, line=line, field="<record>")
        row, judge = _judgebench_row(d, p, line)
        rows.append(row)
        judges.add(judge)
    if not rows:
        raise InputError("no verdicts", path=p)
    name = next(iter(judges)) if len(judges) == 1 else p.stem
    return JudgeVerdicts(name, str(p), tuple(rows), _count_notes(rows))


def _count_notes(rows: Sequence[PairVerdicts]) -> tuple[str, ...]:
    none = sum(d is None for r in rows for d in r.orders)
    n = sum(len(r.orders) for r in rows)
    two = sum(len(r.orders) == 2 for r in rows)
    out = (f"{len(rows)} pairs, {two} judged in both orders; {none} of {n} decisions are none",)
    eq = sum(a == b for r in rows for a, b in r.scores)
    if eq:
        out += (f"{eq} decisions with equal rewards (the released decision kept)",)
    return out


@dataclass(frozen=True)
class VerdictColumns:
    """Column names of a verdict table; ``order`` values: 1 / 2 (or ``original`` / ``swapped``).

    ``decision`` is given in the order shown to the judge (a swapped-order row is flipped back)."""

    item: str = "pair_id"
    decision: str = "decision"
    order: str | None = "order"
    label: str | None = "label"
    category: str | None = "category"
    judge: str | None = "judge"


def _table_rows(p: Path) -> list[tuple[int, Mapping[str, Any]]]:
    if p.suffix.lower() == ".csv":
        with open(p, encoding="utf-8", newline="") as fh:
            return [(i + 2, r) for i, r in enumerate(csv.DictReader(fh))]
    from metajudge.data.formats import iter_jsonl_objects

    return list(iter_jsonl_objects(p))


def _order_index(v: Any, p: Path, line: int, col: str) -> int:
    s = str(v).strip().lower() if v is not None else "1"
    idx = {"1": 0, "original": 0, "2": 1, "swapped": 1}.get(s)
    if idx is None:
        raise InputError(
            f"order {v!r}: expected 1, 2, original or swapped", path=p, line=line, field=col
        )
    return idx


def read_verdict_table(path: str | Path, columns: VerdictColumns | None = None) -> JudgeVerdicts:
    """Verdicts from a JSONL or CSV file, one row per (pair, order) (:class:`VerdictColumns`)."""
    c = columns or VerdictColumns()
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=p)
    got: dict[str, dict[str, Any]] = {}
    judges: set[str] = set()
    for line, r in _table_rows(p):
        if not isinstance(r, Mapping) or c.item not in r or c.decision not in r:
            raise InputError(
                f"needs columns {c.item} and {c.decision}", path=p, line=line, field=c.item
            )
        k = _order_index(r.get(c.order) if c.order else None, p, line, c.order or "order")
        d = _decision(r[c.decision], p, line, c.decision)
        e = got.setdefault(str(r[c.item]), {"orders": {}, "label": None, "category": ""})
        if k in e["orders"]:
            raise InputError("duplicate (item, order)", path=p, line=line, field=c.item)
        e["orders"][k] = d if k == 0 or d is None else d.flip()
        if c.label and r.get(c.label) not in (None, ""):
            e["label"] = _decision(r[c.label], p, line, c.label)
        if c.category and r.get(c.category):
            e["category"] = category_of(str(r[c.category]))
        if c.judge and r.get(c.judge):
            judges.add(str(r[c.judge]))
    rows = []
    for item, e in got.items():
        if 0 not in e["orders"]:
            raise InputError(
                f"item {item!r} has no original-order row", path=p, field=c.order or "order"
            )
        orders = tuple(e["orders"][k] for k in sorted(e["orders"]))
        rows.append(PairVerdicts(item, e["category"], e["label"], orders))
    if not rows:
        raise InputError("no verdicts", path=p)
    name = next(iter(judges)) if len(judges) == 1 else p.stem
    return JudgeVerdicts(name, str(p), tuple(rows), _count_notes(rows))


def read_verdicts(path: str | Path) -> JudgeVerdicts:
    """Any verdict file: JudgeBench outputs (a ``judgments`` field) or a verdict table."""
    p = Path(path)
    if p.suffix.lower() != ".csv":
        from metajudge.data.formats import iter_jsonl_objects

        for _, first in iter_jsonl_objects(p):
            if isinstance(first, Mapping) and "judgments" in first:
                return read_judgebench_outputs(p)
            break
    return read_verdict_table(p)


def dumps(v: JudgeVerdicts) -> str:
    return json.dumps(v.to_dict(), ensure_ascii=False)
