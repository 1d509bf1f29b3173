"""Helpers shared by the metric implementations: input checks at the public boundary, versions."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib import metadata

from metajudge.errors import InputError
from metajudge.metrics.base import MetricResult, ScoreItem


def check_items(items: Sequence[ScoreItem], metric: str) -> None:
    """Reject anything that is not a :class:`ScoreItem` with ``str``/``None`` texts.

    Raised as :class:`InputError` naming the item key and the field, before any dependency sees
    the text (so a bad input never crashes deep inside sacreBLEU, NLTK or bert-score).
    """
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise InputError(f"{metric}: expected a sequence of ScoreItem, got {type(items).__name__}", field="items")
    for i, it in enumerate(items):
        if not isinstance(it, ScoreItem):
            raise InputError(f"{metric}: item {i} is a {type(it).__name__}, not a ScoreItem", field=f"items[{i}]")
        for fname in ("response", "reference"):
            v = getattr(it, fname)
            if v is not None and not isinstance(v, str):
                raise InputError(
                    f"{metric}: item {it.key!r}: expected a string or None, got {type(v).__name__}", field=fname
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
