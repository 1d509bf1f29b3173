"""metajudge.backends — LLM judge backbones behind one small protocol (:mod:`.base`).

- :mod:`.base` — ``Request``, ``Completion``, ``Choice``, ``TokenLogprob``, ``BackendError``, ``Backend``.
- :mod:`.config` — ``BackendConfig`` (a backbone is data: TOML/YAML), built-in configs in ``configs/``.
- :mod:`.openai_backend` — any OpenAI-compatible endpoint (async, retries, ledger);
  :mod:`.openai_parse` — reading its responses; :mod:`.batch` — Batch API.
- :mod:`.embedded` / :mod:`.server` — the default: metajudge's own ``llama_cpp.server`` on loopback.
- :mod:`.cache` — SQLite (WAL) response cache; :mod:`.cached` — ``CachedBackend``;
  :mod:`.ledger` — the one cost ``Ledger``; :mod:`.registry` — ``get_backend``.

Importing this package is cheap: ``openai`` and ``llama_cpp`` are imported only when a call is made.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BackendConfig", "CachedBackend", "ResponseCache", "get_backend", "list_backends"]


def __getattr__(name: str) -> Any:
    if name in ("get_backend", "list_backends"):
        from metajudge.backends import registry

        return getattr(registry, name)
    if name == "BackendConfig":
        from metajudge.backends.config import BackendConfig

        return BackendConfig
    if name == "ResponseCache":
        from metajudge.backends.cache import ResponseCache

        return ResponseCache
    if name == "CachedBackend":
        from metajudge.backends.cached import CachedBackend

        return CachedBackend
    raise AttributeError(f"module 'metajudge.backends' has no attribute {name!r}")
