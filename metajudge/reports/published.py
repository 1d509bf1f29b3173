"""Published numbers as data: ``baselines/published_*.json``.

Each file: ``{"source", "notes", "dataset", "protocol", "entries": [{table, row, column, metric,
dimension, statistic, value, ...}]}``; values ×100 as printed in the paper. An entry inherits
the file's ``source``, ``dataset`` and ``protocol`` unless it sets its own. ``metric: "human"``
is the inter-human ceiling row. ``kind: "backbone_agreement"`` marks numbers that are not
correlations with humans (MT-RAIG Table 8) — they never match a meta-evaluation cell.

The folder is ``$METAJUDGE_BASELINES_DIR`` or the package's ``metajudge/data/published/``
(package data, so an installed wheel shows them; ``baselines/published_*.json`` at the top of the
repository are symbolic links to these files).

A user's own paper numbers come from ``--published FILE`` (``meta-eval`` and ``report``): a CSV
or JSON Lines file with the fields ``metric``, ``dimension``, ``statistic`` (``pearson``,
``spearman``, ``kendall``, ``acc_ties``, ``acc_no_ties``), ``value`` and ``source`` (optional:
the file name), and an optional ``scale`` (``1``, the default: the statistic's own scale, a
correlation in [−1, 1]; or ``100`` for a paper that prints ×100). They feed the same
``published`` column as the built-in files, for any input (:func:`read_published_file`). A bad
file is an ``InputError`` naming file, line and field; a row naming a metric or dimension the
run does not have is counted and warned (:func:`unmatched_line`), never dropped in silence.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import parse_json, read_json, read_text

_REQUIRED = ("table", "row", "column", "metric", "dimension", "statistic", "value")


def baselines_dir() -> Path:
    env = os.environ.get("METAJUDGE_BASELINES_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / "data" / "published"


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


USER_ORIGIN = "--published"
_USER_FIELDS = ("metric", "dimension", "statistic", "value")
_STATISTICS = ("pearson", "spearman", "kendall", "acc_ties", "acc_no_ties")


def _rows_of(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` of a CSV (header on line 1) or JSON Lines file."""
    import csv

    text = read_text(path, field="--published")
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson") or text.lstrip().startswith("{"):
        out = []
        for i, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            rec = parse_json(raw, path=path, line=i)
            if not isinstance(rec, dict):
                raise InputError("expected a JSON object per line", path=path, line=i)
            out.append((i, rec))
        return out
    delim = "\t" if path.suffix.lower() == ".tsv" else ","
    reader = csv.DictReader(text.splitlines(), delimiter=delim)
    missing = [f for f in _USER_FIELDS if f not in (reader.fieldnames or [])]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)} (header: {reader.fieldnames})",
            path=path,
            line=1,
            field=missing[0],
        )
    return [(i, dict(r)) for i, r in enumerate(reader, start=2)]


def _user_entry(path: Path, line: int, rec: dict[str, Any]) -> dict[str, Any]:
    """One checked row of a ``--published`` file, stored like a built-in entry (value ×100)."""
    where = {"path": path, "line": line}
    for f in ("metric", "dimension", "statistic"):
        if not isinstance(rec.get(f), str) or not rec[f].strip():
            raise InputError("missing or empty (a name is expected)", **where, field=f)
    stat = rec["statistic"].strip().lower()
    if stat not in _STATISTICS:
        raise InputError(
            f"unknown statistic {rec['statistic']!r} (one of {', '.join(_STATISTICS)})",
            **where,
            field="statistic",
        )
    scale = _number(rec.get("scale", 1) or 1, where, "scale")
    if scale not in (1.0, 100.0):
        raise InputError(
            f"scale must be 1 or 100, not {rec.get('scale')!r}", **where, field="scale"
        )
    value = _number(rec.get("value"), where, "value") / scale
    if not -1.0 <= value <= 1.0:
        raise InputError(
            f"{rec.get('value')!r} is outside [-1, 1] on scale {scale:g}; a paper's ×100 number "
            "needs a 'scale' of 100",
            **where,
            field="value",
        )
    source = str(rec.get("source") or "").strip() or path.name
    return {
        "metric": rec["metric"].strip(),
        "dimension": rec["dimension"].strip(),
        "statistic": stat,
        "value": value * 100,  # the built-in entries' convention (×100, as papers print)
        "source": source,
        "table": source,
        "file": str(path),
        "line": line,
        "origin": USER_ORIGIN,
    }


def _number(v: Any, where: dict[str, Any], field: str) -> float:
    import math

    try:
        x = float(v) if not isinstance(v, bool) else math.nan
    except (TypeError, ValueError):
        raise InputError(f"non-numeric value {v!r}", **where, field=field) from None
    if not math.isfinite(x):
        raise InputError(f"non-numeric value {v!r}", **where, field=field)
    return x


def read_published_file(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a ``--published`` file (module docstring), checked; exit 2 on a bad one."""
    p = Path(path)
    rows = [_user_entry(p, line, rec) for line, rec in _rows_of(p)]
    if not rows:
        raise InputError("no published rows", path=p, field="--published")
    return rows


def _user_matches(data: dict[str, Any], rows: list[dict[str, Any]]) -> tuple[list, list]:
    """The rows a table of this run shows (its metric or ``human``, dimension, and a statistic
    the protocol fills), and the rest."""
    from metajudge.reports.sections import shown_statistics

    metrics = {m["name"] for m in data["metrics"]} | {"human"}
    dims = set(data["dataset"]["dimensions"])
    stats = set(shown_statistics(data, data.get("statistics") or ("pearson", "spearman")))
    hit, left = [], []
    for e in rows:
        ok = e["metric"] in metrics and e["dimension"] in dims and e["statistic"] in stats
        (hit if ok else left).append(e)
    return hit, left


def attach_published(
    result: Any, folder: str | Path | None = None, *, user_file: str | Path | None = None
) -> Any:
    """Set ``result.data["published"]`` to the matching built-in numbers and the rows of a
    ``--published`` file (``user_file``; without it, the file rows the result already holds are
    kept, so ``metajudge report DIR`` re-renders them). Rows that match no metric or dimension
    of the run go to ``published_unmatched`` (counted, warned). Returns ``result``."""
    data = result.data
    if user_file is not None:
        user, left = _user_matches(data, read_published_file(user_file))
        data["published_unmatched"] = left
        data["published_file"] = str(user_file)
    else:
        user = [e for e in data.get("published") or [] if e.get("origin") == USER_ORIGIN]
    data["published"] = matching_published(data, folder) + user
    return result


def unmatched_line(data: dict[str, Any], *, show: int = 3) -> str:
    """One warning for the ``--published`` rows that match no metric or dimension of the run
    (empty when every row matched)."""
    left = data.get("published_unmatched") or []
    if not left:
        return ""
    first = ", ".join(
        f"line {e['line']}: {e['metric']} / {e['dimension']} / {e['statistic']}"
        for e in left[:show]
    )
    more = f", and {len(left) - show} more" if len(left) > show else ""
    return (
        f"{len(left)} row(s) of {data.get('published_file')} match no metric, dimension or "
        f"statistic of this run and are not shown ({first}{more})"
    )
