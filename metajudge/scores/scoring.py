"""Score every response of a dataset with registry metrics; write score files.

A score file is JSONL, one score row (:mod:`metajudge.scores.readers.rows`) per (response, metric);
:func:`metajudge.scores.files.read_scores` reads it back.

:func:`score_dataset` is resumable: given ``cache_path`` (an earlier score file), rows whose
``(key, metric)``, ``signature`` and ``inputs`` (:func:`inputs_digest`: the texts the metric
reads and the fields they came from) match and that have a score are reused; rows with an error,
another signature or other inputs are recomputed. ``metajudge metrics run -o FILE`` passes FILE
as the cache.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.data.formats import Input, Record
from metajudge.errors import InputError
from metajudge.io import atomic_write, canonical_json, sha256_text
from metajudge.metrics.base import MetricResult, ResponseRef, iter_responses
from metajudge.progress import bar as progress_bar
from metajudge.scores.readers.rows import INPUTS_FIELD, ROW_FIELDS, ScoreRow, make_row

log = logging.getLogger(__name__)

CHUNK = 256  # responses per score_batch call (progress granularity); one metric instance per run


def _records_of(dataset: Any, data_dir: str | Path | None = None) -> list[Record]:
    """Records from a dataset name or a file (:func:`metajudge.data.loading.load`), a
    ``Dataset`` (``.records``) or a list of records."""
    if isinstance(dataset, (str, Path)):
        from metajudge.data.loading import load

        ds = load(dataset, data_dir)
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


def field_text(record: Record, dotted: str) -> str | None:
    """The text of a dotted field of a record (``input.source``, ``input.documents``,
    ``meta.summary``): a string as is, a list of strings joined by blank lines, a number as text;
    ``None`` when the record has no such field.

    >>> from metajudge.data.formats import Input, LikertRecord
    >>> r = LikertRecord("1", Input("q", documents=("d1", "d2")), "s", "resp", {}, meta={"n": 3})
    >>> field_text(r, "input.documents"), field_text(r, "meta.n"), field_text(r, "input.source")
    ('d1\\n\\nd2', '3', None)
    """
    node: Any = record.to_dict()
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    if isinstance(node, str):
        return node
    if isinstance(node, (list, tuple)) and all(isinstance(x, str) for x in node):
        return "\n\n".join(node)
    if isinstance(node, (int, float)) and not isinstance(node, bool):
        return str(node)
    return None if node is None else json.dumps(node, ensure_ascii=False, sort_keys=True)


def _response_refs(
    records: Sequence[Record], reference_field: str | None, source_field: str | None = None
) -> list[ResponseRef]:
    """Every response of the records, unique by key; ``reference_field`` replaces the reference,
    ``source_field`` the source a reference-free judge reads (``input.context``)."""
    refs: list[ResponseRef] = []
    seen: set[str] = set()
    for record in records:  # the fields of each response's own record (Likert: one per system)
        for ref in iter_responses([record]):
            if ref.key in seen:
                raise InputError(f"duplicate response key {ref.key!r} in the dataset", field="id")
            seen.add(ref.key)
            if reference_field:
                ref = dataclasses.replace(ref, reference=field_text(record, reference_field))
            if source_field:
                src = field_text(record, source_field)
                ref = dataclasses.replace(ref, input=dataclasses.replace(ref.input, context=src))
            refs.append(ref)
    if not refs:
        raise InputError("the dataset has no responses", field="dataset")
    for name, given, got in (
        ("reference_field", reference_field, [r.reference for r in refs]),
        ("source_field", source_field, [r.input.context for r in refs]),
    ):
        if given and all(v is None for v in got):
            raise InputError(
                f"no record has the field {given!r} (try input.question, input.context, "
                "input.documents or meta.<name>)",
                field=name,
            )
    return refs


def _check_names(
    metric_names: Sequence[str] | str, options: Mapping[str, Mapping[str, Any]] | None
) -> tuple[list[str], dict[str, Mapping[str, Any]]]:
    names = (
        [m.strip() for m in metric_names.split(",") if m.strip()]
        if isinstance(metric_names, str)
        else list(metric_names)
    )
    if not names:
        raise InputError("no metrics given", field="metrics")
    if len(set(names)) != len(names):
        raise InputError(f"metric listed twice in {names}", field="metrics")
    opts = dict(options or {})
    unknown = set(opts) - set(names)
    if unknown:
        raise InputError(
            f"options given for metrics not being scored: {sorted(unknown)}", field="options"
        )
    return names, opts


def score_dataset(
    dataset: Any,
    metric_names: Sequence[str],
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool = True,
    cache_path: str | Path | None = None,
    data_dir: str | Path | None = None,
    backbone: str | None = None,
    reference_field: str | None = None,
    source_field: str | None = None,
) -> list[dict[str, Any]]:
    """Score every response of ``dataset`` (pairwise: both ``a`` and ``b``) with each metric.

    ``dataset``: a registry name or a file (:func:`metajudge.data.loading.load`), a ``Dataset``
    or a list of records. ``options``: ``{metric name: {option: value}}``
    passed to :func:`metajudge.metrics.registry.get_metric`; ``backbone``: the LLM judges'
    backbone. A family (``geval``) is scored as its members (``geval_faithfulness``,
    ``geval_completeness``). ``reference_field``: a dotted record field (``input.source``, ``input.question``,
    ``meta.x``) the metrics compare against instead of ``input.reference``; ``source_field``: the
    dotted record field that holds the source document a reference-free judge (G-Eval's
    SummEval dimensions, faithfulness) reads instead of ``input.context`` (a record without it
    has no source, and its judge's score is unscored with the reason). ``cache_path``: an
    earlier score file to resume from (see the module docstring). Rows come metric by metric,
    responses in dataset order. One metric instance (one loaded model) serves the whole run, and
    each distinct (response, reference[, input]) is computed once and its result given to every
    response key that has it (a pairwise file repeats responses across pairs).
    """
    from metajudge.metrics.registry import expand_metrics, family_members, get_metric

    names, options = _check_names(metric_names, options)
    for fam in [n for n in names if family_members(n)]:  # a family's options go to each member
        for member in family_members(fam):
            options.setdefault(member, options.get(fam, {}))
        options.pop(fam, None)
    names = expand_metrics(names)
    refs = _response_refs(_records_of(dataset, data_dir), reference_field, source_field)
    cached: dict[tuple[str, str], dict[str, Any]] = {}
    if cache_path is not None and Path(cache_path).is_file():
        from metajudge.scores.files import read_scores

        for row in read_scores(cache_path, allow_empty=True):
            cached[(row["key"], row["metric"])] = row
    rows: list[dict[str, Any]] = []
    for name in names:
        metric = get_metric(name, backbone=backbone, **dict(options.get(name, {})))
        try:
            fields = (reference_field, source_field)
            rows.extend(_score_metric(metric, name, refs, cached, progress, fields))
        finally:
            metric.close()
    return rows


def _row(
    ref: ResponseRef,
    metric: str,
    score: float | None,
    signature: str,
    details: Mapping[str, Any],
    error: str | None,
    inputs: str | None = None,
) -> ScoreRow:
    return make_row(
        item=ref.item,
        system=ref.system,
        side=ref.side,
        metric=metric,
        score=score,
        signature=signature,
        details=details,
        error=error,
        inputs=inputs,
    )


def inputs_digest(
    ref: ResponseRef,
    uses_input: bool,
    reference_field: str | None = None,
    source_field: str | None = None,
) -> str:
    """The :data:`~metajudge.scores.readers.rows.INPUTS_FIELD` of one response's row: sha256 (first 16
    hex digits) of everything its metric reads, the response, the reference and (``uses_input``)
    the input, with the record fields they were taken from (``--reference-field``,
    ``--source-field``; the source field only where the input is read). A resumed score file
    reuses a row only when this matches, so a changed text or field is scored again.

    >>> from metajudge.data.formats import Input
    >>> r = ResponseRef("1::s", "1", "s", None, "resp", "ref", Input("q"))
    >>> inputs_digest(r, False) == inputs_digest(r, False, reference_field="meta.ref")
    False
    """
    doc = {
        "response": ref.response,
        "reference": ref.reference,
        "reference_field": reference_field or "input.reference",
        "input": ref.input.to_dict() if uses_input and ref.input is not None else None,
        "source_field": (source_field or "input.context") if uses_input else None,
    }
    return sha256_text(canonical_json(doc))[:16]


def _input_key(inp: Input | None) -> Any:
    try:
        hash(inp)
        return inp
    except TypeError:  # pragma: no cover - Input is frozen; a subclass may hold lists
        return canonical_json(inp.to_dict() if inp is not None else None)


def _distinct(
    refs: Sequence[ResponseRef], todo: Sequence[int], uses_input: bool
) -> list[list[int]]:
    """``todo`` grouped by what the metric sees: (response, reference[, input]); first-seen order."""
    groups: dict[Any, list[int]] = {}
    for i in todo:
        r = refs[i]
        k = (r.response, r.reference, _input_key(r.input) if uses_input else None)
        groups.setdefault(k, []).append(i)
    return list(groups.values())


def _score_metric(
    metric: Any,
    name: str,
    refs: Sequence[ResponseRef],
    cached: Mapping[tuple[str, str], Mapping[str, Any]],
    progress: bool,
    fields: tuple[str | None, str | None] = (None, None),
) -> list[dict[str, Any]]:
    """One metric over every response: cached rows reused (same signature and
    :func:`inputs_digest`; ``fields``: the reference and source fields), each distinct item
    computed once."""
    sig = metric.signature
    uses_input = bool(getattr(metric, "uses_input", True))
    digests = [inputs_digest(r, uses_input, *fields) for r in refs]
    out: list[dict[str, Any] | None] = [None] * len(refs)
    todo: list[int] = []
    for i, r in enumerate(refs):
        c = cached.get((r.key, name))
        if _reusable(c, sig, digests[i]):
            assert c is not None
            out[i] = _row(r, name, c["score"], sig, c.get("details") or {}, None, digests[i])
        elif (v := _served(metric, c, digests[i])) is not None:
            assert c is not None
            out[i] = _row(r, name, v, sig, c.get("details") or {}, None, digests[i])
        else:
            todo.append(i)
    batch_dependent = bool(getattr(metric, "batch_dependent", False))
    # a batch-dependent metric (BERTScore with idf) sees the corpus as it is: no de-duplication
    # a metric that reads the whole record (a pairwise judge defined in a file) is not de-duplicated
    groups = (
        [[i] for i in todo]
        if batch_dependent or getattr(metric, "uses_record", False)
        else _distinct(refs, todo, uses_input)
    )
    if cached or len(groups) < len(todo):  # a resumed run says what it reused
        log.info(
            "%s: %d cached, %d to compute as %d distinct items",
            name,
            len(refs) - len(todo),
            len(todo),
            len(groups),
        )
    chunk = max(len(groups), 1) if batch_dependent else CHUNK
    check = getattr(metric, "check_items", None)  # bad input found before the first batch's calls
    if check is not None and len(groups) > chunk:
        check([refs[g[0]].score_item() for g in groups])
    bar = progress_bar(len(todo), name, enabled=progress and bool(todo), unit="resp")
    try:
        for s in range(0, len(groups), chunk):
            part = groups[s : s + chunk]
            firsts = [refs[g[0]] for g in part]
            items = [r.score_item() for r in firsts]
            results = metric.score_batch(items)
            if len(results) != len(items):
                raise RuntimeError(
                    f"{name}: score_batch returned {len(results)} results for {len(items)} items"
                )
            for g, first, res in zip(part, firsts, results, strict=True):
                if res.key != first.key:
                    raise RuntimeError(f"{name}: result key {res.key!r} != item key {first.key!r}")
                for i in g:
                    out[i] = _result_row(refs[i], name, sig, res, digests[i])
            if bar is not None:
                bar.update(sum(len(g) for g in part))
    finally:
        if bar is not None:
            bar.close()
    return [r for r in out if r is not None]


def _served(metric: Any, row: Mapping[str, Any] | None, digest: str) -> float | None:
    """The metric's score read from a cached ``row`` of the same inputs made under a sibling
    signature (the metric's ``served_from``: BERTScore's P, R and F are all in every row's
    details, whichever one was the score), else None."""
    served = getattr(metric, "served_from", None)
    if served is None or row is None or row["score"] is None or row.get(INPUTS_FIELD) != digest:
        return None
    return served(row["signature"], row.get("details") or {})


def _reusable(row: Mapping[str, Any] | None, signature: str, digest: str) -> bool:
    """Whether a cached ``row`` may be served: a score, of the same metric signature, and of the
    same inputs (:func:`inputs_digest`; a row written before it was recorded is not)."""
    return (
        row is not None
        and row["signature"] == signature
        and row.get(INPUTS_FIELD) == digest
        and row["score"] is not None
    )


def _result_row(
    ref: ResponseRef, name: str, sig: str, res: MetricResult, inputs: str | None = None
) -> dict[str, Any]:
    score, err = res.score, res.error
    if score is not None and not (isinstance(score, (int, float)) and math.isfinite(score)):
        score, err = None, f"non-finite score {score!r}"
    if score is None and not err:
        err = "not scored (no reason given)"
    return _row(ref, name, None if score is None else float(score), sig, res.details, err, inputs)


def nonfinite_field(obj: Any, prefix: str = "") -> str | None:
    """The dotted path of the first NaN or infinite number in ``obj`` (``None`` when there is none).

    >>> nonfinite_field({"score": 0.5, "details": {"probs": {"4": float("nan")}}})
    'details.probs.4'
    """
    if isinstance(obj, float) and not math.isfinite(obj):
        return prefix or "value"
    items: Iterable[tuple[Any, Any]] = ()
    if isinstance(obj, Mapping):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    for k, v in items:
        found = nonfinite_field(v, f"{prefix}.{k}" if prefix else str(k))
        if found is not None:
            return found
    return None


def write_scores(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write score rows as JSONL, atomically (all or nothing). Returns the row count."""
    n = 0
    with atomic_write(path) as fh:
        for line in score_lines(rows):
            fh.write(line)
            n += 1
    return n


