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

At scale rows are held in columns: a :class:`ScoreTable` (one source's responses, a float64
array per metric) inside :class:`ScoreRows`, a sequence that reads as the list of row dicts
(built on the fly) and lets the hot readers take the arrays (:meth:`ScoreRows.parts`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any, Self

import numpy as np

from metajudge.data.formats import PairKeyIndex, pair_rows_at, response_key
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

#: The field of a computed row that fingerprints every input its metric read (the texts and the
#: record fields they came from: :func:`metajudge.scores.scoring.inputs_digest`); a resumed
#: score file reuses a row only when it matches (and its ``signature``).
INPUTS_FIELD = "inputs"

DIRECTIONS = ("higher", "lower")

#: The ``error`` of a score a score file leaves missing (see :func:`score_cell`).
MISSING_IN_FILE = "missing in the score file"

#: Cells read as a missing score (case and surrounding blanks ignored), besides null and NaN.
MISSING_WORDS = ("", "nan", "null", "none", "na")


def score_cell(v: Any, *, field: str, where: Mapping[str, Any]) -> float | None:
    """A score as a score file gives it, by the one rule every reader of scores follows: a
    number is the score; null, NaN and an empty or :data:`MISSING_WORDS` cell are a *missing*
    score (None: kept as a row with a null score and :data:`MISSING_IN_FILE`, counted per column
    by ``data doctor`` and by the meta-evaluation, never dropped and never 0); an infinite
    value (``inf``, ``1e309``) and anything non-numeric (``True``, a word) are refused
    (:class:`~metajudge.errors.InputError` naming ``where`` and ``field``).

    >>> [score_cell(v, field="s", where={}) for v in (0.5, "2", " NA ", None, float("nan"))]
    [0.5, 2.0, None, None, None]
    """
    if v is None:
        return None
    if isinstance(v, bool):
        raise InputError(f"non-numeric score {v!r}", field=field, **where)
    if isinstance(v, str):
        s = v.strip()
        if s.lower() in MISSING_WORDS:
            return None
        try:
            f = float(s)
        except ValueError:
            raise InputError(f"non-numeric score {v!r}", field=field, **where) from None
    elif isinstance(v, (int, float)):
        f = float(v) if isinstance(v, float) or abs(v) < 2**1023 else math.inf
    else:
        raise InputError(f"non-numeric score {v!r}", field=field, **where)
    if math.isnan(f):
        return None
    if math.isinf(f):
        raise InputError(
            f"infinite score {v!r}: expected a finite number (leave the cell empty for a "
            "missing score)",
            field=field,
            **where,
        )
    return f


def is_missing_cell(v: Any) -> bool:
    """Does :func:`score_cell` read ``v`` as a missing score (rather than a number or an error)?

    >>> [is_missing_cell(v) for v in ("", "NaN", None, 0, "x")]
    [True, True, True, False, False]
    """
    if v is None:
        return True
    if isinstance(v, str):
        return v.strip().lower() in MISSING_WORDS
    return isinstance(v, float) and math.isnan(v)


def missing_error(score: float | None) -> str | None:
    """The ``error`` of a score read from a file: :data:`MISSING_IN_FILE` when it is missing."""
    return MISSING_IN_FILE if score is None else None


def file_signature(metric: str, source: str, *qualifiers: str) -> str:
    """The signature of a score column read from a file: ``metric|<qualifiers>|source:<source>|
    external`` (``source``: the file's name, or ``<dataset>/<file>`` for a shipped one); the one
    place it is spelled.

    >>> file_signature("bleu", "s.csv"), file_signature("qa", "log.eval", "inspect:v2", "epochs:1")
    ('bleu|source:s.csv|external', 'qa|inspect:v2|epochs:1|source:log.eval|external')
    """
    return "|".join((metric, *qualifiers, f"source:{source}", "external"))


def metric_for_dimension(metric: str, dimension: str, available: Iterable[str]) -> str | None:
    """The score column that metric row ``metric`` uses for human ``dimension``.

    ``metric`` itself when it exists; otherwise the dimension-specific member of the family
    ``<metric>_<dimension>`` (e.g. ``ragchecker`` → ``ragchecker_correctness``); ``None`` if
    neither is available.

    >>> metric_for_dimension("ragchecker", "overall", ["ragchecker_overall"])
    'ragchecker_overall'
    >>> metric_for_dimension("bleu", "overall", ["bleu"])
    'bleu'
    """
    avail = set(available)
    if metric in avail:
        return metric
    fam = f"{metric}_{dimension}"
    return fam if fam in avail else None


def collapse_families(metrics: Sequence[str], dimensions: Sequence[str]) -> list[str]:
    """Metric row names: ``X_<dim>`` columns for two or more dimensions become one row ``X``.

    >>> collapse_families(["bleu", "ragchecker_correctness", "ragchecker_overall"], ["correctness", "overall"])
    ['bleu', 'ragchecker']
    """
    out: list[str] = []
    fams: dict[str, int] = {}
    for m in metrics:
        for d in dimensions:
            if m.endswith("_" + d):
                fams[m[: -len(d) - 1]] = fams.get(m[: -len(d) - 1], 0) + 1
    for m in metrics:
        fam = next((m[: -len(d) - 1] for d in dimensions if m.endswith("_" + d)), None)
        name = fam if fam is not None and fams.get(fam, 0) >= 2 and fam not in metrics else m
        if name not in out:
            out.append(name)
    return out


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
    inputs: str | None = None,
) -> ScoreRow:
    """One score row in the canonical layout (``direction``: the column's, when declared;
    ``inputs``: the :data:`INPUTS_FIELD` fingerprint of a computed row).

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
    if inputs is not None:
        row[INPUTS_FIELD] = inputs
    return row


def check_score_row(
    obj: Any, path: Path, line: int | None, *, external: bool = False, prefix: str = ""
) -> ScoreRow:
    """One score row object checked; every reader of score rows uses it, errors name the file,
    line and field.

    A score is a finite JSON number or null (never a string such as ``"0.5"``); NaN is a
    missing score (:func:`score_cell`'s rule; its ``error``: :data:`MISSING_IN_FILE`); ``key``, ``metric``, ``item``, ``signature``, ``system``, ``error`` are strings, ``side`` is
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
    nan = isinstance(s, float) and math.isnan(s)
    if nan:
        s = None  # a missing score, as score_cell reads NaN in every score file
    if s is not None and (isinstance(s, bool) or not isinstance(s, (int, float))):
        raise err("score", f"non-numeric score {s!r}: expected a finite number or null")
    if s is not None and not math.isfinite(s):
        raise err("score", f"expected a finite number or null, got {s!r}")
    if s is None and not obj.get("error") and not external and not nan:
        raise err("error", "score is null but no error says why")
    d = obj.get("details") or {}
    if not isinstance(d, dict):
        raise err("details", f"expected an object, got {type(d).__name__}")
    side = obj.get("side")
    if side not in ((None, "", "a", "b") if external else (None, "a", "b")):
        raise err("side", f"expected 'a', 'b' or null, got {side!r}")
    row = {
        "key": obj.get("key"),
        "item": obj.get("item"),
        "system": obj.get("system"),
        "side": side or None,
        "metric": obj["metric"],
        "score": None if s is None else float(s),
        "signature": obj.get("signature"),
        "details": d,
        "error": obj.get("error") or (MISSING_IN_FILE if nan else None),
    }
    if isinstance(obj.get(INPUTS_FIELD), str):
        row[INPUTS_FIELD] = obj[INPUTS_FIELD]
    return row


# ---------------------------------------------------------------------------------------------
# Score rows held in columns


class RowKeys(Sequence[str]):
    """The response keys of a score table's rows made when read from each row's item id and
    side (or system), not held as 2,000,000 strings at a million pairs: a pairwise file's item
    ids are the dataset's own strings (:class:`~metajudge.scores.readers.alignment.KeyMap`).

    >>> keys = RowKeys(["p", "p"], ["a", "b"])
    >>> len(keys), keys[1], list(keys)
    (2, 'p::b', ['p::a', 'p::b'])
    """

    __slots__ = ("items", "others")

    def __init__(self, items: list[str], others: list[str]) -> None:
        self.items, self.others = items, others

    def append(self, item: str, other: str) -> None:
        self.items.append(item)
        self.others.append(other)

    def extend(self, items: Sequence[str], others: Sequence[str]) -> None:
        self.items += items
        self.others += others

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return response_key(self.items[i], self.others[i])

    def __iter__(self) -> Iterator[str]:
        return map(response_key, self.items, self.others)


class RowIds:
    """The responses of a :class:`ScoreTable`, one entry per table row: ``keys``, ``systems``
    and ``sides`` (parallel lists, shared by every metric column of the table). A row's item
    is read from its key (:func:`response_key` is ``item::side`` or ``item::system``), not
    stored a second time."""

    __slots__ = ("keys", "sides", "systems")

    def __init__(
        self, keys: Sequence[str], systems: list[str | None], sides: list[str | None]
    ) -> None:
        self.keys, self.systems, self.sides = keys, systems, sides

    def __len__(self) -> int:
        return len(self.keys)

    def item(self, i: int) -> str:
        """Row ``i``'s item id: its key less ``::side`` (or ``::system``)."""
        if isinstance(self.keys, RowKeys):
            return self.keys.items[i]
        key, side = self.keys[i], self.sides[i]
        return key[: len(key) - len(side if side is not None else str(self.systems[i])) - 2]


class MetricColumn:
    """One metric's scores over a :class:`ScoreTable`'s rows: ``scores`` (float64, NaN where the
    row has no score), the column's ``signature`` and declared ``direction``; ``missing``: the
    ``error`` of a row without a score, ``errors``: other errors by row (None: no error),
    ``labels``: a categorical label by row (its score NaN)."""

    __slots__ = ("direction", "errors", "labels", "metric", "missing", "scores", "signature")

    def __init__(
        self,
        metric: str,
        scores: Any,
        signature: str,
        *,
        direction: str | None = None,
        missing: str | None = None,
        errors: dict[int, str | None] | None = None,
        labels: dict[int, str] | None = None,
    ) -> None:
        self.metric, self.scores, self.signature = metric, scores, signature
        self.direction, self.missing = direction, missing
        self.errors = errors or {}
        self.labels = labels or {}

    def error_at(self, i: int) -> str | None:
        """Row ``i``'s error (None when it has a score)."""
        if i in self.errors:
            return self.errors[i]
        s = self.scores[i]
        return self.missing if math.isnan(s) else None


class ScoreTable:
    """Score rows in columns: the rows of one source (a wide score file, the trivial baselines)
    as :class:`RowIds` and one :class:`MetricColumn` per metric — memory O(responses × metrics)
    floats, not a dict per score. Read as rows it is response-major (a response's metrics in
    column order), each row built on the fly as :func:`make_row` builds it."""

    __slots__ = ("columns", "ids")

    def __init__(self, ids: RowIds, columns: list[MetricColumn]) -> None:
        self.ids, self.columns = ids, columns

    def __len__(self) -> int:
        return len(self.ids) * len(self.columns)

    def row(self, i: int, col: MetricColumn) -> ScoreRow:
        """Table row ``i`` of column ``col`` as a score row."""
        s = col.scores[i]
        ids = self.ids
        row: ScoreRow = {
            "key": ids.keys[i],
            "item": ids.item(i),
            "system": ids.systems[i],
            "side": ids.sides[i],
            "metric": col.metric,
            "score": None if math.isnan(s) else float(s),
            "signature": col.signature,
            "details": {},
            "error": col.error_at(i),
        }
        if col.direction is not None:
            row["direction"] = col.direction
        if i in col.labels:
            row["label"] = col.labels[i]
        return row

    def __iter__(self) -> Iterator[ScoreRow]:
        cols = self.columns
        for i in range(len(self.ids)):
            for c in cols:
                yield self.row(i, c)

    def __getitem__(self, n: int) -> ScoreRow:
        i, c = divmod(n, len(self.columns))
        return self.row(i, self.columns[c])


Part = ScoreTable | list[ScoreRow]


class ScoreRows(Sequence[ScoreRow]):
    """A list of score rows whose parts are :class:`ScoreTable` columns or plain row lists.

    Every reader of rows iterates it as it iterates a list (rows are built on the fly); the hot
    readers (:func:`metajudge.analyses.metric_vs_human.aligned.index_score_rows`, the report)
    read the tables' columns through :meth:`parts`. ``+`` with a list or another
    :class:`ScoreRows` keeps the tables as they are.

    >>> import numpy as np
    >>> t = ScoreTable(RowIds(["q::a"], ["s"], ["a"]), [MetricColumn("m", np.array([2.0]), "m")])
    >>> rows = ScoreRows([t]) + [make_row(item="q", system="s", side="b", metric="m", score=1.0, signature="m")]
    >>> len(rows), rows[0]["score"], [r["key"] for r in rows]
    (2, 2.0, ['q::a', 'q::b'])
    """

    def __init__(self, parts: Iterable[Part] = ()) -> None:
        self._parts: list[Part] = [p for p in parts if len(p)]

    def parts(self) -> list[Part]:
        """The tables and row lists, in row order."""
        return list(self._parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self._parts)

    def __iter__(self) -> Iterator[ScoreRow]:
        for p in self._parts:
            yield from p

    def __getitem__(self, n: Any) -> Any:
        if isinstance(n, slice):
            return list(self)[n]
        if n < 0:
            n += len(self)
        for p in self._parts:
            if 0 <= n < len(p):
                return p[n]
            n -= len(p)
        raise IndexError("score row index out of range")

    def __add__(self, other: Iterable[ScoreRow]) -> ScoreRows:
        return ScoreRows([*self._parts, *_parts_of(other)])

    def __radd__(self, other: Iterable[ScoreRow]) -> ScoreRows:
        return ScoreRows([*_parts_of(other), *self._parts])

    def __iadd__(self, other: Iterable[ScoreRow]) -> Self:
        self._parts += [p for p in _parts_of(other) if len(p)]
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ScoreRows({len(self)} rows in {len(self._parts)} parts)"


def _parts_of(rows: Iterable[ScoreRow]) -> list[Part]:
    if isinstance(rows, ScoreRows):
        return rows.parts()
    if isinstance(rows, ScoreTable):
        return [rows]
    return [list(rows)]


def row_metrics(rows: Iterable[ScoreRow]) -> list[str]:
    """The distinct metrics of ``rows``, in first-seen order (a table's from its columns)."""
    out: dict[str, None] = {}
    for p in _parts_of(rows):
        if isinstance(p, ScoreTable):
            out.update(dict.fromkeys(c.metric for c in p.columns))
        else:
            out.update(dict.fromkeys(r["metric"] for r in p))
    return list(out)


def select_metrics(rows: Iterable[ScoreRow], keep: set[str]) -> ScoreRows:
    """The rows of the metrics ``keep`` (a table keeps those columns)."""
    out: list[Part] = []
    for p in _parts_of(rows):
        if isinstance(p, ScoreTable):
            out.append(ScoreTable(p.ids, [c for c in p.columns if c.metric in keep]))
        else:
            out.append([r for r in p if r["metric"] in keep])
    return ScoreRows(out)


def renamed(rows: Iterable[ScoreRow], metric: str) -> ScoreRows:
    """The rows under the metric name ``metric`` (a table's columns renamed, scores shared)."""
    out: list[Part] = []
    for p in _parts_of(rows):
        if isinstance(p, ScoreTable):
            cols = [copy.copy(c) for c in p.columns]
            for c in cols:
                c.metric = metric
            out.append(ScoreTable(p.ids, cols))
        else:
            out.append([{**r, "metric": metric} for r in p])
    return ScoreRows(out)


class TableScores(Mapping[str, float | None]):
    """One :class:`MetricColumn` read as ``{key: score or None}`` (a table's key index shared
    by its columns; no dict entry per score)."""

    def __init__(self, index: Mapping[str, int], col: MetricColumn) -> None:
        self.index, self.col = index, col

    def __getitem__(self, key: str) -> float | None:
        s = self.col.scores[self.index[key]]
        return None if math.isnan(s) else float(s)

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)


