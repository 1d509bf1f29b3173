"""Canonical record formats: pairwise and per-response records, dataset cards, JSONL.

The JSON Schemas in ``metajudge/data/schemas/`` are the documented truth of these formats
(docs/own-data.md); :mod:`metajudge.data.validation` checks files against them.

Sign convention everywhere: **positive = b is better**.

A canonical JSONL file may start with one header line ``{"card": {...}}`` holding the dataset
card; every other line is one record. Records are frozen dataclasses; labels and scores are
tuples (one value per annotator, ``None`` where an annotator gave no label).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from metajudge.errors import InputError
from metajudge.io import atomic_write

#: the key of a text-free row's responses' word counts
#: (:func:`metajudge.data.validation.dataset_objects`)
WORDS = "\0words"
#: each ASCII byte as :func:`word_count` reads it: a space where ``str.split()`` splits, else "a"
_ASCII_WORDS = bytes(32 if chr(b).isspace() else 97 for b in range(128)) + b"a" * 128


def word_count(text: str) -> int:
    """``len(text.split())``, the whitespace-separated words of ``text`` (the length baseline's
    measure): for an ASCII text counted on its bytes, each space byte to " " and any other to
    "a", as the word starts (``" a"``, or an "a" first) without a list of the words (twice as
    fast on texts of a thousand characters); ``str.split`` for the others (Unicode spaces)."""
    if not text.isascii():
        return len(text.split())
    b = text.encode("ascii").translate(_ASCII_WORDS)
    return b.count(b" a") + (b[:1] == b"a")


Kind = Literal["pairwise", "likert", "categorical", "binary", "benchmark"]
KINDS: tuple[str, ...] = ("likert", "categorical", "binary", "pairwise", "benchmark")
LabelKind = Literal["numeric", "categorical", "binary", "pairwise", "none"]
# numeric labels are floats; categorical and binary labels are the card's label strings
Label = float | str | None


@dataclass(frozen=True, slots=True)
class Table:
    """One table: title, header and rows of cell strings (MT-RAIG Appendix B.4)."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "header": list(self.header),
            "rows": [list(r) for r in self.rows],
        }


@dataclass(frozen=True, slots=True)
class Input:
    """What the responses answer: a question, optionally a reference, tables and documents."""

    question: str
    reference: str | None = None
    tables: tuple[Table, ...] | None = None
    documents: tuple[str, ...] | None = None
    context: str | None = None  # e.g. a dialogue history / knowledge fact / source article

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"question": self.question}
        if self.reference is not None:
            d["reference"] = self.reference
        if self.tables is not None:
            d["tables"] = [t.to_dict() for t in self.tables]
        if self.documents is not None:
            d["documents"] = list(self.documents)
        if self.context is not None:
            d["context"] = self.context
        return d


@dataclass(frozen=True, slots=True)
class Response:
    system: str
    response: str | None  # None only in scores-only datasets (texts not available)
    #: the whitespace-separated words of a text read but not kept (a text-free load,
    #: :meth:`metajudge.data.fast_records.FastRecords.lean`); None where the text is kept
    words: int | None = None

    def n_words(self) -> float:
        """The number of whitespace-separated words of the response (NaN: no text)."""
        if self.words is not None:
            return float(self.words)
        return math.nan if self.response is None else float(word_count(self.response))

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "response": self.response}


@dataclass(frozen=True, slots=True)
class PairwiseRecord:
    """Two responses to one input and per-annotator labels per dimension (positive = b better)."""

    id: str
    input: Input
    a: Response
    b: Response
    labels: Mapping[str, tuple[Label, ...]]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "input": self.input.to_dict(),
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "labels": {k: list(v) for k, v in self.labels.items()},
        }
        if self.meta:
            d["meta"] = dict(self.meta)
        return d


@dataclass(frozen=True, slots=True)
class LikertRecord:
    """One response to one input with per-annotator scores per dimension.

    ``id`` names the *input* (item); records are unique by ``(id, system)``.
    """

    id: str
    input: Input
    system: str
    response: str | None
    scores: Mapping[str, tuple[Label, ...]]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "input": self.input.to_dict(),
            "system": self.system,
            "response": self.response,
            "scores": {k: list(v) for k, v in self.scores.items()},
        }
        if self.meta:
            d["meta"] = dict(self.meta)
        return d


