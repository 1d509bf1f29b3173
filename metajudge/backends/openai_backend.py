"""OpenAI-compatible backend (OpenAI, vLLM, Ollama, llama.cpp's server) through the ``openai`` package.

``complete()`` is synchronous for the caller but runs the batch concurrently on a private asyncio
loop (a background thread, so it also works inside Jupyter where a loop is already running), at
most ``config.concurrency`` requests in flight. Each request is retried with exponential backoff
and jitter on 429, 5xx, 408/409, timeouts, dropped connections, bodies cut off mid-transfer
(a short ``Content-Length``, a reset, a bad chunk header) and unreadable bodies (malformed,
nested too deep, a lone surrogate in a string), honouring ``Retry-After`` (and
``retry-after-ms``); other 4xx fail at once. With several replicas (``base_url`` list), one that
refuses the connection is marked down (:attr:`OpenAIBackend.replicas_down`, the ledger file) and
the call goes to a live one at once; a retry goes to another replica than the one that failed.
Every request yields a :class:`Completion` or a :class:`BackendError`, in input order; an
``on_result`` callback sees each result as soon as it is final (the cache uses it to persist
completed calls immediately).

Each HTTP call has one deadline, ``timeout_s``, for connecting, the headers and the whole body (a
server trickling bytes cannot hold it longer); the body is read in chunks and refused past
:func:`~metajudge.backends.reply.reply_byte_cap` (from ``max_tokens``); a reply that is no usable
answer (:func:`~metajudge.backends.reply.reply_problem`) is a :class:`BackendError`, not retried
within the run and never cached. Reply texts are scrubbed of the key (:func:`scrub`).

The API key is read from the environment variable the config names when the client is created;
it is never stored on the backend's public attributes, in results, errors or logs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from metajudge.backends.base import BackendError, Completion, Request
from metajudge.backends.config import BackendConfig
from metajudge.backends.ledger import Ledger
from metajudge.backends.loop import LoopThread
from metajudge.backends.openai_parse import (
    endpoint_id,
    merge_samples,
    parse_response,
    redact_url,
    retry_after_s,
    scrub,
)
from metajudge.backends.reply import UnusableReply, reply_byte_cap, reply_problem
from metajudge.backends.routing import pick_endpoint, prompt_text

log = logging.getLogger(__name__)

OnResult = Callable[[int, "Completion | BackendError"], None]

_RETRY_STATUSES = frozenset({408, 409, 429})
#: The longest a server's ``Retry-After`` is obeyed: ``max(backoff_max_s, RETRY_AFTER_MAX_S)``.
RETRY_AFTER_MAX_S = 60.0
#: Seconds a replica that refused a connection is left alone (then it is tried again).
REPLICA_DOWN_S = 30.0
NO_KEY = "sk-no-key-required"


class OpenAIBackend:
    """Live calls to an OpenAI-compatible endpoint; see the module docstring.

    Parameters
    ----------
    config:
        The backbone (``kind="openai"``, or ``"embedded"`` when used by the embedded backend).
    ledger:
        Shared token/cost ledger; a new one with the config's prices by default.
    seed:
        Seeds the backoff jitter.
    run_dir:
        When given, ``close()`` writes the ledger to ``<run_dir>/ledger-<name>.json``.
    """

    kind = "openai"

    def __init__(
        self,
        config: BackendConfig,
        *,
        ledger: Ledger | None = None,
        seed: int | None = 0,
        run_dir: str | Path | None = None,
    ) -> None:
        self.config = config
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.name = config.name
        self.ledger = ledger or Ledger(
            config.price_input_per_mtok, config.price_output_per_mtok, config.batch_discount
        )
        self._rng = random.Random(seed)
        self._loop: LoopThread | None = None
        self._clients: dict[str, Any] = {}
        self._inflight: dict[str, int] = {}
        self._last_prompt: dict[str, str] = {}  # per replica: the prompt routed there last
        #: replicas marked down after a failed connection, with the reason (:meth:`_mark_down`)
        self.replicas_down: dict[str, str] = {}
        self._down_until: dict[str, float] = {}
        self._secret: str | None = None
        self._closed = False
        self._lock = threading.Lock()

    # -- identity -------------------------------------------------------------------------------
    @property
    def model_id(self) -> str:
        return self.config.served_model

    @property
    def cache_endpoint(self) -> str:
        """What answers, for the cache key: the normalised base URL (no credentials)."""
        return endpoint_id(self.config.base_url)

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}(name={self.name!r}, model={self.model_id!r})"

    # -- plumbing -------------------------------------------------------------------------------
    def _api_key(self) -> str:
        env = self.config.api_key_env
        if not env:
            return NO_KEY
        key = os.environ.get(env)
        if not key:
            raise BackendError(
                f"backend {self.name!r}: environment variable {env} (the API key) is not set"
            )
        return key

    def _endpoints(self) -> list[str]:
        """The replicas calls go to (:meth:`_pick_endpoint`)."""
        if not self.config.endpoints:
            raise BackendError(f"backend {self.name!r} has no base_url")
        return list(self.config.endpoints)

    def _ensure_started(self) -> None:
        """Hook for subclasses that must start something before the first call."""

    def start(self) -> Self:
        """Start what the backend needs (the embedded server) now instead of on the first call."""
        self._ensure_started()
        return self

    def sync_client(self) -> Any:
        """A synchronous ``openai.OpenAI`` client on the first endpoint (Batch API, file uploads)."""
        import openai

        key = self._api_key()
        self._secret = key if key != NO_KEY else None
        return openai.OpenAI(
            base_url=self._endpoints()[0],
            api_key=key,
            max_retries=self.config.max_retries,
            timeout=self.config.timeout_s,
        )

    def redact(self, text: str) -> str:
        """``text`` with the API key and anything that looks like a key removed."""
        return scrub(text, self._secret)

    def _annotate(self, completion: Completion, endpoint: str) -> Completion:
        """Hook for subclasses that learn more about a call than its response says."""
        return completion

    def _client_for(self, base_url: str) -> Any:
        client = self._clients.get(base_url)
        if client is None:
            import openai

            key = self._api_key()
            self._secret = key if key != NO_KEY else None
            client = openai.AsyncOpenAI(
                base_url=base_url, api_key=key, max_retries=0, timeout=self.config.timeout_s
            )
            self._clients[base_url] = client
        return client

    def _loop_thread(self) -> LoopThread:
        with self._lock:
            if self._closed:
                raise BackendError(f"backend {self.name!r} is closed")
            if self._loop is None:
                self._loop = LoopThread(self.name)
            return self._loop

    def make_request(
        self,
        *,
        messages: Sequence[dict[str, str]] | None = None,
        prompt: str | None = None,
        **kw: Any,
    ) -> Request:
        """A :class:`Request` with this backbone's decoding defaults (``config.decoding``) filled in."""
        fields: dict[str, Any] = {**self.config.decoding, **kw}
        if "stop" in fields:
            fields["stop"] = tuple(fields["stop"])
        return Request(
            messages=tuple(messages) if messages is not None else None, prompt=prompt, **fields
        )

    # -- request building ---------------------------------------------------------------------
    def validate(self, req: Request) -> None:
        """Raise :class:`BackendError` when this backbone cannot run ``req`` as asked."""
        if req.messages is not None and not self.config.chat:
            raise BackendError(
                f"backend {self.name!r} is a completion-only (base) model without a chat template: "
                "send prompt= requests, not messages="
            )
        if req.json_schema is not None and req.grammar is not None:
            raise BackendError("a request takes json_schema or grammar, not both")
        if req.grammar is not None and not self.config.grammar_param:
            raise BackendError(
                f"backend {self.name!r} does not accept GBNF grammars (grammar_param is unset)"
            )
        if req.n < 1:
            raise BackendError("n must be >= 1")

    def build_kwargs(
        self, req: Request, *, n: int = 1, seed: int | None = None
    ) -> tuple[str, dict[str, Any]]:
        """``("chat"|"completion", kwargs)`` for the SDK call of one request (one sample unless ``n``)."""
        cfg = self.config
        kw: dict[str, Any] = {
            "model": cfg.served_model,
            "temperature": req.temperature,
            "max_tokens": req.max_tokens,
        }
        extra: dict[str, Any] = {}
        if req.stop:
            kw["stop"] = list(req.stop)
        if seed is not None:
            kw["seed"] = seed
        if n > 1:
            kw["n"] = n
        grammar = req.grammar
        if req.messages is not None:
            kind = "chat"
            kw["messages"] = [dict(m) for m in req.messages]
            if req.logprobs:
                kw["logprobs"] = True
                if req.top_logprobs:
                    kw["top_logprobs"] = req.top_logprobs
            if req.json_schema is not None:
                if cfg.json_mode == "json_object_schema":
                    kw["response_format"] = {"type": "json_object", "schema": req.json_schema}
                else:
                    kw["response_format"] = {
                        "type": "json_schema",
                        "json_schema": {"name": "judgment", "schema": req.json_schema},
                    }
        else:
            kind = "completion"
            kw["prompt"] = req.prompt
            if req.logprobs:
                kw["logprobs"] = int(req.top_logprobs)
            if req.json_schema is not None:
                grammar = schema_to_grammar(
                    req.json_schema, backend=self.name, grammar_param=cfg.grammar_param
                )
        if grammar is not None:
            extra[str(cfg.grammar_param)] = grammar
        if extra:
            kw["extra_body"] = extra
        return kind, kw

    # -- the call -------------------------------------------------------------------------------
    def _backoff(self, attempt: int) -> float:
        base = min(self.config.backoff_max_s, self.config.backoff_base_s * (2**attempt))
        return base * (0.5 + 0.5 * self._rng.random())

    def _retry_delay(self, attempt: int, retry_after: float | None) -> tuple[float, str]:
        """The backoff, or the server's ``Retry-After`` capped at ``max(backoff_max_s,
        RETRY_AFTER_MAX_S)``; the note says when it was capped (for the log line)."""
        if retry_after is None:
            return self._backoff(attempt), ""
        cap = max(self.config.backoff_max_s, RETRY_AFTER_MAX_S)
        if retry_after > cap:
            return cap, f" (server asked for Retry-After {retry_after:.0f} s; capped at {cap:g} s)"
        return retry_after, ""

    def _pick_endpoint(self, kw: dict[str, Any] | None, avoid: set[str] | None = None) -> str:
        """The replica for a call (``kw``; ``None``: a retry): least in flight, or the one
        holding its prompt's prefix (:func:`~metajudge.backends.routing.pick_endpoint`), away
        from the replicas marked down and from ``avoid`` while another one is left."""
        text = prompt_text(kw) if kw is not None else None
        now = time.monotonic()
        shun = {e for e, until in self._down_until.items() if until > now} | (avoid or set())
        return pick_endpoint(self._endpoints(), self._inflight, self._last_prompt, text, shun)

    def _mark_down(self, ep: str, reason: str) -> None:
        """Mark replica ``ep`` down for :data:`REPLICA_DOWN_S` after a failed connection (its
        calls go to the other replicas); the marks are in :attr:`replicas_down` and the ledger."""
        first = ep not in self.replicas_down
        self.replicas_down[ep] = reason
        self._down_until[ep] = time.monotonic() + REPLICA_DOWN_S
        if first and len(self._endpoints()) > 1:
            log.warning(
                "%s: replica %s marked down (%s); calls go to the other replicas",
                self.name,
                redact_url(ep),
                reason,
            )

    async def _fetch(self, client: Any, kind: str, kw: dict[str, Any], cap: int) -> Any:
        """The reply body as JSON, read in chunks and refused once it passes ``cap`` bytes."""
        api = client.chat.completions if kind == "chat" else client.completions
        async with api.with_streaming_response.create(**kw) as resp:
            declared = str(resp.headers.get("content-length") or "")
            if declared.isdigit() and int(declared) > cap:
                raise UnusableReply(_too_large(int(declared), cap, kw))
            body = bytearray()
            async for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > cap:
                    raise UnusableReply(_too_large(len(body), cap, kw))
        try:
            return json.loads(bytes(body))
        except RecursionError:  # 100k nested brackets: an invalid body, not a traceback
            raise ValueError("the reply JSON nests too deep to read") from None

    async def _attempt(self, ep: str, kind: str, kw: dict[str, Any], cap: int) -> Completion:
        """One HTTP call under one overall deadline (connect, headers and the whole body):
        ``timeout_s`` bounds the call however slowly the server sends."""
        t0 = time.perf_counter()
        client = self._client_for(ep)
        data = await asyncio.wait_for(self._fetch(client, kind, kw, cap), self.config.timeout_s)
        latency = time.perf_counter() - t0
        comp = parse_response(
            data, chat=kind == "chat", latency_s=latency, model=kw["model"], redact=self.redact
        )
        comp = self._annotate(comp, ep)
        self.ledger.add_call(
            comp.prompt_tokens,
            comp.completion_tokens,
            latency,
            reasoning_tokens=comp.extra.get("reasoning_tokens", 0),
            processed_prompt_tokens=comp.processed_prompt_tokens,
        )
        return comp

    def _failure(self, e: Exception) -> _Failure | None:
        """What a failed attempt means (``None``: not a failure of the call; re-raised)."""
        import openai

        if isinstance(e, openai.APIStatusError):
            status = e.status_code
            retryable = status in _RETRY_STATUSES or status >= 500
            reason = f"HTTP {status}: {scrub(str(e.message), self._secret)[:300]}"
            wait = retry_after_s(e.response.headers) if retryable else None
            return _Failure(reason, retryable, status, wait)
        if isinstance(e, (openai.APITimeoutError, TimeoutError)) or _http_error(e, "Timeout"):
            timeout = self.config.timeout_s
            return _Failure(f"timed out: no complete reply within {timeout:g} s (timeout_s)")
        if isinstance(e, openai.APIConnectionError):
            cause = e.__cause__ or e
            return _Failure(
                f"connection error: {scrub(str(cause), self._secret)[:200]}",
                unreachable=_http_error(cause, "ConnectError", "ConnectTimeout"),
            )
        if _http_error(e, "HTTPError"):  # the body cut short: reset, short, bad chunk
            what = f"{type(e).__name__}: {scrub(str(e), self._secret)[:200]}"
            return _Failure(f"reply body cut off mid-transfer ({what})")
        if isinstance(e, UnusableReply):
            return _Failure(f"unusable reply: {e}", retryable=False)
        if isinstance(
            e, (openai.APIResponseValidationError, ValueError, TypeError, KeyError, AttributeError)
        ):
            return _Failure(f"invalid response body: {scrub(str(e), self._secret)[:200]}")
        return None

    async def _call(self, kind: str, kw: dict[str, Any], *, cap: int) -> Completion:
        """One HTTP call with retries; raises :class:`BackendError` when it fails for good.

        A body over ``cap`` bytes fails at once (:class:`UnusableReply`, not retried). A replica
        that refuses the connection is marked down and the call goes to a live replica at once,
        without using a retry; a retry goes to another replica than the one that failed."""
        attempt, last, failed_over = 0, None, set()
        while True:
            ep = self._pick_endpoint(kw) if last is None else self._pick_endpoint(None, {last})
            try:
                return await self._attempt(ep, kind, kw, cap)
            except BackendError:
                raise
            except Exception as e:
                f = self._failure(e)
                if f is None:
                    raise
            finally:
                self._inflight[ep] -= 1
            last = ep
            if f.unreachable:
                self._mark_down(ep, f.reason)
                failed_over.add(ep)
                if any(x not in failed_over for x in self._endpoints()):
                    continue  # another replica, now: the request never reached this one
            if not f.retryable or attempt >= self.config.max_retries:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise BackendError(
                    f"{self.name}: {f.reason}{tries}", status=f.status, retryable=f.retryable
                )
            delay, note = self._retry_delay(attempt, f.wait)
            log.info("%s: %s; retry %d in %.2f s%s", self.name, f.reason, attempt + 1, delay, note)
            self.ledger.add_retry()
            attempt += 1
            await asyncio.sleep(delay)

    async def _one(self, req: Request) -> Completion:
        """The answer to ``req``; a reply that is no usable answer (:func:`reply_problem`) is a
        :class:`BackendError`, so nothing downstream parses, stores or caches it."""
        self.validate(req)
        cap = reply_byte_cap(req)
        if req.n > 1 and not self.config.native_n:
            parts = []
            for i in range(req.n):
                seed = None if req.seed is None else req.seed + i
                kind, kw = self.build_kwargs(req, seed=seed)
                parts.append(await self._call(kind, kw, cap=cap))
            comp = merge_samples(parts)
        else:
            kind, kw = self.build_kwargs(req, n=req.n, seed=req.seed)
            comp = await self._call(kind, kw, cap=cap)
        problem = reply_problem(req, comp)
        if problem is not None:
            raise BackendError(f"{self.name}: unusable reply: {problem}")
        return comp

    async def _run(
        self, requests: Sequence[Request], on_result: OnResult | None, concurrency: int
    ) -> list[Completion | BackendError]:
        sem = asyncio.Semaphore(concurrency)
        out: list[Completion | BackendError | None] = [None] * len(requests)

        async def worker(i: int, req: Request) -> None:
            async with sem:
                try:
                    res: Completion | BackendError = await self._one(req)
                except BackendError as e:
                    self.ledger.add_error()
                    res = e
            out[i] = res
            if on_result is not None:
                on_result(i, res)

        tasks = [asyncio.ensure_future(worker(i, r)) for i, r in enumerate(requests)]
        try:
            await asyncio.gather(*tasks)
        except BaseException:  # on_result failed (a full cache disk) or the batch was cancelled:
            for t in tasks:  # stop the other calls and wait for them, so that nothing is left
                t.cancel()  # running on a loop about to close ("Event loop is closed")
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return [r if r is not None else BackendError("request was not run") for r in out]

    def complete(
        self,
        requests: Sequence[Request],
        *,
        on_result: OnResult | None = None,
        concurrency: int | None = None,
    ) -> list[Completion | BackendError]:
        """Run a batch concurrently; one Completion or BackendError per request, in order.

        At most ``concurrency`` (default ``config.concurrency``) requests are in flight.
        """
        if not requests:
            return []
        limit = self.config.concurrency if concurrency is None else int(concurrency)
        if limit < 1:
            raise BackendError("concurrency must be >= 1")
        self._ensure_started()
        t0 = time.perf_counter()
        try:
            return self._loop_thread().run(self._run(list(requests), on_result, limit))
        finally:
            self.ledger.add_wall(time.perf_counter() - t0)

    def complete_batch(
        self,
        requests: Sequence[Request],
        *,
        state_path: str | Path | None = None,
        poll_s: float = 30.0,
        timeout_s: float | None = None,
        on_result: OnResult | None = None,
    ) -> list[Completion | BackendError]:
        """Run the requests as an OpenAI Batch job (upload, poll, collect); see :mod:`.batch`.

        ``state_path`` keeps the batch ids so that a killed run resumes polling instead of resubmitting.
        """
        from metajudge.backends.batch import run_batch

        return run_batch(
            self,
            requests,
            state_path=state_path,
            poll_s=poll_s,
            timeout_s=timeout_s,
            on_result=on_result,
        )

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, self._loop = self._loop, None
        if loop is not None:
            clients = list(self._clients.values())
            if clients:
                try:
                    asyncio.run_coroutine_threadsafe(_close_clients(clients), loop.loop).result(
                        timeout=5
                    )
                except Exception:  # closing is best effort
                    log.debug("closing HTTP clients failed", exc_info=True)
            loop.close()
        self._clients.clear()
        if self.run_dir is not None and (
            self.ledger.calls or self.ledger.cached or self.ledger.errors
        ):
            from metajudge.run_folder import write_file

            doc = {
                "backend": self.name,
                "model_id": self.config.served_model,
                **self.ledger.summary(),
            }
            if self.replicas_down:
                doc["replicas_down"] = {redact_url(e): r for e, r in self.replicas_down.items()}
            write_file(self.run_dir, f"ledger-{self.name}.json", json.dumps(doc, indent=2))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class _Failure:
    """A failed attempt: why, whether to retry, the HTTP status, the server's ``Retry-After``
    and whether the replica could not be reached at all (marked down, failed over)."""

    reason: str
    retryable: bool = True
    status: int | None = None
    wait: float | None = None
    unreachable: bool = False


