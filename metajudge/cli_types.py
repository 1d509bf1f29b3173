"""Reusable argparse ``type=`` validators: a bad value is refused by argparse (exit 2, the message
names the option) before any work starts.

>>> positive_int("3")
3
>>> nonneg_float("0.05")
0.05
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

#: Seeds are handed to ``numpy.random.default_rng`` and ``random.Random``: non-negative, < 2**63.
MAX_SEED = 2**63 - 1


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def _float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return x


def positive_int(text: str) -> int:
    """An integer >= 1 (``--n-boot``, ``--cv-folds``, ``--top-logprobs`` when given)."""
    n = _int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {n}")
    return n


def nonneg_int(text: str) -> int:
    """An integer >= 0 (``--max-rows`` where 0 means none, ``--top-logprobs``)."""
    n = _int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {n}")
    return n


def seed(text: str) -> int:
    """A random seed: an integer in [0, 2**63 - 1]."""
    n = _int(text)
    if not 0 <= n <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63-1], got {n}")
    return n


def nonneg_float(text: str) -> float:
    """A finite number >= 0 (``--epsilon``/``--eps``): NaN and infinities refused."""
    x = _float(text)
    if x < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return x


def probability(text: str) -> float:
    """A finite number in [0, 1] (``--alpha``, confidence levels, fractions)."""
    x = _float(text)
    if not 0 <= x <= 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text}")
    return x


def duration_days(text: str) -> float:
    """A duration in days: finite and >= 0 (``cache prune --older-than``)."""
    return nonneg_float(text)


def bounded_int(lo: int, hi: int) -> Callable[[str], int]:
    """A ``type=`` for an integer in [lo, hi] (e.g. ``bounded_int(1, 10_000_000)`` for
    ``--n-boot``, so that a huge value is refused before memory is allocated)."""

    def check(text: str) -> int:
        n = _int(text)
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"must be an integer in [{lo}, {hi}], got {n}")
        return n

    check.__name__ = f"integer in [{lo}, {hi}]"
    return check
