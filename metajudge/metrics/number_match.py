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

Which number counts (``select``): ``"whole"`` — the whole answer is one number (with its sign,
currency, percent and scale word), as the recipe's ``float(pred)``; anything else in the answer
is a non-match. Free-text selection rules: ``"salient"`` — the numbers written with a unit
(percent, currency or scale word) if there are any, else the numbers that are not a bare year
(an integer 1900–2100), else all; the last of those ("The change is 12.5% (2018 to 2019)" →
12.5; "Revenue was 3.2 million in 2019" → 3.2 million); ``"last"`` (the number that ends the
text: "From 2019 to 2020 revenue grew by 12.5%" → 12.5), ``"first"``, ``"any"`` (correct if any
number matches; lenient) or ``"only"`` (correct only when the answer has exactly one number).

Written scales (``written_scales=True``): a scale is accepted only where it is written. A
percent sign on either side lets the value count as written or divided by 100 (gold 0.07 ≡
"7%", gold "7%" ≡ 0.07); a scale word or symbol on the prediction lets it count with or without
its scale ("$3.2 million" ≡ 3,200,000 and ≡ 3.2; "5k" ≡ 5,000). A bare number is never rescaled
("7" ≢ 700, "5" ≢ 5,000, "0.05" ≢ 5, "12.5" ≢ gold 0.125).

Presets (:data:`PRESETS`), named in the signature; explicit options override them:

- ``t2ragbench`` (the registry default) — T2-RAGBench's metric as the paper states it ("relative
  tolerance ε = 1e-2, accounting for scale invariance") read so that a scale is accepted only
  when written: ``select="whole"``, ``mode="strict"``, ``rel_tol=0.01``,
  ``written_scales=True``;
- ``seed`` — the seed card's recipe, unchanged (:func:`seed_recipe_match`):
  ``abs(float(pred) - float(gold)) / abs(float(gold)) <= 1e-2`` with any exception counted as
  incorrect — no extraction (``"$3.2 million"``, ``"1,234"`` and ``"12.5%"`` are not numbers to
  ``float``), no scale, gold 0 never matched; it takes no other option;
- ``mudabench`` — MuDABench's digit-wise rule: ``select="whole"``, ``mode="first_decimal"``;
- ``None`` — no preset: the function defaults (``strict``, ``last``, no written scales).

The registry metric ``number_match`` uses ``preset="t2ragbench"``; its signature names the preset
and every relaxation (mode, tolerances, sign, selection, written scales, parentheses, extractor).

