"""Numbers in answers, for the answer-equivalence fast path and the probe generator.

A *number span* is a number together with what fixes its value: a sign (or accounting
parentheses), a currency mark, thousands separators, a percent/per-mille sign and a scale word
(thousand, million, billion, trillion, 万, 亿, …). ``12.5%`` and ``0.125`` have the same value;
``1,234 million`` and ``1.234 billion`` too.

Equality rule (MuDABench: numeric answers match on the integer digits and the first decimal;
the Number Match logic of T2-RAGBench compares values, not strings): both values are expressed
in the gold's display unit (its percent/scale multiplier) and rounded half-up to one decimal;
equal roundings are a match. So ``18.02%`` matches ``0.1802`` and ``18.0%``, and ``14.39%``
matches ``14.4%``; ``18.92%`` (+5%) and ``-18.02%`` do not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

_SCALES: dict[str, Decimal] = {
    "thousand": Decimal(10) ** 3,
    "k": Decimal(10) ** 3,
    "million": Decimal(10) ** 6,
    "mn": Decimal(10) ** 6,
    "m": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9,
    "bn": Decimal(10) ** 9,
    "b": Decimal(10) ** 9,
    "trillion": Decimal(10) ** 12,
    "tn": Decimal(10) ** 12,
    "千": Decimal(10) ** 3,
    "万": Decimal(10) ** 4,
    "百万": Decimal(10) ** 6,
    "千万": Decimal(10) ** 7,
    "亿": Decimal(10) ** 8,
    "万亿": Decimal(10) ** 12,
}
_PCT: dict[str, Decimal] = {
    "%": Decimal("0.01"),
    "％": Decimal("0.01"),
    "‰": Decimal("0.001"),
    " percent": Decimal("0.01"),
    " per cent": Decimal("0.01"),
}

_NUM = re.compile(
    r"(?:(?P<neg>[-−–]|\()\s?)?"
    r"(?P<cur>US\$|\$|¥|€|£|RMB\s?)?"
    r"(?P<neg2>[-−])?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<close>\))?"
    r"(?P<scale>\s?(?:thousand|million|billion|trillion|mn|bn|tn)\b|\s?[kKmMbB]\b|万亿|百万|千万|万|亿|千)?"
    r"(?P<pct>%|％|‰| percent\b| per cent\b)?",
)


@dataclass(frozen=True)
class NumberSpan:
    start: int
    end: int
    text: str
    value: Decimal  # in base units (12.5% → 0.125, 1.2 million → 1200000)
    unit: Decimal  # display multiplier (percent 0.01, million 10**6, plain 1)
    decimals: int  # digits written after the decimal point

    @property
    def display(self) -> Decimal:
        return self.value / self.unit


def _is_word_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


def number_spans(text: str) -> list[NumberSpan]:
    """Every number span in ``text``, left to right.

    >>> [(s.text, str(s.value)) for s in number_spans("Growth was 12.5%, revenue $1,234 million (2021).")]
    [('12.5%', '0.125'), ('$1,234 million', '1234000000'), ('2021', '2021')]
    >>> [str(s.value) for s in number_spans("净利润为-3.2亿元，(4.0)")]
    ['-320000000.0', '-4.0']
    """
    out = []
    for m in _NUM.finditer(text or ""):
        s, e = m.start(), m.end()
        # not part of an identifier such as "Q3" or "abc123"
        core = m.start("num")
        if core > 0 and _is_word_char(text[core - 1]) and not m.group("cur"):
            continue
        # accounting negatives "(4.0)", "($1,200)"; a bare "(2021)" is a parenthesised number
        looks_amount = bool(m.group("cur")) or "." in m.group("num") or "," in m.group("num")
        paren = m.group("neg") == "(" and m.group("close") == ")" and looks_amount
        if (
            m.group("neg") in ("-", "−", "–")
            and s > 0
            and text[s - 1].isascii()
            and text[s - 1].isalnum()
        ):
            # a hyphen after a word or digit ("2022-09-05", "COVID-19") is not a minus sign
            s = m.start("cur") if m.group("cur") else core
            if m.group("neg2") is None:
                core_neg = False
            else:
                core_neg = True
        else:
            core_neg = None
        neg = paren or (m.group("neg") in ("-", "−", "–")) or bool(m.group("neg2"))
        if core_neg is not None:
            neg = core_neg
        if m.group("neg") == "(" and not paren:
            s = m.start("cur") if m.group("cur") else (m.start("neg2") if m.group("neg2") else core)
        if m.group("close") and not paren:
            e = m.end("num")
        raw = m.group("num").replace(",", "")
        try:
            val = Decimal(raw)
        except InvalidOperation:
            continue
        unit = Decimal(1)
        scale = (m.group("scale") or "").strip()
        if scale:
            key = scale.lower() if scale.isascii() else scale
            if key in ("m", "b", "k") and scale in (
                "m",
                "b",
            ):  # lowercase single letters are too ambiguous
                e = m.start("scale")
                scale = ""
            else:
                unit *= _SCALES[key]
        pct = m.group("pct")
        if pct:
            unit *= _PCT[pct]
        if (scale or pct) and e < m.end("pct" if pct else "scale"):
            e = m.end("pct" if pct else "scale")
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        value = -val * unit if neg else val * unit
        out.append(NumberSpan(s, e, text[s:e].strip(), value, unit, decimals))
    return out


def round1(x: Decimal) -> Decimal:
    return x.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def numbers_match(gold: NumberSpan, pred: NumberSpan) -> bool:
    """MuDABench rule: equal integer digits and first decimal in the gold's display unit.

    >>> g = number_spans("18.02%")[0]
    >>> [numbers_match(g, number_spans(p)[0]) for p in ("0.1802", "18.0%", "18.92%", "-18.02%", "18.02")]
    [True, True, False, False, False]
    """
    return round1(gold.value / gold.unit) == round1(pred.value / gold.unit)


def template(text: str, spans: list[NumberSpan] | None = None) -> str:
    """``text`` with every number span replaced by ``<N>``, whitespace and case normalised.

    >>> template("Growth was 12.5%.") == template("growth was  0.125.")
    True
    """
    spans = number_spans(text) if spans is None else spans
    parts, pos = [], 0
    for s in spans:
        parts += [text[pos : s.start], " <N> "]
        pos = s.end
    parts.append(text[pos:])
    return " ".join("".join(parts).lower().split())


def fast_path(prediction: str, gold: str) -> tuple[int, str] | None:
    """Decide clear numeric cases without an LLM: same wording around the numbers, the same
    count of numbers, at least one number. All numbers match → (1, why); any differs → (0, why).
    Anything else (different wording, no numbers) → ``None`` (ask the judge). Identical texts
    (after whitespace/case normalisation) → 1.

    >>> fast_path("The rate was 0.125.", "The rate was 12.5%.")
    (1, 'numeric fast path: 1 number(s) match')
    >>> fast_path("The rate was 13.1%.", "The rate was 12.5%.")[0]
    0
    >>> fast_path("Rates rose.", "The rate was 12.5%.") is None
    True
    """
    if " ".join(prediction.lower().split()) == " ".join(gold.lower().split()):
        return 1, "identical text"
    ps, gs = number_spans(prediction), number_spans(gold)
    if not gs or len(ps) != len(gs) or template(prediction, ps) != template(gold, gs):
        return None
    bad = [(g.text, p.text) for g, p in zip(gs, ps, strict=True) if not numbers_match(g, p)]
    if bad:
        return 0, "numeric fast path: " + "; ".join(f"{p!r} vs gold {g!r}" for g, p in bad[:3])
    return 1, f"numeric fast path: {len(gs)} number(s) match"
