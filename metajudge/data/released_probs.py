"""The Trust-or-Escalate released format: one pairwise comparison per JSONL line with a judge's
class probabilities (Jung, Brahman & Choi, ICLR 2025; ``human_labels/trust_or_escalate_jung2025/
PROVENANCE.txt``).

A line holds ``instruction`` (the prompt), ``outputs`` (the two responses), ``preferences``
(``{annotator: 1 | 2}``, 1 = the first response; also as the string of a Python dict) and
``probs`` (the judge's probability for the first and the second response; also as a string).
The file is named after its judge (``gpt-4-turbo.calibration.jsonl`` → ``gpt-4-turbo``).

Read as it is by ``--input FILE`` (records plus the file's judge column, :func:`dataset_of`),
by ``--scores FILE`` (the judge column only, matched to the dataset's pairs by instruction and
outputs, as the paper's ``merge_data``: :func:`metajudge.scores.readers.released_probs.judge_rows`), and
by the built-in dataset's converter.

The label is the annotators' majority (a tie of annotators → 0); the probabilities must lie in
[0, 1] and sum to at most 1 + 1e-6; a pair summing to less (the released files: the rest of the
mass went to other tokens) is renormalised to sum to 1, and its rows say so
(``details.renormalised``).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metajudge.data.probabilities import SUM_TOL, check_probabilities
from metajudge.errors import InputError

FIELDS: tuple[str, ...] = ("instruction", "outputs", "preferences", "probs")
_SUFFIXES = (".calibration", ".test", ".train")


@dataclass(frozen=True)
class ReleasedLine:
    """One parsed line: the pair, the majority human label (−1 / 0 / +1) and the probabilities."""

    line: int
    instruction: str
    outputs: tuple[str, str]
    label: float
    votes: tuple[int, ...]
    probs: tuple[float, float]
    raw_probs: tuple[float, float]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.instruction, self.outputs[0], self.outputs[1])


def judge_name(path: str | Path) -> str:
    """The judge a file is named after: its name without ``.jsonl`` and a split suffix.

    >>> judge_name("result/gpt-3.5-turbo.calibration.jsonl")
    'gpt-3.5-turbo'
    """
    stem = Path(path).name.removesuffix(".jsonl")
    for s in _SUFFIXES:
        stem = stem.removesuffix(s)
    return stem


def is_released_probs(path: str | Path) -> bool:
    """Is ``path`` a ``.jsonl`` file whose first object has the four fields?"""
    p = Path(path)
    if p.suffix.lower() != ".jsonl" or not p.is_file():
        return False
    from metajudge.data.formats import iter_jsonl_objects

    for _, first in iter_jsonl_objects(p):
        return isinstance(first, Mapping) and all(f in first for f in FIELDS)
    return False


def _literal(v: Any, kind: type, p: Path, line: int, field: str) -> Any:
    if isinstance(v, str):
        try:
            v = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            raise InputError(
                f"not a {kind.__name__} literal: {v[:60]!r}", path=p, line=line, field=field
            ) from None
    if not isinstance(v, kind):
        raise InputError(f"expected a {kind.__name__}", path=p, line=line, field=field)
    return v


def _probs(v: Any, p: Path, line: int) -> tuple[tuple[float, float], tuple[float, float]]:
    raw = _literal(v, list, p, line, "probs")
    if len(raw) != 2 or any(isinstance(x, bool) or not isinstance(x, int | float) for x in raw):
        raise InputError("expected two numbers", path=p, line=line, field="probs")
    a, b = float(raw[0]), float(raw[1])
    total = check_probabilities((a, b), path=p, line=line, field="probs", deficit_ok=True)
    if abs(total - 1.0) <= SUM_TOL:
        return (a, b), (a, b)
    return (a / total, b / total), (a, b)


def _label(v: Any, p: Path, line: int) -> tuple[float, tuple[int, ...]]:
    prefs = _literal(v, dict, p, line, "preferences")
    votes = tuple(prefs.values())
    if not votes or any(x not in (1, 2) or isinstance(x, bool) for x in votes):
        raise InputError(
            f"expected {{annotator: 1 | 2}}, got {prefs!r}", path=p, line=line, field="preferences"
        )
    top = Counter(votes).most_common()
    if len(top) > 1 and top[0][1] == top[1][1]:
        return 0.0, votes
    return (-1.0 if top[0][0] == 1 else 1.0), votes


def read_lines(path: str | Path) -> list[ReleasedLine]:
    """Every line of a released-probabilities file, checked (errors name file, line and field)."""
    from metajudge.data.formats import iter_jsonl_objects

    p = Path(path)
    out: list[ReleasedLine] = []
    for line, o in iter_jsonl_objects(p):
        if not isinstance(o, Mapping):
            raise InputError("expected a JSON object", path=p, line=line, field="<record>")
        for f in FIELDS:
            if f not in o:
                raise InputError("missing required field", path=p, line=line, field=f)
        outs = _literal(o["outputs"], list, p, line, "outputs")
        if len(outs) != 2 or not all(isinstance(x, str) for x in outs):
            raise InputError("expected two response strings", path=p, line=line, field="outputs")
        if not isinstance(o["instruction"], str):
            raise InputError("expected a string", path=p, line=line, field="instruction")
        label, votes = _label(o["preferences"], p, line)
        probs, raw = _probs(o["probs"], p, line)
        out.append(
            ReleasedLine(line, o["instruction"], (outs[0], outs[1]), label, votes, probs, raw)
        )
    if not out:
        raise InputError("empty file: no lines", path=p)
    return out


def record_dict(i: int, r: ReleasedLine, dimension: str = "preference") -> dict[str, Any]:
    """The canonical pairwise record of line ``r`` (id = its 0-based index ``i``)."""
    return {
        "id": str(i),
        "input": {"question": r.instruction},
        "a": {"system": "response_1", "response": r.outputs[0]},
        "b": {"system": "response_2", "response": r.outputs[1]},
        "labels": {dimension: [r.label]},
        "meta": {"annotators": len(r.votes)},
    }


def dataset_of(path: str | Path) -> Any:
    """``--input FILE`` of a released-probabilities file: its records and its judge column
    (the card's ``shipped_scores`` names the file itself)."""
    from metajudge.data.formats import DatasetCard, Scale
    from metajudge.data.registry import Dataset
    from metajudge.data.validation import record_from_dict

    p = Path(path).resolve()
    lines = read_lines(p)
    card = DatasetCard(
        name=judge_name(p).replace(".", "_"),
        kind="pairwise",
        description=f"pairs and {judge_name(p)}'s class probabilities read from {p} "
        "(the Trust-or-Escalate released format)",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=("preference",),
        scale=Scale(-1.0, 1.0, (-1.0, 0.0, 1.0)),
        annotators=None,
        direction="positive = b (outputs[1]) better",
        shipped_scores=({"loader": "trust_or_escalate_probs", "judges": {judge_name(p): str(p)}},),
    )
    recs = [
        record_from_dict(record_dict(i, r), kind="pairwise", path=p, line=r.line)
        for i, r in enumerate(lines)
    ]
    return Dataset(card=card, records=recs, subsets=())
