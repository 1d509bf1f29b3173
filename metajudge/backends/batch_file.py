"""Judge requests as an OpenAI-format batch file, and its results file back into the cache.

For judge runs that outgrow one machine: the requests a run needs (recorded by
:class:`~metajudge.backends.recording.RecordingBackend`) are written as the JSONL that the
OpenAI Batch API and vLLM's offline runner (``python -m vllm.entrypoints.openai.run_batch -i
requests.jsonl -o results.jsonl``) read — one line per call: ``custom_id``, ``method``,
``url``, ``body`` (the lines of :func:`metajudge.backends.batch.batch_lines`). ``custom_id``
is ``mj-<cache key>``, so it is the same for the same request on every export. A manifest
next to the file (``<file>.manifest.jsonl``) keeps what the cache entry is keyed by.
:func:`import_results` reads a results file in the batch-output format (``custom_id``,
``response: {status_code, body}``, ``error``) and stores each answer in the SQLite cache under
its key; a later run of the same judges is then answered from the cache with no call. Both
steps are resumable: an export appends only requests not in the file yet, an import skips
answers already cached, and failed or missing answers stay pending for the next export.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.backends.base import Completion, Request
from metajudge.backends.batch import batch_lines
from metajudge.backends.cache import ResponseCache, cache_key
from metajudge.backends.openai_parse import merge_samples, parse_response
from metajudge.backends.recording import Recorded
from metajudge.backends.reply import reply_problem
from metajudge.errors import InputError
from metajudge.io import atomic_write, canonical_json

BATCH_FIELDS = ("custom_id", "method", "url", "body")


def manifest_path(requests_path: str | Path) -> Path:
    p = Path(requests_path)
    return p.with_name(p.name + ".manifest.jsonl")


def custom_id(key: str) -> str:
    """The batch id of a cache key (deterministic)."""
    return f"mj-{key}"


def request_from_dict(d: Mapping[str, Any]) -> Request:
    """Inverse of :meth:`Request.to_dict`."""
    msgs = d.get("messages")
    return Request(
        messages=tuple(dict(m) for m in msgs) if msgs is not None else None,
        prompt=d.get("prompt"),
        temperature=float(d["temperature"]),
        max_tokens=int(d["max_tokens"]),
        n=int(d["n"]),
        stop=tuple(d.get("stop") or ()),
        seed=d.get("seed"),
        logprobs=bool(d.get("logprobs")),
        top_logprobs=int(d.get("top_logprobs") or 0),
        json_schema=d.get("json_schema"),
        grammar=d.get("grammar"),
    )


def _read_jsonl(path: Path, what: str) -> list[dict[str, Any]]:
    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read the {what}: {e}", path=str(path)) from None
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise InputError(f"not JSON: {e}", path=str(path), line=i) from None
        if not isinstance(obj, dict) or "custom_id" not in obj:
            raise InputError("a line without custom_id", path=str(path), line=i, field="custom_id")
        out.append(obj)
    return out


@dataclass
class ExportSummary:
    path: str
    n_new: int  # requests added by this export
    n_total: int  # requests in the file
    n_lines: int  # batch lines in the file (a request split in samples has one per sample)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def export_requests(backend: Any, records: Iterable[Recorded], path: str | Path) -> ExportSummary:
    """Write (or extend) the batch file and its manifest with ``records``.

    ``backend``: the uncached OpenAI-compatible backend the judge run would call (it builds the
    request bodies exactly as a live call).
    """
    p = Path(path)
    mp = manifest_path(p)
    old_lines = _read_jsonl(p, "batch file") if p.is_file() else []
    old_manifest = _read_jsonl(mp, "batch manifest") if mp.is_file() else []
    known = {m["custom_id"] for m in old_manifest}
    new = [r for r in records if custom_id(r.key) not in known]
    ids = [custom_id(r.key) for r in new]
    by_kind = batch_lines(backend, [r.request for r in new], ids) if new else {}
    new_lines = [line for lines in by_kind.values() for line in lines]
    kind_of = {line["custom_id"]: kind for kind, ls in by_kind.items() for line in ls}
    manifest = []
    for r, cid in zip(new, ids, strict=True):
        samples = sorted(c for c in kind_of if c == cid or c.startswith(cid + "s"))
        manifest.append(
            {
                "custom_id": cid,
                "key": r.key,
                "kind": r.kind,
                "model_id": r.model_id,
                "parser_version": r.parser_version,
                "endpoint": r.endpoint,
                "chat": kind_of[samples[0]] == "chat",
                "samples": samples,
                "request": r.request.to_dict(),
            }
        )
    lines = old_lines + new_lines
    with atomic_write(p) as fh:
        fh.writelines(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    with atomic_write(mp) as fh:
        fh.writelines(canonical_json(m) + "\n" for m in old_manifest + manifest)
    return ExportSummary(str(p), len(new), len(old_manifest) + len(manifest), len(lines))


@dataclass
class ImportSummary:
    n_imported: int = 0
    n_already: int = 0  # answers that were in the cache already
    n_failed: int = 0  # error lines or unreadable bodies (stay pending)
    n_missing: int = 0  # requests of the manifest without a result line (stay pending)
    failures: dict[str, str] = field(default_factory=dict)  # custom_id -> reason (first 20)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _answer(item: Mapping[str, Any], chat: bool, model: str) -> Completion | str:
    resp = item.get("response") or {}
    err = item.get("error")
    if err or resp.get("status_code") != 200:
        msg = (err or {}).get("message") if isinstance(err, dict) else err
        return str(msg or json.dumps(resp.get("body", {}))[:300])
    try:
        return parse_response(resp["body"], chat=chat, latency_s=0.0, model=model)
    except (ValueError, KeyError, TypeError) as e:
        return f"unreadable response body: {e}"


def import_results(
    cache: ResponseCache, results_path: str | Path, requests_path: str | Path
) -> ImportSummary:
    """Store the answers of a batch results file in ``cache`` (see the module docstring)."""
    manifest = _read_jsonl(manifest_path(requests_path), "batch manifest")
    results = {r["custom_id"]: r for r in _read_jsonl(Path(results_path), "batch results file")}
    out = ImportSummary()
    cached = cache.get_many([m["key"] for m in manifest])
    for m in manifest:
        if m["key"] in cached:
            out.n_already += 1
            continue
        items = [results.get(c) for c in m["samples"]]
        if any(it is None for it in items):
            out.n_missing += 1
            continue
        parts = [_answer(it, m["chat"], m["model_id"]) for it in items if it is not None]
        bad = next((p for p in parts if isinstance(p, str)), None)
        if bad is not None:
            out.n_failed += 1
            if len(out.failures) < 20:
                out.failures[m["custom_id"]] = bad
            continue
        comps = [p for p in parts if isinstance(p, Completion)]
        req = request_from_dict(m["request"])
        if cache_key(m["kind"], m["model_id"], req, m["parser_version"], m["endpoint"]) != m["key"]:
            raise InputError(
                "the manifest entry does not match its cache key (edited?)",
                path=str(manifest_path(requests_path)),
                field=m["custom_id"],
            )
        comp = comps[0] if len(comps) == 1 else merge_samples(comps)
        comp.extra["batch"] = True
        problem = reply_problem(req, comp)
        if problem is not None:  # never stored: stays pending, asked again by the next export
            out.n_failed += 1
            if len(out.failures) < 20:
                out.failures[m["custom_id"]] = f"unusable reply: {problem}"
            continue
        cache.put(
            m["key"],
            kind=m["kind"],
            model_id=m["model_id"],
            parser_version=m["parser_version"],
            request=req,
            completion=comp,
            endpoint=m["endpoint"],
        )
        out.n_imported += 1
    return out
