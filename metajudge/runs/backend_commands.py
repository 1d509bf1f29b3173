"""``metajudge backends list`` / ``backends check``: the configured judge backbones (credentials in
a URL redacted) and one live request to a backbone (:mod:`metajudge.backends.registry`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from metajudge.backends.registry import BackendConfig


def backend_listing() -> list[BackendConfig]:
    """Every configured backbone (:class:`~metajudge.backends.registry.BackendConfig`) with its
    base URLs redacted: credentials in a ``base_url`` are never printed."""
    from metajudge.backends.openai_parse import redact_url
    from metajudge.backends.registry import list_backends

    return [
        c.replace(base_url=redact_url(c.base_url), base_urls=tuple(map(redact_url, c.base_urls)))
        for c in list_backends()
    ]


def run_backend_check(name: str, run_dir: str | Path | None = None) -> dict[str, Any]:
    """One request to backbone ``name`` (a name or a config file): ok, latency, logprobs, JSON mode
    (:func:`metajudge.backends.registry.check_backend`)."""
    from metajudge.backends.registry import check_backend

    return check_backend(name, run_dir=run_dir)
