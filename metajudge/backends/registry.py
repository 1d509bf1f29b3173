"""Find a backbone by name (or file) and build a ready, cached backend for it.

>>> from metajudge.backends.registry import get_backend                      # doctest: +SKIP
>>> with get_backend("smollm2-135m", run_dir="runs/x") as be:                 # doctest: +SKIP
...     [c] = be.complete([be.make_request(messages=[{"role": "user", "content": "Hi"}])],
...                       parser_version="geval-1")
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from metajudge.backends.base import Backend
from metajudge.backends.cache import ResponseCache
from metajudge.backends.cached import CachedBackend
from metajudge.backends.config import BackendConfig, all_configs, load_config_file
from metajudge.errors import InputError
from metajudge.paths import user_cache_dir

DEFAULT_BACKEND = "smollm2-135m"


def list_backends(config_dir: str | Path | None = None) -> list[BackendConfig]:
    """Built-in and configured backbones (user configs override built-ins of the same name)."""
    return sorted(all_configs(config_dir).values(), key=lambda c: (c.kind != "embedded", c.name))


def resolve_config(name_or_path: str, config_dir: str | Path | None = None) -> BackendConfig:
    """A config name, a ``.toml``/``.yaml`` config file, or a ``.gguf`` file (embedded, chat)."""
    p = Path(name_or_path).expanduser()
    if p.suffix in (".toml", ".yaml", ".yml") and p.is_file():
        return load_config_file(p)
    if p.suffix == ".gguf":
        if not p.is_file():
            raise InputError(f"GGUF model file not found: {p}", path=p)
        return BackendConfig(
            name=p.stem,
            kind="embedded",
            model=p.stem,
            gguf=str(p.resolve()),
            chat=True,
            native_n=False,
            json_mode="json_object_schema",
            grammar_param="grammar",
            timeout_s=600.0,
            concurrency=2,
            source=str(p),
        )
    configs = all_configs(config_dir)
    if name_or_path in configs:
        return configs[name_or_path]
    raise InputError(
        f"unknown backend {name_or_path!r}; known: {', '.join(sorted(configs))} (or pass a .toml/.yaml/.gguf path)"
    )


def server_log_dir(name: str) -> Path:
    """A server's log folder: ``<user cache>/server-logs/<name>-<time>-<pid>``."""
    return (
        user_cache_dir() / "server-logs" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    )


def build_backend(
    config: BackendConfig, *, run_dir: str | Path | None = None, seed: int | None = 0
) -> Backend:
    """The uncached backend for a config."""
    if config.kind == "embedded":
        from metajudge.backends.embedded import EmbeddedBackend

        return EmbeddedBackend(
            config,
            run_dir=run_dir if run_dir is not None else server_log_dir(config.name),
            seed=seed,
        )
    from metajudge.backends.openai_backend import OpenAIBackend

    return OpenAIBackend(config, run_dir=run_dir, seed=seed)


def get_backend(
    name_or_path: str = DEFAULT_BACKEND,
    *,
    run_dir: str | Path | None = None,
    cache: bool | str | Path | ResponseCache = True,
    parser_version: str = "",
    seed: int | None = 0,
    **overrides: Any,
) -> Any:
    """A backend for a backbone name or file, wrapped in the response cache.

    Parameters
    ----------
    name_or_path:
        A built-in/configured name (``metajudge backends list``), a config file, or a GGUF path.
    run_dir:
        Where the embedded server log and the ledger go (default: a folder under the user cache).
    cache:
        ``True``: the user cache (``<user cache>/llm-cache.sqlite``); a path: that SQLite file;
        a :class:`ResponseCache`; ``False``: no cache (the raw backend is returned).
    parser_version:
        Default parser version in cache keys (per-call ``complete(..., parser_version=)`` wins).
    overrides:
        Config fields to replace, e.g. ``n_parallel=2, concurrency=4, max_retries=0``.

    The result is a context manager; the embedded server starts on the first request and stops
    on ``close()``/``with`` exit, at interpreter exit and on SIGTERM.
    """
    cfg = resolve_config(name_or_path)
    if overrides:
        cfg = cfg.replace(**overrides)
    backend = build_backend(cfg, run_dir=run_dir, seed=seed)
    if cache is False or cache is None:
        return backend
    store = (
        cache
        if isinstance(cache, ResponseCache)
        else ResponseCache(None if cache is True else Path(cache))
    )
    return CachedBackend(
        backend,
        store,
        parser_version=parser_version,
        close_cache=not isinstance(cache, ResponseCache),
    )


def check_backend(
    name_or_path: str, *, run_dir: str | Path | None = None, **overrides: Any
) -> dict[str, Any]:
    """Send one plain request, one with top-3 logprobs and one in JSON mode (uncached); report.

    Returns a dict with ``ok``, ``latency_s``, ``logprobs`` (top alternatives came back),
    ``json_mode`` (the answer parsed as JSON with the required key) and the errors, if any.
    """
    import json

    from metajudge.backends.base import BackendError, Completion

    cfg = resolve_config(name_or_path)
    if overrides:
        cfg = cfg.replace(**overrides)
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    question = "On a scale of 1 to 5, how fluent is this sentence: 'The cat sat on the mat.'? Answer with one digit."
    with build_backend(cfg, run_dir=run_dir) as be:  # type: ignore[attr-defined]

        def req(**kw: Any) -> Any:
            if cfg.chat:
                return be.make_request(messages=[{"role": "user", "content": question}], **kw)
            return be.make_request(prompt=f"Question: {question}\nAnswer:", **kw)

        t0 = time.perf_counter()
        plain, with_lp, as_json = be.complete(
            [
                req(max_tokens=8),
                req(max_tokens=1, logprobs=True, top_logprobs=3),
                req(max_tokens=24, json_schema=schema),
            ]
        )
        wall = time.perf_counter() - t0
        report: dict[str, Any] = {
            "backend": cfg.name,
            "kind": cfg.kind,
            "model": be.model_id,
            "wall_s": round(wall, 3),
        }
        errors = {}
        for label, res in (("plain", plain), ("logprobs", with_lp), ("json_mode", as_json)):
            if isinstance(res, BackendError):
                errors[label] = str(res)
        report["ok"] = isinstance(plain, Completion)
        report["latency_s"] = round(plain.latency_s, 3) if isinstance(plain, Completion) else None
        report["answer"] = plain.text if isinstance(plain, Completion) else None
        lp = with_lp.choices[0].logprobs if isinstance(with_lp, Completion) else None
        report["logprobs"] = bool(lp) and len(lp[0].top) > 0
        report["top_logprobs"] = [list(t) for t in lp[0].top] if lp else None
        ok_json = False
        if isinstance(as_json, Completion):
            try:
                ok_json = isinstance(json.loads(as_json.text).get("score"), int)
            except (ValueError, AttributeError):
                ok_json = False
            report["json_answer"] = as_json.text
        report["json_mode"] = ok_json
        report["errors"] = errors
        report["ledger"] = be.ledger.summary()
    return report
