"""One aligned view of a dataset and its scores: the arrays every analysis reads.

:func:`align` turns human-labelled records into

* **responses** (one per Likert ``(input, system)`` or pairwise side ``a``/``b``) with their key
  (:func:`~metajudge.data.formats.response_key`), their item (input) index and, for Likert
  data, their labels per dimension as a (responses × annotators) matrix (NaN = no label);
* **pairs** (index of response a and b, positive = b better) with their item and labels per
  dimension as a (pairs × annotators) matrix: the records' labels for pairwise data; for Likert
  data the per-annotator difference b − a when both responses have aligned annotators, else
  the difference of the annotators' means (:func:`~metajudge.data.formats.likert_to_pairwise`);
* **items**: the resampling unit of every bootstrap, in first-seen order.

:func:`index_score_rows` reads score rows into per-metric columns with their bookkeeping
(signatures, unscored, unmatched); :meth:`AlignedView.values` gives a metric's value per
response (NaN = absent or unscored). The pairwise-difference protocol reads pairs, the
pointwise protocol reads responses; labels are numeric here (a categorical kind would carry
codes in the same matrices).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from metajudge.data.formats import (
    LikertRecord,
    PairKeyIndex,
    PairKeys,
    PairwiseRecord,
    Record,
    response_key,
)
from metajudge.errors import InputError
from metajudge.scores.readers.rows import strided_positions
from metajudge.stats import aggregate_labels

FArr = NDArray[np.float64]
IArr = NDArray[np.int64]
Columns = dict[str, Mapping[str, float | None]]


@dataclass(frozen=True)
class AlignedView:
    """Responses, pairs, items and labels of one dataset (see the module docstring)."""

    dataset: str
    kind: Literal["likert", "pairwise"]
    dimensions: tuple[str, ...]
    items: tuple[str, ...]
    keys: Sequence[str]  # (pairwise: :class:`~metajudge.data.formats.PairKeys`, made when read)
    resp_item: IArr
    resp_labels: Mapping[str, FArr] | None
    pair_ids: tuple[str, ...]
    pair_a: IArr
    pair_b: IArr
    pair_item: IArr
    pair_labels: Mapping[str, FArr]
    half_width: float = 1.0
    key_index: Mapping[str, int] = field(default_factory=dict, repr=False)
    systems: tuple[str, ...] = ()  # Likert: system names; pairwise: the sides "a", "b"
    resp_system: IArr = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    def values(self, column: Mapping[str, float | None]) -> FArr:
        """A metric's value per response (NaN where absent or unscored)."""
        if isinstance(column, ScoreColumn) and column.index is self.key_index:
            return column.values.copy()
        out = np.full(len(self.keys), np.nan)
        for k, i in self.key_index.items():
            v = column.get(k)
            if v is not None and math.isfinite(v):
                out[i] = float(v)
        return out

    def absent(self, column: Mapping[str, float | None], responses: IArr) -> int:
        """How many of ``responses`` (distinct indices) have no row in ``column``."""
        idx = responses
        if isinstance(column, ScoreColumn) and column.index is self.key_index:
            return int((~column.present[idx]).sum())
        return sum(1 for i in idx if self.keys[i] not in column)

    def differences(self, values: FArr, direction: str = "higher") -> FArr:
        """d = m(b) − m(a) per pair, negated for lower-is-better metrics."""
        d = values[self.pair_b] - values[self.pair_a]
        return -d if direction == "lower" else d


def _matrix(rows: Sequence[Sequence[float | None] | None]) -> FArr:
    """The (rows × widest row) label matrix, straight into one preallocated array: NaN for a
    ``None`` label, a missing or empty row and the padding of shorter rows."""
    n = len(rows)
    widths = [len(r) if r else 0 for r in rows]
    width = max(widths, default=1) or 1
    if n and min(widths) == width:  # every row full: one conversion
        flat = chain.from_iterable(rows)  # type: ignore[arg-type]
        return np.fromiter(flat, dtype=float, count=n * width).reshape(n, width)
    m = np.full((n, width), np.nan)
    for i, r in enumerate(rows):
        if r:
            m[i, : len(r)] = r
    return m


def _vals(v: Sequence[float | None] | None) -> list[float]:
    try:
        return [math.nan if x is None else float(x) for x in (v or ())]
    except (TypeError, ValueError):  # a label word of a categorical dataset
        raise InputError(
            f"labels {list(v or ())!r} are not numbers: a categorical dataset's labels have no "
            "mean or difference to compare with a judge score",
            field="dimension",
        ) from None


