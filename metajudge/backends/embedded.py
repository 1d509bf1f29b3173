"""The embedded backend — the default when no endpoint is configured.

It is the OpenAI-compatible backend pointed at ``llama_cpp.server`` processes that metajudge
starts itself (lazily, on the first request) on free loopback ports with a local GGUF.
llama-cpp-python's server answers one request at a time per process, so ``n_parallel > 1`` starts
that many replicas (each with ``n_threads // n_parallel`` threads) and the client sends each
request to the replica with the fewest requests routed to it so far, or to the one holding its
prompt's prefix (:mod:`~metajudge.backends.routing`; :meth:`EmbeddedBackend._pick_endpoint`:
the same replica at every run), one request at a time per replica in routing order
(:meth:`EmbeddedBackend._attempt`). The replicas start side by side (:func:`start_all`). Server logs go to the run folder; the
prompt tokens each request made the server evaluate are read from there
(:class:`~metajudge.backends.server.PromptEvalLog`) and attached to its
:class:`~metajudge.backends.base.Completion` (``processed_prompt_tokens``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from pathlib import Path
from typing import Any

from metajudge.backends.base import Completion
from metajudge.backends.config import BackendConfig
from metajudge.backends.context import EMBEDDED_CONTEXT
from metajudge.backends.ledger import Ledger
from metajudge.backends.models import gguf_sha256, resolve_gguf
from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.backends.routing import pick_endpoint, prompt_text
from metajudge.backends.server import LlamaServer, PromptEvalLog, start_all


class EmbeddedBackend(OpenAIBackend):
    """``llama_cpp.server`` replicas started on demand and stopped on :meth:`close`."""

    kind = "embedded"

    def __init__(
        self,
        config: BackendConfig,
        *,
        run_dir: str | Path,
        ledger: Ledger | None = None,
        seed: int | None = 0,
    ) -> None:
        super().__init__(config, ledger=ledger, seed=seed, run_dir=run_dir)
        self.run_dir: Path = Path(run_dir)
        self.servers: list[LlamaServer] = []
        self._eval_logs: dict[str, PromptEvalLog] = {}
        self._model_path: Path | None = None
        self._model_id: str | None = None
        self._start_lock = threading.Lock()
        self._replica_locks: dict[str, asyncio.Lock] = {}
        self._routed: dict[str, int] = {}  # per replica: calls routed there so far

    @property
    def model_path(self) -> Path:
        if self._model_path is None:
            self._model_path = resolve_gguf(str(self.config.gguf), self.config.gguf_sha256)
        return self._model_path

    @property
    def model_id(self) -> str:
        """``<file>@sha256:<digest>`` plus the chat format when one is forced (it changes prompts)."""
        if self._model_id is None:
            p = self.model_path
            mid = f"{p.name}@sha256:{gguf_sha256(p)}"
            if self.config.chat and self.config.chat_format:
                mid += f";chat_format={self.config.chat_format}"
            self._model_id = mid
        return self._model_id

    @property
    def cache_endpoint(self) -> str:
        """Empty: the weights' sha256 in :attr:`model_id` identifies what answers (the loopback
        server's port changes at every start)."""
        return ""

    def _ensure_started(self) -> None:
        with self._start_lock:
            if self.servers and all(s.running() for s in self.servers):
                return
            for s in self.servers:
                s.stop()
            cfg = self.config
            threads = max(1, cfg.n_threads // cfg.n_parallel)
            servers = [
                LlamaServer(
                    self.model_path,
                    model_alias=cfg.served_model,
                    log_path=self.run_dir
                    / (
                        f"llama-server-{cfg.name}.log"
                        if cfg.n_parallel == 1
                        else f"llama-server-{cfg.name}-{i}.log"
                    ),
                    n_ctx=cfg.n_ctx or EMBEDDED_CONTEXT,
                    n_threads=threads,
                    logits_all=cfg.logits_all,
                    chat_format=cfg.chat_format if cfg.chat else None,
                    prompt_cache=cfg.prompt_cache,
                    startup_timeout_s=cfg.startup_timeout_s,
                )
                for i in range(cfg.n_parallel)
            ]
            try:
                start_all(servers)
            except BaseException:
                for s in servers:
                    s.stop()
                raise
            self.servers = servers
            self._eval_logs = {s.base_url: PromptEvalLog(s.log_path) for s in servers}
            self._clients.clear()
            self._replica_locks.clear()
            self._routed.clear()

    def _endpoints(self) -> list[str]:
        return [s.base_url for s in self.servers]

    def _pick_endpoint(self, kw: dict[str, Any] | None, avoid: set[str] | None = None) -> str:
        """:func:`~metajudge.backends.routing.pick_endpoint` with the calls *routed* to each
        replica so far as its load, not the calls in flight: the replica a call goes to, and so
        the prompt prefix llama.cpp reuses for it, depends on the calls before it only, never on
        how fast the replicas answered. llama.cpp's logits depend (in the last digits) on which
        prefix was reused and how the rest was batched, so a score is the same at every run.
        A retry avoids the replica it failed on (``avoid``) while another one is left."""
        text = prompt_text(kw) if kw is not None else None
        ep = pick_endpoint(self._endpoints(), self._routed, self._last_prompt, text, avoid or ())
        self._inflight[ep] = self._inflight.get(ep, 0) + 1
        return ep

    async def _attempt(self, ep: str, kind: str, kw: dict[str, Any], cap: int) -> Completion:
        """One call at a time per replica, in the order the calls were routed there (asyncio's
        lock wakes its waiters first come, first served). ``llama_cpp.server`` answers one request
        at a time anyway but takes the waiting ones in no set order; sent one by one, a replica
        evaluates the requests in the order :func:`~metajudge.backends.routing.pick_endpoint`
        chose for them, so it keeps the prefix the routing counted on. The wait for the replica
        is not part of the call's ``timeout_s``."""
        lock = self._replica_locks.setdefault(ep, asyncio.Lock())
        async with lock:
            return await super()._attempt(ep, kind, kw, cap)

    def _annotate(self, completion: Completion, endpoint: str) -> Completion:
        """Attach the prompt tokens the server evaluated for this request (from its log)."""
        if completion.processed_prompt_tokens is not None:
            return completion
        reader = self._eval_logs.get(endpoint)
        n = reader.next() if reader is not None else None
        return dataclasses.replace(completion, processed_prompt_tokens=n)

    def close(self) -> None:
        try:
            super().close()
        finally:
            for s in self.servers:
                s.stop()
            self.servers = []
