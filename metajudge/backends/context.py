"""A backbone's context length: the config's ``n_ctx``, else what the server's ``/v1/models`` says.

Judges size their prompts (how much of a table fits) from this number, so it must be the real
one: 128k for GPT-4o-mini (OpenAI model card), the server's own limit for vLLM and llama.cpp.
``n_ctx`` in a config wins; a config without it asks the server once: vLLM reports
``max_model_len`` per model, llama.cpp's ``llama-server`` reports ``meta.n_ctx_train`` (and newer
builds ``n_ctx``); LM Studio / OpenRouter style listings use ``context_length``. A server that
reports nothing leaves :data:`FALLBACK_CONTEXT`, and :class:`ContextLength` says so.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Literal

#: Tokens assumed when neither the config nor the server states a context length.
FALLBACK_CONTEXT = 8192
#: Tokens an embedded llama.cpp server is started with when its config sets no ``n_ctx``.
EMBEDDED_CONTEXT = 2048

Source = Literal["config", "server", "fallback"]


@dataclass(frozen=True)
class ContextLength:
    """``tokens`` of context and where the number came from (config, server or fallback)."""

    tokens: int
    source: Source

    def __str__(self) -> str:
        return f"{self.tokens}" if self.source == "config" else f"{self.tokens}({self.source})"


def context_from_models(payload: Any, model: str) -> int | None:
    """The context length of ``model`` in a ``/v1/models`` answer; ``None`` if not reported.

    >>> context_from_models({"data": [{"id": "q", "max_model_len": 32768}]}, "q")
    32768
    >>> context_from_models({"data": [{"id": "m", "meta": {"n_ctx_train": 131072}}]}, "m")
    131072
    >>> context_from_models({"data": [{"id": "m", "owned_by": "me"}]}, "m") is None
    True
    """
    entries = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        return None
    named = [e for e in entries if isinstance(e, dict) and e.get("id") == model]
    for e in named or [e for e in entries if isinstance(e, dict)][:1]:
        meta = e.get("meta") if isinstance(e.get("meta"), dict) else {}
        for v in (
            e.get("max_model_len"),
            e.get("context_length"),
            e.get("n_ctx"),
            meta.get("n_ctx"),
            meta.get("n_ctx_train"),
        ):
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return v
    return None


def _fetch_models(cfg: Any, timeout_s: float) -> Any:
    import urllib.request

    url = str(cfg.base_url).rstrip("/") + "/models"
    req = urllib.request.Request(url)
    key = os.environ.get(cfg.api_key_env) if getattr(cfg, "api_key_env", None) else None
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(req, timeout=timeout_s) as r:
        return json.loads(r.read().decode("utf-8"))


def context_length(cfg: Any, *, timeout_s: float = 5.0) -> ContextLength:
    """The context length of backbone config ``cfg`` (see the module docstring).

    >>> from types import SimpleNamespace as NS
    >>> str(context_length(NS(n_ctx=128000, kind="openai", base_url=None)))
    '128000'
    >>> str(context_length(NS(n_ctx=None, kind="openai", base_url=None)))
    '8192(fallback)'
    """
    n = getattr(cfg, "n_ctx", None)
    if n:
        return ContextLength(int(n), "config")
    if getattr(cfg, "kind", None) == "openai" and getattr(cfg, "base_url", None):
        try:
            got = context_from_models(_fetch_models(cfg, timeout_s), cfg.served_model)
        except (OSError, ValueError):
            got = None
        if got:
            return ContextLength(got, "server")
    if getattr(cfg, "kind", None) == "embedded":
        return ContextLength(EMBEDDED_CONTEXT, "fallback")
    return ContextLength(FALLBACK_CONTEXT, "fallback")