def binary_as_numbers(records: Sequence[Any], card: Any, dim: str) -> Sequence[Any]:
    """``records`` with a binary dataset's labels on ``dim`` as 0/1 (1: the card's second
    label, e.g. ``True``; their mean is its share, as ``calibrate estimate`` reads them);
    other datasets' records as they are."""
    if card.label_kind != "binary":
        return records
    from dataclasses import replace

    one = card.scale_of(dim).labels[1]

    def as01(v: Any) -> float | None:
        return None if v is None else float(v == one)

    return [
        replace(r, scores={**r.scores, dim: tuple(as01(v) for v in r.scores.get(dim, ()))})
        for r in records
    ]


def _likert_pair_label(a: LikertRecord, b: LikertRecord, dim: str) -> list[float]:
    """Per-annotator b − a when the annotators line up, else mean(b) − mean(a) (one value)."""
    sa, sb = _vals(a.scores.get(dim)), _vals(b.scores.get(dim))
    row = [y - x for x, y in zip(sa, sb, strict=False)]
    if len(sa) == len(sb) and any(math.isfinite(v) for v in row):
        return row
    fa = [v for v in sa if math.isfinite(v)]
    fb = [v for v in sb if math.isfinite(v)]
    return [sum(fb) / len(fb) - sum(fa) / len(fa)] if fa and fb else [math.nan]


class _Builder:
    def __init__(self, dims: Sequence[str]) -> None:
        self.dims = list(dims)
        self.items: dict[str, int] = {}
        self.keys: list[str] = []
        self.resp_item: list[int] = []
        self.systems: dict[str, int] = {}
        self.resp_system: list[int] = []
        self.resp_lab: dict[str, list[list[float]]] = {d: [] for d in dims}
        self.pairs: list[tuple[str, int, int, int]] = []
        self.pair_lab: dict[str, list[list[float]]] = {d: [] for d in dims}

    def item(self, name: str) -> int:
        return self.items.setdefault(name, len(self.items))

    def response(self, key: str, item: int, system: str) -> int:
        self.keys.append(key)
        self.resp_item.append(item)
        self.resp_system.append(self.systems.setdefault(system, len(self.systems)))
        return len(self.keys) - 1


def _add_likert(b: _Builder, records: Sequence[LikertRecord]) -> None:
    by_item: dict[str, list[LikertRecord]] = {}
    for r in records:
        by_item.setdefault(r.id, []).append(r)
    for item, recs in by_item.items():
        g = b.item(item)
        recs = sorted(recs, key=lambda r: r.system)
        first = len(b.keys)
        for r in recs:
            b.response(response_key(r.id, r.system), g, r.system)
            for d in b.dims:
                b.resp_lab[d].append(_vals(r.scores.get(d)))
        for i in range(len(recs)):
            for j in range(i + 1, len(recs)):
                pid = f"{item}::{recs[i].system}|{recs[j].system}"
                b.pairs.append((pid, first + i, first + j, g))
                for d in b.dims:
                    b.pair_lab[d].append(_likert_pair_label(recs[i], recs[j], d))


def _pairwise_fields(records: Sequence[PairwiseRecord], dims: Sequence[str]) -> dict[str, Any]:
    """The :class:`AlignedView` fields of pairwise ``records``, in bulk: responses ``a``, ``b``
    of pair ``i`` are ``2i``, ``2i + 1``; the item of a pair is its ``meta.item_id``, else its id."""
    n = len(records)
    ids = tuple(r.id for r in records)
    names = [str(r.meta.get("item_id", r.id)) if r.meta else r.id for r in records]
    items = dict.fromkeys(names)  # first-seen order
    if len(items) == n:  # one pair per item: item i is pair i's
        pair_item = np.arange(n, dtype=np.int64)
    else:
        at = {name: i for i, name in enumerate(items)}
        pair_item = np.fromiter(map(at.__getitem__, names), dtype=np.int64, count=n)
    at = np.arange(0, 2 * n, 2, dtype=np.int64)
    return {
        "items": tuple(items),
        "keys": PairKeys(ids),
        "resp_item": np.repeat(pair_item, 2),
        "resp_labels": None,
        "pair_ids": ids,
        "pair_a": at,
        "pair_b": at + 1,
        "pair_item": pair_item,
        "pair_labels": {d: _matrix([r.labels.get(d) for r in records]) for d in dims},
        "key_index": PairKeyIndex(ids),
        "systems": ("a", "b"),
        "resp_system": np.tile(np.array([0, 1], dtype=np.int64), n),
    }


