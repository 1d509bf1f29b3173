"""The score row: one score of one response by one metric — the single row type every score
source produces and every analysis reads.

A score row is a dict (JSONL on disk, one row a line)::

    {"key": "17::b", "item": "17", "system": "gpt-4", "side": "b", "metric": "bleu",
     "score": 23.4, "signature": "bleu|nrefs:1|...", "details": {...}, "error": null}

``key`` is :func:`metajudge.data.formats.response_key` (``item::side`` for pairwise records,
``item::system`` for Likert records). ``score`` is ``null`` exactly when the response has no
score, and then ``error`` says why. Rows are unique by ``(key, metric)``. Two optional fields:
``direction`` (``"higher"``/``"lower"``: the column's, when a score file declares it) and
``label`` (a categorical judge's label, ``score`` null).

:func:`make_row` builds one, :func:`check_score_row` validates one read from a file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from metajudge.data.formats import response_key
from metajudge.errors import InputError

#: One score row (see the module docstring for its fields).
ScoreRow = dict[str, Any]

#: The fields every score row has, in the order a score file writes them.
ROW_FIELDS: tuple[str, ...] = (
    "key",
    "item",
    "system",
    "side",
    "metric",
    "score",
    "signature",
    "details",
    "error",
)

#: Fields a row may add: the column's declared direction, a categorical label.
OPTIONAL_FIELDS: tuple[str, ...] = ("direction", "label")

DIRECTIONS = ("higher", "lower")


def make_row(
    *,
    item: str,
    system: str | None,
    side: str | None,
    metric: str,
    score: float | None,
    signature: str,
    details: Mapping[str, Any] | None = None,
    error: str | None = None,
    direction: str | None = None,
) -> ScoreRow:
    """One score row in the canonical layout (``direction``: the column's, when declared).

    >>> make_row(item="q1", system="s", side="a", metric="m", score=1.0, signature="m")["key"]
    'q1::a'
    """
    key = response_key(item, side if side is not None else str(system))
    row: ScoreRow = {
        "key": key,
        "item": item,
        "system": system,
        "side": side,
        "metric": metric,
        "score": score,
        "signature": signature,
        "details": dict(details or {}),
        "error": error,
    }
    if direction is not None:
        row["direction"] = direction
    return row


def check_score_row(
    obj: Any, path: Path, line: int | None, *, external: bool = False, prefix: str = ""
) -> ScoreRow:
    """One score row object checked; every reader of score rows uses it, errors name the file,
    line and field.

    A score is a finite JSON number or null (never a string such as ``"0.5"``, never NaN);
    ``key``, ``metric``, ``item``, ``signature``, ``system``, ``error`` are strings, ``side`` is
    ``a``, ``b`` or null, ``details`` an object. A row this package wrote (``external=False``)
    has ``key``, ``item`` and ``signature`` and a null score says why in ``error``; a row from
    elsewhere (``external=True``: a ``--scores`` file read against a dataset) needs only
    ``metric`` and ``score`` (the ids are resolved against the dataset by the caller).
    """

    def err(field: str, msg: str) -> InputError:
        return InputError(msg, path=path, line=line, field=prefix + field)

    if not isinstance(obj, dict):
        raise err("<row>", f"expected a JSON object, got {type(obj).__name__}")
    needed = ("metric",) if external else ("key", "metric", "item", "signature")
    for f in ("key", "metric", "item", "signature", "system", "error"):
        if f not in obj or (external and obj[f] is None and f not in needed):
            if f in needed:
                raise err(f, "missing required field")
            continue
        v = obj[f]
        if f in ("system", "error") and v is None:
            continue
        if not isinstance(v, str) or (f in ("key", "metric", "item") and not v):
            raise err(f, f"expected a non-empty string, got {v!r}")
    if "score" not in obj:
        raise err("score", "missing required field")
    s = obj["score"]
    if s is not None and (isinstance(s, bool) or not isinstance(s, (int, float))):
        raise err("score", f"non-numeric score {s!r}: expected a finite number or null")
    if s is not None and not math.isfinite(s):
        raise err("score", f"expected a finite number or null, got {s!r}")
    if s is None and not obj.get("error") and not external:
        raise err("error", "score is null but no error says why")
    d = obj.get("details") or {}
    if not isinstance(d, dict):
        raise err("details", f"expected an object, got {type(d).__name__}")
    side = obj.get("side")
    if side not in ((None, "", "a", "b") if external else (None, "a", "b")):
        raise err("side", f"expected 'a', 'b' or null, got {side!r}")
    return {
        "key": obj.get("key"),
        "item": obj.get("item"),
        "system": obj.get("system"),
        "side": side or None,
        "metric": obj["metric"],
        "score": None if s is None else float(s),
        "signature": obj.get("signature"),
        "details": d,
        "error": obj.get("error"),
    }
