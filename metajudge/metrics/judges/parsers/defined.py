"""The parsers of a judge defined in a file (:mod:`metajudge.metrics.judges.definition`).

One entry, :func:`read_choice`: a reply (one choice: text and log-probabilities) and the
definition's ``parse`` give a :class:`ParsedVerdict`, the verdict (a number for ``rating``, a label for
the other kinds; ``None``: unparsed, counted by the caller) and, with log-probabilities, the
class probabilities. Methods:

- ``regex``: the named group of ``pattern`` (first match in the reply's first
  :data:`MAX_REGEX_INPUT` characters);
- ``json``: ``field`` of the reply's outermost JSON object;
- ``first_label``: the label that appears first (whole word; a one-character label such as ``A``
  is matched case-sensitively); for ``rating``, the first number of the scale;
- ``logprobs``: for ``rating`` the expected score over the scale's digit tokens (G-Eval, Liu et
  al. 2023, :func:`~.ratings.score_distribution`); for the other kinds the class probabilities
  at the verdict token (:func:`~.labels.verdict_distribution`), the verdict their argmax;
- ``alpaca_eval``: one of AlpacaEval's parsers (:mod:`metajudge.metrics.judges.alpaca_eval`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from metajudge.metrics.judges.parsers.alpaca_eval import (
    logprob_parser,
    ranking_parser,
    regex_parser,
)
from metajudge.metrics.judges.parsers.claims import json_object
from metajudge.metrics.judges.parsers.labels import verdict_distribution
from metajudge.metrics.judges.parsers.ratings import score_distribution

#: Characters of a reply a definition's regex runs on (a verdict is near the start).
MAX_REGEX_INPUT = 20_000

DEFINED_PARSER_VERSION = "defined-1"  # bump on any change of what these parsers accept


@dataclass(frozen=True)
class ParsedVerdict:
    """A parsed reply: the verdict (number or label; ``None`` unparsed) and class probabilities."""

    verdict: float | str | None
    probs: dict[str, float] | None = None
    mass: float | None = None


def label_classes(labels: Sequence[str]) -> dict[str, str]:
    """Token text (lower case) → label, for reading a verdict token: each label and every prefix
    of it that no other label shares (a label the tokenizer splits is read from its first piece).

    >>> label_classes(["pass", "fail"])["pa"], label_classes(["A", "B", "tie"])["t"]
    ('pass', 'tie')
    >>> "f" in label_classes(["faithful", "fabricated"])
    False
    """
    out: dict[str, str] = {}
    low = [x.strip().lower() for x in labels]
    for lab, lo in zip(labels, low, strict=True):
        for k in range(1, len(lo) + 1):
            pre = lo[:k]
            if sum(o.startswith(pre) for o in low) == 1 or pre in low:
                out.setdefault(pre, lab)
    for lab, lo in zip(labels, low, strict=True):
        out[lo] = lab
    return out


def match_label(text: Any, labels: Sequence[str]) -> str | None:
    """The label ``text`` names (whole value, case and surrounding spaces/punctuation ignored).

    >>> match_label(" Pass.", ["pass", "fail"]), match_label(True, ["pass", "fail"])
    ('pass', 'pass')
    """
    if isinstance(text, bool):  # a JSON true/false: the first (pass) / the second label
        return labels[0] if text else (labels[1] if len(labels) > 1 else None)
    t = str(text).strip().strip("\"'*.:,;!()[]").lower()
    for lab in labels:
        if t == lab.strip().lower():
            return lab
    return None


def first_label(text: str, labels: Sequence[str]) -> str | None:
    """The label that appears first in ``text`` as a whole word.

    >>> first_label("Verdict: B, because A is wrong", ["A", "B", "tie"])
    'B'
    >>> first_label("a tie, I think", ["A", "B", "tie"])
    'tie'
    >>> first_label("nothing here", ["pass", "fail"]) is None
    True
    """
    best: tuple[int, str] | None = None
    for lab in labels:
        flags = 0 if len(lab.strip()) == 1 else re.IGNORECASE
        m = re.search(rf"(?<![A-Za-z0-9]){re.escape(lab.strip())}(?![A-Za-z0-9])", text, flags)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), lab)
    return None if best is None else best[1]


def _number(value: Any, scale: tuple[int, int]) -> float | None:
    try:
        v = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    return v if scale[0] <= v <= scale[1] else None


def _first_number(text: str, scale: tuple[int, int]) -> float | None:
    for m in re.finditer(r"(?<![\d.])-?\d+(?:\.\d+)?(?![\d.])", text):
        v = _number(m.group(), scale)
        if v is not None:
            return v
    return None


def read_choice(
    text: str,
    logprobs: Sequence[Any] | None,
    parse: Mapping[str, Any],
    *,
    kind: str,
    labels: Sequence[str],
    scale: tuple[int, int] | None,
) -> ParsedVerdict:
    """The verdict in one reply under the definition's ``parse`` (see the module docstring)."""
    method = parse["method"]
    if method == "alpaca_eval":
        return read_alpaca(text, logprobs, parse, labels)
    if method == "logprobs":
        return _from_logprobs(logprobs, kind, labels, scale)
    if method == "regex":
        m = re.search(parse["pattern"], (text or "")[:MAX_REGEX_INPUT])
        raw: Any = m.group(parse["group"]) if m else None
    elif method == "json":
        obj = json_object(text)
        raw = None if obj is None else obj.get(parse["field"])
    else:  # first_label
        if kind == "rating":
            return ParsedVerdict(_first_number(text or "", scale))  # type: ignore[arg-type]
        return ParsedVerdict(first_label(text or "", labels))
    if raw is None:
        return ParsedVerdict(None)
    if kind == "rating":
        return ParsedVerdict(_number(raw, scale))  # type: ignore[arg-type]
    return ParsedVerdict(match_label(raw, labels))


