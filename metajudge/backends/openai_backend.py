"""OpenAI-compatible backend (OpenAI, vLLM, Ollama, llama.cpp's server) through the ``openai`` package.

``complete()`` is synchronous for the caller but runs the batch concurrently on a private asyncio
loop (a background thread, so it also works inside Jupyter where a loop is already running), at
most ``config.concurrency`` requests in flight. Each request is retried with exponential backoff
and jitter on 429, 5xx, 408/409, timeouts, dropped connections and unreadable bodies, honouring
``Retry-After`` (and ``retry-after-ms``); other 4xx fail at once. Every request yields a
:class:`Completion` or a :class:`BackendError`, in input order; an ``on_result`` callback sees each
result as soon as it is final (the cache uses it to persist completed calls immediately).

The API key is read from the environment variable the config names when the client is created;
it is never stored on the backend's public attributes, in results, errors or logs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import email.utils
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

from metajudge.backends.base import (
    BackendError,
    Choice,
    Completion,
    Request,
    TokenLogprob,
    strip_think,
)
from metajudge.backends.config import BackendConfig
from metajudge.backends.ledger import Ledger

log = logging.getLogger(__name__)

T = TypeVar("T")
OnResult = Callable[[int, "Completion | BackendError"], None]

_RETRY_STATUSES = frozenset({408, 409, 429})
_KEY_PATTERN = re.compile(r"(sk|key|token)-[A-Za-z0-9_\-*]{6,}", re.IGNORECASE)
NO_KEY = "sk-no-key-required"


class _LoopThread:
    """One asyncio loop in a daemon thread; ``run`` executes a coroutine there and waits."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._main, name=f"metajudge-{name}-loop", daemon=True
        )
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result()
        except (KeyboardInterrupt, SystemExit):
            fut.cancel()  # cancels the gather: in-flight HTTP calls are abandoned, finished ones are kept
            with contextlib.suppress(
                concurrent.futures.CancelledError, concurrent.futures.TimeoutError
            ):
                fut.result(timeout=5)
            raise

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()


def scrub(text: str, secret: str | None = None) -> str:
    """Remove a secret and anything that looks like an API key from ``text``.

    >>> scrub("Incorrect API key provided: sk-abcdef123456", None)
    'Incorrect API key provided: sk-***'
    """
    if secret:
        text = text.replace(secret, "***")
    return _KEY_PATTERN.sub(lambda m: m.group(1) + "-***", text)


