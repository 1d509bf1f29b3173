"""The loader's one pass over a record of the common shape: checked and built together.

Loading a canonical JSONL file checks each record (structure, then dimensions, scale and the
warnings' conditions; :func:`metajudge.data.validation.record_errors`) and builds it
(:func:`~metajudge.data.validation._build`). :class:`FastRecords` does both for a record whose
shape is the common one, with a few direct type tests per field: the required fields with
exact JSON types (``dict``, ``list``, ``str``, ``float``/``int``, ``None``), an input without
tables, every label inside the card's dimensions and scale, no warning to give. Whatever it does
not recognise (a wrong type, a value outside the scale, a table, an annotator count the card does
not state, ...) it leaves to the full path (``None``), which finds and words every problem as
before; so a record it builds is one the full path accepts, and equal to the one it builds.

It also shares what repeats between records instead of keeping one copy per record: dimension
names and other object keys, system names, equal inputs (question, reference, context), equal
responses without text, equal label tuples and equal label maps (the maps of the labels are
dicts, shared as records are: read, never changed), and one empty ``meta`` for the records
without one.

A text-free load (:meth:`FastRecords.lean`, where no metric reads the texts) keeps of a pairwise
record's texts only each response's word count (what the length baseline reads): the input
becomes :data:`NO_TEXT` and each response ``Response(system, None, words)``, shared by
``(system, words)``, so that memory does not grow with the length of the texts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from metajudge.data.formats import (
    Input,
    LikertRecord,
    PairwiseRecord,
    Record,
    Response,
    Scale,
    word_count,
)

#: distinct values each sharing table keeps at most (then new values are kept as they are)
SHARE_MAX = 1 << 16
_NO = object()  # a dimension the card does not declare
_NO_META: dict[str, Any] = {}  # the ``meta`` of every record without one (never changed)
RangeRule = tuple[float, float, frozenset[Any] | None]  # (lower, upper, allowed values or labels)
#: the input of every record of a text-free load (:meth:`FastRecords.lean`)
NO_TEXT = Input("")


class _Shared(dict):  # type: ignore[type-arg]
    """One copy of each equal immutable value (up to :data:`SHARE_MAX`)."""

    def get_or_keep(self, key: Any, value: Any) -> Any:
        got = self.get(key, _NO)
        return self.keep(key, value) if got is _NO else got

    def keep(self, key: Any, value: Any) -> Any:
        if len(self) < SHARE_MAX:
            self[key] = value
        return value


class FastRecords:
    """Records of the common shape under one card's rules (a ``validation.Rules``)."""

    def __init__(self, rules: Any, texts: bool = True) -> None:
        self.kind = rules.kind
        self.texts = texts  # False: a pairwise record is built lean (:meth:`lean`) at once
        self.rules = rules
        self.annotators = rules.annotators
        self.numeric = rules.kind in (None, "pairwise", "likert")
        self._dims: dict[str, Any] = {}
        self._strings = _Shared()
        self._inputs = _Shared()
        self._responses = _Shared()
        self._labels = _Shared()
        self._label_maps = _Shared()

    def lean(self, rec: Record, words: tuple[int | None, int | None] | None = None) -> Record:
        """``rec`` without its texts (module docstring): a pairwise record's input and response
        texts replaced by :data:`NO_TEXT` and the responses' word counts (``words``: counted
        already, e.g. by :func:`metajudge.data.columnar.word_counts`); a per-response record
        keeps its text."""
        if type(rec) is not PairwiseRecord:
            return rec
        wa, wb = words if words is not None else (_words(rec.a), _words(rec.b))
        a, b = self._counted(rec.a.system, wa), self._counted(rec.b.system, wb)
        return PairwiseRecord(rec.id, NO_TEXT, a, b, rec.labels, rec.meta)

    def _counted(self, system: str, words: int | None) -> Response:
        key = (system, words)
        got = self._responses.get(key)
        return got if got is not None else self._responses.keep(key, Response(system, None, words))

    def record(self, d: Any, words: tuple[int | None, int | None] | None = None) -> Record | None:
        """The record ``d`` describes, or ``None``: take the full path (check, then build).
        Without texts (``texts`` False), a pairwise record is built as :meth:`lean` gives it
        (``words``: see there), its input and responses checked as any other's."""
        if type(d) is not dict:
            return None
        if "labels" in d or "a" in d or "b" in d:
            return self._pairwise(d, words) if self.kind in (None, "pairwise") else None
        if self.kind in (None, "pairwise"):
            return None if self.kind == "pairwise" else self._response(d)
        return self._response(d)

    def batch(self, batch: Any) -> list[PairwiseRecord] | None:
        """The records of an Arrow record batch of pairwise rows of the common shape, built
        without texts (``texts`` False): the records :meth:`record` builds of its rows, or
        ``None`` where a row may need the full path or differ between JSON and the table
        (:func:`metajudge.data.batch_columns.checked_columns` says which; a null response, as
        absent as null, is one)."""
        from metajudge.data.batch_columns import checked_columns

        if self.texts or self.kind != "pairwise" or not self.numeric:
            return None
        got = checked_columns(batch, self._rule, self.annotators)
        return None if got is None else self.lean_rows(*got)

    def lean_rows(
        self,
        ids: list[str],
        a: tuple[list[str], list[int | None]],
        b: tuple[list[str], list[int | None]],
        labels: dict[str, list[tuple[list[Any], bool]]],
        metas: list[dict[str, Any]] | None = None,
    ) -> list[PairwiseRecord]:
        """Text-free pairwise records of checked columns: ids, each side's systems and word
        counts, each dimension's label lists (with whether they hold a -0.0), shared as
        :meth:`record` shares them, and each record's ``meta`` as given (None: none)."""
        names = [self._strings.get_or_keep(d, d) for d in labels]
        out: list[PairwiseRecord] = []
        (sa, wa), (sb, wb) = a, b
        for k, vals in enumerate(zip(*labels.values(), strict=True)):
            meta = _NO_META if metas is None else metas[k]
            ra, rb = self._counted(sa[k], wa[k]), self._counted(sb[k], wb[k])
            out.append(PairwiseRecord(ids[k], NO_TEXT, ra, rb, self._shared(names, vals), meta))
        return out

    def _shared(self, names: list[str], vals: tuple[tuple[list[Any], bool], ...]) -> dict:
        """The shared label map of one row of :meth:`batch` (each dimension's labels, and
        whether they hold a -0.0)."""
        out: dict[str, tuple[Any, ...]] = {}
        equal: list[tuple[str, Any]] = []
        for name, (v, neg_zero) in zip(names, vals, strict=True):
            tup = tuple(v)
            key = _label_key(tup, neg_zero)
            out[name] = self._labels.get_or_keep(key, tup)
            equal.append((name, key))
        return self._label_map(out, equal)

    def _pairwise(
        self, d: dict[str, Any], words: tuple[int | None, int | None] | None
    ) -> PairwiseRecord | None:
        rid, a, b = d.get("id"), self._side(d.get("a")), self._side(d.get("b"))
        if type(rid) is not str or not rid or a is None or b is None:
            return None
        parts = self._common(d, "labels")
        if parts is None:
            return None
        inp, labels, meta = parts
        if not self.texts:  # as lean() makes it, without the record with texts first
            wa, wb = words if words is not None else (_words(a), _words(b))
            inp, a, b = NO_TEXT, self._counted(a.system, wa), self._counted(b.system, wb)
        return PairwiseRecord(rid, inp, a, b, labels, _NO_META if meta is _NO else meta)

    def _response(self, d: dict[str, Any]) -> LikertRecord | None:
        rid, system, text = d.get("id"), d.get("system"), d.get("response", _NO)
        if type(rid) is not str or not rid or type(system) is not str:
            return None
        if text is not None and type(text) is not str:
            return None
        parts = self._common(d, "scores")
        if parts is None:
            return None
        inp, scores, meta = parts
        system = self._strings.get_or_keep(system, system)
        return LikertRecord(rid, inp, system, text, scores, _NO_META if meta is _NO else meta)

    def _common(self, d: dict[str, Any], labels_key: str) -> tuple[Any, Any, Any] | None:
        """``(input, labels, meta)`` of a pairwise or per-response record (meta ``_NO`` when the
        record has none), or ``None`` when one of them needs the full path."""
        raw = d.get(labels_key, {})
        unlabelled = labels_key == "scores" and raw == {}  # absent or {}: partial labels
        labels = {} if unlabelled else self._labels_of(raw)
        inp, meta = self._input(d.get("input")), _NO
        if "meta" in d:
            meta = self._meta(d["meta"])
        if inp is None or labels is None or meta is None:
            return None
        return inp, labels, meta

    def _side(self, s: Any) -> Response | None:
        if type(s) is not dict:
            return None
        system, text = s.get("system"), s.get("response", _NO)
        if type(system) is not str:
            return None
        if text is None:
            got = self._responses.get(system)
            return self._responses.keep(system, Response(system, None)) if got is None else got
        if type(text) is not str:
            return None
        return Response(self._strings.get_or_keep(system, system), text)

    def _input(self, i: Any) -> Input | None:
        if type(i) is not dict:
            return None
        q = i.get("question")
        if type(q) is not str:
            return None
        if len(i) == 1:
            if not self.texts and self.kind == "pairwise":  # lean: no table of questions
                return NO_TEXT
            got = self._inputs.get(q)
            return self._inputs.keep(q, Input(q)) if got is None else got
        ref, ctx, docs = i.get("reference"), i.get("context"), i.get("documents")
        if i.get("tables") is not None:
            return None
        if (ref is not None and type(ref) is not str) or (ctx is not None and type(ctx) is not str):
            return None
        if docs is None:
            key = (q, ref, ctx)
            return self._inputs.get_or_keep(key, Input(q, ref, None, None, ctx))
        if type(docs) is not list or any(type(x) is not str for x in docs):
            return None
        return Input(q, ref, None, tuple(docs), ctx)

    def _meta(self, m: Any) -> dict[str, Any] | None:
        if type(m) is not dict:
            return None
        keep = self._strings.get_or_keep
        return {keep(k, k): keep(v, v) if type(v) is str else v for k, v in m.items()}

    def _labels_of(self, m: Any) -> dict[str, tuple[Any, ...]] | None:
        if type(m) is not dict or not m:
            return None
        out: dict[str, tuple[Any, ...]] = {}
        equal: list[tuple[str, Any]] = []  # (dimension, its labels' sharing key): equal maps
        for dim, vals in m.items():
            rule = self._dims.get(dim)
            if rule is None:
                rule = self._dims[dim] = self._rule(dim)
            if rule is _NO or type(vals) is not list or not vals:
                return None
            if self.annotators and len(vals) != 1 and len(vals) != self.annotators:
                return None  # the warning's condition: the full path gives it
            got = self._numbers(vals, rule) if self.numeric else self._words(vals, rule)
            if got is None:
                return None
            name = self._strings.get_or_keep(dim, dim)
            out[name] = got[1]
            equal.append((name, got[0]))
        return self._label_map(out, equal)

    def _label_map(
        self, out: dict[str, tuple[Any, ...]], equal: list[tuple[str, Any]]
    ) -> dict[str, tuple[Any, ...]]:
        """The shared copy of label map ``out`` (``equal``: each dimension's sharing key)."""
        key = tuple(equal)
        got = self._label_maps.get(key)  # (get_or_keep's, without a call a record)
        return got if got is not None else self._label_maps.keep(key, out)

    def _rule(self, dim: str) -> Any:
        """``(lower, upper, allowed)`` for ``dim``'s labels, or ``_NO`` (not a card dimension,
        or a scale the full path alone reads)."""
        dims = self.rules.dimensions
        if dims is not None and dim not in dims:
            return _NO
        sc: Scale | None = self.rules.scale_of(dim)
        if sc is None:
            return (-math.inf, math.inf, None) if self.numeric else (0.0, 0.0, None)
        if self.numeric:
            if sc.labels is not None:
                return _NO
            allowed = frozenset(sc.values) if sc.values is not None else None
            return (sc.min - 1e-9, sc.max + 1e-9, allowed)
        return _NO if sc.labels is None else (0.0, 0.0, frozenset(sc.labels))

    def _numbers(self, vals: list[Any], rule: RangeRule) -> tuple[Any, tuple[Any, ...]] | None:
        """``(sharing key, shared label tuple)`` of ``vals``, or None (the full path's)."""
        lo, hi, allowed = rule
        all_null = plain = True
        neg_zero = False
        for v in vals:
            t = type(v)
            if t is float:
                if not lo <= v <= hi or v - v != 0.0:  # NaN and infinities fail too
                    return None
                if v == 0.0 and math.copysign(1.0, v) < 0.0:
                    neg_zero = True
            elif v is None:
                plain = False
                continue
            elif t is int:
                if not lo <= v <= hi:
                    return None
                plain = False
            else:
                return None
            if allowed is not None and v not in allowed:
                return None
            all_null = False
        if all_null:
            return None  # the full path gives the warning
        tup = tuple(vals) if plain else tuple(None if v is None else float(v) for v in vals)
        key = _label_key(tup, neg_zero)
        return key, self._labels.get_or_keep(key, tup)

    def _words(self, vals: list[Any], rule: RangeRule) -> tuple[Any, tuple[Any, ...]] | None:
        allowed = rule[2]
        labelled = False
        for v in vals:
            if v is None:
                continue
            if type(v) is not str or (allowed is not None and v not in allowed):
                return None
            labelled = True
        if not labelled:
            return None
        tup = tuple(vals)
        return tup, self._labels.get_or_keep(tup, tup)