def _from_logprobs(
    logprobs: Sequence[Any] | None, kind: str, labels: Sequence[str], scale: tuple[int, int] | None
) -> ParsedVerdict:
    if kind == "rating":
        assert scale is not None
        d = score_distribution(logprobs, scale[0], scale[1])
        if d is None:
            return ParsedVerdict(None)
        return ParsedVerdict(d.expected, {str(k): v for k, v in d.probs.items()}, d.mass)
    vd = verdict_distribution(logprobs, label_classes(labels))
    if vd is None:
        return ParsedVerdict(None)
    best = max(labels, key=lambda lab: vd.probs.get(lab, 0.0))
    return ParsedVerdict(best, dict(vd.probs), vd.mass)


def read_alpaca(
    text: str, logprobs: Sequence[Any] | None, parse: Mapping[str, Any], labels: Sequence[str]
) -> ParsedVerdict:
    """One reply read by the config's parser: the verdict (``A`` = output_1 better, ``B``,
    ``tie`` at exactly 1.5) and, for a non-binarised ``logprob_parser``, p(A) and p(B)."""
    name, kw = parse["parser"], dict(parse["kwargs"])
    if name == "ranking_parser":
        pref = ranking_parser(text, **kw)
    elif name == "regex_parser":
        pref = regex_parser(text, **kw)
    else:
        if not text or not logprobs or len(logprobs) != 1:  # a batch of one annotation
            return ParsedVerdict(None)
        tl = logprobs[0]
        pref = logprob_parser(tl.top or ((tl.token, tl.logprob),), **kw)
    if pref is None or not 1.0 <= pref <= 2.0:
        return ParsedVerdict(None)
    verdict = labels[0] if pref < 1.5 else (labels[1] if pref > 1.5 else labels[2])
    probs = None
    if name == "logprob_parser" and not kw.get("is_binarize", True):
        probs = {labels[0]: 2.0 - pref, labels[1]: pref - 1.0}
    return ParsedVerdict(verdict, probs, None)
