"""Judge verdicts that ship with a dataset.

Per-response external *scores* (RAGChecker's own scores, LFTQA-Eval's metric files, HANNA's metric
and LLM-judge columns) are read by :mod:`metajudge.scores.readers.upstream`, in score-row form.

:func:`load_external_verdicts` returns judge verdicts on pairwise items,
``{judge: {pair id: Pref | None}}`` (None = the judge's output could not be parsed):
PandaLM's GPT-3.5-turbo and PandaLM-7B outputs, read in the ``pandalm`` spelling of
:data:`metajudge.stats.decisions.SPELLINGS` (``1`` = a better, ``2`` = b better, ``0`` / ``Tie``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.stats.decisions import Pref, to_pref


def _json(name: str, relpath: str, data_dir: str | Path | None) -> tuple[Path, Any]:
    from metajudge.data.registry import upstream_json

    return upstream_json(name, relpath, data_dir)


def _pandalm(v: Any) -> Pref | None:
    """A PandaLM result cell as a decision; a reply in no known spelling is None (unparsed)."""
    try:
        return to_pref(str(v), "pandalm")
    except ValueError:
        return None


def load_external_verdicts(
    name: str, data_dir: str | Path | None = None
) -> dict[str, dict[str, Pref | None]]:
    """``{judge: {pair id: Pref | None}}``; ``Pref.B`` = b better, None = unparseable output."""
    if name != "pandalm_testset":
        raise InputError(
            f"dataset {name!r} ships no judge verdicts (those that do: pandalm_testset)",
            field="name",
        )
    out: dict[str, dict[str, Pref | None]] = {}
    for judge, rel, key in (
        ("gpt-3.5-turbo", "gpt-3.5-turbo-testset-v1.json", "gpt_result"),
        ("pandalm-7b", "pandalm-7b-testset-v1.json", "pandalm_result"),
    ):
        p, rows = _json(name, rel, data_dir)
        if not isinstance(rows, list):
            raise InputError("expected a JSON list", path=p, field="<root>")
        table: dict[str, Pref | None] = {}
        for i, r in enumerate(rows):
            if not isinstance(r, dict) or "idx" not in r or key not in r:
                raise InputError(f"missing idx or {key}", path=p, field=f"[{i}]")
            table[str(r["idx"])] = _pandalm(r[key])
        out[judge] = table
    return out
