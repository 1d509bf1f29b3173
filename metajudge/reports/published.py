"""Published numbers as data: ``baselines/published_*.json``.

Each file: ``{"source", "notes", "dataset", "protocol", "entries": [{table, row, column, metric,
dimension, statistic, value, ...}]}``; values ×100 as printed in the paper. An entry inherits
the file's ``source``, ``dataset`` and ``protocol`` unless it sets its own. ``metric: "human"``
is the inter-human ceiling row. ``kind: "backbone_agreement"`` marks numbers that are not
correlations with humans (MT-RAIG Table 8) — they never match a meta-evaluation cell.

The folder is ``$METAJUDGE_BASELINES_DIR`` or ``baselines/`` at the top of the repository.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import read_json

_REQUIRED = ("table", "row", "column", "metric", "dimension", "statistic", "value")


def baselines_dir() -> Path:
    env = os.environ.get("METAJUDGE_BASELINES_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "baselines"


def load_published(
    folder: str | Path | None = None, *, kind: str | None = "correlation"
) -> list[dict[str, Any]]:
    """Every published entry (flattened, with ``source``/``dataset``/``protocol``/``file``).

    ``kind``: ``"correlation"`` (default: correlations with humans and the human ceiling),
    ``"backbone_agreement"``, or ``None`` for all.
    """
    d = Path(folder) if folder is not None else baselines_dir()
    if not d.is_dir():
        return []
    out: list[dict[str, Any]] = []
    for p in sorted(d.glob("published_*.json")):
        doc = read_json(p)
        if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
            raise InputError("expected an object with an 'entries' list", path=p, field="entries")
        for i, e in enumerate(doc["entries"]):
            if not isinstance(e, dict):
                raise InputError("expected an object", path=p, field=f"entries[{i}]")
            for f in _REQUIRED:
                if f not in e:
                    raise InputError("missing required field", path=p, field=f"entries[{i}].{f}")
            if isinstance(e["value"], bool) or not isinstance(e["value"], (int, float)):
                raise InputError(
                    f"non-numeric value {e['value']!r}", path=p, field=f"entries[{i}].value"
                )
            entry = {
                "source": doc.get("source", ""),
                "dataset": doc.get("dataset"),
                "subset": doc.get("subset"),
                "protocol": doc.get("protocol") or {},
                "kind": "correlation",
                "file": p.name,
                **e,
            }
            if kind is None or entry["kind"] == kind:
                out.append(entry)
    return out


def matching_published(
    data: dict[str, Any], folder: str | Path | None = None
) -> list[dict[str, Any]]:
    """Published entries for a meta-evaluation result's dataset, subset, protocol, metrics, dimensions.

    An entry matches when every option its file's ``protocol`` names equals the result's.
    """
    ds, protocol = data["dataset"], data["protocol"]
    metrics = [m["name"] for m in data["metrics"]]
    out = []
    for e in load_published(folder):
        if e.get("dataset") != ds["name"] or (e.get("subset") or None) != (
            ds.get("subset") or None
        ):
            continue
        if e.get("metric") not in (*metrics, "human") or e.get("dimension") not in ds["dimensions"]:
            continue
        want = e.get("protocol") or {}
        if any(protocol.get(k) != v for k, v in want.items()):
            continue
        out.append(e)
    return out


def attach_published(result: Any, folder: str | Path | None = None) -> Any:
    """Set ``result.data["published"]`` to the matching published numbers; returns ``result``."""
    result.data["published"] = matching_published(result.data, folder)
    return result
