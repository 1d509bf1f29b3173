r"""Number Match (T2-RAGBench, Strich et al. 2025) and the number extraction it needs.

T2-RAGBench's Number Match (NM) compares a predicted number with the gold number under relative
tolerance ε = 1e-2: correct iff ``|pred − gold| ≤ ε·|gold|``; non-numeric predictions are wrong.
Its reference recipe calls ``float(pred)`` on the whole answer; answers in free text need the
number extracted first, which is what :func:`extract_numbers` does.

Extraction (:func:`extract_numbers`, all numbers in reading order):

- digits with an optional decimal part (``12``, ``12.5``, ``.5``), scientific notation (``2e5``);
- thousands separators ``1,234,567.89`` (groups of exactly 3 digits; ``1,2`` is two numbers);
- signs ``-`` / ``+`` / ``−`` (U+2212), also around a currency (``-$5``, ``$-5``); a hyphen
  glued to a preceding letter or digit is *not* a sign (``COVID-19`` → 19, ``2019-12`` → 2019, 12);
- currency symbols and codes are dropped (``$ € £ ¥ ₹``, ``USD EUR GBP JPY CNY RMB``);
- ``%``, ``percent`` and ``per cent`` are dropped and **do not divide by 100** (``12.5%`` → 12.5;
  ``scale_invariant`` mode accepts 0.125 for it);
- accounting negatives: a number alone in parentheses is negative (``(1,234)`` → -1234,
  ``($5.2 million)`` → -5.2e6) — which also reads ``(2019)`` as -2019 (``paren_negative=False``
  turns this off);
- scale words multiply: ``thousand``, ``million``, ``billion``, ``trillion`` (and plurals), ``bn``,
  ``mn``, ``tn``; the one-letter suffixes ``k``/``m``/``b`` only when glued to a currency amount
  (``$5M``, ``€1.2bn``), since ``5m`` alone may be metres or minutes;
- a number glued to a preceding letter is not extracted (``Q3``, ``FY2019``); numbers separated
  by spaces are separate (``1 234`` → 1, 234); fractions ``1/2`` give 1 and 2.

Which number counts when an answer has several (``select``): ``"last"`` (default — the final
answer usually ends the text: "From 2019 to 2020 revenue grew by 12.5%" → 12.5), ``"first"``,
``"any"`` (correct if any extracted number matches; lenient) or ``"only"`` (correct only when the
answer has exactly one number).

Comparison (:func:`numbers_equivalent`), tolerance relative to the **gold** value as in the recipe:

- ``strict``: ``|p − g| ≤ rel_tol·|g|`` (plus ``abs_tol``; a 1e-12·|g| slack absorbs float
  representation error at the boundary);
- ``scale_invariant``: ``p·10^k`` matches for some integer k (``|k| ≤ max_power`` when given) —
  the paper's "scale invariance" (percent vs fraction, units vs thousands/millions);
- ``first_decimal``: integer digits and first decimal agree after truncation toward zero
  (MuDABench's rule for numeric answers; 12.34 ≡ 12.38, 12.34 ≢ 12.29);
- ``ignore_sign=True`` compares absolute values (the T2-RAGBench reference code ignores the
  sign); the default keeps the sign.

Zero gold: the recipe divides by ``|gold|`` and counts the ZeroDivisionError as incorrect, so a
gold 0 can never be matched there. Here a gold 0 matches a prediction within ``abs_tol`` of 0
(default 0.0: exactly 0). Documented deviation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from typing import Any, Literal

from metajudge.errors import InputError
from metajudge.metrics._common import PairMetric
from metajudge.metrics.base import MetricResult

Mode = Literal["strict", "scale_invariant", "first_decimal"]
Select = Literal["last", "first", "any", "only"]

EXTRACTOR_VERSION = "1"

_CORE = re.compile(
    r"(?<![\w.])(?:(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?P<frac>\.\d+)?|(?P<bare>\.\d+))"
    r"(?:[eE](?P<exp>[-+]?\d+)(?![\w]))?"
)
_CURRENCY = re.compile(r"(?:US\$|\$|€|£|¥|₹|\b(?:USD|EUR|GBP|JPY|CNY|RMB)\b)\s*$")
_SIGN = re.compile(r"(?<![\w.+\-−])(?P<s>[-+−])$")
_PCT = re.compile(r"^\s*(?:%|percent\b|per\s+cent\b)", re.IGNORECASE)
_SCALE_WORD = re.compile(
    r"^\s*(?P<w>thousands?|millions?|billions?|trillions?|bn|mn|tn)\b", re.IGNORECASE
)
_SCALE_LETTER = re.compile(r"^(?P<w>[kKmMbB])\b")
_SCALES = {
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "bn": 1e9,
    "mn": 1e6,
    "tn": 1e12,
    "k": 1e3,
    "m": 1e6,
    "b": 1e9,
}


@dataclass(frozen=True)
class ExtractedNumber:
    """One number found in a text: its value and the span it covers."""

    value: float
    start: int
    end: int
    text: str
    percent: bool = False
    scale: float = 1.0
    currency: bool = False


def find_numbers(text: str, *, paren_negative: bool = True) -> list[ExtractedNumber]:
    """Every number in ``text`` with its span and flags (see the module docstring for the rules).

    >>> [n.value for n in find_numbers("Revenue fell to ($1,234.5 million), or -3.2% YoY")]
    [-1234500000.0, -3.2]
    """
    if not isinstance(text, str):
        raise InputError(f"expected a string, got {type(text).__name__}", field="text")
    out: list[ExtractedNumber] = []
    for m in _CORE.finditer(text):
        s, e = m.start(), m.end()
        if m.group("bare"):
            digits = "0" + m.group("bare")
        else:
            digits = m.group("int").replace(",", "") + (m.group("frac") or "")
        value = float(digits)
        if m.group("exp"):
            value *= 10.0 ** int(m.group("exp"))
        left = text[:s]
        start = s
        neg = False
        currency = False
        # left context, read right to left: [open paren] [sign] [currency] [sign] number
        lm = _SIGN.search(left)
        if lm:
            neg = lm.group("s") in "-−"
            start = lm.start("s")
            left = left[:start]
        cm = _CURRENCY.search(left)
        if cm:
            currency = True
            start = cm.start()
            left = left[:start]
            if not lm:
                lm = _SIGN.search(left)
                if lm:
                    neg = lm.group("s") in "-−"
                    start = lm.start("s")
                    left = left[:start]
        right = text[e:]
        end = e
        percent = False
        pm = _PCT.match(right)
        if pm:
            percent = True
            end += pm.end()
            right = right[pm.end() :]
        scale = 1.0
        sm = _SCALE_WORD.match(right)
        if sm:
            w = (
                sm.group("w").lower().rstrip("s")
                if sm.group("w").lower() not in ("bn", "mn", "tn")
                else sm.group("w").lower()
            )
            scale = _SCALES[w]
            end += sm.end()
            right = right[sm.end() :]
        elif currency and not percent:
            lm_ = _SCALE_LETTER.match(right)
            if lm_:
                scale = _SCALES[lm_.group("w").lower()]
                end += lm_.end()
                right = right[lm_.end() :]
        value *= scale
        if (
            paren_negative
            and not lm
            and left.rstrip().endswith("(")
            and right.lstrip().startswith(")")
        ):
            neg = True
            start = len(left.rstrip()) - 1
            end += len(right) - len(right.lstrip()) + 1
        if neg:
            value = -value
        out.append(ExtractedNumber(value, start, end, text[start:end], percent, scale, currency))
    return out


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


def _trunc1(x: float) -> Decimal:
    return Decimal(repr(x)).quantize(Decimal("0.1"), rounding=ROUND_DOWN)


def numbers_equivalent(
    pred: float,
    gold: float,
    *,
    mode: Mode = "strict",
    rel_tol: float = 1e-2,
    abs_tol: float = 0.0,
    ignore_sign: bool = False,
    max_power: int | None = None,
) -> bool:
    """Whether ``pred`` matches ``gold`` (tolerance relative to ``|gold|``; see the module docstring).

    >>> numbers_equivalent(100.9, 100), numbers_equivalent(101.1, 100)
    (True, False)
    >>> numbers_equivalent(0.125, 12.5), numbers_equivalent(0.125, 12.5, mode="scale_invariant")
    (False, True)
    >>> numbers_equivalent(-5, 5), numbers_equivalent(-5, 5, ignore_sign=True)
    (False, True)
    >>> numbers_equivalent(12.38, 12.34, mode="first_decimal")
    True
    """
    for name, v in (("pred", pred), ("gold", gold)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InputError(
                f"numbers_equivalent: {name} must be a number, got {type(v).__name__}", field=name
            )
    p, g = float(pred), float(gold)
    if not (math.isfinite(p) and math.isfinite(g)):
        return False
    if ignore_sign:
        p, g = abs(p), abs(g)
    if mode == "first_decimal":
        return _trunc1(p) == _trunc1(g)
    if mode not in ("strict", "scale_invariant"):
        raise InputError(
            f"unknown mode {mode!r} (strict, scale_invariant, first_decimal)", field="mode"
        )
    tol = max(rel_tol * abs(g), abs_tol) + 1e-12 * abs(g)
    if abs(p - g) <= tol:
        return True
    if mode == "scale_invariant" and p != 0.0 and g != 0.0 and (p > 0) == (g > 0):
        k0 = round(math.log10(abs(g) / abs(p)))
        for k in (k0 - 1, k0, k0 + 1):
            if k == 0 or (max_power is not None and abs(k) > max_power):
                continue
            if abs(p * 10.0**k - g) <= tol:
                return True
    return False


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
        if mode not in ("strict", "scale_invariant", "first_decimal"):
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
