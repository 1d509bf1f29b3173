r"""Number Match (T2-RAGBench, Strich et al. 2025) and the number extraction it needs.

T2-RAGBench's Number Match (NM) compares a predicted number with the gold number under relative
tolerance ε = 1e-2: correct iff ``|pred − gold| ≤ ε·|gold|``; non-numeric predictions are wrong.
Its reference recipe calls ``float(pred)`` on the whole answer; answers in free text need the
number extracted first, which is what :func:`extract_numbers` does.

Extraction and the comparison rules live in :mod:`metajudge.metrics.numeric` (one extractor,
named rules, shared with the answer-equivalence fast path). Number Match reads a number as
written: ``%`` does **not** divide by 100 (``12.5%`` → 12.5; ``scale_invariant`` accepts 0.125),
currency marks are dropped, and by default a number alone in parentheses is negative
(``paren_negative=False`` turns this off).

Which number counts when an answer has several (``select``): ``"last"`` (default — the final
answer usually ends the text: "From 2019 to 2020 revenue grew by 12.5%" → 12.5), ``"first"``,
``"any"`` (correct if any extracted number matches; lenient) or ``"only"`` (correct only when the
answer has exactly one number).

Comparison (:func:`~metajudge.metrics.numeric.numbers_equivalent`), tolerance relative to the
**gold** value as in the recipe: ``mode`` is a rule of :data:`metajudge.metrics.numeric.RULES`
(``strict``, ``scale_invariant``, ``first_decimal`` — MuDABench's digit-wise rule);
``ignore_sign=True`` compares absolute values (the T2-RAGBench reference code ignores the sign).

Zero gold: the recipe divides by ``|gold|`` and counts the ZeroDivisionError as incorrect, so a
gold 0 can never be matched there. Here a gold 0 matches a prediction within ``abs_tol`` of 0
(default 0.0: exactly 0). Documented deviation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from metajudge.errors import InputError
from metajudge.metrics._common import PairMetric
from metajudge.metrics.base import MetricResult
from metajudge.metrics.numeric import (
    EXTRACTOR_VERSION,
    RULES,
    Rule,
    number_spans,
    numbers_equivalent,
)

Mode = Rule
Select = Literal["last", "first", "any", "only"]

__all__ = [
    "EXTRACTOR_VERSION",
    "ExtractedNumber",
    "NumberMatch",
    "extract_numbers",
    "find_numbers",
    "gold_number",
    "number_match",
    "number_match_accuracy",
    "numbers_equivalent",
    "pred_numbers",
    "select_numbers",
]


@dataclass(frozen=True)
class ExtractedNumber:
    """One number found in a text as Number Match reads it: the value as written (percent not
    divided), its span and flags — a float view of :class:`metajudge.metrics.numeric.NumberSpan`."""

    value: float
    start: int
    end: int
    text: str
    percent: bool = False
    scale: float = 1.0
    currency: bool = False


def find_numbers(text: str, *, paren_negative: bool = True) -> list[ExtractedNumber]:
    """Every number in ``text`` with its span and flags (:func:`metajudge.metrics.numeric.number_spans`).

    >>> [n.value for n in find_numbers("Revenue fell to ($1,234.5 million), or -3.2% YoY")]
    [-1234500000.0, -3.2]
    """
    return [
        ExtractedNumber(
            float(s.written), s.start, s.end, s.text, bool(s.pct), float(s.scale), bool(s.currency)
        )
        for s in number_spans(text, paren="always" if paren_negative else "never")
    ]


def extract_numbers(text: str, *, paren_negative: bool = True) -> list[float]:
    """All numbers in ``text``, in reading order, as floats (T2-RAGBench-style extraction).

    >>> extract_numbers("The margin was 12.5% on $1,234,567 (up from (3.2))")
    [12.5, 1234567.0, -3.2]
    >>> extract_numbers("about 2.1 billion, i.e. USD -5bn or $3M")
    [2100000000.0, -5000000000.0, 3000000.0]
    >>> extract_numbers("no numbers here"), extract_numbers("")
    ([], [])
    """
    return [n.value for n in find_numbers(text, paren_negative=paren_negative)]


def gold_number(gold: str | float, *, paren_negative: bool = True) -> float:
    """The gold value: a number, or a string holding exactly one number (else :class:`InputError`)."""
    if isinstance(gold, bool):
        raise InputError("gold must be a number or a string, got bool", field="gold")
    if isinstance(gold, (int, float)):
        g = float(gold)
    elif isinstance(gold, str):
        nums = extract_numbers(gold, paren_negative=paren_negative)
        if len(nums) != 1:
            raise InputError(
                f"gold {gold!r} holds {len(nums)} numbers; a Number Match gold must hold exactly one",
                field="gold",
            )
        g = nums[0]
    else:
        raise InputError(
            f"gold must be a number or a string, got {type(gold).__name__}", field="gold"
        )
    if not math.isfinite(g):
        raise InputError(f"gold {gold!r} is not finite", field="gold")
    return g


def pred_numbers(pred: str | float | None, *, paren_negative: bool = True) -> list[float]:
    """The numbers of a prediction: extracted from a string, or the number itself; None → []."""
    if pred is None:
        return []
    if isinstance(pred, bool):
        raise InputError("pred must be a string or a number, got bool", field="pred")
    if isinstance(pred, (int, float)):
        return [float(pred)] if math.isfinite(float(pred)) else []
    if isinstance(pred, str):
        return extract_numbers(pred, paren_negative=paren_negative)
    raise InputError(f"pred must be a string or a number, got {type(pred).__name__}", field="pred")


def select_numbers(nums: list[float], select: Select) -> list[float]:
    """The candidate numbers that count under ``select`` (see the module docstring)."""
    if select == "last":
        return nums[-1:]
    if select == "first":
        return nums[:1]
    if select == "any":
        return nums
    if select == "only":
        return nums if len(nums) == 1 else []
    raise InputError(f"unknown select {select!r} (last, first, any, only)", field="select")


def number_match(
    pred: str | float | None,
    gold: str | float,
    *,
    mode: Mode = "strict",
    rel_tol: float = 1e-2,
    ignore_sign: bool = False,
    abs_tol: float = 0.0,
    select: Select = "last",
    max_power: int | None = None,
    paren_negative: bool = True,
) -> bool:
    """T2-RAGBench Number Match of one prediction: True iff the selected number matches gold.

    Non-numeric, empty or ``None`` predictions give False (never an exception); a gold that is
    not exactly one number raises :class:`InputError`.

    >>> number_match("The answer is $1,234.", 1234), number_match("about 12.6", "12.5")
    (True, True)
    >>> number_match("12.5%", 0.125), number_match("12.5%", 0.125, mode="scale_invariant")
    (False, True)
    >>> number_match("no idea", 3.0), number_match("", 3.0)
    (False, False)
    """
    g = gold_number(gold, paren_negative=paren_negative)
    cands = select_numbers(pred_numbers(pred, paren_negative=paren_negative), select)
    return any(
        numbers_equivalent(
            p,
            g,
            mode=mode,
            rel_tol=rel_tol,
            abs_tol=abs_tol,
            ignore_sign=ignore_sign,
            max_power=max_power,
        )
        for p in cands
    )


def number_match_accuracy(
    preds: Sequence[str | int | float | None], golds: Sequence[str | int | float], **options: Any
) -> float:
    """NM over a set: the share of predictions that match (T2-RAGBench reports it ×100)."""
    if len(preds) != len(golds):
        raise InputError(f"{len(preds)} predictions but {len(golds)} golds", field="golds")
    if not golds:
        raise InputError("no predictions to score", field="preds")
    return sum(number_match(p, g, **options) for p, g in zip(preds, golds, strict=True)) / len(
        golds
    )


class NumberMatch(PairMetric):
    """Number Match as a registry metric: response = prediction, reference = gold; 1.0 or 0.0."""

    name = "number_match"
    direction = "higher"
    range = (0.0, 1.0)

    def __init__(
        self,
        *,
        mode: Mode = "strict",
        rel_tol: float = 1e-2,
        ignore_sign: bool = False,
        abs_tol: float = 0.0,
        select: Select = "last",
        max_power: int | None = None,
        paren_negative: bool = True,
    ) -> None:
        if mode not in RULES:
            raise InputError(f"number_match: unknown mode {mode!r}", field="mode")
        if select not in ("last", "first", "any", "only"):
            raise InputError(f"number_match: unknown select {select!r}", field="select")
        if not (
            isinstance(rel_tol, (int, float))
            and rel_tol >= 0
            and isinstance(abs_tol, (int, float))
            and abs_tol >= 0
        ):
            raise InputError(
                "number_match: rel_tol and abs_tol must be non-negative numbers", field="rel_tol"
            )
        self.opts: dict[str, Any] = {
            "mode": mode,
            "rel_tol": float(rel_tol),
            "ignore_sign": bool(ignore_sign),
            "abs_tol": float(abs_tol),
            "select": select,
            "max_power": max_power,
            "paren_negative": bool(paren_negative),
        }

    @property
    def signature(self) -> str:
        o = self.opts
        return (
            f"number_match|mode:{o['mode']}|rel_tol:{o['rel_tol']:g}|abs_tol:{o['abs_tol']:g}|"
            f"sign:{'ignore' if o['ignore_sign'] else 'keep'}|select:{o['select']}|"
            f"max_power:{'any' if o['max_power'] is None else o['max_power']}|"
            f"paren_neg:{'yes' if o['paren_negative'] else 'no'}|extract:{EXTRACTOR_VERSION}"
        )

    def _score_pair(self, key: str, response: str, reference: str, state: object) -> MetricResult:
        try:
            g = gold_number(reference, paren_negative=self.opts["paren_negative"])
        except InputError as e:
            return MetricResult(key, None, error=f"reference: {e.message}")
        nums = extract_numbers(response, paren_negative=self.opts["paren_negative"])
        cands = select_numbers(nums, self.opts["select"])
        ok = any(
            numbers_equivalent(
                p, g, mode=self.opts["mode"], rel_tol=self.opts["rel_tol"], abs_tol=self.opts["abs_tol"],
                ignore_sign=self.opts["ignore_sign"], max_power=self.opts["max_power"],
            )
            for p in cands
        )  # fmt: skip
        return MetricResult(
            key, 1.0 if ok else 0.0, {"gold": g, "numbers": nums, "candidates": cands}
        )
