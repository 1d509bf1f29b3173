"""MuDABench aggregates (Li et al. 2026): final, process and full accuracy from judge verdicts.

The LLM judging (is the answer equivalent? which gold facts does the prediction cover?) is done
by the judge metrics; this module defines the verdicts they produce and the aggregation.

Per question i (MuDABench evaluation card, ``../shared/seeds/003_*.txt``):

- **final**: ``T_i ∈ {0, 1}`` — the prediction is semantically equivalent to the gold answer.
  ``Accuracy_final = mean_i T_i``.
- **process (RAG)**: with ``n_i`` gold atomic facts, ``C_i = covered / n_i`` (gold facts the
  prediction states correctly) and ``E_i = (missing + wrong) / n_i`` (gold facts absent from, or
  contradicted by, the prediction; the card's ``count_missing_or_wrong(pred_facts, gold_facts) /
  len(gold_facts)``), ``P_i = min(C_i, 1 − E_i)`` — the card's "conservative coverage".
  Our reading: each gold fact gets exactly one status, so without more information
  ``C_i + E_i = 1`` and ``P_i = C_i``. The ``min`` bites when the judge also reports wrong
  predicted facts that match no gold fact (a hallucinated figure): they are counted in
  ``extra_wrong`` and added to the numerator of E (capped at 1), so
  ``E_i = min(1, (missing + wrong + extra_wrong) / n_i)``.
- **process (cell-wise)**: for document-grounded workflows that output a table, predicted rows are
  aligned with gold rows and ``P_i = |Ĉ_i| / |C_i|``: the share of the gold cells (on the aligned
  rows) that the prediction reproduces exactly (card: ``len(intersect_exact(pred_cells,
  gold_cells)) / len(gold_cells)``). Our reading of "aligned rows" and "exact" is
  :func:`cell_counts`: rows are aligned on key columns (e.g. ticker, fiscal year), the gold
  cells are the non-key cells of every gold row (a gold row with no aligned predicted row counts
  all its cells as wrong), and two cells match when they are equal after trimming, case-folding
  and collapsing whitespace, or — when both are plain numbers (``1,234`` / ``1234.0``) — equal
  as numbers.
- **full**: ``Accuracy_full = mean_i 1[P_i = 1]·T_i`` (with the RAG P, and separately with the
  cell-wise P when cells are given).

All equalities (``P_i = 1``) are exact (rational arithmetic).

Unparsed verdicts stay in |Q|: a question whose final verdict (``unparsed`` holds ``"final"``)
or fact labels (``"facts"``) could not be parsed counts as not correct — T_i = 0, P_i = 0 — and
the aggregate shows how many there were beside the accuracies (``unparsed_final``,
``unparsed_process``), as the card's ``(1/|Q|) Σ`` prescribes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from metajudge.errors import InputError

FactStatus = Literal["covered", "missing", "wrong"]
_STATUSES = ("covered", "missing", "wrong")
_UNPARSED = ("final", "facts")


@dataclass(frozen=True)
class FactVerdict:
    """The judge's verdict on one gold atomic fact."""

    fact: str
    status: FactStatus


@dataclass(frozen=True)
class QuestionVerdict:
    """Everything the aggregates need about one question.

    ``final``: T ∈ {0, 1}. ``facts``: one verdict per gold fact (RAG process accuracy).
    ``extra_wrong``: wrong predicted facts that match no gold fact. ``cells_correct`` /
    ``cells_total``: |Ĉ| and |C| for the cell-wise process accuracy (see :func:`cell_counts`).
    """

    id: str
    final: int
    facts: tuple[FactVerdict, ...] = ()
    extra_wrong: int = 0
    cells_correct: int | None = None
    cells_total: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: verdicts the judge gave that could not be parsed: ``"final"`` (T counted 0), ``"facts"``
    #: (P counted 0); the question stays in |Q|
    unparsed: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "final": self.final,
            "facts": [{"fact": f.fact, "status": f.status} for f in self.facts],
            "extra_wrong": self.extra_wrong,
        }
        if self.unparsed:
            d["unparsed"] = list(self.unparsed)
        if self.cells_total is not None:
            d["cells_correct"], d["cells_total"] = self.cells_correct, self.cells_total
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> QuestionVerdict:
        facts = tuple(FactVerdict(str(f["fact"]), f["status"]) for f in d.get("facts", []))
        v = cls(
            id=str(d["id"]),
            final=d["final"],
            facts=facts,
            extra_wrong=d.get("extra_wrong", 0),
            cells_correct=d.get("cells_correct"),
            cells_total=d.get("cells_total"),
            meta=d.get("meta") or {},
            unparsed=tuple(d.get("unparsed") or ()),
        )
        validate_verdict(v)
        return v


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def validate_verdict(v: QuestionVerdict) -> None:
    """Raise :class:`InputError` naming the question and field when a verdict is malformed."""
    where = f"question {v.id!r}"
    if not (v.final in (0, 1) and (_int(v.final) or isinstance(v.final, bool))):
        raise InputError(f"{where}: final must be 0 or 1, got {v.final!r}", field="final")
    for j, f in enumerate(v.facts):
        if not isinstance(f, FactVerdict) or f.status not in _STATUSES:
            raise InputError(
                f"{where}: fact {j}: status must be one of {_STATUSES}", field=f"facts[{j}].status"
            )
    bad = [u for u in v.unparsed if u not in _UNPARSED]
    if bad:
        raise InputError(f"{where}: unparsed must name {_UNPARSED}, got {bad}", field="unparsed")
    if "final" in v.unparsed and v.final != 0:
        raise InputError(f"{where}: an unparsed final verdict counts 0", field="final")
    if not _int(v.extra_wrong) or v.extra_wrong < 0:
        raise InputError(f"{where}: extra_wrong must be a non-negative int", field="extra_wrong")
    if (v.cells_correct is None) != (v.cells_total is None):
        raise InputError(
            f"{where}: give both cells_correct and cells_total, or neither", field="cells_total"
        )
    if v.cells_total is not None:
        if not (_int(v.cells_total) and _int(v.cells_correct)) or v.cells_total < 1:
            raise InputError(f"{where}: cells_total must be a positive int", field="cells_total")
        assert v.cells_correct is not None
        if not 0 <= v.cells_correct <= v.cells_total:
            raise InputError(
                f"{where}: cells_correct must be in [0, cells_total]", field="cells_correct"
            )


