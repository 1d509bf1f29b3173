"""Partial labels: records without human labels are a data kind, not an error.

A per-response record whose ``scores`` is absent, empty, or holds only ``null`` values carries no
human label (a pairwise record always does: its ``labels`` are required). Such a record still
names a response a judge scored — what ``calibrate estimate`` / ``plan`` need — and every command
that needs labels uses the labelled records and says how many it left out
(:func:`labelled_only`); ``data validate`` counts both per system (:func:`label_counts`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from metajudge.errors import InputError


def is_labelled(rec: Any) -> bool:
    """Whether a record carries at least one human label (any dimension, any annotator)."""
    labels = getattr(rec, "labels", None) or getattr(rec, "scores", None) or {}
    return any(v is not None for vals in labels.values() for v in vals)


def label_counts(records: Iterable[Any]) -> dict[str, dict[str, int]]:
    """``{system: {"labelled": n, "unlabelled": m}}`` (pairwise records: the pair's two systems
    as ``a vs b``), systems sorted."""
    out: dict[str, dict[str, int]] = {}
    for r in records:
        system = getattr(r, "system", None) or f"{r.a.system} vs {r.b.system}"
        c = out.setdefault(system, {"labelled": 0, "unlabelled": 0})
        c["labelled" if is_labelled(r) else "unlabelled"] += 1
    return dict(sorted(out.items()))


def labelled_only(ds: Any, *, what: str = "this command") -> tuple[Any, int]:
    """``ds`` restricted to its labelled records, and how many were left out (``ds`` itself when
    none was); no labelled record at all is an error naming the dataset."""
    keep = [r for r in ds.records if is_labelled(r)]
    left = len(ds.records) - len(keep)
    if not left:
        return ds, 0
    if not keep:
        raise InputError(
            f"none of its {left} records carries a human label: {what} needs labels "
            "(records without labels serve `calibrate estimate` and `calibrate plan`)",
            path=ds.source.get("input") or ds.name,
        )
    return dataclasses.replace(ds, records=keep, _pairs=None), left