def score_lines(rows: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """Each score row as a JSONL line (``\\n`` included): :data:`ROW_FIELDS` and, when present,
    :data:`~metajudge.scores.readers.rows.INPUTS_FIELD`; a row lacking a field, or with a non-finite
    number, is refused (``InputError``)."""
    for i, row in enumerate(rows):
        missing = [f for f in ROW_FIELDS if f not in row]
        if missing:
            raise InputError(f"score row {i} lacks fields {missing}", field=missing[0])
        obj = {f: row[f] for f in ROW_FIELDS}
        if row.get(INPUTS_FIELD):
            obj[INPUTS_FIELD] = row[INPUTS_FIELD]
        try:
            line = json.dumps(obj, ensure_ascii=False, allow_nan=False)
        except ValueError:
            where = nonfinite_field(obj) or "score"
            raise InputError(
                f"score row {i} ({row.get('key')}, {row.get('metric')}) has a non-finite "
                f"number in {where}",
                field=where,
            ) from None
        yield line + "\n"


def score_lookup(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], float | None]:
    """``{(key, metric): score}`` for quick access (e.g. per-pair differences in meta-evaluation)."""
    return {(r["key"], r["metric"]): r["score"] for r in rows}


def cuts_of(details: Mapping[str, Any] | None) -> list[str]:
    """What a judge cut or removed for one response, read from its result details:
    ``tables_cut`` (tables shortened to fit the context), ``items_capped`` (claims/topics over the
    cap), ``duplicates_removed`` (exact repeats), ``output_cut`` (a reply hit its token limit).

    >>> cuts_of({"tables": {"truncated": True}, "claims_capped": 0, "duplicate_claims": ["x"]})
    ['tables_cut', 'duplicates_removed']
    """
    d = details or {}
    out = []
    tables = d.get("tables")
    if isinstance(tables, Mapping) and tables.get("truncated"):
        out.append("tables_cut")
    if any(k.endswith("_capped") and isinstance(v, int) and v > 0 for k, v in d.items()):
        out.append("items_capped")
    if any(k.startswith("duplicate_") and v for k, v in d.items()):
        out.append("duplicates_removed")
    if d.get("decomposition_output_cut"):
        out.append("output_cut")
    return out


def summarize(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per metric: n, scored, errors, mean score, the signature(s) and ``affected`` — how many
    responses had a table cut, claims capped, duplicates removed or an output cut
    (:func:`cuts_of`), so that a report can say so with the share of responses affected."""
    by: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["metric"], []).append(r)
    out = []
    for m, rs in by.items():
        vals = [r["score"] for r in rs if r["score"] is not None]
        affected: dict[str, int] = {}
        for r in rs:
            for c in cuts_of(r.get("details")):
                affected[c] = affected.get(c, 0) + 1
        out.append(
            {
                "metric": m,
                "n": len(rs),
                "scored": len(vals),
                "errors": len(rs) - len(vals),
                "mean": sum(vals) / len(vals) if vals else None,
                "signatures": sorted({r["signature"] for r in rs}),
                "affected": affected,
                "affected_share": {k: round(v / len(rs), 4) for k, v in affected.items()},
            }
        )
    return out
