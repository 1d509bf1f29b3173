"""Rule-generated probes for the judges.

- :func:`equivalence_probes` — from MuDABench gold answers: format variants that must be judged
  equivalent (percent ↔ fraction, scale words such as ``1,234 million`` ↔ ``1.234 billion``,
  truncation to one decimal, MuDABench's digit-wise rule) and perturbations that must not (±5% on a value, wrong sign, wrong
  unit). Each variant changes exactly one number span; the label is checked against the
  MuDABench rule (:func:`~metajudge.metrics.numeric.spans_equivalent`) when it is made.
- :func:`perturb_numbers` — a copy of an insight with its numbers changed (years kept), for the
  MT-RAIG faithfulness sanity check (a faithful judge scores the copy lower).

All randomness comes from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from metajudge.metrics.numeric import NumberSpan, number_spans, spans_equivalent

FORMAT_KINDS = ("percent_fraction", "scale_words", "truncate_1dp")
PERTURB_KINDS = ("plus_minus_5pct", "wrong_sign", "wrong_unit")


@dataclass(frozen=True)
class Probe:
    id: str
    question: str
    gold: str
    prediction: str
    label: int  # 1 = must be judged equivalent, 0 = must not
    kind: str
    changed: str  # "gold span -> new span"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_year(s: NumberSpan) -> bool:
    return (
        s.unit == 1
        and s.decimals == 0
        and 1900 <= s.value <= 2100
        and not s.text.startswith(("$", "¥", "€", "£"))
    )


def _is_value(s: NumberSpan) -> bool:
    """A quantity (not a year, not a 6-digit security code)."""
    if _is_year(s):
        return False
    digits = re.sub(r"\D", "", s.text.split(".")[0])
    if s.decimals == 0 and len(digits) > 1 and digits.startswith("0"):
        return False  # "09", "002142": dates and codes
    # a bare integer of 5+ digits without separators or currency is a code (security id)
    return not (
        s.unit == 1
        and s.decimals == 0
        and len(digits) >= 5
        and not s.text.startswith(("$", "¥", "€", "£"))
        and "," not in s.text
    )


def _fmt(x: Decimal, decimals: int, commas: bool, rounding: str = ROUND_HALF_UP) -> str:
    q = (
        x.quantize(Decimal(1).scaleb(-decimals), rounding=rounding)
        if decimals > 0
        else x.quantize(Decimal(1), rounding=rounding)
    )
    return f"{q:,}" if commas else f"{q}"


def _plain(x: Decimal) -> str:
    """Exact decimal text without exponent or trailing zeros: 0.180200 → 0.1802."""
    s = format(x.normalize(), "f")
    return s.rstrip("0").rstrip(".") if "." in s else s


def _cur(s: NumberSpan) -> str:
    m = re.match(r"^[-−(]?\s?(US\$|\$|¥|€|£|RMB\s?)", s.text)
    return m.group(1) if m else ""


def _sign(s: NumberSpan) -> str:
    return "-" if s.value < 0 else ""


def _replace(text: str, s: NumberSpan, new: str) -> str:
    return text[: s.start] + new + text[s.end :]


def _cjk(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def _format_variant(
    kind: str, text: str, spans: list[NumberSpan], rng: np.random.Generator
) -> tuple[NumberSpan, str] | None:
    vals = [s for s in spans if _is_value(s)]
    if kind == "percent_fraction":
        pct = [s for s in vals if s.unit == Decimal("0.01")]
        if pct:
            s = pct[int(rng.integers(len(pct)))]
            return s, _sign(s) + _plain(abs(s.value))
        fr = [s for s in vals if s.unit == 1 and s.decimals >= 3 and 0 < abs(s.value) < 1]
        if fr:
            s = fr[int(rng.integers(len(fr)))]
            return s, _sign(s) + _plain(abs(s.value) * 100) + "%"
        return None
    if kind == "scale_words":
        big = [s for s in vals if s.unit == 1 and abs(s.value) >= 1000]
        if not big:
            return None
        s = big[int(rng.integers(len(big)))]
        v = abs(s.value)
        if _cjk(text):
            scale, word = (Decimal(10) ** 8, "亿") if v >= 10**8 else (Decimal(10) ** 4, "万")
        else:
            options = [
                (Decimal(10) ** k, w)
                for k, w in ((3, " thousand"), (6, " million"), (9, " billion"))
                if v >= Decimal(10) ** k
            ]
            scale, word = options[int(rng.integers(len(options)))]
        q = v / scale
        body = f"{q:,}" if "," in s.text and q >= 1000 else _plain(q)
        if "," in s.text and q >= 1000:
            body = _plain(q)
            ip, _, fp = body.partition(".")
            body = f"{int(ip):,}" + (f".{fp}" if fp else "")
        return s, _sign(s) + _cur(s) + body + word
    if kind == "truncate_1dp":
        cand = [s for s in vals if s.decimals >= 2 and s.unit != 0]
        if not cand:
            return None
        s = cand[int(rng.integers(len(cand)))]
        disp = abs(s.display)
        body = _fmt(disp, 1, "," in s.text, ROUND_DOWN)
        suffix = (
            s.text[len(s.text.rstrip("%％‰ perntcmilobhusadkMBK万亿千百")) :] if s.unit != 1 else ""
        )
        new = _sign(s) + _cur(s) + body + suffix
        if new == s.text:
            return None
        return s, new
    raise ValueError(kind)


def _perturbation(
    kind: str, text: str, spans: list[NumberSpan], rng: np.random.Generator
) -> tuple[NumberSpan, str] | None:
    vals = [s for s in spans if _is_value(s) and s.value != 0]
    if not vals:
        return None
    if kind == "plus_minus_5pct":
        cand = [s for s in vals if abs(s.display) >= 2]
        if not cand:
            return None
        s = cand[int(rng.integers(len(cand)))]
        f = Decimal("1.05") if rng.random() < 0.5 else Decimal("0.95")
        disp = abs(s.display) * f
        suffix = (
            s.text[len(s.text.rstrip("%％‰ perntcmilobhusadkMBK万亿千百")) :] if s.unit != 1 else ""
        )
        return s, _sign(s) + _cur(s) + _fmt(
            disp, max(s.decimals, 1 if disp < 20 else 0), "," in s.text
        ) + suffix
    s = vals[int(rng.integers(len(vals)))]
    if kind == "wrong_sign":
        body = s.text.lstrip("-−–(").rstrip(")")
        return s, body if s.value < 0 else "-" + body
    if kind == "wrong_unit":
        if s.unit == Decimal("0.01"):
            return s, s.text.replace("%", "‰").replace("％", "‰")
        if s.unit == 1:
            return s, s.text + ("万" if _cjk(text) else " thousand")
        return None
    raise ValueError(kind)


def equivalence_probes(
    golds: Sequence[tuple[str, str, str]], rng: np.random.Generator, *, max_golds: int | None = None
) -> list[Probe]:
    """Probes from ``(id, question, gold answer)`` triples; up to 6 per gold (3 must-accept,
    3 must-reject), only where the rule applies. Golds are visited in a seeded random order and
    those without a value number are skipped; ``max_golds`` golds at most are used.
    """
    order = rng.permutation(len(golds))
    out: list[Probe] = []
    used = 0
    for idx in order:
        gid, question, gold = golds[int(idx)]
        spans = number_spans(gold, paren="amounts")
        if not any(_is_value(s) for s in spans):
            continue
        made = 0
        for kind in FORMAT_KINDS + PERTURB_KINDS:
            fn = _format_variant if kind in FORMAT_KINDS else _perturbation
            got = fn(kind, gold, spans, rng)
            if got is None:
                continue
            s, new = got
            pred = _replace(gold, s, new)
            new_spans = [t for t in number_spans(pred, paren="amounts") if t.start == s.start]
            if not new_spans:
                continue
            label = 1 if kind in FORMAT_KINDS else 0
            if (
                int(spans_equivalent(s, new_spans[0])) != label
            ):  # the rule disagrees: not a clean probe
                continue
            out.append(
                Probe(f"{gid}/{kind}", question, gold, pred, label, kind, f"{s.text} -> {new}")
            )
            made += 1
        if made:
            used += 1
        if max_golds is not None and used >= max_golds:
            break
    return out


def perturb_numbers(
    text: str, rng: np.random.Generator, *, min_changed: int = 1
) -> tuple[str, int] | None:
    """Every number of ``text`` except years changed by a factor in [1.3, 2.0] (up or down, at
    random), written with the same decimals and separators. Returns (new text, numbers
    changed), or ``None`` if fewer than ``min_changed`` numbers could be changed.

    >>> import numpy as np
    >>> new, k = perturb_numbers("In 2009 it sold 1,200 units at 3.5 dollars.", np.random.default_rng(0))
    >>> k, "2009" in new, "1,200" in new
    (2, True, False)
    """
    spans = [s for s in number_spans(text, paren="amounts") if not _is_year(s)]
    parts, pos, changed = [], 0, 0
    for s in spans:
        f = Decimal(str(round(float(rng.uniform(1.3, 2.0)), 2)))
        disp = abs(s.display)
        new_disp = disp * f if rng.random() < 0.5 or disp < 2 else disp / f
        body = _fmt(new_disp, s.decimals, "," in s.text)
        if body == _fmt(disp, s.decimals, "," in s.text):
            body = _fmt(disp + 1, s.decimals, "," in s.text)
        suffix = (
            s.text[len(s.text.rstrip("%％‰ perntcmilobhusadkMBK万亿千百")) :] if s.unit != 1 else ""
        )
        parts += [text[pos : s.start], _sign(s) + _cur(s) + body + suffix]
        pos = s.end
        changed += 1
    parts.append(text[pos:])
    if changed < min_changed:
        return None
    return "".join(parts), changed
