"""Chatbot Arena's battle files as they are released (a JSON list of battles, or Parquet/Arrow):
columns ``model_a``, ``model_b``, ``winner``, ``judge``, ``question_id`` and, where released,
``conversation_a``/``conversation_b`` (lists of ``{role, content}`` messages), ``turn``,
``language``, ``tstamp``.

Each battle is one pairwise record (:func:`battle_record`) on dimension ``preference`` (the
card's scale ``{-1, 0, 1}``, positive = b better): ``winner`` ``model_a`` → −1, ``model_b`` →
+1, ``tie`` and ``tie (bothbad)`` → 0, the two ties kept apart in ``meta.winner`` (the released
value) and ``meta.tie`` (``"tie"`` or ``"both bad"``). The ``judge`` field is the record's
annotator (``meta.annotator``). The record id is ``question_id``; a question_id seen before in
the file gets ``#2``, ``#3`` … in file order. The question is the user turns of
``conversation_a`` (joined by a blank line; the question_id when no conversation is given), each
side's response its assistant turns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError

#: the columns that make a file an Arena battle file
ARENA_COLUMNS = frozenset({"model_a", "model_b", "winner"})
#: the columns read (the others are not)
READ = ("question_id", "model_a", "model_b", "winner", "judge", "conversation_a", "conversation_b")
READ_META = ("turn", "language", "tstamp")
#: ``winner`` → (the signed preference of b over a, the tie's kind)
WINNERS: dict[str, tuple[int, str | None]] = {
    "model_a": (-1, None),
    "model_b": (1, None),
    "tie": (0, "tie"),
    "tie (bothbad)": (0, "both bad"),
}
CARD = {
    "name": "arena_battles",
    "kind": "pairwise",
    "description": "Chatbot Arena battles: one pairwise record per battle (metajudge.data.arena)",
    "repository": "",
    "commit": "",
    "files": [],
    "license": "",
    "dimensions": ["preference"],
    "scale": {"min": -1, "max": 1, "values": [-1, 0, 1]},
    "annotators": 1,
    "direction": "positive = b better",
    "notes": "winner model_a -> -1, model_b -> +1, tie and tie (bothbad) -> 0; the two ties "
    "are kept apart in meta.winner and meta.tie; the judge field is meta.annotator",
}


def battle_columns(path: str | Path) -> list[str] | None:
    """The columns of a JSON list or columnar file (the first object's keys), else None."""
    from metajudge.data.columnar import columns_of, is_columnar

    p = Path(path)
    if is_columnar(p):
        return columns_of(p) if p.is_file() else None
    if p.suffix.lower() != ".json" or not p.is_file():
        return None
    data = _json_list(p)
    return list(data[0]) if data and isinstance(data[0], Mapping) else None


def is_arena(path: str | Path) -> bool:
    """Is ``path`` an Arena battle file (it has the columns :data:`ARENA_COLUMNS`)?"""
    cols = battle_columns(path)
    return cols is not None and ARENA_COLUMNS <= set(cols)


def _json_list(p: Path) -> list[Any]:
    from metajudge.io import read_json

    data = read_json(p)
    return data if isinstance(data, list) else []


def battles(path: str | Path, texts: bool = True) -> Iterator[Mapping[str, Any]]:
    """The file's battles as dicts (only the columns read: :data:`READ`, :data:`READ_META`;
    ``texts`` False: a columnar file's conversations as the word counts of their assistant
    turns, under :data:`~metajudge.data.formats.WORDS`), one record batch at a time."""
    from metajudge.data.columnar import batches_of, columns_of, is_columnar, rows_of
    from metajudge.data.formats import WORDS

    p = Path(path)
    if is_columnar(p):
        have = set(columns_of(p))
        for batch in batches_of(p, [c for c in READ + READ_META if c in have]):
            if texts:
                yield from rows_of(batch)
                continue
            conv = {s: f"conversation_{s}" for s in "ab" if f"conversation_{s}" in have}
            words = [turn_words(batch.column(c)) for c in conv.values()]
            if len(words) < 2:  # a side without conversations: no text
                words = [[None] * batch.num_rows] * 2
            batch = batch.drop_columns(list(conv.values()))
            for b, wa, wb in zip(rows_of(batch), *words, strict=True):
                yield {**b, WORDS: (wa, wb)}
    else:
        yield from (b for b in _json_list(p) if isinstance(b, Mapping))


def turn_words(conv: Any, role: str = "assistant") -> list[int | None]:
    """The word count of :func:`_turns` of each conversation of an Arrow column (a list of
    ``{role, content}`` structs), counted in Arrow (None: no such turn)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from metajudge.data.columnar import word_count_array

    t = conv.type
    fields = (
        {t.value_type.field(j).name for j in range(t.value_type.num_fields)}
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_struct(t.value_type)
        else set()
    )
    if not {"role", "content"} <= fields:  # another shape: the texts, one by one
        texts = (_turns(c, role) for c in conv.to_pylist())
        return [None if x is None else len(x.split()) for x in texts]
    flat, parent = pc.list_flatten(conv), pc.list_parent_indices(conv).to_numpy()
    keep = pc.and_(pc.is_valid(flat), pc.fill_null(pc.equal(flat.field("role"), role), False))
    mine = keep.to_numpy(zero_copy_only=False)
    # only the role's messages counted; a null content reads as str(None), one word, as where
    # the texts are read
    content = pc.filter(flat.field("content"), keep)
    w = np.ones(len(content))  # not a string column: each str(value) one word, as read
    if pa.types.is_string(content.type) or pa.types.is_large_string(content.type):
        counts, nulls = word_count_array(content)
        w = np.where(nulls, 1, counts).astype(float)
    n = len(conv)
    total = np.bincount(parent[mine], weights=w, minlength=n)
    has = np.bincount(parent[mine], minlength=n) > 0
    return [int(x) if h else None for x, h in zip(total.tolist(), has.tolist(), strict=True)]


def arena_objects(path: str | Path, texts: bool = True) -> Iterator[tuple[int, Any]]:
    """The card (as a JSONL card line, 0), then ``(battle number, canonical record)``
    (``texts`` False: a columnar file's conversations read as their word counts,
    :func:`turn_words`, under :data:`~metajudge.data.formats.WORDS`)."""
    from metajudge.data.formats import WORDS

    yield 0, {"card": CARD}
    seen: dict[str, int] = {}
    for i, b in enumerate(battles(path, texts), start=1):
        rec = battle_record(b, battle_id(b.get("question_id"), i, seen), path, i)
        if WORDS in b:
            rec[WORDS] = b[WORDS]
        yield i, rec


def battle_id(qid: Any, row: int, seen: dict[str, int]) -> str:
    """A battle's record id: its question_id (``battle<row>`` without one), then ``#2``,
    ``#3`` … for a question_id ``seen`` before (counted there)."""
    rid = str(qid or f"battle{row}")
    n = seen[rid] = seen.get(rid, 0) + 1
    return rid if n == 1 else f"{rid}#{n}"


def battle_record(b: Mapping[str, Any], rid: str, path: Any, row: int) -> dict[str, Any]:
    """One battle as a canonical pairwise record (module docstring)."""
    winner = b.get("winner")
    if winner not in WINNERS:
        raise InputError(
            f"winner must be one of {', '.join(WINNERS)}, got {winner!r}",
            path=path,
            line=row,
            field="winner",
        )
    conv_a, conv_b = b.get("conversation_a"), b.get("conversation_b")
    question = _turns(conv_a, "user") or str(b.get("question_id") or rid)
    extra = {k: b[k] for k in READ_META if b.get(k) is not None}
    return {
        "id": rid,
        "input": {"question": question},
        "a": {"system": str(b.get("model_a")), "response": _turns(conv_a, "assistant")},
        "b": {"system": str(b.get("model_b")), "response": _turns(conv_b, "assistant")},
        "labels": {"preference": [WINNERS[winner][0]]},
        "meta": battle_meta(winner, b.get("judge"), extra),
    }


def battle_meta(winner: str, judge: Any, extra: Mapping[str, Any]) -> dict[str, Any]:
    """A battle's record ``meta``: the released winner, the tie's kind, the judge as
    annotator, then ``extra`` (the :data:`READ_META` columns given)."""
    meta: dict[str, Any] = {"winner": winner}
    tie = WINNERS[winner][1]
    if tie:
        meta["tie"] = tie
    if judge is not None:
        meta["annotator"] = str(judge)
    meta.update(extra)
    return meta


def lean_records(path: str | Path, fast: Any) -> list[Any] | None:
    """The text-free records of a columnar battle file, equal to those the loader's pass builds
    of :func:`arena_objects` (``fast``: a text-free
    :class:`~metajudge.data.fast_records.FastRecords` under :data:`CARD`'s rules), built from
    the columns of each record batch (equal strings one object: Arrow's dictionary of a
    column); None for a JSON list of battles or a winner outside :data:`WINNERS` (read battle
    by battle: the error names it)."""
    from metajudge.data.columnar import batches_of, columns_of, is_columnar

    p = Path(path)
    if not is_columnar(p):
        return None
    have = set(columns_of(p))
    seen: dict[str, int] = {}
    out: list[Any] = []
    for batch in batches_of(p, [c for c in READ + READ_META if c in have]):
        got = _lean_batch(batch, len(out), seen, fast)
        if got is None:
            return None
        out += got
    return out


def _lean_batch(batch: Any, done: int, seen: dict[str, int], fast: Any) -> list[Any] | None:
    """:func:`lean_records` of one record batch (``done``: the battles before it)."""
    n, names = batch.num_rows, set(batch.schema.names)

    def values(c: str, text: bool = False) -> list[Any]:
        return _values(batch.column(c), text) if c in names else [None] * n

    winners = values("winner")
    if not set(winners) <= WINNERS.keys():
        return None
    words = [
        turn_words(batch.column(f"conversation_{s}")) for s in "ab" if f"conversation_{s}" in names
    ]
    if len(words) < 2:  # a side without conversations: no text
        words = [[None] * n] * 2
    qids, judges = values("question_id"), values("judge", text=True)
    extra = [(k, values(k, text=True)) for k in READ_META if k in names]
    ids, metas, prefs = [], [], []
    for k in range(n):
        ids.append(battle_id(qids[k], done + k + 1, seen))
        given = {c: v[k] for c, v in extra if v[k] is not None}
        metas.append(battle_meta(winners[k], judges[k], given))
        prefs.append(([float(WINNERS[winners[k]][0])], False))
    sides = [(_strs(values(f"model_{s}", text=True)), w) for s, w in zip("ab", words, strict=True)]
    return fast.lean_rows(ids, sides[0], sides[1], {"preference": prefs}, metas)


def _values(col: Any, text: bool) -> list[Any]:
    """A column's values as read; a string column's (``text``) with one object per distinct
    string (its dictionary's), nulls None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not text or not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return col.to_pylist()
    enc = pc.dictionary_encode(col)
    words = enc.dictionary.to_pylist() + [None]
    at = pc.fill_null(enc.indices, len(words) - 1).to_numpy(zero_copy_only=False)
    return [words[i] for i in at.tolist()]


def _strs(vals: list[Any]) -> list[str]:
    """``str`` of each value (None: ``"None"``, as a battle's model reads)."""
    return [v if type(v) is str else str(v) for v in vals]


def _turns(conv: Any, role: str) -> str | None:
    """The ``role`` turns of a conversation joined by a blank line (None: no conversation)."""
    if not isinstance(conv, Sequence) or isinstance(conv, str):
        return None
    texts = [str(m.get("content", "")) for m in conv if isinstance(m, Mapping)]
    roles = [m.get("role") for m in conv if isinstance(m, Mapping)]
    got = [t for t, r in zip(texts, roles, strict=True) if r == role]
    return "\n\n".join(got) if got else None


def summary(path: str | Path) -> dict[str, Any]:
    """What ``data doctor`` says of a battle file: battles, models, judges, each winner's count."""
    n, models, judges, winners = 0, set(), set(), dict.fromkeys(WINNERS, 0)
    for b in battles(path):
        n += 1
        models.update((str(b.get("model_a")), str(b.get("model_b"))))
        if b.get("judge") is not None:
            judges.add(str(b["judge"]))
        if b.get("winner") in winners:
            winners[b["winner"]] += 1
    return {"battles": n, "models": sorted(models), "judges": len(judges), "winners": winners}
