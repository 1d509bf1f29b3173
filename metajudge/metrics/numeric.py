r"""Numbers in answers: one extractor and the named equivalence rules.

Number Match (:mod:`metajudge.metrics.number_match`, T2-RAGBench, Strich et al. 2025) and the
answer-equivalence fast path (:mod:`metajudge.metrics.judges.equivalence`, MuDABench, Li et al.
2026) both read numbers with :func:`number_spans` and compare them with
:func:`numbers_equivalent` under a named rule.

Extraction (all numbers in reading order):

- digits with an optional decimal part (``12``, ``12.5``, ``.5``), scientific notation (``2e5``);
- thousands separators ``1,234,567.89`` (groups of exactly 3 digits; ``1,2`` is two numbers);
- signs ``-`` / ``+`` / ``−`` (U+2212) / ``–``, also around a currency (``-$5``, ``$-5``); a
  hyphen glued to a preceding letter or digit is *not* a sign (``COVID-19`` → 19, ``2019-12`` →
  2019, 12), nor is a spaced one (``a - 5`` → 5);
- currency symbols and codes (``$ € £ ¥ ₹``, ``USD EUR GBP JPY CNY RMB``) are kept on the span
  (:attr:`NumberSpan.currency`), not in the value;
- percent (``%``, ``％``, ``percent``, ``per cent``) and per mille (``‰``) are kept on the span
  (:attr:`NumberSpan.pct`); :attr:`NumberSpan.value` is in base units (``12.5%`` → 0.125),
  :attr:`NumberSpan.written` as written (``12.5%`` → 12.5, what Number Match compares);
- accounting negatives: a number alone in parentheses is negative. ``paren="always"`` (Number
  Match's default) also reads ``(2019)`` as -2019; ``paren="amounts"`` only when the number has a
  currency, a decimal point or a thousands separator (``(4.0)``, ``($1,200)``); ``"never"``;
- scale words multiply: ``thousand``, ``million``, ``billion``, ``trillion`` (and plurals),
  ``bn``, ``mn``, ``tn``, and ``千 万 百万 千万 亿 万亿``; the one-letter suffixes ``k``/``m``/``b``
  only when glued to a currency amount (``$5M``), since ``5m`` alone may be metres or minutes;
  ``bare_k=True`` (Number Match) also reads a ``k``/``K`` glued to a bare number as a thousand
  (``5k`` → 5000; ``5km`` stays 5);
- a number glued to a preceding ASCII letter or digit is not extracted (``Q3``, ``FY2019``).

Rules (:data:`RULES`), tolerance relative to the **gold** value:

- ``strict``: ``|p − g| ≤ rel_tol·|g|`` (plus ``abs_tol``) — T2-RAGBench's Number Match;
- ``scale_invariant``: ``p·10^k`` matches for some integer k (``|k| ≤ max_power`` when given);
  unbounded, so '7' ≡ 700,000,000 and '3' ≡ 0.0003;
- ``unit_scales``: the bounded form — ``p·10^k`` for k = 0 or ±k in :data:`UNIT_SCALE_POWERS`
  (percent ×100, thousand, million, billion): '$3.2 million' ≡ 3.2, '12.5%' ≡ 0.125, but
  '7' ≢ 700,000,000 and '3' ≢ 0.0003;
- ``first_decimal``: the integer digits and the first decimal agree after **truncation** toward
  zero, digit-wise — MuDABench's judge prompt (upstream ``prompts/eval_prompts.py``: "for numeric
  values, integer digits + first decimal place are enough"): 12.38 ≡ 12.34, 7.96 ≡ 7.9,
  14.39 ≢ 14.4.

The fast path (:func:`fast_path`) decides without an LLM only when both sides parse
unambiguously under the rule: same wording around the numbers, the same count of numbers, and
every pair of numbers written with the same currency, percent sign and scale. Anything else (a
unit or a percent sign on one side only, numbers in words, different wording) returns ``None``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal, InvalidOperation
from typing import Literal

from metajudge.errors import InputError

Rule = Literal["strict", "scale_invariant", "unit_scales", "first_decimal"]
RULES: tuple[str, ...] = ("strict", "scale_invariant", "unit_scales", "first_decimal")
#: Powers of ten ``unit_scales`` accepts between prediction and gold: percent (×100) and the
#: thousand / million / billion of financial reports — T2-RAGBench's "scale invariance" bounded.
UNIT_SCALE_POWERS: tuple[int, ...] = (2, 3, 6, 9)
Paren = Literal["always", "amounts", "never"]

#: "3": ``bare_k`` (a bare ``5k`` is 5,000 when asked; Number Match asks)
EXTRACTOR_VERSION = "3"

_W = "A-Za-z0-9_"
_CORE = re.compile(
    rf"(?<![{_W}.])(?:(?P<int>\d{{1,3}}(?:,\d{{3}})+(?!\d)|\d+)(?P<frac>\.\d+)?|(?P<bare>\.\d+))"
    rf"(?:[eE](?P<exp>[-+]?\d+)(?![{_W}]))?"
)
_CURRENCY = re.compile(r"(?:US\$|\$|€|£|¥|₹|(?<![A-Za-z])(?:USD|EUR|GBP|JPY|CNY|RMB))\s*$")
_SIGN = re.compile(rf"(?<![{_W}.+\-−–])(?P<s>[-+−–])$")
_PCT = re.compile(r"^\s*(?P<p>%|％|‰|percent\b|per\s+cent\b)", re.IGNORECASE)
_SCALE_WORD = re.compile(
    r"^\s*(?P<w>thousands?|millions?|billions?|trillions?|bn|mn|tn)\b|^(?P<c>万亿|百万|千万|万|亿|千)",
    re.IGNORECASE,
)
_SCALE_LETTER = re.compile(r"^(?P<w>[kKmMbB])\b")
_SCALES: dict[str, Decimal] = {
    "thousand": Decimal(10) ** 3,
    "million": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9,
    "trillion": Decimal(10) ** 12,
    "bn": Decimal(10) ** 9,
    "mn": Decimal(10) ** 6,
    "tn": Decimal(10) ** 12,
    "k": Decimal(10) ** 3,
    "m": Decimal(10) ** 6,
    "b": Decimal(10) ** 9,
    "千": Decimal(10) ** 3,
    "万": Decimal(10) ** 4,
    "百万": Decimal(10) ** 6,
    "千万": Decimal(10) ** 7,
    "亿": Decimal(10) ** 8,
    "万亿": Decimal(10) ** 12,
}
_PCT_UNIT = {"": Decimal(1), "%": Decimal("0.01"), "‰": Decimal("0.001")}


@dataclass(frozen=True)
class NumberSpan:
    """One number found in a text, with what fixes its value (see the module docstring)."""

    start: int
    end: int
    text: str
    written: Decimal  # signed, times the scale word, percent not applied (12.5% → 12.5)
    scale: Decimal = Decimal(1)  # the scale word's multiplier (million → 10**6)
    pct: str = ""  # "%" (also ％, percent), "‰" or ""
    currency: str = ""  # the currency mark as written ("$", "USD", …) or ""
    decimals: int = 0  # digits written after the decimal point

    @property
    def unit(self) -> Decimal:
        """Display multiplier: percent 0.01, million 10**6, plain 1."""
        return self.scale * _PCT_UNIT[self.pct]

    @property
    def value(self) -> Decimal:
        """The value in base units (12.5% → 0.125, 1.2 million → 1200000)."""
        return self.written * _PCT_UNIT[self.pct]

    @property
    def display(self) -> Decimal:
        """The number as written, without its scale (``$1.2 million`` → 1.2)."""
        return self.written / self.scale

    @property
    def decoration(self) -> tuple[str, str, Decimal]:
        """What besides digits and sign fixes the value: (currency, percent, scale)."""
        return (self.currency, self.pct, self.scale)


def _number(m: re.Match[str]) -> tuple[Decimal, int] | None:
    raw = "0" + m.group("bare") if m.group("bare") else m.group("int").replace(",", "")
    raw += m.group("frac") or ""
    try:
        val = Decimal(raw)
    except InvalidOperation:  # pragma: no cover - the regex only admits digits
        return None
    if m.group("exp"):
        val = val.scaleb(int(m.group("exp")))
    return val, len(raw.split(".")[1]) if "." in raw else 0


def _left(text: str, s: int) -> tuple[int, bool, str, bool]:
    """Read ``[sign] [currency] [sign]`` right to left before position ``s``."""
    left, start, neg, currency = text[:s], s, False, ""
    lm = _SIGN.search(left)
    if lm:
        neg, start, left = lm.group("s") in "-−–", lm.start("s"), left[: lm.start("s")]
    cm = _CURRENCY.search(left)
    if cm:
        currency, start, left = cm.group().strip(), cm.start(), left[: cm.start()]
        if not lm:
            lm = _SIGN.search(left)
            if lm:
                neg, start = lm.group("s") in "-−–", lm.start("s")
    return start, neg, currency, bool(lm)


def _right(text: str, e: int, currency: str, bare_k: bool = False) -> tuple[int, str, Decimal]:
    """Read ``[percent] [scale]`` after position ``e``."""
    end, pct, scale = e, "", Decimal(1)
    pm = _PCT.match(text[end:])
    if pm:
        pct = "‰" if pm.group("p") == "‰" else "%"
        end += pm.end()
    sm = _SCALE_WORD.match(text[end:])
    if sm:
        key = (sm.group("w") or sm.group("c")).lower()
        scale = _SCALES[key.removesuffix("s")]  # thousands → thousand
        end += sm.end()
    elif not pct:
        lm = _SCALE_LETTER.match(text[end:])
        if lm and (currency or (bare_k and lm.group("w") in "kK")):
            scale = _SCALES[lm.group("w").lower()]
            end += lm.end()
    return end, pct, scale


def number_spans(text: str, *, paren: Paren = "always", bare_k: bool = False) -> list[NumberSpan]:
    """Every number span in ``text``, left to right (rules in the module docstring).

    >>> [str(s.value) for s in number_spans("5k runners, 5km")], [str(s.value) for s in number_spans("5k", bare_k=True)]
    (['5', '5'], ['5000'])

    >>> [(s.text, str(s.value)) for s in number_spans("Growth was 12.5%, revenue $1,234 million (2021).")]
    [('12.5%', '0.125'), ('$1,234 million', '1234000000'), ('(2021)', '-2021')]
    >>> [str(s.value) for s in number_spans("净利润为-3.2亿元，(4.0)", paren="amounts")]
    ['-320000000.0', '-4.0']
    """
    if not isinstance(text, str):
        raise InputError(f"expected a string, got {type(text).__name__}", field="text")
    if paren not in ("always", "amounts", "never"):
        raise InputError(f"unknown paren {paren!r} (always, amounts, never)", field="paren")
    out: list[NumberSpan] = []
    for m in _CORE.finditer(text):
        got = _number(m)
        if got is None:  # pragma: no cover
            continue
        val, decimals = got
        start, neg, currency, signed = _left(text, m.start())
        end, pct, scale = _right(text, m.end(), currency, bare_k)
        amount = bool(currency) or decimals > 0 or "," in (m.group("int") or "")
        before, after = text[:start].rstrip(), text[end:]
        if (
            not signed
            and (paren == "always" or (paren == "amounts" and amount))
            and before.endswith("(")
            and after.lstrip().startswith(")")
        ):
            neg = True
            start = len(before) - 1
            end += len(after) - len(after.lstrip()) + 1
        written = val * scale
        out.append(
            NumberSpan(
                start,
                end,
                text[start:end],
                -written if neg else written,
                scale,
                pct,
                currency,
                decimals,
            )
        )
    return out


def _trunc1(x: float | Decimal) -> Decimal:
    d = x if isinstance(x, Decimal) else Decimal(repr(float(x)))
    return d.quantize(Decimal("0.1"), rounding=ROUND_DOWN)


def numbers_equivalent(
    pred: float | Decimal,
    gold: float | Decimal,
    *,
    mode: Rule = "strict",
    rel_tol: float = 1e-2,
    abs_tol: float = 0.0,
    ignore_sign: bool = False,
    max_power: int | None = None,
) -> bool:
    """Whether ``pred`` matches ``gold`` under the rule ``mode`` (see the module docstring).

    >>> numbers_equivalent(100.9, 100), numbers_equivalent(101.1, 100)
    (True, False)
    >>> numbers_equivalent(0.125, 12.5), numbers_equivalent(0.125, 12.5, mode="scale_invariant")
    (False, True)
    >>> [numbers_equivalent(p, g, mode="unit_scales") for p, g in ((7, 7e8), (3, 3e-4), (3.2e6, 3.2))]
    [False, False, True]
    >>> numbers_equivalent(-5, 5), numbers_equivalent(-5, 5, ignore_sign=True)
    (False, True)
    >>> [numbers_equivalent(p, g, mode="first_decimal") for p, g in ((12.38, 12.34), (7.96, 7.9), (14.39, 14.4))]
    [True, True, False]
    """
    for name, v in (("pred", pred), ("gold", gold)):
        if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
            raise InputError(
                f"numbers_equivalent: {name} must be a number, got {type(v).__name__}", field=name
            )
    if mode not in RULES:
        raise InputError(f"unknown mode {mode!r} ({', '.join(RULES)})", field="mode")
    if not (math.isfinite(pred) and math.isfinite(gold)):
        return False
    if ignore_sign:
        pred, gold = abs(pred), abs(gold)
    if mode == "first_decimal":
        return _trunc1(pred) == _trunc1(gold)
    p, g = float(pred), float(gold)
    tol = max(rel_tol * abs(g), abs_tol) + 1e-12 * abs(g)
    if abs(p - g) <= tol:
        return True
    if mode == "unit_scales" and p != 0.0 and g != 0.0 and (p > 0) == (g > 0):
        return any(abs(p * 10.0**k - g) <= tol for e in UNIT_SCALE_POWERS for k in (e, -e))
    if mode == "scale_invariant" and p != 0.0 and g != 0.0 and (p > 0) == (g > 0):
        k0 = round(math.log10(abs(g) / abs(p)))
        for k in (k0 - 1, k0, k0 + 1):
            if k == 0 or (max_power is not None and abs(k) > max_power):
                continue
            if abs(p * 10.0**k - g) <= tol:
                return True
    return False


def spans_equivalent(gold: NumberSpan, pred: NumberSpan, *, rule: Rule = "first_decimal") -> bool:
    """Two spans compared by value, both expressed in the gold's display unit, under ``rule``.

    This is the label rule of the equivalence probes (percent ↔ fraction and scale words count
    as the same value); the fast path only applies it when both spans are written alike.

    >>> g = number_spans("18.02%")[0]
    >>> [spans_equivalent(g, number_spans(p)[0]) for p in ("0.1802", "18.0%", "18.92%", "-18.02%", "14.4%")]
    [True, True, False, False, False]
    """
    return numbers_equivalent(pred.value / gold.unit, gold.value / gold.unit, mode=rule)


def template(text: str, spans: list[NumberSpan] | None = None) -> str:
    """``text`` with every number span replaced by ``<N>``, whitespace and case normalised.

    >>> template("Growth was 12.5%.") == template("growth was  0.125.")
    True
    """
    spans = number_spans(text, paren="amounts") if spans is None else spans
    parts, pos = [], 0
    for s in spans:
        parts += [text[pos : s.start], " <N> "]
        pos = s.end
    parts.append(text[pos:])
    return " ".join("".join(parts).lower().split())


def fast_path(
    prediction: str, gold: str, *, rule: Rule = "first_decimal"
) -> tuple[int, str] | None:
    """Decide a clear numeric case without an LLM, or ``None`` (ask the judge).

    Clear: identical texts (after whitespace/case normalisation) → 1; else the same wording
    around the numbers, the same count of numbers (at least one), and each pair written with the
    same currency, percent sign and scale — then all pairs equal under ``rule`` → 1, any differs
    → 0. A unit or percent sign on one side only, numbers in words or other wording → ``None``.

    >>> fast_path("The rate was 12.38%.", "The rate was 12.34%.")
    (1, 'numeric fast path (first_decimal): 1 number(s) match')
    >>> fast_path("The rate was 14.39%.", "The rate was 14.4%.")[0]
    0
    >>> fast_path("The rate was 0.125.", "The rate was 12.5%.") is None
    True
    """
    if " ".join(prediction.lower().split()) == " ".join(gold.lower().split()):
        return 1, "identical text"
    ps, gs = number_spans(prediction, paren="amounts"), number_spans(gold, paren="amounts")
    if not gs or len(ps) != len(gs) or template(prediction, ps) != template(gold, gs):
        return None
    if any(p.decoration != g.decoration for p, g in zip(ps, gs, strict=True)):
        return None
    bad = [
        (g.text, p.text)
        for g, p in zip(gs, ps, strict=True)
        if not numbers_equivalent(p.written / p.scale, g.written / g.scale, mode=rule)
    ]
    if bad:
        why = "; ".join(f"{p!r} vs gold {g!r}" for g, p in bad[:3])
        return 0, f"numeric fast path ({rule}): {why}"
    return 1, f"numeric fast path ({rule}): {len(gs)} number(s) match"
