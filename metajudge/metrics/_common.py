"""Helpers shared by the metric implementations: input checks at the public boundary, versions."""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Sequence
from importlib import metadata

from metajudge.errors import InputError
from metajudge.metrics.base import Metric, MetricResult, ScoreItem


def check_items(items: Sequence[ScoreItem], metric: str) -> None:
    """Reject anything that is not a :class:`ScoreItem` with ``str``/``None`` texts.

    Raised as :class:`InputError` naming the item key and the field, before any dependency sees
    the text (so a bad input never crashes deep inside sacreBLEU, NLTK or bert-score).
    """
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise InputError(
            f"{metric}: expected a sequence of ScoreItem, got {type(items).__name__}", field="items"
        )
    for i, it in enumerate(items):
        if not isinstance(it, ScoreItem):
            raise InputError(
                f"{metric}: item {i} is a {type(it).__name__}, not a ScoreItem", field=f"items[{i}]"
            )
        for fname in ("response", "reference"):
            v = getattr(it, fname)
            if v is not None and not isinstance(v, str):
                raise InputError(
                    f"{metric}: item {it.key!r}: expected a string or None, got {type(v).__name__}",
                    field=fname,
                )


def missing_text(item: ScoreItem, *, needs_reference: bool = True) -> MetricResult | None:
    """The documented result for a missing text: score ``None`` with the reason, else ``None``.

    A missing (``None``) response or reference cannot be scored; an *empty string* can, and
    each metric documents what it gives for one.
    """
    if item.response is None:
        return MetricResult(item.key, None, error="no response text (None)")
    if needs_reference and item.reference is None:
        return MetricResult(item.key, None, error="no reference text (None)")
    return None


@functools.cache
def version(dist: str) -> str:
    """The installed version of a distribution, or ``"unknown"``."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def fmt_opt(v: object) -> str:
    """Signature spelling of an option value: yes/no for booleans, plain str otherwise."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


class PairMetric(Metric):
    """A metric that scores each (response, reference) pair on its own.

    ``score_batch`` validates the batch once (:func:`check_items`), gives the documented ``None``
    result for a missing text (:func:`missing_text`), and calls :meth:`_score_pair` for the rest;
    :meth:`_prepare` runs once per batch (load a resource) and its value is passed along.
    """

    uses_input = False

    def _prepare(self) -> object:
        return None

    @abstractmethod
    def _score_pair(self, key: str, response: str, reference: str, state: object) -> MetricResult:
        """Score one pair whose texts are both present (empty strings included)."""

    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        check_items(items, self.name)
        state = self._prepare()
        out: list[MetricResult] = []
        for it in items:
            res = missing_text(it)
            if res is None:
                assert it.response is not None and it.reference is not None
                res = self._score_pair(it.key, it.response, it.reference, state)
            out.append(res)
        return out
