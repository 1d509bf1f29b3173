"""Score every response of a dataset with registry metrics; read and write score files.

A score file is JSONL, one row per (response, metric)::

    {"key": "17::b", "item": "17", "system": "gpt-4", "side": "b", "metric": "bleu",
     "score": 23.4, "signature": "bleu|nrefs:1|...", "details": {...}, "error": null}

``key`` is :func:`metajudge.data.formats.response_key` (``item::side`` for pairwise records,
``item::system`` for Likert records). ``score`` is ``null`` exactly when the response could not be
scored, and then ``error`` says why. Rows are unique by ``(key, metric)``.

:func:`score_dataset` is resumable: given ``cache_path`` (an earlier score file), rows whose
``(key, metric)`` and ``signature`` match and that have a score are reused; rows with an error or
another signature are recomputed. ``metajudge score -o FILE`` passes FILE as the cache.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data.formats import Record
from metajudge.errors import InputError
from metajudge.io import atomic_write
from metajudge.metrics.base import ResponseRef, ScoreItem, iter_responses

log = logging.getLogger(__name__)

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
CHUNK = 256  # responses per score_batch call (progress granularity); one metric instance per run


def _records_of(dataset: Any, data_dir: str | Path | None = None) -> list[Record]:
    """Records from a dataset name, a JSONL path, a ``Dataset`` (``.records``) or a list of records."""
    if isinstance(dataset, (str, Path)):
        p = Path(dataset)
        if p.suffix == ".jsonl" and p.is_file():
            from metajudge.data.registry import load_jsonl_dataset

            return list(load_jsonl_dataset(p).records)
        from metajudge.data.registry import load_dataset

        ds = load_dataset(str(dataset), data_dir=data_dir)
        if not ds.records:
            raise InputError(
                f"dataset {dataset!r} has no responses to score (kind {ds.kind})", field="dataset"
            )
        return list(ds.records)
    recs = getattr(dataset, "records", dataset)
    if not isinstance(recs, Iterable):
        raise InputError(
            f"cannot score a {type(dataset).__name__}: give a name, a path, a Dataset or records",
            field="dataset",
        )
    return list(recs)


def _row(
    ref: ResponseRef,
    metric: str,
    score: float | None,
    signature: str,
    details: Mapping[str, Any],
    error: str | None,
) -> dict[str, Any]:
    return {
        "key": ref.key,
        "item": ref.item,
        "system": ref.system,
        "side": ref.side,
        "metric": metric,
        "score": score,
        "signature": signature,
        "details": dict(details),
        "error": error,
    }


def score_dataset(
    dataset: Any,
    metric_names: Sequence[str],
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool = True,
    cache_path: str | Path | None = None,
    data_dir: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Score every response of ``dataset`` (pairwise: both ``a`` and ``b``) with each metric.

    ``dataset``: a registry name (:func:`metajudge.data.registry.load_dataset`), a canonical JSONL
    path, a ``Dataset`` or a list of records. ``options``: ``{metric name: {option: value}}``
    passed to :func:`metajudge.metrics.registry.get_metric`. ``cache_path``: an earlier score file
    to resume from (see the module docstring). Rows come metric by metric, responses in dataset
    order. One metric instance (one loaded model) serves the whole run.
    """
    from metajudge.metrics.registry import get_metric

    if isinstance(metric_names, str):
        metric_names = [m.strip() for m in metric_names.split(",") if m.strip()]
    if not metric_names:
        raise InputError("no metrics given", field="metrics")
    if len(set(metric_names)) != len(metric_names):
        raise InputError(f"metric listed twice in {list(metric_names)}", field="metrics")
    options = dict(options or {})
    unknown_opts = set(options) - set(metric_names)
    if unknown_opts:
        raise InputError(
            f"options given for metrics not being scored: {sorted(unknown_opts)}", field="options"
        )
    refs = list(iter_responses(_records_of(dataset, data_dir)))
    if not refs:
        raise InputError("the dataset has no responses", field="dataset")
    seen: set[str] = set()
    for r in refs:
        if r.key in seen:
            raise InputError(f"duplicate response key {r.key!r} in the dataset", field="id")
        seen.add(r.key)
    cached: dict[tuple[str, str], dict[str, Any]] = {}
    if cache_path is not None and Path(cache_path).is_file():
        for row in read_scores(cache_path, allow_empty=True):
            cached[(row["key"], row["metric"])] = row
    rows: list[dict[str, Any]] = []
    for name in metric_names:
        metric = get_metric(name, **dict(options.get(name, {})))
        try:
            sig = metric.signature
            out: list[dict[str, Any] | None] = [None] * len(refs)
            todo: list[int] = []
            for i, r in enumerate(refs):
                c = cached.get((r.key, name))
                if c is not None and c["signature"] == sig and c["score"] is not None:
                    out[i] = _row(r, name, c["score"], sig, c.get("details") or {}, None)
                else:
                    todo.append(i)
            if len(todo) < len(refs):
                log.info(
                    "%s: reusing %d cached scores, computing %d",
                    name,
                    len(refs) - len(todo),
                    len(todo),
                )
            chunk = len(todo) if getattr(metric, "batch_dependent", False) else CHUNK
            bar = _progress(len(todo), f"{name}", enabled=progress and bool(todo))
            try:
                for s in range(0, len(todo), max(chunk, 1)):
                    idx = todo[s : s + chunk]
                    items = [
                        ScoreItem(refs[i].key, refs[i].response, refs[i].reference, refs[i].input)
                        for i in idx
                    ]
                    results = metric.score_batch(items)
                    if len(results) != len(items):
                        raise RuntimeError(
                            f"{name}: score_batch returned {len(results)} results for {len(items)} items"
                        )
                    for i, res in zip(idx, results, strict=True):
                        if res.key != refs[i].key:
                            raise RuntimeError(
                                f"{name}: result key {res.key!r} != item key {refs[i].key!r}"
                            )
                        score, err = res.score, res.error
                        if score is not None and not (
                            isinstance(score, (int, float)) and math.isfinite(score)
                        ):
                            score, err = None, f"non-finite score {score!r}"
                        if score is None and not err:
                            err = "not scored (no reason given)"
                        out[i] = _row(
                            refs[i],
                            name,
                            None if score is None else float(score),
                            sig,
                            res.details,
                            err,
                        )
                    if bar is not None:
                        bar.update(len(idx))
            finally:
                if bar is not None:
                    bar.close()
            rows.extend(r for r in out if r is not None)
        finally:
            metric.close()
    return rows


