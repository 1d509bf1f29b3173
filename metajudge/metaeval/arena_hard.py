"""The Arena-Hard verdict format, parsed from a judge's raw reply.

Arena-Hard-Auto (Li et al. 2024) asks the judge to end with one of ``[[A>>B]]``, ``[[A>B]]``,
``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]``. Its reference parser finds every ``\\[\\[([AB<>=]+)\\]\\]``
and accepts the reply only when all matches are the same verdict; JudgeBench (Tan et al. 2024)
keeps the direction and drops the strength (``A>>B`` and ``A>B`` → ``A>B``). A reply with no
verdict, conflicting verdicts or an unknown one parses to ``None`` (counted, never guessed).

This parser lives here until it moves to ``metajudge/metrics/judges/parsers.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from metajudge.metaeval.verdicts import Decision

_VERDICT = re.compile(r"\[\[([AB<>=]+)\]\]")
ARENA_HARD_VERDICTS = {"A>>B": "A>B", "A>B": "A>B", "A=B": "A=B", "B>A": "B>A", "B>>A": "B>A"}


def parse_arena_hard(text: str | None) -> Decision:
    """The decision of an Arena-Hard reply, or None (module docstring).

    >>> parse_arena_hard("... My final verdict is: [[B>>A]]")
    'B>A'
    >>> parse_arena_hard("[[A=B]] ... [[A=B]]"), parse_arena_hard("[[A>B]] or [[B>A]]")
    ('A=B', None)
    >>> parse_arena_hard("no verdict"), parse_arena_hard(None), parse_arena_hard("[[A<B]]")
    (None, None, None)
    """
    if not text:
        return None
    found = set(_VERDICT.findall(text))
    if len(found) != 1:
        return None
    return ARENA_HARD_VERDICTS.get(found.pop())  # type: ignore[return-value]


@dataclass(frozen=True)
class ParseCheck:
    """Our parse of every raw reply against the released decisions."""

    replies: int
    agree: int
    differences: tuple[
        tuple[str, int, Decision, Decision, str], ...
    ]  # pair, order, ours, theirs, tail


def check_against_released(
    rows: Sequence[tuple[str, Sequence[str], Sequence[Decision]]],
) -> ParseCheck:
    """``rows``: (pair id, raw replies per order, released decisions per order as presented)."""
    n = agree = 0
    diffs = []
    for pid, raws, decs in rows:
        for k, (raw, dec) in enumerate(zip(raws, decs, strict=True)):
            ours = parse_arena_hard(raw)
            n += 1
            if ours == dec:
                agree += 1
            else:
                diffs.append((pid, k + 1, ours, dec, raw[-120:].replace("\n", " ")))
    return ParseCheck(n, agree, tuple(diffs))