Record = PairwiseRecord | LikertRecord


@dataclass(frozen=True)
class Scale:
    """A label scale: numeric ``[min, max]`` (optionally only the listed ``values``), or the
    label strings of a categorical / binary scale (``labels``, ``ordered`` if worst-first).

    >>> Scale(1, 5, (1, 2, 3, 4, 5)).describe()
    '{1,2,3,4,5}'
    >>> Scale.from_dict({"labels": ["No", "Unsure", "Yes"], "ordered": True}).describe()
    '{No < Unsure < Yes}'
    """

    min: float = 0.0
    max: float = 0.0
    values: tuple[float, ...] | None = None
    labels: tuple[str, ...] | None = None
    ordered: bool = False

    @property
    def label_kind(self) -> Literal["numeric", "categorical"]:
        """``"categorical"`` when the scale lists label strings, else ``"numeric"``."""
        return "categorical" if self.labels is not None else "numeric"

    @property
    def half_width(self) -> float:
        """Half the width of a pairwise scale (2 for -2..2, 1 for -1..1)."""
        return (self.max - self.min) / 2

    def contains(self, v: float | str) -> bool:
        if self.labels is not None:
            return isinstance(v, str) and v in self.labels
        if isinstance(v, str):
            return False
        if self.values is not None:
            return any(math.isclose(v, x, abs_tol=1e-9) for x in self.values)
        return self.in_range(v)

    def in_range(self, v: float) -> bool:
        return self.min - 1e-9 <= v <= self.max + 1e-9

    def code(self, label: float | str) -> float:
        """A number for a label: the position in ``labels`` (categorical), else the value."""
        if self.labels is not None:
            return float(self.labels.index(str(label)))
        return float(label)

    def describe(self) -> str:
        if self.labels is not None:
            return "{" + (" < " if self.ordered else ", ").join(self.labels) + "}"
        if self.values is not None:
            return "{" + ",".join(_fmt_num(v) for v in self.values) + "}"
        return f"[{_fmt_num(self.min)}, {_fmt_num(self.max)}]"

    def describe_range(self) -> str:
        return f"[{_fmt_num(self.min)}, {_fmt_num(self.max)}]"

    def to_dict(self) -> dict[str, Any]:
        if self.labels is not None:
            return {"labels": list(self.labels), "ordered": self.ordered}
        d: dict[str, Any] = {"min": self.min, "max": self.max}
        if self.values is not None:
            d["values"] = list(self.values)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Scale:
        """Read a scale; malformed ones raise ``ValueError`` with a message naming the field."""
        if not isinstance(d, Mapping):
            raise TypeError("scale: expected an object {min, max[, values]} or {labels[, ordered]}")
        if "labels" in d:
            labels = d["labels"]
            if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
                raise ValueError("scale.labels: expected a list of label strings")
            return cls(0.0, float(len(labels) - 1), None, tuple(labels), bool(d.get("ordered")))
        vals = d.get("values")
        if vals and any(isinstance(v, str) for v in vals):
            raise ValueError(
                "scale.values: labels are strings; a card with string labels needs "
                'kind "categorical" and scale {"labels": [...], "ordered": true|false}'
            )
        missing = [k for k in ("min", "max") if k not in d]
        if missing:
            raise ValueError(f"scale: missing field(s) {', '.join(missing)}")
        return cls(
            float(d["min"]), float(d["max"]), tuple(float(v) for v in vals) if vals else None
        )


def _fmt_num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