def _progress(total: int, desc: str, *, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="resp", mininterval=0.5, leave=False)


def write_scores(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write score rows as JSONL, atomically (all or nothing). Returns the row count."""
    n = 0
    with atomic_write(path) as fh:
        for i, row in enumerate(rows):
            missing = [f for f in ROW_FIELDS if f not in row]
            if missing:
                raise InputError(f"score row {i} lacks fields {missing}", field=missing[0])
            try:
                line = json.dumps(
                    {f: row[f] for f in ROW_FIELDS}, ensure_ascii=False, allow_nan=False
                )
            except ValueError:
                raise InputError(
                    f"score row {i} ({row.get('key')}, {row.get('metric')}) has a non-finite number",
                    field="score",
                ) from None
            fh.write(line + "\n")
            n += 1
    return n


def _validate_row(obj: Any, path: Path, line: int) -> dict[str, Any]:
    def err(field: str, msg: str) -> InputError:
        return InputError(msg, path=path, line=line, field=field)

    if not isinstance(obj, dict):
        raise err("<row>", f"expected a JSON object, got {type(obj).__name__}")
    for f in ("key", "metric", "item", "signature"):
        if f not in obj:
            raise err(f, "missing required field")
        if not isinstance(obj[f], str) or (f in ("key", "metric") and not obj[f]):
            raise err(f, f"expected a non-empty string, got {obj[f]!r}")
    if "score" not in obj:
        raise err("score", "missing required field")
    s = obj["score"]
    if s is not None and (
        isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s)
    ):
        raise err("score", f"expected a finite number or null, got {s!r}")
    e = obj.get("error")
    if e is not None and not isinstance(e, str):
        raise err("error", f"expected a string or null, got {e!r}")
    if s is None and not e:
        raise err("error", "score is null but no error says why")
    d = obj.get("details", {})
    if d is None:
        d = {}
    if not isinstance(d, dict):
        raise err("details", f"expected an object, got {type(d).__name__}")
    side = obj.get("side")
    if side not in (None, "a", "b"):
        raise err("side", f"expected 'a', 'b' or null, got {side!r}")
    system = obj.get("system")
    if system is not None and not isinstance(system, str):
        raise err("system", f"expected a string or null, got {system!r}")
    return {
        "key": obj["key"],
        "item": obj["item"],
        "system": system,
        "side": side,
        "metric": obj["metric"],
        "score": None if s is None else float(s),
        "signature": obj["signature"],
        "details": d,
        "error": e,
    }


def read_scores(path: str | Path, *, allow_empty: bool = False) -> list[dict[str, Any]]:
    """Read and validate a score file; errors name the file, line and field.

    Checks: JSON syntax, required fields and their types, finite numeric or null scores (a null
    score needs an ``error``), ``side`` in {a, b, null}, no duplicate ``(key, metric)``.
    """
    from metajudge.data.formats import iter_jsonl_objects

    path = Path(path)
    rows: list[dict[str, Any]] = []
    first: dict[tuple[str, str], int] = {}
    for line, obj in iter_jsonl_objects(path):
        row = _validate_row(obj, path, line)
        k = (row["key"], row["metric"])
        if k in first:
            raise InputError(
                f"duplicate (key, metric) {k!r} (first on line {first[k]})",
                path=path,
                line=line,
                field="key",
            )
        first[k] = line
        rows.append(row)
    if not rows and not allow_empty:
        raise InputError("empty score file: no rows", path=path)
    return rows


def score_lookup(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], float | None]:
    """``{(key, metric): score}`` for quick access (e.g. per-pair differences in meta-evaluation)."""
    return {(r["key"], r["metric"]): r["score"] for r in rows}


def summarize(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per metric: n, scored, errors, mean score and the signature(s)."""
    by: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["metric"], []).append(r)
    out = []
    for m, rs in by.items():
        vals = [r["score"] for r in rs if r["score"] is not None]
        out.append(
            {
                "metric": m,
                "n": len(rs),
                "scored": len(vals),
                "errors": len(rs) - len(vals),
                "mean": sum(vals) / len(vals) if vals else None,
                "signatures": sorted({r["signature"] for r in rs}),
            }
        )
    return out