def _http_error(e: BaseException, *names: str) -> bool:
    """Whether ``e`` is one of the HTTP library's exceptions ``names`` (or a subclass; a name
    ending in ``Timeout`` matches ``TimeoutException``). The SDK's HTTP library is ``httpx`` or,
    in newer SDKs, ``httpx2``, so its classes are matched by name, not imported."""
    mro = [c for c in type(e).__mro__ if c.__module__.split(".")[0] in ("httpx", "httpx2")]
    found = {c.__name__ for c in mro}
    return any(n in found or (n == "Timeout" and "TimeoutException" in found) for n in names)


def _too_large(size: int, cap: int, kw: dict[str, Any]) -> str:
    return (
        f"the body has {size} bytes or more, above the cap of {cap} bytes for "
        f"max_tokens = {kw.get('max_tokens')} (see metajudge.backends.reply.reply_byte_cap)"
    )


async def _close_clients(clients: list[Any]) -> None:
    for c in clients:
        await c.close()


def schema_to_grammar(schema: dict[str, Any], *, backend: str, grammar_param: str | None) -> str:
    """A JSON schema as a GBNF grammar (llama.cpp's converter), for completion requests.

    llama.cpp's ``/v1/completions`` has no ``response_format``; a grammar does the same job.
    """
    if not grammar_param:
        raise BackendError(
            f"backend {backend!r}: JSON schema on prompt= requests needs a grammar-capable server"
        )
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf
    except ImportError as e:
        raise BackendError(
            "JSON schema on prompt= requests needs llama-cpp-python installed (schema → GBNF)"
        ) from e
    import json

    return json_schema_to_gbnf(json.dumps(schema))