def _likert_fields(records: Sequence[LikertRecord], dims: Sequence[str]) -> dict[str, Any]:
    """The :class:`AlignedView` fields of Likert ``records`` (:func:`_add_likert`)."""
    b = _Builder(dims)
    _add_likert(b, records)
    return {
        "items": tuple(b.items),
        "keys": tuple(b.keys),
        "resp_item": np.asarray(b.resp_item, dtype=np.int64),
        "resp_labels": {d: _matrix(v) for d, v in b.resp_lab.items()},
        "pair_ids": tuple(p[0] for p in b.pairs),
        "pair_a": np.asarray([p[1] for p in b.pairs], dtype=np.int64),
        "pair_b": np.asarray([p[2] for p in b.pairs], dtype=np.int64),
        "pair_item": np.asarray([p[3] for p in b.pairs], dtype=np.int64),
        "pair_labels": {d: _matrix(v) for d, v in b.pair_lab.items()},
        "key_index": {k: i for i, k in enumerate(b.keys)},
        "systems": tuple(b.systems),
        "resp_system": np.asarray(b.resp_system, dtype=np.int64),
    }


def align(
    records: Sequence[Record],
    *,
    dimensions: Sequence[str],
    dataset: str = "",
    half_width: float = 1.0,
) -> AlignedView:
    """The aligned view of human-labelled ``records`` (all Likert or all pairwise).

    ``half_width`` is the half-width of the pairwise label scale (minmax normalisation).
    """
    kinds = {type(r) for r in records}
    if not records:
        raise InputError("no human-labelled records", field="records")
    if len(kinds) != 1 or not kinds <= {LikertRecord, PairwiseRecord}:
        raise InputError("records mix pairwise and Likert kinds", field="records")
    likert = kinds == {LikertRecord}
    fields = (_likert_fields if likert else _pairwise_fields)(records, list(dimensions))  # type: ignore[arg-type]
    return AlignedView(
        dataset=dataset,
        kind="likert" if likert else "pairwise",
        dimensions=tuple(dimensions),
        half_width=float(half_width),
        **fields,
    )


def align_dataset(dataset: Any, dimensions: Sequence[str] | None = None) -> AlignedView:
    """:func:`align` for a loaded :class:`~metajudge.data.registry.Dataset`."""
    card = dataset.card
    pcard = dataset.pairwise_card() if hasattr(dataset, "pairwise_card") else card
    return align(
        dataset.records,
        dimensions=list(dimensions or card.dimensions),
        dataset=card.name,
        half_width=float(pcard.scale.half_width),
    )


@dataclass
class ColumnInfo:
    """Bookkeeping of one score column: signatures, unscored rows and their errors, unmatched keys."""

    signatures: set[str] = field(default_factory=set)
    n_errors: int = 0
    n_unmatched: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    direction: str | None = None  # declared by the score rows ("higher" / "lower")


def _score_value(r: Mapping[str, Any], i: int, key: str, metric: str) -> float | None:
    s = r.get("score")
    if s is None:
        return None
    if isinstance(s, bool) or not isinstance(s, (int, float)):
        raise InputError(
            f"non-numeric score {s!r} for {key!r} metric {metric!r}", field=f"scores[{i}].score"
        )
    return float(s) if math.isfinite(float(s)) else None


class ScoreColumn(Mapping[str, float | None]):
    """One metric's scores as arrays over the view's responses: ``values`` (NaN where absent or
    unscored) and ``present`` (a score row was given, scored or not). Reads as the mapping
    ``{key: score or None}`` of the keys with a row; memory O(responses), not a dict entry and
    a float object per score."""

    def __init__(self, index: Mapping[str, int], values: FArr, present: NDArray[np.bool_]):
        self.index, self.values, self.present = index, values, present

    def __getitem__(self, key: str) -> float | None:
        i = self.index[key]
        if not self.present[i]:
            raise KeyError(key)
        v = self.values[i]
        return None if math.isnan(v) else float(v)

    def __contains__(self, key: object) -> bool:
        i = self.index.get(key) if isinstance(key, str) else None
        return i is not None and bool(self.present[i])

    def __iter__(self) -> Iterator[str]:
        keys = list(self.index)
        return (keys[i] for i in np.flatnonzero(self.present))

    def __len__(self) -> int:
        return int(self.present.sum())