Comparison (:func:`~metajudge.metrics.numeric.numbers_equivalent`), tolerance relative to the
**gold** value as in the recipe: ``mode`` is a rule of :data:`metajudge.metrics.numeric.RULES`
(``strict``, ``scale_invariant``, ``first_decimal`` — MuDABench's digit-wise rule);
``ignore_sign=True`` compares absolute values (the T2-RAGBench reference code ignores the sign).
The bound is widened by 1e-12·|gold| of floating-point noise (``fp_slack`` in the signature).

Zero gold: the recipe divides by ``|gold|`` and counts the ZeroDivisionError as incorrect, so a
gold 0 can never be matched there. Here a gold 0 matches a prediction within ``abs_tol`` of 0
(default 0.0: exactly 0). Documented deviation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

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

Select = Literal["whole", "salient", "last", "first", "any", "only"]
SELECTS: tuple[str, ...] = ("whole", "salient", "last", "first", "any", "only")

#: Named option sets for the seeds' benchmarks (see the module docstring).
PRESETS: dict[str, dict[str, Any]] = {
    "t2ragbench": {"select": "whole", "mode": "strict", "rel_tol": 1e-2, "written_scales": True},
    "seed": {},  # the seed's recipe itself (seed_recipe_match): no option applies
    "mudabench": {"select": "whole", "mode": "first_decimal"},
}
#: the registry metric's preset
DEFAULT_PRESET = "t2ragbench"

__all__ = [
    "EXTRACTOR_VERSION",
    "PRESETS",
    "ExtractedNumber",
    "NumberMatch",
    "extract_numbers",
    "find_numbers",
    "gold_number",
    "number_match",
    "number_match_accuracy",
    "numbers_equivalent",
    "pred_numbers",
    "seed_recipe_match",
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
    pct: str = ""  # "%" or "‰" as written ("" when no percent)

    def readings(self, written_scales: bool) -> list[float]:
        """The values this number may stand for: as written; with ``written_scales`` also
        without its written percent (``7%`` → 0.07) or scale (``$3.2 million`` → 3.2).

        >>> find_numbers("$3.2 million")[0].readings(True), find_numbers("7%")[0].readings(True)
        ([3200000.0, 3.2], [7.0, 0.07])
        >>> find_numbers("7")[0].readings(True)
        [7.0]
        """
        out = [self.value]
        if written_scales and self.pct:
            out.append(self.value / (1000.0 if self.pct == "‰" else 100.0))
        if written_scales and self.scale != 1.0:
            out.append(self.value / self.scale)
        return out


def find_numbers(
    text: str, *, paren_negative: bool = True, bare_k: bool = False
) -> list[ExtractedNumber]:
    """Every number in ``text`` with its span and flags (:func:`metajudge.metrics.numeric.number_spans`).

    >>> [n.value for n in find_numbers("Revenue fell to ($1,234.5 million), or -3.2% YoY")]
    [-1234500000.0, -3.2]
    """
    spans = number_spans(text, paren="always" if paren_negative else "never", bare_k=bare_k)
    return [
        ExtractedNumber(
            float(s.written),
            s.start,
            s.end,
            s.text,
            bool(s.pct),
            float(s.scale),
            bool(s.currency),
            s.pct,
        )
        for s in spans
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
    return [n.value for n in find_numbers(text, paren_negative=paren_negative, bare_k=True)]


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


_FILLER = re.compile(r"^[\s.,;:!?'\"()\[\]=]*$")


def _is_year(n: ExtractedNumber) -> bool:
    return (
        not (n.percent or n.currency or n.scale != 1.0)
        and n.value.is_integer()
        and 1900 <= n.value <= 2100
        and "," not in n.text
    )


def select_spans(text: str, found: list[ExtractedNumber], select: Select) -> list[ExtractedNumber]:
    """The numbers of ``text`` that count under ``select`` (see the module docstring)."""
    if select == "whole":
        if len(found) != 1:
            return []
        n = found[0]
        rest = text[: n.start] + text[n.end :]
        return [n] if _FILLER.match(rest) else []
    if select == "salient":
        marked = [n for n in found if n.percent or n.currency or n.scale != 1.0]
        pool = marked or [n for n in found if not _is_year(n)] or found
        return pool[-1:]
    return select_numbers(found, select)  # type: ignore[arg-type,return-value]


def select_found(text: str, found: list[ExtractedNumber], select: Select) -> list[float]:
    """The candidate numbers of ``text`` that count under ``select`` (see the module docstring).

    >>> t = "The change is 12.5% (2018 to 2019)"
    >>> select_found(t, find_numbers(t), "salient"), select_found(t, find_numbers(t), "last")
    ([12.5], [2019.0])
    >>> select_found("$3.2 million", find_numbers("$3.2 million"), "whole")
    [3200000.0]
    >>> select_found("It is 3.2", find_numbers("It is 3.2"), "whole")
    []
    """
    return [n.value for n in select_spans(text, found, select)]


def select_numbers(nums: list[float], select: Select) -> list[float]:
    """The candidate numbers that count under ``select`` (the rules that need no text)."""
    if select == "last":
        return nums[-1:]
    if select == "first":
        return nums[:1]
    if select == "any":
        return nums
    if select == "only":
        return nums if len(nums) == 1 else []
    raise InputError(f"unknown select {select!r} ({', '.join(SELECTS)})", field="select")


def _options(preset: str | None, **given: Any) -> dict[str, Any]:
    """Function defaults, updated by the preset, updated by the options given explicitly."""
    if preset is not None and preset not in PRESETS:
        raise InputError(
            f"unknown number_match preset {preset!r} ({', '.join(PRESETS)})", field="preset"
        )
    opts = {k: v for k, v in given.items() if v is not None}
    if preset == "seed" and opts:
        raise InputError(
            f"number_match preset 'seed' is the seed's recipe unchanged; it takes no option "
            f"(given: {', '.join(sorted(opts))})",
            field="preset",
        )
    return {**_DEFAULTS, **(PRESETS[preset] if preset else {}), **opts}


def seed_recipe_match(pred: Any, gold: Any) -> bool:
    """One prediction under the seed card's ``score_nm``, unchanged: ``float`` of the whole
    prediction and gold, relative error ``<= 1e-2``, any exception (not a float, gold 0, None)
    counted as incorrect.

    >>> [seed_recipe_match(p, g) for p, g in (("100.9", "100"), ("$3.2 million", 3.2e6), ("7%", 0.07), ("0", 0))]
    [True, False, False, False]
    """
    try:
        return abs(float(pred) - float(gold)) / abs(float(gold)) <= 1e-2
    except Exception:  # noqa: BLE001 - the recipe's bare ``except: pass``
        return False


_DEFAULTS: dict[str, Any] = {
    "mode": "strict",
    "rel_tol": 1e-2,
    "ignore_sign": False,
    "abs_tol": 0.0,
    "select": "last",
    "max_power": None,
    "paren_negative": True,
    "written_scales": False,
}


def number_match(
    pred: str | float | None,
    gold: str | float,
    *,
    preset: str | None = None,
    mode: Rule | None = None,
    rel_tol: float | None = None,
    ignore_sign: bool | None = None,
    abs_tol: float | None = None,
    select: Select | None = None,
    max_power: int | None = None,
    paren_negative: bool | None = None,
    written_scales: bool | None = None,
) -> bool:
    """T2-RAGBench Number Match of one prediction: True iff the selected number matches gold.

    Options left ``None`` come from ``preset`` (:data:`PRESETS`), else the defaults (``strict``,
    ``last``). Non-numeric, empty or ``None`` predictions give False (never an exception); a gold
    that is not exactly one number raises :class:`InputError` (except under ``preset="seed"``,
    whose recipe counts it incorrect).

    >>> number_match("The answer is $1,234.", 1234), number_match("about 12.6", "12.5")
    (True, True)
    >>> number_match("12.5%", 0.125), number_match("12.5%", 0.125, mode="scale_invariant")
    (False, True)
    >>> number_match("$3.2 million", 3.2, preset="t2ragbench"), number_match("7", 700, preset="t2ragbench")
    (True, False)
    >>> number_match("no idea", 3.0), number_match("", 3.0)
    (False, False)
    """
    given = {
        "mode": mode,
        "rel_tol": rel_tol,
        "ignore_sign": ignore_sign,
        "abs_tol": abs_tol,
        "select": select,
        "max_power": max_power,
        "paren_negative": paren_negative,
        "written_scales": written_scales,
    }
    o = _options(preset, **given)
    if preset == "seed":
        return seed_recipe_match(pred, gold)
    golds = _gold_readings(gold, o)
    return any(_equal(p, g, o) for p in _candidates(pred, o) for g in golds)


def _gold_readings(gold: str | float, o: dict[str, Any]) -> list[float]:
    """The gold value; with ``written_scales`` a gold written with a percent also divided."""
    g = gold_number(gold, paren_negative=o["paren_negative"])
    if o["written_scales"] and isinstance(gold, str):
        (n,) = find_numbers(gold, paren_negative=o["paren_negative"], bare_k=True)
        if n.pct:
            return [g, g / (1000.0 if n.pct == "‰" else 100.0)]
    return [g]


def _candidates(pred: str | float | None, o: dict[str, Any]) -> list[float]:
    """Every reading of every selected number of the prediction."""
    if isinstance(pred, str):
        found = find_numbers(pred, paren_negative=o["paren_negative"], bare_k=True)
        spans = select_spans(pred, found, o["select"])
        return [v for n in spans for v in n.readings(o["written_scales"])]
    return select_numbers(pred_numbers(pred, paren_negative=o["paren_negative"]), o["select"])


def _equal(p: float, g: float, o: dict[str, Any]) -> bool:
    return numbers_equivalent(
        p,
        g,
        mode=o["mode"],
        rel_tol=o["rel_tol"],
        abs_tol=o["abs_tol"],
        ignore_sign=o["ignore_sign"],
        max_power=o["max_power"],
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
    #: the registry defaults (a stored result computed otherwise is marked by ``metajudge matrix``)
    signature_defaults: ClassVar[dict[str, str]] = {
        "preset": DEFAULT_PRESET,
        "written_scales": "pct_either+scale_pred",
    }

    def __init__(
        self,
        *,
        preset: str | None = DEFAULT_PRESET,
        mode: Rule | None = None,
        rel_tol: float | None = None,
        ignore_sign: bool | None = None,
        abs_tol: float | None = None,
        select: Select | None = None,
        max_power: int | None = None,
        paren_negative: bool | None = None,
        written_scales: bool | None = None,
    ) -> None:
        o = _options(
            preset,
            mode=mode,
            rel_tol=rel_tol,
            ignore_sign=ignore_sign,
            abs_tol=abs_tol,
            select=select,
            max_power=max_power,
            paren_negative=paren_negative,
            written_scales=written_scales,
        )
        if o["mode"] not in RULES:
            raise InputError(f"number_match: unknown mode {o['mode']!r}", field="mode")
        if o["select"] not in SELECTS:
            raise InputError(f"number_match: unknown select {o['select']!r}", field="select")
        if not (
            isinstance(o["rel_tol"], (int, float))
            and o["rel_tol"] >= 0
            and isinstance(o["abs_tol"], (int, float))
            and o["abs_tol"] >= 0
        ):
            raise InputError(
                "number_match: rel_tol and abs_tol must be non-negative numbers", field="rel_tol"
            )
        self.preset = preset
        self.opts: dict[str, Any] = {
            **o,
            "rel_tol": float(o["rel_tol"]),
            "abs_tol": float(o["abs_tol"]),
            "ignore_sign": bool(o["ignore_sign"]),
            "paren_negative": bool(o["paren_negative"]),
            "written_scales": bool(o["written_scales"]),
        }

    @property
    def signature(self) -> str:
        if self.preset == "seed":
            return (
                "number_match|preset:seed|parse:float(whole answer)|rel_tol:0.01|scales:none|"
                "sign:keep|gold0:never|errors:incorrect"
            )
        o = self.opts
        written = "pct_either+scale_pred" if o["written_scales"] else "none"
        return (
            f"number_match|preset:{self.preset or 'none'}|mode:{o['mode']}|rel_tol:{o['rel_tol']:g}|abs_tol:{o['abs_tol']:g}|"
            f"sign:{'ignore' if o['ignore_sign'] else 'keep'}|select:{o['select']}|"
            f"written_scales:{written}|"
            f"max_power:{'any' if o['max_power'] is None else o['max_power']}|"
            f"paren_neg:{'yes' if o['paren_negative'] else 'no'}|fp_slack:1e-12|"
            f"extract:{EXTRACTOR_VERSION}"
        )

    def _score_pair(self, key: str, response: str, reference: str, state: object) -> MetricResult:
        if self.preset == "seed":
            ok = seed_recipe_match(response, reference)
            return MetricResult(key, 1.0 if ok else 0.0, {"recipe": "seed"})
        try:
            golds = _gold_readings(reference, self.opts)
        except InputError as e:
            return MetricResult(key, None, error=f"reference: {e.message}")
        found = find_numbers(response, paren_negative=self.opts["paren_negative"], bare_k=True)
        cands = _candidates(response, self.opts)
        ok = any(_equal(p, g, self.opts) for p in cands for g in golds)
        return MetricResult(
            key,
            1.0 if ok else 0.0,
            {"gold": golds[0], "numbers": [n.value for n in found], "candidates": cands},
        )
