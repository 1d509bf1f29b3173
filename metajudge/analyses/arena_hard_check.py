"""Checking the Arena-Hard parser against decisions released with judge outputs.

The parser itself is :func:`metajudge.metrics.judges.parsers.ratings.parse_arena_hard`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from metajudge.metrics.judges.parsers.ratings import parse_arena_hard
from metajudge.stats.decisions import Pref, to_pref


@dataclass(frozen=True)
class ParseCheck:
    """Our parse of every raw reply against the released decisions."""

    replies: int
    agree: int
    differences: tuple[
        tuple[str, int, Pref | None, Pref | None, str], ...
    ]  # pair, order, ours, theirs, tail


def check_against_released(
    rows: Sequence[tuple[str, Sequence[str], Sequence[str | None]]],
) -> ParseCheck:
    """``rows``: (pair id, raw replies per order, released decisions per order as presented, in
    the file's spelling: ``A>B``, ``B>A``, ``A=B`` or null)."""
    n = agree = 0
    diffs = []
    for pid, raws, decs in rows:
        for k, (raw, dec) in enumerate(zip(raws, decs, strict=True)):
            ours = parse_arena_hard(raw)
            theirs = to_pref(dec, "released")
            n += 1
            if ours == theirs:
                agree += 1
            else:
                diffs.append((pid, k + 1, ours, theirs, raw[-120:].replace("\n", " ")))
    return ParseCheck(n, agree, tuple(diffs))
