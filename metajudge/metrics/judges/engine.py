"""The judge side of a backend: builds requests (chat or completion), runs them, counts cost.

A :class:`JudgeClient` owns one backend (started lazily on the first call, closed by
:meth:`close`) and a :class:`CallStats` ledger: backend calls (cache misses), cache hits,
prompt tokens sent, prompt tokens actually processed (sent minus the prefix the server reused,
where the backend reports it), completion tokens, and wall time. Base models (``chat = false``
in the backbone config, e.g. ``gemma3-270m``) get ``prompt=`` completion requests; chat models
get the same text as one user message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from metajudge.backends.base import Backend, BackendError, Completion, Request
from metajudge.errors import MetajudgeError

DEFAULT_BACKBONE = "smollm2-135m"


def default_backbone() -> str:
    """``$METAJUDGE_BACKBONE`` if set (how ``--backbone`` reaches metrics built by name), else
    :data:`DEFAULT_BACKBONE` (the embedded SmolLM2-135M)."""
    return os.environ.get("METAJUDGE_BACKBONE") or DEFAULT_BACKBONE


def set_default_backbone(name: str | None) -> None:
    """What ``--backbone NAME`` of ``metajudge score`` / ``meta-eval`` does: every judge metric
    built by name in this process then uses ``name`` (``None``: leave the default alone)."""
    if name:
        os.environ["METAJUDGE_BACKBONE"] = name


@dataclass
class CallStats:
    """Cost of a judge run (DESIGN.md §4 "tokens, time and cost")."""

    requests: int = 0  # requests issued (cached or not)
    calls: int = 0  # requests the model actually ran (cache misses)
    cached: int = 0  # answered from the cache or by an identical request of the same batch
    errors: int = 0
    prompt_tokens: int = 0  # sent, over requests that ran
    processed_prompt_tokens: int = 0  # evaluated by the server (prefix-cache hits excluded)
    processed_known: bool = True  # False when the backend did not report reuse (then = sent)
    completion_tokens: int = 0
    wall_s: float = 0.0

    def add(self, other: CallStats) -> None:
        for k in (
            "requests",
            "calls",
            "cached",
            "errors",
            "prompt_tokens",
            "processed_prompt_tokens",
            "completion_tokens",
            "wall_s",
        ):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.processed_known = self.processed_known and other.processed_known

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["wall_s"] = round(self.wall_s, 3)
        return d


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


def _processed(c: Completion) -> int | None:
    for key in ("prompt_tokens_processed", "processed_prompt_tokens", "prompt_eval_tokens"):
        v = c.extra.get(key) if c.extra else None
        if isinstance(v, (int, float)):
            return int(v)
    return None


class JudgeClient:
    """Requests in, completions out, costs counted. ``backend=`` injects one (tests, sharing)."""

    def __init__(
        self,
        backbone: str | None = None,
        *,
        backend: Backend | None = None,
        parser_version: str = "",
    ) -> None:
        self.backbone = backbone or default_backbone()
        self.parser_version = parser_version
        self._backend = backend
        self._owns = backend is None
        if backend is not None:
            self.chat = bool(
                getattr(getattr(backend, "config", None), "chat", getattr(backend, "chat", True))
            )
        else:
            self.chat = bool(backbone_config(self.backbone).chat)
        self.stats = CallStats()

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            from metajudge.backends.registry import get_backend

            be = get_backend(self.backbone, parser_version=self.parser_version)
            enter = getattr(be, "__enter__", None)
            self._backend = enter() if enter is not None else be
        return self._backend

    def request(self, text: str, **decoding: Any) -> Request:
        """A chat request (one user message) or, for a base model, a completion request."""
        if self.chat:
            return Request(messages=({"role": "user", "content": text},), **decoding)
        return Request(prompt=text, **decoding)

    def _server_logs(self) -> list[Path]:
        """Log files of the embedded llama.cpp servers behind the backend (none for remote ones)."""
        inner = getattr(self._backend, "inner", self._backend)
        return [
            Path(s.log_path)
            for s in getattr(inner, "servers", []) or []
            if getattr(s, "log_path", None)
        ]

    def run(self, requests: Sequence[Request]) -> list[Completion | BackendError]:
        """Run a batch in order; every outcome counted in :attr:`stats`.

        Processed prompt tokens are read from the embedded server's log (llama.cpp prints one
        ``prompt eval … / N tokens`` line per request it evaluates: prefix-cache hits excluded);
        for other backends they are taken from the completion or, failing that, equal to sent.
        """
        if not requests:
            return []
        be = self.backend
        before = {p: p.stat().st_size for p in self._server_logs() if p.exists()}
        t0 = time.perf_counter()
        try:
            out = list(be.complete(list(requests)))
        finally:
            self.stats.wall_s += time.perf_counter() - t0
        logs = self._server_logs()
        from_log: int | None = None
        if logs:
            from metajudge.backends.server import prompt_eval_stats

            from_log = sum(
                prompt_eval_stats(p, before.get(p, 0))["prompt_tokens_evaluated"]
                for p in logs
                if p.exists()
            )
        self.stats.requests += len(requests)
        ran: set[int] = set()
        for c in out:
            if isinstance(c, BackendError):
                self.stats.errors += 1
                continue
            # identical requests within a batch are sent once and share one Completion object
            if c.cached or id(c) in ran:
                self.stats.cached += 1
                continue
            ran.add(id(c))
            self.stats.calls += 1
            self.stats.prompt_tokens += c.prompt_tokens
            self.stats.completion_tokens += c.completion_tokens
            if from_log is None:
                p = _processed(c)
                if p is None:
                    self.stats.processed_known = False
                    p = c.prompt_tokens
                self.stats.processed_prompt_tokens += p
        if from_log is not None:
            self.stats.processed_prompt_tokens += from_log
        return out

    def close(self) -> None:
        if self._backend is not None and self._owns:
            exit_ = getattr(self._backend, "__exit__", None)
            if exit_ is not None:
                exit_(None, None, None)
            else:
                self._backend.close()
            self._backend = None
