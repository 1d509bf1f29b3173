"""The judge side of a backend: builds requests (chat or completion), runs them, counts cost.

A :class:`JudgeClient` owns one backend (started lazily on the first call, closed by
:meth:`close`) and a :class:`~metajudge.backends.ledger.Ledger`: requests, backend calls (cache
misses), cache hits, prompt tokens sent, prompt tokens actually processed (as the backend
reports them in :attr:`~metajudge.backends.base.Completion.processed_prompt_tokens`), completion
tokens, and wall time. Base models (``chat = false`` in the backbone config, e.g.
``gemma3-270m``) get ``prompt=`` completion requests; chat models get the same text as one user
message. The backbone is always passed in; nothing here reads the environment.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

from metajudge.backends.base import Backend, BackendError, Completion, Request
from metajudge.backends.ledger import Ledger
from metajudge.backends.registry import DEFAULT_BACKEND as DEFAULT_BACKBONE
from metajudge.errors import MetajudgeError


def resolve_backbone(backbone: str | None) -> str:
    """The backbone a judge uses: the one passed, else :data:`DEFAULT_BACKBONE`."""
    return backbone or DEFAULT_BACKBONE


def backbone_config(name: str) -> Any:
    """The :class:`~metajudge.backends.config.BackendConfig` of ``name`` (reads files, starts nothing)."""
    from metajudge.backends.config import all_configs
    from metajudge.errors import InputError

    cfgs = all_configs()
    if name not in cfgs:
        raise InputError(
            f"unknown backbone {name!r}; known: {', '.join(sorted(cfgs))}", field="backbone"
        )
    return cfgs[name]


def backbone_identity(name: str) -> str:
    """Model identity for signatures without starting anything: config model and GGUF sha256 (12 hex)."""
    cfg = backbone_config(name)
    ident = cfg.served_model
    if getattr(cfg, "gguf_sha256", None):
        ident += f"@{cfg.gguf_sha256[:12]}"
    elif cfg.kind == "embedded" and cfg.gguf:
        try:
            from metajudge.backends.models import gguf_sha256, resolve_gguf

            ident += f"@{gguf_sha256(resolve_gguf(cfg.gguf))[:12]}"
        except (
            OSError,
            ImportError,
            MetajudgeError,
        ):  # model not installed: the signature names the file spec
            ident += f"@{cfg.gguf}"
    return ident


def _takes_accept(backend: Any) -> bool:
    try:
        return "accept" in inspect.signature(backend.complete).parameters
    except (TypeError, ValueError):
        return False


class JudgeClient:
    """Requests in, completions out, costs counted. ``backend=`` injects one (tests, sharing)."""

    def __init__(
        self,
        backbone: str,
        *,
        backend: Backend | None = None,
        parser_version: str = "",
    ) -> None:
        self.backbone = backbone
        self.parser_version = parser_version
        self._backend = backend
        self._owns = backend is None
        cfg = backend.config if backend is not None else backbone_config(backbone)
        self.chat = bool(cfg.chat)
        self.stats = Ledger()

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            from metajudge.backends.registry import get_backend

            self._backend = get_backend(self.backbone, parser_version=self.parser_version)
        return self._backend

    @property
    def backend_ledger(self) -> Ledger | None:
        """The backend's own ledger (HTTP calls, retries, money), once a backend exists."""
        return None if self._backend is None else getattr(self._backend, "ledger", None)

    def request(self, text: str, **decoding: Any) -> Request:
        """A chat request (one user message) or, for a base model, a completion request."""
        if self.chat:
            return Request(messages=({"role": "user", "content": text},), **decoding)
        return Request(prompt=text, **decoding)

    def run(
        self,
        requests: Sequence[Request],
        *,
        accept: Callable[[Request, Completion], str | None] | None = None,
    ) -> list[Completion | BackendError]:
        """Run a batch in order; every outcome counted in :attr:`stats`.

        ``accept`` (the judge's parser: why a reply holds no verdict, ``None`` when it does) goes
        to a cached backend, which never stores or serves a reply it refuses, so the next run
        asks again (:class:`~metajudge.backends.cached.CachedBackend`).

        Processed prompt tokens come from each completion
        (:attr:`~metajudge.backends.base.Completion.processed_prompt_tokens`); where the backend
        did not report them they count as sent and ``stats.processed_known`` turns False.
        """
        if not requests:
            return []
        be = self.backend
        t0 = time.perf_counter()
        try:
            if accept is not None and _takes_accept(be):
                out = list(be.complete(list(requests), accept=accept))  # type: ignore[call-arg]
            else:
                out = list(be.complete(list(requests)))
        finally:
            self.stats.add_wall(time.perf_counter() - t0)
        self.stats.add_requests(len(requests))
        ran: set[int] = set()
        for c in out:
            if isinstance(c, BackendError):
                self.stats.add_error()
            # identical requests within a batch are sent once and share one Completion object
            elif c.cached:  # what the answer cost when the model computed it, counted apart
                self.stats.add_hits(
                    1,
                    prompt_tokens=c.prompt_tokens,
                    completion_tokens=c.completion_tokens,
                    latency_s=c.latency_s,
                    processed_prompt_tokens=c.processed_prompt_tokens,
                )
            elif id(c) in ran:
                self.stats.add_hits(1)
            else:
                ran.add(id(c))
                self.stats.add_call(
                    c.prompt_tokens,
                    c.completion_tokens,
                    c.latency_s,
                    reasoning_tokens=int(c.extra.get("reasoning_tokens", 0)),
                    processed_prompt_tokens=c.processed_prompt_tokens,
                )
        return out

    def close(self) -> None:
        if self._backend is not None and self._owns:
            self._backend.close()
            self._backend = None