def _label_key(tup: tuple[Any, ...], neg_zero: bool) -> Any:
    """The sharing key of label tuple ``tup``: itself, or its repr where a label is -0.0
    (-0.0 == 0.0: the sign is kept as read)."""
    return ("-0", repr(tup)) if neg_zero else tup


def _words(r: Response) -> int | None:
    """The word count :meth:`Response.n_words` gives, kept as an int (None: no text)."""
    if r.words is not None:
        return r.words
    return None if r.response is None else word_count(r.response)


def fast_builder(
    rules: Any, schema: bool, texts: bool = True
) -> tuple[Callable[..., Record | None], FastRecords]:
    """:meth:`FastRecords.record` under ``rules`` for the loader's pass (``schema``: ``data
    validate``, the JSON Schema check of every record: never a fast record; ``texts`` False: its
    records built lean), and the :class:`FastRecords` (its :meth:`~FastRecords.lean`, for the
    records of the full path)."""
    fast = FastRecords(rules, texts)
    return (lambda d, words=None: None) if schema else fast.record, fast


def shape_key(rec: Record) -> tuple[str, ...]:
    """What must be unique in a file: the pair id, or a response's ``(id, system)``."""
    return (rec.id,) if isinstance(rec, PairwiseRecord) else (rec.id, rec.system)
