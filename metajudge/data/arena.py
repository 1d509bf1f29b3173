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
    ``texts`` False: not the conversations), a columnar file's one record batch at a time."""
    from metajudge.data.columnar import batches_of, columns_of, is_columnar, rows_of

    p = Path(path)
    read = READ if texts else tuple(c for c in READ if not c.startswith("conversation"))
    if is_columnar(p):
        have = set(columns_of(p))
        for batch in batches_of(p, [c for c in read + READ_META if c in have]):
            yield from rows_of(batch)
    else:
        yield from (b for b in _json_list(p) if isinstance(b, Mapping))


def arena_objects(path: str | Path, texts: bool = True) -> Iterator[tuple[int, Any]]:
    """The card (as a JSONL card line, 0), then ``(battle number, canonical record)``
    (``texts`` False: a columnar file's conversations not read)."""
    yield 0, {"card": CARD}
    seen: dict[str, int] = {}
    for i, b in enumerate(battles(path, texts), start=1):
        qid = str(b.get("question_id") or f"battle{i}")
        n = seen[qid] = seen.get(qid, 0) + 1
        yield i, battle_record(b, qid if n == 1 else f"{qid}#{n}", path, i)


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
    pref, tie = WINNERS[winner]
    conv_a, conv_b = b.get("conversation_a"), b.get("conversation_b")
    question = _turns(conv_a, "user") or str(b.get("question_id") or rid)
    meta: dict[str, Any] = {"winner": winner}
    if tie:
        meta["tie"] = tie
    if b.get("judge") is not None:
        meta["annotator"] = str(b["judge"])
    meta.update({k: b[k] for k in READ_META if b.get(k) is not None})
    return {
        "id": rid,
        "input": {"question": question},
        "a": {"system": str(b.get("model_a")), "response": _turns(conv_a, "assistant")},
        "b": {"system": str(b.get("model_b")), "response": _turns(conv_b, "assistant")},
        "labels": {"preference": [pref]},
        "meta": meta,
    }


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
