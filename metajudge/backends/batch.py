"""Running a set of requests as an OpenAI Batch job: JSONL upload, poll, collect.

For large studies against OpenAI (half price, 24 h window) — or any server implementing the
``/v1/files`` + ``/v1/batches`` endpoints. The requests are split by endpoint (chat vs completion),
written as JSONL (``custom_id`` = ``r<index>`` or ``r<index>s<sample>``), uploaded with
``purpose="batch"``, and a batch is created per endpoint. The batch ids are written to a state
file *before* polling, so a process killed while waiting resumes polling the same batches on the
next run instead of paying twice. Results are parsed with the same code as live calls. Only the
backend's public surface is used (``validate``, ``build_kwargs``, ``sync_client``, ``redact``,
``start``, ``config``, ``ledger``, ``model_id``).
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from metajudge.backends.base import BackendError, Completion, Request
from metajudge.backends.config import BackendConfig
from metajudge.backends.ledger import Ledger
from metajudge.backends.openai_parse import merge_samples, parse_response
from metajudge.io import atomic_write, canonical_json, sha256_text

log = logging.getLogger(__name__)

_ENDPOINTS = {"chat": "/v1/chat/completions", "completion": "/v1/completions"}
_FINAL = {"completed", "failed", "expired", "cancelled"}


class BatchBackend(Protocol):
    """The public surface of a backend that a batch job uses (:class:`.openai_backend.OpenAIBackend`
    has it); a protocol, so that this module does not import the backend that calls it."""

    name: str
    config: BackendConfig
    ledger: Ledger

    @property
    def model_id(self) -> str: ...

    def start(self) -> Any: ...

    def sync_client(self) -> Any: ...

    def redact(self, text: str) -> str: ...

    def validate(self, req: Request) -> None: ...

    def build_kwargs(
        self, req: Request, *, n: int = 1, seed: int | None = None
    ) -> tuple[str, dict[str, Any]]: ...


def batch_lines(
    backend: BatchBackend, requests: Sequence[Request], ids: Sequence[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The JSONL lines per endpoint (``extra_body`` folded into ``body``).

    ``custom_id`` is ``r<index>`` (or ``ids[index]``), with ``s<sample>`` appended when the
    server cannot draw ``n`` samples in one call and each sample is a line of its own.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    for i, req in enumerate(requests):
        rid = f"r{i}" if ids is None else ids[i]
        backend.validate(req)
        samples = (
            [(None, req.seed, req.n)]
            if (req.n == 1 or backend.config.native_n)
            else [(s, None if req.seed is None else req.seed + s, 1) for s in range(req.n)]
        )
        for s, seed, n in samples:
            kind, kw = backend.build_kwargs(req, n=n, seed=seed)
            body = {k: v for k, v in kw.items() if k != "extra_body"}
            body.update(kw.get("extra_body", {}))
            cid = rid if s is None else f"{rid}s{s}"
            out.setdefault(kind, []).append(
                {"custom_id": cid, "method": "POST", "url": _ENDPOINTS[kind], "body": body}
            )
    return out


def _load_state(path: Path | None, digest: str) -> list[dict[str, Any]] | None:
    if path is None or not path.is_file():
        return None
    try:
        state = json.loads(path.read_text())
    except ValueError:
        return None
    return state["batches"] if state.get("requests_sha256") == digest else None


def submit(
    backend: BatchBackend,
    requests: Sequence[Request],
    *,
    completion_window: str = "24h",
    state_path: str | Path | None = None,
    metadata: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Upload and create the batch job(s); returns ``[{"id", "kind"}]`` (also saved to ``state_path``)."""
    lines = batch_lines(backend, requests)
    digest = sha256_text(canonical_json([r.to_dict() for r in requests]) + backend.model_id)
    client = backend.sync_client()
    jobs = []
    for kind, items in lines.items():
        payload = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items).encode("utf-8")
        f = client.files.create(
            file=("metajudge-batch.jsonl", io.BytesIO(payload)), purpose="batch"
        )
        b = client.batches.create(
            input_file_id=f.id,
            endpoint=_ENDPOINTS[kind],
            completion_window=completion_window,
            metadata={"tool": "metajudge", "backend": backend.name, **(metadata or {})},
        )
        jobs.append({"id": b.id, "kind": kind, "input_file_id": f.id, "n": len(items)})
        log.info("%s: submitted batch %s (%d %s requests)", backend.name, b.id, len(items), kind)
    if state_path is not None:
        with atomic_write(state_path) as fh:
            json.dump(
                {"requests_sha256": digest, "batches": jobs, "submitted_at": time.time()},
                fh,
                indent=2,
            )
    return jobs


