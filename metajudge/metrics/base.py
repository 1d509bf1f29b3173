"""The metric interface every metric implements (its score rows: :mod:`metajudge.scores.readers.rows`).

A metric has a registry ``name``, a ``direction`` ("higher" is better, or "lower"), a ``range``
``(lo, hi)`` and a ``signature`` that pins everything that changes its value
(``name|opt:value|...|version:x``, in the spirit of sacreBLEU). ``score_batch`` scores many
items at once and returns one :class:`MetricResult` per item, in order, keeping the item's key.
A result whose ``score`` is ``None`` could not be scored; ``error`` says why (never a silent 0).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from metajudge.data.formats import (
    Input,
    LikertRecord,
    PairKeys,
    PairwiseRecord,
    Record,
    response_key,
    word_count,
)

Direction = Literal["higher", "lower"]


@dataclass(frozen=True)
class ScoreItem:
    """One response to score. ``key`` is unique within a run (see :func:`response_key`)."""

    key: str
    response: str | None
    reference: str | None = None
    input: Input | None = None
    #: the record the response comes from (a judge defined in a file reads its system names,
    #: ``meta`` and, for a pair, both responses); ``None`` for a response scored on its own
    record: Record | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class MetricResult:
    key: str
    score: float | None
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


class Metric(ABC):
    name: str
    direction: Direction = "higher"
    range: tuple[float, float] = (0.0, 1.0)
    needs_reference: bool = True
    #: the score depends on the item's ``input`` (question, tables, …), not only on the response
    #: and reference texts; scoring computes each distinct (response, reference[, input]) once
    uses_input: bool = True

    @property
    @abstractmethod
    def signature(self) -> str:
        """Everything that changes this metric's value, as one ``|``-separated string."""

    @abstractmethod
    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        """Score every item; the result list has the same length and order as ``items``."""

    def score(
        self, response: str, reference: str | None = None, *, input: Input | None = None
    ) -> MetricResult:
        return self.score_batch([ScoreItem("0", response, reference, input)])[0]

    def close(self) -> None:  # release models / servers
        return None


@dataclass(frozen=True)
class ResponseRef:
    key: str
    item: str
    system: str
    side: str | None  # "a"/"b" for pairwise records, None for Likert records
    response: str | None
    reference: str | None
    input: Input
    record: Record | None = field(default=None, compare=False, repr=False)

    def score_item(self) -> ScoreItem:
        """The :class:`ScoreItem` a metric scores for this response."""
        return ScoreItem(self.key, self.response, self.reference, self.input, self.record)


def iter_responses(records: Iterable[Record]) -> Iterator[ResponseRef]:
    """Every response of a dataset, pairwise records giving two (``a`` and ``b``)."""
    for r in records:
        for key, system, side, response in response_rows(r):
            yield ResponseRef(key, r.id, system, side, response, r.input.reference, r.input, r)


#: ``(key, system, side, response)`` of one response (:func:`response_rows`)
ResponseRow = tuple[str, str, str | None, str | None]


def response_rows(r: Record) -> tuple[ResponseRow, ...]:
    """``(key, system, side, response)`` of each response of record ``r``, in
    :func:`iter_responses`' order: what a pass over every response of a million pairs reads
    without building a :class:`ResponseRef` each (trivial rows of 1,000,000 pairs: 0.6 s where
    the references took 3.4 s)."""
    if isinstance(r, PairwiseRecord):
        a, b = r.a, r.b
        return (
            (response_key(r.id, "a"), a.system, "a", a.response),
            (response_key(r.id, "b"), b.system, "b", b.response),
        )
    if isinstance(r, LikertRecord):
        return ((response_key(r.id, r.system), r.system, None, r.response),)
    raise TypeError(f"not a record: {type(r).__name__}")  # pragma: no cover - guarded by the types


def response_columns(
    records: Sequence[Record],
) -> tuple[list[str], list[str | None], list[float]]:
    """``(systems, sides, words)`` of every response of ``records`` in :func:`response_rows`'
    order, as three lists (the keys: :class:`ResponseKeys`; ``words``: the whitespace-separated
    words of the response, NaN without a text, :meth:`~metajudge.data.formats.Response.n_words`);
    records all pairwise in bulk, without a row tuple or a key a response (trivial rows of
    1,000,000 pairs)."""
    if records and all(type(r) is PairwiseRecord for r in records):
        pairs: Sequence[PairwiseRecord] = records  # type: ignore[assignment]
        systems = [s for r in pairs for s in (r.a.system, r.b.system)]
        words = [x.n_words() for r in pairs for x in (r.a, r.b)]
        return systems, ["a", "b"] * len(pairs), words
    rows = [row for r in records for row in response_rows(r)]
    nan = float("nan")
    words = [nan if row[3] is None else float(word_count(row[3])) for row in rows]
    return [row[1] for row in rows], [row[2] for row in rows], words


class ResponseKeys(Sequence[str]):
    """The response keys of ``records`` (all of one kind) in :func:`response_rows`' order, each
    made when read, not held: a million pairs' 2,000,000 keys are 134 MB as a list of strings.
    Iterated as fast as the list's were made."""

    def __init__(self, records: Sequence[Record]) -> None:
        self.records = records
        self.per = 2 if records and isinstance(records[0], PairwiseRecord) else 1

    def __len__(self) -> int:
        return len(self.records) * self.per

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        r = self.records[i // self.per]
        return response_rows(r)[i % self.per][0]

    def __iter__(self) -> Iterator[str]:
        if self.per == 1:
            return (response_key(r.id, r.system) for r in self.records)  # type: ignore[union-attr]
        return iter(PairKeys([r.id for r in self.records]))


def pair_keys(record: PairwiseRecord) -> tuple[str, str]:
    return response_key(record.id, "a"), response_key(record.id, "b")