def coverage_error(v: QuestionVerdict) -> tuple[Fraction, Fraction]:
    """(C_i, E_i) of one question (exact fractions)."""
    n = len(v.facts)
    if n == 0:
        raise InputError(
            f"question {v.id!r}: no gold facts, process accuracy undefined", field="facts"
        )
    covered = sum(f.status == "covered" for f in v.facts)
    bad = sum(f.status != "covered" for f in v.facts) + v.extra_wrong
    return Fraction(covered, n), min(Fraction(1), Fraction(bad, n))


def process_rag(v: QuestionVerdict) -> Fraction:
    """``P_i = min(C_i, 1 − E_i)`` (MuDABench, standard RAG); 0 when the labels were unparsed."""
    if "facts" in v.unparsed:
        return Fraction(0)
    c, e = coverage_error(v)
    return min(c, 1 - e)


def process_cellwise(v: QuestionVerdict) -> Fraction:
    """``P_i = |Ĉ_i| / |C_i|`` (MuDABench, document-grounded workflows)."""
    if v.cells_total is None or v.cells_correct is None:
        raise InputError(f"question {v.id!r}: no cell counts", field="cells_total")
    return Fraction(v.cells_correct, v.cells_total)


_WS = re.compile(r"\s+")


def _norm_cell(x: Any) -> Any:
    from metajudge.metrics.number_match import find_numbers

    if x is None:
        return ("text", "")
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return ("num", float(x))
    s = _WS.sub(" ", str(x).strip()).casefold()
    nums = find_numbers(s)
    if len(nums) == 1 and nums[0].start == 0 and nums[0].end == len(s):
        return ("num", nums[0].value)
    return ("text", s)


def cell_counts(
    gold_rows: Sequence[Mapping[str, Any]],
    pred_rows: Sequence[Mapping[str, Any]],
    *,
    key_columns: Sequence[str],
) -> tuple[int, int]:
    """(|Ĉ|, |C|): exactly reproduced gold cells on rows aligned by ``key_columns``, and all gold cells.

    >>> gold = [{"ticker": "AAA", "year": 2020, "revenue": "1,234"}, {"ticker": "BBB", "year": 2020, "revenue": "7"}]
    >>> pred = [{"ticker": "aaa", "year": "2020", "revenue": "1234"}, {"ticker": "BBB", "year": 2020, "revenue": "8"}]
    >>> cell_counts(gold, pred, key_columns=["ticker", "year"])
    (1, 2)
    """
    if not key_columns:
        raise InputError("key_columns must name at least one column", field="key_columns")

    def key(row: Mapping[str, Any], which: str, i: int) -> tuple[Any, ...]:
        missing = [c for c in key_columns if c not in row]
        if missing:
            raise InputError(
                f"{which} row {i} lacks key column(s) {missing}", field=f"{which}_rows[{i}]"
            )
        return tuple(_norm_cell(row[c]) for c in key_columns)

    preds: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    for i, r in enumerate(pred_rows):
        preds.setdefault(key(r, "pred", i), r)  # first aligned row wins
    seen: set[tuple[Any, ...]] = set()
    correct = total = 0
    for i, g in enumerate(gold_rows):
        k = key(g, "gold", i)
        if k in seen:
            raise InputError(f"gold row {i} repeats key {k}", field=f"gold_rows[{i}]")
        seen.add(k)
        p = preds.get(k)
        for col, val in g.items():
            if col in key_columns:
                continue
            total += 1
            if p is not None and col in p and _norm_cell(p[col]) == _norm_cell(val):
                correct += 1
    if total == 0:
        raise InputError("gold rows have no non-key cells", field="gold_rows")
    return correct, total