@dataclass(frozen=True)
class SourceFile:
    path: str  # path inside the upstream repository
    sha256: str
    bytes: int | None = None
    local: str | None = None  # path inside the data folder (defaults to the basename)
    repository: str | None = (
        None  # overrides the card's repository (a dataset assembled from two repos)
    )
    commit: str | None = None  # overrides the card's commit

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class DatasetCard:
    """What a dataset is, where it comes from, and how its labels read."""

    name: str
    kind: Kind
    description: str
    repository: str  # e.g. "amazon-science/RAGChecker"
    commit: str
    files: tuple[SourceFile, ...]
    license: str
    dimensions: tuple[str, ...]
    scale: Scale  # the label scale of the records as stored (pairwise diff scale or Likert scale)
    annotators: int | None  # annotators per item (None: not stated upstream)
    direction: str  # how to read a label, e.g. "positive = b better"
    notes: str = ""  # how ambiguous upstream labels were read
    # per-response score columns the dataset ships: [{"loader": NAME, "file": ..., ...}], read by
    # the loader table of metajudge.scores.shipped (owned by the meta-evaluation)
    shipped_scores: tuple[Mapping[str, Any], ...] = ()
    # per-dimension scales where dimensions differ (e.g. JUDGE-BENCH files with several label lists)
    dimension_scales: Mapping[str, Scale] = field(default_factory=dict)
    # what `data list` shows without loading the data (records, items, pairs, annotators, systems,
    # subsets, dimensions), kept equal to the loaded counts by a test (metajudge.data.card_counts)
    counts: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def scale_of(self, dimension: str) -> Scale:
        """The scale of ``dimension``: its entry in ``dimension_scales``, else ``scale``."""
        return self.dimension_scales.get(dimension, self.scale)

    @property
    def label_kind(self) -> LabelKind:
        """What one label is, for deciding which statistics make sense.

        ``"numeric"`` (likert), ``"categorical"``, ``"binary"``, ``"pairwise"`` (a signed
        preference of b over a), ``"none"`` (benchmark inputs without human labels).
        """
        return {  # type: ignore[return-value]
            "likert": "numeric",
            "categorical": "categorical",
            "binary": "binary",
            "pairwise": "pairwise",
        }.get(self.kind, "none")

    @property
    def record_kind(self) -> Literal["pairwise", "response", "none"]:
        """The record shape: ``pairwise`` (a, b, labels) or ``response`` (system, scores)."""
        if self.kind == "pairwise":
            return "pairwise"
        return "none" if self.kind == "benchmark" else "response"

    def to_dict(self) -> dict[str, Any]:
        d = self._core_dict()
        if self.shipped_scores:
            d["shipped_scores"] = [dict(s) for s in self.shipped_scores]
        if self.counts:
            d["counts"] = dict(self.counts)
        return d

    def _core_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "repository": self.repository,
            "commit": self.commit,
            "files": [f.to_dict() for f in self.files],
            "license": self.license,
            "dimensions": list(self.dimensions),
            "scale": self.scale.to_dict(),
            "annotators": self.annotators,
            "direction": self.direction,
            "notes": self.notes,
            **(
                {"dimension_scales": {k: v.to_dict() for k, v in self.dimension_scales.items()}}
                if self.dimension_scales
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DatasetCard:
        """Build a card; its name, kind, repository, commit and file paths are checked first."""
        from metajudge.data.names import check_card_sources

        check_card_sources(dict(d))
        if d.get("kind") not in get_args(Kind):
            raise InputError(
                f"unknown kind {d.get('kind')!r} (one of {', '.join(get_args(Kind))})", field="kind"
            )
        return cls(
            name=d["name"],
            kind=d["kind"],
            description=d.get("description", ""),
            repository=d.get("repository", ""),
            commit=d.get("commit", ""),
            files=tuple(SourceFile(**f) for f in d.get("files", [])),
            license=d.get("license", ""),
            dimensions=tuple(d["dimensions"]),
            scale=Scale.from_dict(d["scale"]),
            annotators=d.get("annotators"),
            direction=d.get("direction", ""),
            notes=d.get("notes", ""),
            shipped_scores=tuple(dict(s) for s in d.get("shipped_scores") or ()),
            dimension_scales={
                k: Scale.from_dict(v) for k, v in (d.get("dimension_scales") or {}).items()
            },
            counts=_card_counts(d.get("counts")),
        )


def _card_counts(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError("counts: expected an object of counts", field="counts")
    return dict(value)


# ---------------------------------------------------------------------------------------------
# JSONL


def write_jsonl(
    path: str | Path, records: Iterable[Record], card: DatasetCard | None = None
) -> int:
    """Write records (and the card as a header line) atomically. Returns the record count.

    The card's ``counts`` (those of the built-in dataset) are left out: they need not describe
    the records written.
    """
    n = 0
    with atomic_write(path) as fh:
        if card is not None:
            head = {k: v for k, v in card.to_dict().items() if k != "counts"}
            fh.write(json.dumps({"card": head}, ensure_ascii=False) + "\n")
        for r in records:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n


def iter_jsonl_objects(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed_object)`` for each non-blank line; malformed JSON names the line.

    A file that is JSON but not JSON Lines (an array, or an object spread over several lines)
    is named as such on its first line. A line is parsed by :func:`metajudge.io.parse_json`
    (THE JSON parser, with its refusals) unless it is plain: one JSON value from its first to
    its last character that holds nothing ``parse_json`` refuses (:func:`~metajudge.io.plain_json`:
    one walk of the parsed value); such a line is parsed by the same scanner directly (what
    ``parse_json`` would return, without its per-line checks of the text). The file is read as a stream (:func:`~metajudge.io.text_lines`), never whole.
    """
    from metajudge.io import plain_json, text_lines

    path = Path(path)
    scan = json.decoder.JSONDecoder().scan_once  # json.loads's own scanner
    first = True
    # missing file, folder, non-UTF-8 bytes: InputError naming the line
    for i, raw in enumerate(text_lines(path), start=1):
        try:
            obj, end = scan(raw, 0)
            plain = end == len(raw) and plain_json(obj)
        except (StopIteration, ValueError, RecursionError):
            plain = False
        if not plain:
            if not raw.strip():
                continue
            obj = _parse_line(raw, path, i, first)
        if first and isinstance(obj, list):
            raise InputError(_NOT_JSONL.format("a JSON array"), path=path, line=i, field="<json>")
        first = False
        yield i, obj


def record_line(path: str | Path, record_id: str, system: str | None = None) -> int | None:
    """The line of canonical JSONL file ``path`` that holds record ``record_id`` (of ``system``
    when given), or ``None`` (another kind of file, or no such record): where an error found
    in a loaded record points (:class:`~metajudge.errors.RecordError`)."""
    try:
        for line, obj in iter_jsonl_objects(path):
            same = isinstance(obj, dict) and obj.get("id") == record_id
            if same and (system is None or obj.get("system") == system):
                return line
    except (InputError, OSError):
        return None
    return None


def _parse_line(raw: str, path: Path, line: int, first: bool) -> Any:
    """One line through :func:`metajudge.io.parse_json` (on the first line, a JSON file that is
    not JSON Lines is named as such)."""
    from metajudge.io import parse_json

    try:
        return parse_json(raw, path=path, line=line)  # also: too deep, lone surrogates
    except InputError as e:
        hint = _not_jsonl_hint(path, raw) if first and e.message.startswith("malformed") else None
        if hint is None:
            raise
        raise InputError(hint, path=path, line=line, field="<json>") from None


_NOT_JSONL = "this looks like {}, not JSON Lines: one record per line (one JSON object a line)"


def _not_jsonl_hint(path: Path, first_line: str) -> str | None:
    """The message for a JSON (not JSONL) file, or None when the file is just malformed."""
    start = first_line.strip()[:1]
    if start not in ("[", "{"):
        return None
    try:
        whole = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        whole = None
    if isinstance(whole, list) or (whole is None and start == "["):
        return _NOT_JSONL.format("a JSON array")
    return _NOT_JSONL.format("a JSON object spread over several lines")


# ---------------------------------------------------------------------------------------------
# Likert -> pairwise


def response_key(item_id: str, system_or_side: str) -> str:
    """The key of one response, the only place it is spelled.

    ``"{item id}::{side}"`` (side ``a``/``b``) for pairwise records, ``"{item id}::{system}"`` for
    Likert records.

    >>> response_key("q1", "a")
    'q1::a'
    """
    return f"{item_id}::{system_or_side}"


def split_response_key(key: str) -> tuple[str, str]:
    """The inverse of :func:`response_key`: ``(item id, side or system)``.

    >>> split_response_key("q::1::gpt-4")
    ('q::1', 'gpt-4')
    """
    item, _, rest = key.rpartition("::")
    return item, rest


#: the key suffixes of the sides ``a``, ``b`` (``response_key(id, side) == id + _SIDES[side]``)
_SIDES = (response_key("", "a"), response_key("", "b"))


def pair_rows_at(ids: Sequence[str], positions: range) -> tuple[list[str], list[str]]:
    """``(pair ids, sides)`` of the responses at ``positions`` of the pairs ``ids`` (``a`` of
    pair ``i`` at ``2i``): over a slice of the ids where the positions run in steps of 1 or 2.

    >>> pair_rows_at(("p", "q", "r"), range(1, 5)), pair_rows_at(("p", "q"), range(1, 4, 2))
    ((['p', 'q', 'q', 'r'], ['b', 'a', 'b', 'a']), (['p', 'q'], ['b', 'b']))
    """
    if not positions:
        return [], []
    lo, last, step = positions.start, positions[-1], positions.step
    if step == 2:
        got = list(ids[lo >> 1 : (last >> 1) + 1])
        return got, ["ab"[lo & 1]] * len(got)
    if step != 1:
        return [ids[p >> 1] for p in positions], ["ab"[p & 1] for p in positions]
    span = ids[lo >> 1 : (last >> 1) + 1]
    cut = slice(lo & 1, 2 * len(span) - (1 - (last & 1)))
    return [p for p in span for _ in (0, 1)][cut], (["a", "b"] * len(span))[cut]


def _pair_keys(ids: Sequence[str], positions: range) -> list[str]:
    """The keys at ``positions`` of the pairs ``ids``' keys: one concatenation a key.

    >>> _pair_keys(("p", "q", "r"), range(1, 6)), _pair_keys(("p", "q", "r"), range(1, 6, 2))
    (['p::b', 'q::a', 'q::b', 'r::a', 'r::b'], ['p::b', 'q::b', 'r::b'])
    """
    at, sides = pair_rows_at(ids, positions)
    suffix = {"a": _SIDES[0], "b": _SIDES[1]}
    return [p + suffix[s] for p, s in zip(at, sides, strict=True)]


class PairKeys(Sequence[str]):
    """The response keys of the pairs ``ids`` in order (pair ``i``'s ``a`` at ``2i``, its ``b``
    at ``2i + 1``), each made when read: a million pairs' 2,000,000 keys are not held (118 MB).

    >>> keys = PairKeys(("p", "q"))
    >>> len(keys), keys[1], keys[-2], list(keys)
    (4, 'p::b', 'q::a', ['p::a', 'p::b', 'q::a', 'q::b'])
    """

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = ids

    def __len__(self) -> int:
        return 2 * len(self.ids)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        j = i + len(self) if i < 0 else i
        if not 0 <= j < len(self):
            raise IndexError(i)
        return response_key(self.ids[j >> 1], "ab"[j & 1])

    def __iter__(self) -> Iterator[str]:
        return (p + side for p in self.ids for side in _SIDES)


class PairKeyIndex(Mapping[str, int]):
    """``{response key: position}`` of :class:`PairKeys` ``(ids)`` read from one dict of the pair
    ids (``at_pair``: ``{id: pair}``), not one entry per key: ``"p::b"`` is at
    ``2 * at_pair["p"] + 1``. As the dict of the keys would be: a repeated id's keys point at
    its last pair and are listed once, where the id is first seen.

    >>> ix = PairKeyIndex(("p", "q"))
    >>> ix["q::b"], ix.get("q::c"), len(ix), list(ix.items())[:2]
    (3, None, 4, [('p::a', 0), ('p::b', 1)])
    """

    def __init__(self, ids: Sequence[str], at_pair: dict[str, int] | None = None) -> None:
        self.ids = ids
        self.at_pair = {p: i for i, p in enumerate(ids)} if at_pair is None else at_pair

    def get(self, key: Any, default: Any = None) -> Any:
        if type(key) is str:
            pid, sep, side = key.rpartition("::")
            i = self.at_pair.get(pid) if sep and (side == "a" or side == "b") else None
            if i is not None:
                return 2 * i + (side == "b")
        return default

    def __getitem__(self, key: str) -> int:
        i = self.get(key)
        if i is None:
            raise KeyError(key)
        return int(i)

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return 2 * len(self.at_pair)

    def __iter__(self) -> Iterator[str]:
        return (p + side for p in self.at_pair for side in _SIDES)

    def items(self) -> Iterator[tuple[str, int]]:  # type: ignore[override]
        at = self.at_pair
        return ((response_key(p, s), 2 * at[p] + k) for p in at for k, s in enumerate("ab"))

    def keys_at(self, positions: range) -> list[str] | None:
        """The keys at ``positions`` in the index's order (None when an id repeats: the order
        is then the first-seen ids', not the positions')."""
        return _pair_keys(self.ids, positions) if self.unique() else None

    def unique(self) -> bool:
        """No pair id repeats (each key is at its own position)."""
        return len(self.at_pair) == len(self.ids)


def mean_label(values: Sequence[Label]) -> float | None:
    """Mean of the non-missing annotator values; None if all are missing.

    Categorical labels (strings) have no mean: they raise ``InputError``.
    """
    xs = [v for v in values if v is not None]
    if any(isinstance(v, str) for v in xs):
        raise InputError(f"categorical labels {xs!r} have no mean (use the majority label)")
    return sum(xs) / len(xs) if xs else None  # type: ignore[arg-type]


def likert_to_pairwise(
    records: Iterable[LikertRecord], *, tie_band: float = 0.0
) -> list[PairwiseRecord]:
    """Every pair of systems that answered the same input becomes one pairwise record.

    Deterministic: inputs in first-seen order, systems ordered by name (``a`` < ``b``), the label
    per dimension is ``mean(b) - mean(a)`` of the annotators' scores (a single aggregated value;
    its sign is the preference), set to 0 (a tie) when ``|mean(b) - mean(a)| <= tie_band``
    (default 0: only equal means tie). Pair id: ``"{item id}::{system a}|{system b}"``.
    Dimensions where either side has no score are left out of that pair's labels; a pair with no
    labelled dimension at all is dropped. ``meta``: the input's id, ``from: likert`` and, when
    ``tie_band`` is not 0, ``tie_band``.

    >>> a = LikertRecord("x", Input("q"), "s1", "r1", {"d": (3.0, 4.0)})
    >>> b = LikertRecord("x", Input("q"), "s2", "r2", {"d": (4.0, 4.0)})
    >>> [p.labels["d"] for p in (likert_to_pairwise([a, b]) + likert_to_pairwise([a, b], tie_band=0.5))]
    [(0.5,), (0.0,)]
    """
    groups: dict[str, list[LikertRecord]] = {}
    for r in records:
        groups.setdefault(r.id, []).append(r)
    out: list[PairwiseRecord] = []
    for item_id, recs in groups.items():
        recs = sorted(recs, key=lambda r: r.system)
        for i in range(len(recs)):
            for j in range(i + 1, len(recs)):
                ra, rb = recs[i], recs[j]
                labels: dict[str, tuple[Label, ...]] = {}
                for dim in ra.scores:
                    if dim not in rb.scores:
                        continue
                    ma, mb = mean_label(ra.scores[dim]), mean_label(rb.scores[dim])
                    if ma is None or mb is None:
                        continue
                    d = mb - ma
                    labels[dim] = (0.0 if abs(d) <= tie_band else d,)
                if not labels:
                    continue
                out.append(
                    PairwiseRecord(
                        id=f"{item_id}::{ra.system}|{rb.system}",
                        input=ra.input,
                        a=Response(ra.system, ra.response),
                        b=Response(rb.system, rb.response),
                        labels=labels,
                        meta={"item_id": item_id, "from": "likert"}
                        | ({"tie_band": tie_band} if tie_band else {}),
                    )
                )
    return out


def pairwise_scale_from_likert(scale: Scale) -> Scale:
    """The label scale of the pairwise expansion of a Likert scale [lo, hi]: [lo-hi, hi-lo]."""
    w = scale.max - scale.min
    return Scale(-w, w)