def retry_after_s(headers: Any) -> float | None:
    """Seconds a server asked us to wait (``retry-after-ms``, ``retry-after`` seconds or HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key access (typed SDK objects and plain dicts alike), including extra fields."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    val = getattr(obj, name, None)
    if val is None:
        extra = getattr(obj, "model_extra", None) or {}
        val = extra.get(name)
    return default if val is None else val


def _count_think_tokens(tokens: Sequence[str], raw: str) -> int:
    """Tokens (from logprobs) that fall inside the ``<think>…</think>`` part of ``raw``."""
    end = raw.find("</think>")
    end = len(raw) if end < 0 else end + len("</think>")
    pos, n = 0, 0
    for tok in tokens:
        if pos >= end:
            break
        n += 1
        pos += len(tok)
    return n


def parse_choice(
    choice: Any,
    *,
    chat: bool,
    completion_tokens: int | None = None,
    reasoning_tokens: int | None = None,
) -> Choice:
    """One API choice (chat or completion, SDK object or dict) → :class:`Choice`.

    ``<think>…</think>`` is removed from ``text`` (kept in ``raw_text``); its token count comes from
    the server's ``reasoning_tokens`` when given, else from the logprob tokens, else a share of
    ``completion_tokens`` proportional to its characters.
    """
    lp_items: list[TokenLogprob] | None = None
    lp = _get(choice, "logprobs")
    if chat:
        msg = _get(choice, "message")
        content = _get(msg, "content", "") or ""
        rc = _get(msg, "reasoning_content") or _get(msg, "reasoning")
        raw = f"<think>{rc}</think>{content}" if rc else content
        if lp is not None and _get(lp, "content") is not None:
            lp_items = []
            for item in _get(lp, "content"):
                top = [
                    (str(_get(t, "token")), float(_get(t, "logprob")))
                    for t in (_get(item, "top_logprobs") or [])
                ]
                top.sort(key=lambda x: -x[1])
                lp_items.append(
                    TokenLogprob(str(_get(item, "token")), float(_get(item, "logprob")), tuple(top))
                )
    else:
        raw = _get(choice, "text", "") or ""
        if lp is not None and _get(lp, "tokens") is not None:
            toks = _get(lp, "tokens")
            lps = _get(lp, "token_logprobs") or [None] * len(toks)
            tops = _get(lp, "top_logprobs") or [None] * len(toks)
            lp_items = []
            for tok, val, top in zip(toks, lps, tops, strict=False):
                alts = sorted(
                    ((str(k), float(v)) for k, v in (top or {}).items()), key=lambda x: -x[1]
                )
                lp_items.append(
                    TokenLogprob(
                        str(tok), float(val) if val is not None else float("nan"), tuple(alts)
                    )
                )
    text, _thought = strip_think(raw)
    n_think = 0
    if "<think>" in raw:
        if reasoning_tokens is not None:
            n_think = reasoning_tokens
        elif lp_items is not None:
            n_think = _count_think_tokens([t.token for t in lp_items], raw)
        elif completion_tokens and raw:
            span = len(raw) - len(raw.split("</think>", 1)[-1]) if "</think>" in raw else len(raw)
            n_think = round(completion_tokens * span / len(raw))
    elif reasoning_tokens:
        n_think = reasoning_tokens  # hidden reasoning (o-series models): billed, not shown
    return Choice(
        text=text,
        raw_text=raw,
        finish_reason=_get(choice, "finish_reason"),
        logprobs=tuple(lp_items) if lp_items is not None else None,
        reasoning_tokens=int(n_think),
    )


def parse_response(resp: Any, *, chat: bool, latency_s: float, model: str) -> Completion:
    """A whole API response → :class:`Completion` (raises ``ValueError`` when it has no choices)."""
    choices_raw = _get(resp, "choices")
    if not choices_raw:
        raise ValueError("response has no choices")
    usage = _get(resp, "usage")
    pt = int(_get(usage, "prompt_tokens", 0) or 0)
    ct = int(_get(usage, "completion_tokens", 0) or 0)
    details = _get(usage, "completion_tokens_details")
    rt = _get(details, "reasoning_tokens")
    processed = _processed_tokens(resp, usage, pt)
    single = len(choices_raw) == 1
    choices = tuple(
        parse_choice(
            c,
            chat=chat,
            completion_tokens=ct if single else None,
            reasoning_tokens=int(rt) if (rt is not None and single) else None,
        )
        for c in sorted(choices_raw, key=lambda c: int(_get(c, "index", 0) or 0))
    )
    return Completion(
        choices=choices,
        prompt_tokens=pt,
        completion_tokens=ct,
        latency_s=latency_s,
        model=str(_get(resp, "model", model) or model),
        extra={"reasoning_tokens": sum(c.reasoning_tokens for c in choices)},
        processed_prompt_tokens=processed,
    )


def _processed_tokens(resp: Any, usage: Any, prompt_tokens: int) -> int | None:
    """Prompt tokens the server evaluated, where the response says: llama.cpp's C++ server
    (``timings.prompt_n``) or OpenAI/vLLM (sent minus ``prompt_tokens_details.cached_tokens``)."""
    n = _get(_get(resp, "timings"), "prompt_n")
    if isinstance(n, (int, float)) and not isinstance(n, bool):
        return int(n)
    cached = _get(_get(usage, "prompt_tokens_details"), "cached_tokens")
    if isinstance(cached, (int, float)) and not isinstance(cached, bool):
        return max(0, prompt_tokens - int(cached))
    return None


def merge_samples(parts: Sequence[Completion]) -> Completion:
    """Samples of one request made as separate calls (servers without ``n``) → one Completion."""
    return Completion(
        choices=tuple(ch for p in parts for ch in p.choices),
        prompt_tokens=parts[0].prompt_tokens,
        completion_tokens=sum(p.completion_tokens for p in parts),
        latency_s=max(p.latency_s for p in parts),
        model=parts[0].model,
        extra={
            "reasoning_tokens": sum(p.extra.get("reasoning_tokens", 0) for p in parts),
            "calls": len(parts),
        },
        processed_prompt_tokens=None
        if any(p.processed_prompt_tokens is None for p in parts)
        else sum(p.processed_prompt_tokens or 0 for p in parts),
    )


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
        self._loop: _LoopThread | None = None
        self._clients: dict[str, Any] = {}
        self._inflight: dict[str, int] = {}
        self._secret: str | None = None
        self._closed = False
        self._lock = threading.Lock()

    # -- identity -------------------------------------------------------------------------------
    @property
    def model_id(self) -> str:
        return self.config.served_model

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
        if not self.config.base_url:
            raise BackendError(f"backend {self.name!r} has no base_url")
        return [self.config.base_url]

    def _ensure_started(self) -> None:
        """Hook for subclasses that must start something before the first call."""

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

    def _loop_thread(self) -> _LoopThread:
        with self._lock:
            if self._closed:
                raise BackendError(f"backend {self.name!r} is closed")
            if self._loop is None:
                self._loop = _LoopThread(self.name)
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
    def _validate(self, req: Request) -> None:
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

    def _pick_endpoint(self) -> str:
        eps = self._endpoints()
        best = min(eps, key=lambda e: self._inflight.get(e, 0))
        self._inflight[best] = self._inflight.get(best, 0) + 1
        return best

    async def _call(self, kind: str, kw: dict[str, Any], *, batch_label: str = "") -> Completion:
        """One HTTP call with retries; raises :class:`BackendError` when it fails for good."""
        import openai

        attempt = 0
        while True:
            ep = self._pick_endpoint()
            t0 = time.perf_counter()
            wait: float | None = None
            try:
                client = self._client_for(ep)
                if kind == "chat":
                    resp = await client.chat.completions.create(**kw)
                else:
                    resp = await client.completions.create(**kw)
                latency = time.perf_counter() - t0
                comp = parse_response(
                    resp, chat=kind == "chat", latency_s=latency, model=kw["model"]
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
            except openai.APIStatusError as e:
                status = e.status_code
                retryable = status in _RETRY_STATUSES or status >= 500
                reason = f"HTTP {status}: {scrub(str(e.message), self._secret)[:300]}"
                wait = retry_after_s(e.response.headers) if retryable else None
            except openai.APITimeoutError:
                status, retryable, reason = (
                    None,
                    True,
                    f"timed out after {self.config.timeout_s:g} s",
                )
            except openai.APIConnectionError as e:
                status, retryable, reason = (
                    None,
                    True,
                    f"connection error: {scrub(str(e.__cause__ or e), self._secret)[:200]}",
                )
            except (
                openai.APIResponseValidationError,
                ValueError,
                TypeError,
                KeyError,
                AttributeError,
            ) as e:
                status, retryable, reason = (
                    None,
                    True,
                    f"invalid response body: {scrub(str(e), self._secret)[:200]}",
                )
            except BackendError:
                raise
            finally:
                self._inflight[ep] -= 1
            if not retryable or attempt >= self.config.max_retries:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise BackendError(
                    f"{self.name}: {reason}{tries}", status=status, retryable=retryable
                )
            delay = self._backoff(attempt) if wait is None else wait
            log.info("%s: %s; retry %d in %.2f s", self.name, reason, attempt + 1, delay)
            self.ledger.add_retry()
            attempt += 1
            await asyncio.sleep(delay)

    async def _one(self, req: Request) -> Completion:
        self._validate(req)
        if req.n > 1 and not self.config.native_n:
            parts = []
            for i in range(req.n):
                seed = None if req.seed is None else req.seed + i
                kind, kw = self.build_kwargs(req, seed=seed)
                parts.append(await self._call(kind, kw))
            return merge_samples(parts)
        kind, kw = self.build_kwargs(req, n=req.n, seed=req.seed)
        return await self._call(kind, kw)

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

        await asyncio.gather(*(worker(i, r) for i, r in enumerate(requests)))
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
            import json

            from metajudge.io import atomic_write

            with atomic_write(self.run_dir / f"ledger-{self.name}.json") as fh:
                json.dump(
                    {
                        "backend": self.name,
                        "model_id": self.config.served_model,
                        **self.ledger.summary(),
                    },
                    fh,
                    indent=2,
                )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
