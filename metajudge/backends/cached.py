"""``CachedBackend``: any backend behind the response cache (:mod:`.cache`).

It offers the :class:`~metajudge.backends.base.Backend` surface (``name``, ``config``, ``ledger``,
``model_id``, ``complete``, ``close``) plus ``complete_batch``, ``make_request`` and
``with_parser_version``; anything else of the wrapped backend is reached through ``inner``.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Self

from metajudge.backends.base import Backend, BackendError, Completion, Request
from metajudge.backends.cache import ResponseCache, cache_key
from metajudge.backends.ledger import Ledger
from metajudge.backends.reply import reply_problem

log = logging.getLogger(__name__)

#: A caller's check of a reply (its parser): why ``completion`` is no answer to ``request`` it
#: can use (``None``: usable). A reply it refuses is returned but never stored or served.
Accept = Callable[[Request, Completion], "str | None"]


def _processed(c: Completion) -> int:
    """Prompt tokens the server evaluated for ``c`` (prefix-cache reuse excluded), else sent."""
    return c.prompt_tokens if c.processed_prompt_tokens is None else c.processed_prompt_tokens


def _usable(
    name: str, request: Request, res: Completion | BackendError
) -> Completion | BackendError:
    """``res``, or a :class:`BackendError` (a counted failure, never cached) when it is a reply
    that is no usable answer to ``request`` (:func:`reply_problem`)."""
    if isinstance(res, BackendError):
        return res
    problem = reply_problem(request, res)
    return res if problem is None else BackendError(f"{name}: unusable reply: {problem}")


def _problem(request: Request, res: Completion, accept: Accept | None) -> str | None:
    """Why ``res`` may not be served for ``request``: no usable reply, or ``accept`` refuses it."""
    problem = reply_problem(request, res)
    if problem is None and accept is not None:
        problem = accept(request, res)
    return problem


def _accepts_on_result(backend: Any) -> bool:
    try:
        return "on_result" in inspect.signature(backend.complete).parameters
    except (TypeError, ValueError):
        return False


class CachedBackend:
    """Any backend behind the cache; same ``complete()`` plus a ``parser_version``.

    ``parser_version`` (the version of the code that will parse the outputs) is part of every key.
    Set it on the wrapper (``CachedBackend(be, cache, parser_version="geval-1")`` or
    ``be.with_parser_version("geval-1")``, a view sharing the cache and ledger) or per batch
    (``be.complete(reqs, parser_version="geval-1")``, which wins). Requests answered from the cache
    come back with ``Completion.cached = True`` and count as ``ledger.cached``.
    Identical requests within one batch are sent once. A reply that is no usable answer to its
    request (:func:`~metajudge.backends.reply.reply_problem`: log-probabilities missing when
    asked, NaN or out of range) is returned as a :class:`BackendError`, is never stored, and a
    stored one is never served (it counts as a miss and is asked again). The same holds for a
    reply the caller's parser cannot read (``complete(..., accept=check)``: a G-Eval reply with
    no score digit, or one off the scale), except that the reply itself is still returned, for
    the caller to count as its parse failure.
    """

    def __init__(
        self,
        inner: Backend,
        cache: ResponseCache,
        *,
        parser_version: str = "",
        ledger: Ledger | None = None,
        close_cache: bool = True,
        _owns: bool = True,
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.parser_version = parser_version
        self.name = inner.name
        self.ledger: Ledger = ledger or getattr(inner, "ledger", None) or Ledger()
        self._owns = _owns
        self._close_cache = close_cache

    @property
    def kind(self) -> str:
        return str(getattr(self.inner, "kind", type(self.inner).__name__))

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def endpoint(self) -> str:
        """The wrapped backend's ``cache_endpoint`` (normalised base URL of a remote endpoint;
        empty for local models and for backends without one)."""
        return str(getattr(self.inner, "cache_endpoint", "") or "")

    @property
    def config(self) -> Any:
        return getattr(self.inner, "config", None)

    def make_request(self, **kw: Any) -> Request:
        return self.inner.make_request(**kw)  # type: ignore[attr-defined,no-any-return]

    def with_parser_version(self, parser_version: str) -> CachedBackend:
        """A view with another parser version (shares backend, cache and ledger; closing it is a no-op)."""
        return CachedBackend(
            self.inner,
            self.cache,
            parser_version=parser_version,
            ledger=self.ledger,
            close_cache=False,
            _owns=False,
        )

    def key(self, request: Request, parser_version: str | None = None) -> str:
        pv = self.parser_version if parser_version is None else parser_version
        return cache_key(self.kind, self.model_id, request, pv, self.endpoint)

    def usable_hits(
        self, keys: Sequence[str], requests: Sequence[Request], accept: Accept | None = None
    ) -> dict[str, Completion]:
        """The cached answers for ``keys`` that are usable answers to their ``requests`` (and
        that ``accept`` accepts); one that is not (stored before replies were checked, or by
        another program) is a miss, asked again."""
        hits = self.cache.get_many(keys)
        for k, r in zip(keys, requests, strict=True):
            problem = _problem(r, hits[k], accept) if k in hits else None
            if problem is not None:
                log.warning(
                    "%s: cached reply %s refused, asking again: %s", self.name, k[:12], problem
                )
                del hits[k]
        return hits

    def complete(
        self,
        requests: Sequence[Request],
        *,
        parser_version: str | None = None,
        accept: Accept | None = None,
    ) -> list[Completion | BackendError]:
        """Live calls for what the cache lacks; each finished call is stored at once, unless
        ``accept`` (the caller's parser) refuses it (see the class docstring)."""
        return self._complete(requests, parser_version, None, accept)

    def complete_batch(
        self, requests: Sequence[Request], *, parser_version: str | None = None, **batch_kw: Any
    ) -> list[Completion | BackendError]:
        """Like :meth:`complete`, but the missing requests go as an OpenAI Batch job
        (``batch_kw``: ``state_path``, ``poll_s``, ``timeout_s``; see :mod:`metajudge.backends.batch`)."""
        return self._complete(requests, parser_version, batch_kw, batch_kw.pop("accept", None))

    def _complete(
        self,
        requests: Sequence[Request],
        parser_version: str | None,
        batch_kw: dict[str, Any] | None,
        accept: Accept | None = None,
    ) -> list[Completion | BackendError]:
        pv = self.parser_version if parser_version is None else parser_version
        t0 = time.perf_counter()
        kind, model_id, endpoint = self.kind, self.model_id, self.endpoint
        keys = [cache_key(kind, model_id, r, pv, endpoint) for r in requests]
        hits = self.usable_hits(keys, requests, accept)
        out: list[Completion | BackendError | None] = [hits.get(k) for k in keys]
        missing: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            if out[i] is None:
                missing.setdefault(k, []).append(i)
        served = [c for c in out if c is not None]
        self.ledger.add_hits(
            len(served),
            prompt_tokens=sum(c.prompt_tokens for c in served),
            completion_tokens=sum(c.completion_tokens for c in served),
            latency_s=sum(c.latency_s for c in served),
            processed_prompt_tokens=sum(_processed(c) for c in served),
        )
        if missing:
            todo_keys = list(missing)
            todo = [requests[missing[k][0]] for k in todo_keys]

            def on_result(j: int, res: Completion | BackendError) -> None:
                if not isinstance(res, Completion) or reply_problem(todo[j], res) is not None:
                    return
                refused = accept(todo[j], res) if accept is not None else None
                if refused is not None:
                    self.cache.refused += 1
                    log.info("%s: reply not stored, asked again next run: %s", self.name, refused)
                else:
                    self.cache.put(
                        todo_keys[j],
                        kind=kind,
                        model_id=model_id,
                        parser_version=pv,
                        request=todo[j],
                        completion=res,
                        endpoint=endpoint,
                    )

            if batch_kw is not None:
                results = self.inner.complete_batch(todo, on_result=on_result, **batch_kw)  # type: ignore[attr-defined]
            elif _accepts_on_result(self.inner):
                results = self.inner.complete(todo, on_result=on_result)  # type: ignore[call-arg]
            else:  # a backend without the hook: persist when the batch returns
                results = self.inner.complete(todo)
                for j, res in enumerate(results):
                    on_result(j, res)
            for k, req, res in zip(todo_keys, todo, results, strict=True):
                for i in missing[k]:
                    out[i] = _usable(self.name, req, res)
        else:
            self.ledger.add_wall(time.perf_counter() - t0)
        return [r if r is not None else BackendError("no result") for r in out]

    def close(self) -> None:
        if self._owns:
            try:
                self.inner.close()
            finally:
                if self._close_cache:
                    self.cache.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
