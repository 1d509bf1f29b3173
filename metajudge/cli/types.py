"""Reusable argparse ``type=`` validators: a bad value is refused by argparse (exit 2, the message
names the option) before any work starts.

>>> positive_int("3")
3
>>> nonneg_float("0.05")
0.05
"""

from __future__ import annotations

import argparse
import collections.abc
import math
import types
import typing
from collections.abc import Callable
from typing import Any

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
    """A finite number >= 0 (``--tie-band``, ``--margin``): NaN and infinities refused."""
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


# -- keyword options given as text (``--option METRIC.KEY=VALUE``) ------------------------------
def _fits(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is type(None) or hint is None:
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    if hint is str:
        return isinstance(value, str)
    if origin is not None:
        hint = origin
    if isinstance(hint, type):
        if hint in (collections.abc.Sequence, tuple, list):
            return isinstance(value, list)
        return isinstance(value, hint)
    return False


def check_kwargs(fn: Any, options: dict[str, Any], *, field: str) -> None:
    """Refuse (``InputError``, naming ``field.KEY``) options that ``fn`` (a function or class)
    does not take, or whose value does not fit the parameter's annotation — e.g.
    ``rouge_l.use_stemmer=maybe`` for a ``bool``, or ``backend=evil`` for a backend object,
    which cannot be given as text at all — or that are negative where the default is >= 0
    (``top_logprobs=-1``)."""
    from metajudge.errors import InputError
    from metajudge.introspect import parameter

    for key, value in options.items():
        found, hint, default = parameter(fn, key)
        if not found:
            raise InputError(f"unknown option {key!r}", field=f"{field}.{key}")
        if hint is None:
            raise InputError(
                f"option {key!r} takes an object and cannot be given on the command line",
                field=f"{field}.{key}",
            )
        if not _fits(value, hint):
            shown = getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
            raise InputError(f"expected {shown}, got {value!r}", field=f"{field}.{key}")
        nonneg_default = default is None or (_is_number(default) and default >= 0)
        if nonneg_default and _is_number(value) and value < 0:
            # counts, sizes, temperatures: an option whose default is >= 0 (or unset) takes no
            # negative value
            raise InputError(
                f"must be >= 0 (default {default}), got {value!r}", field=f"{field}.{key}"
            )


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def score_spec(text: str) -> Any:
    """A ``--scores`` value in the grammar of :mod:`metajudge.scores.spec` (``PATH``,
    ``PATH:COL``, ``LABEL=PATH[:COL]``, ``shipped``, ``shipped:COL``), parsed to a ``ScoreSpec``."""
    from metajudge.errors import InputError
    from metajudge.scores.spec import parse_score_spec

    try:
        return parse_score_spec(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def table_spec_option(text: str) -> dict[str, Any]:
    """A ``--table`` value (``ci=…,decimals=N,mark=best,names=FILE``), parsed to the paper
    table's settings (:func:`metajudge.reports.paper_table.table_spec`)."""
    from metajudge.errors import InputError
    from metajudge.reports.paper_table import table_spec as parse

    try:
        return parse(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(e.message) from None