def question_scores(v: QuestionVerdict) -> dict[str, float | None]:
    """Per-question T, C, E, P (RAG) and P (cell-wise) as floats (None where not available)."""
    validate_verdict(v)
    out: dict[str, float | None] = {
        "final": float(v.final),
        "coverage": None,
        "error": None,
        "process": None,
        "process_cellwise": None,
    }
    if "facts" in v.unparsed:
        out["process"] = 0.0  # unparsed labels: not correct
    elif v.facts:
        c, e = coverage_error(v)
        out.update(coverage=float(c), error=float(e), process=float(min(c, 1 - e)))
    if v.cells_total is not None:
        out["process_cellwise"] = float(process_cellwise(v))
    return out


def aggregate(verdicts: Sequence[QuestionVerdict]) -> dict[str, Any]:
    """MuDABench's aggregates over questions.

    Returns ``final_accuracy``, ``process_accuracy`` (RAG, min(C, 1−E)),
    ``process_accuracy_cellwise``, ``full_accuracy`` (with the RAG P), ``full_accuracy_cellwise``,
    ``n`` (= |Q|, every question) and ``unparsed_final`` / ``unparsed_process`` /
    ``unparsed_any`` (questions whose verdict could not be parsed, counted as not correct). A process (and its full) accuracy is
    ``None`` when no question carries the data it needs; a mix of questions with and without it
    is an error (a mean over a subset would not be comparable).

    >>> v1 = QuestionVerdict("q1", 1, (FactVerdict("a", "covered"), FactVerdict("b", "covered")))
    >>> v2 = QuestionVerdict("q2", 1, (FactVerdict("a", "covered"), FactVerdict("b", "missing")))
    >>> v3 = QuestionVerdict("q3", 0, (FactVerdict("a", "covered"),), extra_wrong=1)
    >>> r = aggregate([v1, v2, v3])
    >>> round(r["final_accuracy"], 4), round(r["process_accuracy"], 4), round(r["full_accuracy"], 4), r["n"]
    (0.6667, 0.5, 0.3333, 3)
    """
    if isinstance(verdicts, QuestionVerdict) or not isinstance(verdicts, Sequence):
        raise InputError("aggregate expects a sequence of QuestionVerdict", field="verdicts")
    if not verdicts:
        raise InputError("no verdicts to aggregate", field="verdicts")
    ids: set[str] = set()
    for i, v in enumerate(verdicts):
        if not isinstance(v, QuestionVerdict):
            raise InputError(
                f"item {i} is a {type(v).__name__}, not a QuestionVerdict", field=f"verdicts[{i}]"
            )
        validate_verdict(v)
        if v.id in ids:
            raise InputError(f"duplicate question id {v.id!r}", field="id")
        ids.add(v.id)
    n = len(verdicts)
    final = Fraction(sum(int(v.final) for v in verdicts), n)

    def _all_or_none(has: list[bool], what: str) -> bool:
        if all(has):
            return True
        if any(has):
            first = next(v.id for v, h in zip(verdicts, has, strict=True) if not h)
            raise InputError(
                f"question {first!r} has no {what} while others have: cannot mix", field=what
            )
        return False

    out: dict[str, Any] = {"n": n, "final_accuracy": float(final)}
    out["unparsed_final"] = sum("final" in v.unparsed for v in verdicts)
    out["unparsed_process"] = sum("facts" in v.unparsed for v in verdicts)
    out["unparsed_any"] = sum(bool(v.unparsed) for v in verdicts)
    out["process_accuracy"] = out["full_accuracy"] = None
    out["process_accuracy_cellwise"] = out["full_accuracy_cellwise"] = None
    if _all_or_none([bool(v.facts) or "facts" in v.unparsed for v in verdicts], "facts"):
        ps = [process_rag(v) for v in verdicts]
        out["process_accuracy"] = float(sum(ps, Fraction(0)) / n)
        out["full_accuracy"] = float(
            Fraction(sum(int(p == 1) * int(v.final) for p, v in zip(ps, verdicts, strict=True)), n)
        )
    if _all_or_none([v.cells_total is not None for v in verdicts], "cells_total"):
        pc = [process_cellwise(v) for v in verdicts]
        out["process_accuracy_cellwise"] = float(sum(pc, Fraction(0)) / n)
        out["full_accuracy_cellwise"] = float(
            Fraction(sum(int(p == 1) * int(v.final) for p, v in zip(pc, verdicts, strict=True)), n)
        )
    return out
