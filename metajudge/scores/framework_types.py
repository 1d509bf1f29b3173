"""The types of :mod:`metajudge.scores.frameworks`: :class:`Reading` (``--id-field``,
``--system``, ``--epochs``), :class:`Judged` (one judge's score of one item as the framework
recorded it), :class:`FileInfo` (what a file is) and :class:`Reader` (one framework's reader).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: ``--epochs``: a framework's epochs or repeats averaged into one score per item (``mean``) or
#: kept, one column per epoch (``each``: ``scorer@1``, ``scorer@2`` …)
EPOCH_RULES = ("mean", "each")


@dataclass(frozen=True)
class Reading:
    """How a framework's file is joined to a dataset: ``id_field`` (the field carrying the item
    id, when it is not the obvious one), ``system`` (overrides the system the file implies),
    ``epochs`` (:data:`EPOCH_RULES`)."""

    id_field: str | None = None
    system: str | None = None
    epochs: str = "mean"


@dataclass
class Judged:
    """One judge's score of one item as the framework recorded it.

    ``item``: the id value (None: the file has no id field); ``system``: the system the file
    implies (None: none); ``metric``: the judge column; ``value``: the score (None: missing;
    ``nan``: the framework wrote NaN); ``epoch``: 1-based; ``explanation``: the judge's reason;
    ``where``: ``{"path", "line", "field"}`` of the value (errors name it)."""

    item: str | None
    system: str | None
    metric: str
    value: float | None
    where: dict[str, Any]
    epoch: int = 1
    explanation: str | None = None


@dataclass
class FileInfo:
    """What a framework file is: ``format``, ``version``, and what :func:`describe` prints."""

    format: str
    version: str
    id_fields: list[str] = field(default_factory=list)  # fields that could carry the item id
    id_field: str | None = None  # the one used
    systems: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)  # judge (score) columns
    label_columns: list[str] = field(default_factory=list)  # pass/fail or grade columns
    epochs: int = 1
    rows: int = 0
    explanations: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Reader:
    """One framework's reader (see the module docstring)."""

    name: str
    what: str
    sniff: Callable[[Path, Any], bool]
    read: Callable[[Path, Reading], tuple[FileInfo, list[Judged]]]


def first_id(obj: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str | None, Any]:
    """The first of ``names`` that ``obj`` holds with a value: ``(name, value)``."""
    for n in names:
        v = obj.get(n)
        if v not in (None, ""):
            return n, v
    return None, None


#: field names that carry an item id, in the order they are tried
ID_NAMES = ("id", "item", "item_id", "sample_id", "example_id", "question_id", "uid")