def score_values(
    scores: Mapping[str, float | None],
    keys: Sequence[str],
    memo: dict[Any, Any] | None = None,
) -> np.ndarray:
    """The scores of ``keys`` as floats (absent, None or not a number: NaN): a
    :class:`TableScores` in bulk from its arrays (one dict lookup per key, no float object per
    score; ``memo`` keeps the keys' positions in a table's index, which every column of that
    table shares: the metrics of one score file look their keys up once).

    >>> score_values({"a": 1.0, "b": None, "c": "x"}, ["b", "a", "c", "d"]).tolist()
    [nan, 1.0, nan, nan]
    """
    if not isinstance(scores, TableScores):
        return np.array([_float_or_nan(v) for v in map(scores.get, keys)], dtype=float)
    j = _positions(scores.index, keys, {} if memo is None else memo)
    out = np.asarray(scores.col.scores, dtype=float)[j]
    out[j < 0] = np.nan
    return out


def _positions(index: Mapping[str, int], keys: Sequence[str], memo: dict[Any, Any]) -> np.ndarray:
    """Each key's position in ``index`` (-1: absent), remembered in ``memo`` by the identity of
    both (the objects are kept with the entry, so an id is not reused while it stands)."""
    hit = memo.get(("positions", id(index), id(keys)))
    if hit is not None and hit[0] is index and hit[1] is keys:
        return hit[2]
    j = strided_positions(index, keys)
    if j is None:
        j = np.fromiter(map(index.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
    memo[("positions", id(index), id(keys))] = (index, keys, j)
    return j


def strided_positions(index: Mapping[str, int], keys: Sequence[str]) -> np.ndarray | None:
    """The positions of ``keys`` in ``index`` (a dict or a
    :class:`~metajudge.data.formats.PairKeyIndex`) when they lie at one stride in its order,
    each at the position it holds (a score file listing the dataset's pairs in order: the ``a``
    keys at 0, 2, 4 …), checked key for key and position for position in two list comparisons;
    else None (look them up one by one). 2,000,000 keys: 0.1 s where the lookups take 1 s.

    >>> strided_positions({"p::a": 0, "p::b": 1, "q::a": 2, "q::b": 3}, ["p::b", "q::b"])
    array([1, 3])
    >>> strided_positions({"p::a": 0, "p::b": 1, "q::a": 2}, ["q::a", "p::a"]) is None
    True
    >>> strided_positions(PairKeyIndex(("p", "q", "r")), ["q::a", "q::b", "r::a"])
    array([2, 3, 4])
    """
    n = len(keys)
    if n < 2 or not isinstance(index, (dict, PairKeyIndex)):
        return None
    p0, p1 = index.get(keys[0]), index.get(keys[1])
    if p0 is None or p1 is None or p1 <= p0 or p0 + (n - 1) * (p1 - p0) >= len(index):
        return None
    at = range(p0, p0 + n * (p1 - p0), p1 - p0)
    if not _held_at(index, at, keys):
        return None
    return np.arange(at.start, at.stop, at.step, dtype=np.int64)


def _held_at(index: Mapping[str, int], at: range, keys: Sequence[str]) -> bool:
    """``keys`` are the keys of ``index`` at positions ``at``, each at its position (a score
    file's :class:`RowKeys` against a :class:`~metajudge.data.formats.PairKeyIndex`: their ids
    and sides compared, the ids the dataset's own strings)."""
    if not isinstance(index, PairKeyIndex):
        return _dict_keys_at(index, at) == list(keys)  # type: ignore[arg-type]
    if not index.unique():
        return False
    if isinstance(keys, RowKeys):
        ids, sides = pair_rows_at(index.ids, at)
        return ids == keys.items and sides == keys.others
    return index.keys_at(at) == list(keys)


def _dict_keys_at(index: dict[str, int], at: range) -> list[str] | None:
    """The keys of ``index`` at ``at`` in its order, None unless each is at its position."""
    where = slice(at.start, at.stop, at.step)
    return list(index)[where] if list(index.values())[where] == list(at) else None


def _float_or_nan(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def metric_scores(
    rows: Iterable[ScoreRow], metric: str
) -> Iterator[tuple[str, str | None, float | None]]:
    """``(item, side, score or None)`` of ``metric``'s rows, in row order; a table's column read
    from its arrays (no row dict built).

    >>> t = ScoreTable(RowIds(RowKeys(["p", "p"], ["a", "b"]), ["s", "t"], ["a", "b"]),
    ...                [MetricColumn("m", np.array([0.25, np.nan]), "m")])
    >>> list(metric_scores(ScoreRows([t]), "m")) == [(r["item"], r["side"], r["score"]) for r in t]
    True
    """
    for p in _parts_of(rows):
        cols = [c for c in p.columns if c.metric == metric] if isinstance(p, ScoreTable) else []
        if isinstance(p, ScoreTable) and len(cols) < 2:  # (two: its rows interleave them)
            if cols:
                ids = p.ids
                keys = ids.keys
                items = keys.items if isinstance(keys, RowKeys) else map(ids.item, range(len(ids)))
                scores = [None if math.isnan(s) else s for s in cols[0].scores.tolist()]
                yield from zip(items, ids.sides, scores, strict=True)
            continue
        yield from ((r["item"], r.get("side"), r.get("score")) for r in p if r["metric"] == metric)


def detailed_rows(rows: Iterable[ScoreRow]) -> Iterator[ScoreRow]:
    """The rows of ``rows`` that may carry ``details``: a table's rows carry none (``{}``), so
    only the row lists' are read."""
    for p in _parts_of(rows):
        if not isinstance(p, ScoreTable):
            yield from p


def score_maps(rows: Iterable[ScoreRow]) -> dict[str, Mapping[str, float | None]]:
    """``{metric: {key: score or None}}`` of ``rows`` (a later row of a key wins); a metric
    held by one table column alone is read from its arrays (:class:`TableScores`)."""
    parts = _parts_of(rows)
    seen: dict[str, int] = {}
    for p in parts:
        for m in row_metrics(p if isinstance(p, ScoreTable) else ScoreRows([p])):
            seen[m] = seen.get(m, 0) + 1
    out: dict[str, Any] = {}
    for p in parts:
        if not isinstance(p, ScoreTable):
            for r in p:
                out.setdefault(r["metric"], {})[r["key"]] = r.get("score")
            continue
        keys = p.ids.keys
        index = {k: i for i, k in enumerate(keys)}
        for c in p.columns:
            if len(index) == len(keys) and seen[c.metric] == 1:
                out[c.metric] = TableScores(index, c)
                continue
            got = out.setdefault(c.metric, {})
            for k, s in zip(keys, c.scores.tolist(), strict=True):
                got[k] = None if math.isnan(s) else s
    return out