def index_score_rows(
    rows: Iterable[Mapping[str, Any]], wanted_keys: Iterable[str] | Mapping[str, int]
) -> tuple[Columns, dict[str, ColumnInfo]]:
    """Score rows (``key``, ``metric``, ``score`` …) → ``{metric: {key: score}}`` and bookkeeping.

    ``wanted_keys``: the response keys (or their index, as :attr:`AlignedView.key_index`);
    each column is a :class:`ScoreColumn` over them. Rows whose key is not wanted are counted
    as unmatched; a duplicate (metric, key) or a non-numeric score is an
    :class:`~metajudge.errors.InputError` naming the row.
    """
    index = (
        wanted_keys
        if isinstance(wanted_keys, Mapping)
        else {k: i for i, k in enumerate(dict.fromkeys(wanted_keys))}
    )
    found: dict[str, _Pending] = {}
    info: dict[str, ColumnInfo] = {}
    offset = 0
    for part in _parts(rows):
        if _is_table(part):
            offset += _index_table(part, index, found, info, offset)
        else:
            offset += _index_rows(part, index, found, info, offset)
    columns: Columns = {}
    for metric, pending in found.items():
        col = pending.column()
        if col is not None:
            columns[metric] = col
    return columns, info


def _parts(rows: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The parts of a :class:`~metajudge.scores.readers.rows.ScoreRows` (its tables read in columns);
    other rows as one part."""
    parts = getattr(rows, "parts", None)
    return list(parts()) if callable(parts) else [rows]


def _is_table(part: Any) -> bool:
    return hasattr(part, "columns") and hasattr(part, "ids")


def _pending(
    found: dict[str, _Pending], info: dict[str, ColumnInfo], index: Mapping[str, int], m: str
) -> tuple[_Pending, ColumnInfo]:
    inf = info.get(m)
    if inf is None:
        inf = info[m] = ColumnInfo()
        found[m] = _Pending(index, m)
    return found[m], inf


def _index_table(
    table: Any,
    index: Mapping[str, int],
    found: dict[str, _Pending],
    info: dict[str, ColumnInfo],
    offset: int,
) -> int:
    """A :class:`~metajudge.scores.readers.rows.ScoreTable`'s columns into the pending columns: one
    key lookup per table row, shared by its metrics; row numbers (``scores[i]``) as the table
    reads as rows (response-major); returns its number of rows."""
    keys = table.ids.keys
    j = strided_positions(index, keys)  # (a score file in the dataset's order)
    if j is None:
        j = np.fromiter(map(index.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
    hit = np.flatnonzero(j >= 0)
    n_cols = len(table.columns)
    for c, col in enumerate(table.columns):
        pend, inf = _pending(found, info, index, col.metric)
        inf.n_unmatched += len(keys) - hit.size
        if not hit.size:
            continue
        vals = np.asarray(col.scores, dtype=np.float64)
        if hit.size < vals.size:
            vals = vals[hit]
        pend.add_many(j[hit] if hit.size < j.size else j, vals, offset + hit * n_cols + c)
        if col.signature:
            inf.signatures.add(str(col.signature))
        if col.direction is not None:
            _note_direction(inf, col.direction, col.metric, int(offset + hit[0] * n_cols + c))
        unscored = hit[np.isnan(vals)]
        inf.n_errors += int(unscored.size)
        if col.errors:
            for r in unscored.tolist():
                err = str(col.error_at(r) or "no score")[:120]
                inf.errors[err] = inf.errors.get(err, 0) + 1
        elif unscored.size:
            err = str(col.missing or "no score")[:120]
            inf.errors[err] = inf.errors.get(err, 0) + int(unscored.size)
    return len(keys) * n_cols


def _index_rows(
    rows: Iterable[Mapping[str, Any]],
    index: Mapping[str, int],
    found: dict[str, _Pending],
    info: dict[str, ColumnInfo],
    offset: int,
) -> int:
    """Score rows one by one into the pending columns (``offset``: the first row's number);
    returns their number."""
    where = index.get
    i = offset - 1
    for i, r in enumerate(rows, start=offset):
        try:
            metric, key = r["metric"], r["key"]
        except (KeyError, TypeError):
            raise InputError("score row without 'metric' and 'key'", field=f"scores[{i}]") from None
        inf = info.get(metric)
        if inf is None:
            inf = info[metric] = ColumnInfo()
            found[metric] = _Pending(index, metric)
        j = where(key)
        if j is None:
            inf.n_unmatched += 1
            continue
        s = r.get("score")
        if s.__class__ is not float or s - s != 0.0:  # (fast path: a finite float)
            s = _score_value(r, i, key, metric)
        found[metric].add(j, math.nan if s is None else s, i)
        if r.get("signature"):
            inf.signatures.add(str(r["signature"]))
        if r.get("direction") is not None:
            _note_direction(inf, r["direction"], metric, i)
        if s is None:
            inf.n_errors += 1
            err = str(r.get("error") or "no score")[:120]
            inf.errors[err] = inf.errors.get(err, 0) + 1
    return i + 1 - offset


class _Pending:
    """One metric's score rows, gathered in compact buffers and moved into its
    :class:`ScoreColumn` every :attr:`FLUSH` rows (memory O(responses) throughout)."""

    FLUSH = 1 << 16

    def __init__(self, index: Mapping[str, int], metric: str) -> None:
        self.index, self.metric = index, metric
        self.col: ScoreColumn | None = None
        self._reset()

    def _reset(self) -> None:
        self.at, self.vals, self.row_no = array("q"), array("d"), array("q")

    def add(self, j: int, v: float, row: int) -> None:
        self.at.append(j)
        self.vals.append(v)
        self.row_no.append(row)
        if len(self.at) >= self.FLUSH:
            self.flush()

    def add_many(self, j: IArr, vals: FArr, rows: IArr) -> None:
        """Rows at view indices ``j`` with scores ``vals`` (NaN: unscored), row numbers ``rows``.
        The first rows of a column that give every response in the view's order (a score file
        written for this dataset) are its values as they are, not copied: read, never written
        (any later row of the column is a duplicate)."""
        self.flush()
        n = len(self.index)
        if self.col is None and j.size == n and np.array_equal(j, np.arange(n)):
            self.col = ScoreColumn(self.index, vals, np.ones(n, dtype=bool))
            return
        self._put(j, vals, rows)

    def flush(self) -> None:
        """Move the buffered rows into the column."""
        if not len(self.at):
            return
        at, vals, row_no = self.at, self.vals, self.row_no
        self._reset()
        self._put(
            np.frombuffer(at, dtype=np.int64),
            np.frombuffer(vals, dtype=float),
            np.frombuffer(row_no, dtype=np.int64),
        )

    def _put(self, j: IArr, vals: FArr, row_no: IArr) -> None:
        """Rows into the column; a second row for a key is an error naming that row."""
        n = len(self.index)
        if self.col is None:
            self.col = ScoreColumn(self.index, np.full(n, np.nan), np.zeros(n, dtype=bool))
        if j.size and (np.bincount(j, minlength=n).max() > 1 or bool(self.col.present[j].any())):
            _, first = np.unique(j, return_index=True)
            dup = np.flatnonzero(self.col.present[j])
            again = np.setdiff1d(np.arange(j.size), first)
            k = int(min(np.r_[again, dup]))
            key = next(key for key, v in self.index.items() if v == j[k])
            raise InputError(
                f"duplicate score for {key!r} metric {self.metric!r}",
                field=f"scores[{row_no[k]}]",
            )
        self.col.present[j] = True
        self.col.values[j] = vals

    def column(self) -> ScoreColumn | None:
        self.flush()
        return self.col


def _note_direction(inf: ColumnInfo, d: Any, metric: str, i: int) -> None:
    if d is None:
        return
    if d not in ("higher", "lower") or (inf.direction not in (None, d)):
        raise InputError(
            f"metric {metric!r}: direction {d!r} conflicts with {inf.direction!r} "
            "(one direction per column, 'higher' or 'lower')",
            field=f"scores[{i}].direction",
        )
    inf.direction = d


def label_rows(labels: FArr, aggregation: str) -> tuple[IArr, FArr, IArr]:
    """Correlation rows of a (units × annotators) label matrix: ``(unit, label, annotator)``.

    ``per_annotator``: one row per label, unit-major (unit 0's annotators first, as RAGChecker's
    rows 2i, 2i + 1); any other rule (``mean``, ``median``, ``majority``, ``mode-else-mean``):
    one row per unit with its label under that rule (:func:`~metajudge.stats.aggregate_labels`).
    Units without a label have no row.
    """
    if aggregation != "per_annotator":
        y = aggregate_labels(labels, aggregation)
        idx = np.flatnonzero(np.isfinite(y))
        return idx, y[idx], np.zeros(idx.size, dtype=np.int64)
    ui, ai = np.nonzero(np.isfinite(labels))
    return ui.astype(np.int64), labels[ui, ai], ai.astype(np.int64)