def wait(
    backend: BatchBackend,
    jobs: list[dict[str, Any]],
    *,
    poll_s: float = 30.0,
    timeout_s: float | None = None,
) -> list[Any]:
    """Poll until every batch is final (completed/failed/expired/cancelled); returns the batch objects."""
    client = backend.sync_client()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        batches = [client.batches.retrieve(j["id"]) for j in jobs]
        if all(b.status in _FINAL for b in batches):
            return batches
        if deadline is not None and time.monotonic() > deadline:
            raise BackendError(
                f"batch job(s) {', '.join(j['id'] for j in jobs)} not finished after {timeout_s:g} s "
                "(rerun to keep polling: the ids are in the state file)",
                retryable=True,
            )
        time.sleep(poll_s)


def collect(
    backend: BatchBackend,
    requests: Sequence[Request],
    jobs: list[dict[str, Any]],
    batches: list[Any],
    on_result: Callable[[int, Completion | BackendError], None] | None = None,
) -> list[Completion | BackendError]:
    """Read output and error files; one Completion/BackendError per request, in order."""
    client = backend.sync_client()
    answers: dict[str, Completion | BackendError] = {}
    kinds: dict[str, str] = {}
    for job, b in zip(jobs, batches, strict=True):
        for fid in (getattr(b, "output_file_id", None), getattr(b, "error_file_id", None)):
            if not fid:
                continue
            text = client.files.content(fid).text
            for line in text.splitlines():
                if not line.strip():
                    continue
                item = json.loads(line)
                cid = item.get("custom_id", "")
                kinds[cid] = job["kind"]
                resp = item.get("response") or {}
                err = item.get("error")
                if err or resp.get("status_code") != 200:
                    msg = (err or {}).get("message") or json.dumps(resp.get("body", {}))[:300]
                    answers[cid] = BackendError(
                        f"{backend.name}: batch request failed: {backend.redact(str(msg))}",
                        status=resp.get("status_code"),
                    )
                    continue
                try:
                    answers[cid] = parse_response(
                        resp["body"],
                        chat=job["kind"] == "chat",
                        latency_s=0.0,
                        model=backend.config.served_model,
                        redact=backend.redact,
                    )
                except (ValueError, KeyError, TypeError) as e:
                    answers[cid] = BackendError(f"{backend.name}: unreadable batch response: {e}")
        if b.status != "completed":
            log.warning("batch %s ended %s", b.id, b.status)
    out: list[Completion | BackendError] = []
    for i, req in enumerate(requests):
        cids = (
            [f"r{i}"]
            if (req.n == 1 or backend.config.native_n)
            else [f"r{i}s{s}" for s in range(req.n)]
        )
        parts = [answers.get(c) for c in cids]
        res: Completion | BackendError
        bad = next((p for p in parts if not isinstance(p, Completion)), None)
        if bad is None:
            comps = [p for p in parts if isinstance(p, Completion)]
            res = comps[0] if len(comps) == 1 else merge_samples(comps)
            for c in comps:
                backend.ledger.add_call(
                    c.prompt_tokens,
                    c.completion_tokens,
                    0.0,
                    reasoning_tokens=c.extra.get("reasoning_tokens", 0),
                    processed_prompt_tokens=c.processed_prompt_tokens,
                    batch=True,
                )
            res.extra["batch"] = True
        else:
            res = (
                bad
                if isinstance(bad, BackendError)
                else BackendError(
                    f"{backend.name}: request {i} has no batch result (batch not completed)"
                )
            )
            backend.ledger.add_error()
        out.append(res)
        if on_result is not None:
            on_result(i, res)
    return out


def run_batch(
    backend: BatchBackend,
    requests: Sequence[Request],
    *,
    state_path: str | Path | None = None,
    poll_s: float = 30.0,
    timeout_s: float | None = None,
    completion_window: str = "24h",
    on_result: Callable[[int, Completion | BackendError], None] | None = None,
) -> list[Completion | BackendError]:
    """Submit (or resume, from ``state_path``), wait, collect."""
    if not requests:
        return []
    backend.start()
    t0 = time.perf_counter()
    sp = Path(state_path) if state_path is not None else None
    digest = sha256_text(canonical_json([r.to_dict() for r in requests]) + backend.model_id)
    jobs = _load_state(sp, digest)
    if jobs is None:
        jobs = submit(backend, requests, completion_window=completion_window, state_path=sp)
    else:
        log.info("%s: resuming batch job(s) %s", backend.name, ", ".join(j["id"] for j in jobs))
    batches = wait(backend, jobs, poll_s=poll_s, timeout_s=timeout_s)
    out = collect(backend, requests, jobs, batches, on_result=on_result)
    if sp is not None and sp.exists():
        sp.unlink()
    backend.ledger.add_wall(time.perf_counter() - t0)
    return out
