"""The ``metajudge cache`` commands' work on the LLM response cache (SQLite): its statistics,
pruning, export and repair. The CLI (:mod:`metajudge.cli.backends`) parses and prints."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from metajudge.errors import InputError


def cache_stats(path: str | Path | None) -> dict[str, Any]:
    """Entries, size, tokens and hits of the cache, and per model/kind group (read only)."""
    from metajudge.backends.cache import ResponseCache

    c = ResponseCache(path, create=False, read_only=True)
    try:
        return c.stats()
    finally:
        c.close()


def prune_cache(
    path: str | Path | None,
    *,
    older_than_days: float | None = None,
    model: str | None = None,
    parser_version: str | None = None,
    unused: bool = False,
    everything: bool = False,
    yes: bool = False,
    say: Callable[[str], None] = print,
) -> tuple[int, int]:
    """Delete the entries that match (``everything``: all of them); refused without a criterion,
    and, when every entry matches, without ``yes``. ``say`` is told how many match before any
    is deleted. ``(deleted, left)``."""
    from metajudge.backends.cache import ResponseCache

    if not (everything or older_than_days is not None or model or parser_version or unused):
        raise InputError(
            "say what to prune: --older-than DAYS, --model, --parser-version, --unused or --all"
        )
    c = ResponseCache(path, create=False)
    try:
        crit = {
            "older_than_s": 0.0
            if everything
            else (older_than_days * 86400 if older_than_days is not None else None),
            "model": model,
            "parser_version": parser_version,
            "unused": unused,
        }
        doomed, total = c.count(**crit), len(c)
        say(f"{c.path}: {doomed} of {total} entries match")
        if doomed and doomed == total and not yes:
            raise InputError(
                f"this would delete every entry ({total}) of {c.path}; add --yes to confirm",
                field="--yes",
            )
        n = c.prune(**crit)
        return n, len(c)
    finally:
        c.close()


def export_cache(
    path: str | Path | None,
    output: str | None,
    *,
    model: str | None = None,
    parser_version: str | None = None,
) -> int:
    """Write the (matching) entries of the cache to ``output`` as JSONL; their number."""
    from metajudge.backends.cache import ResponseCache
    from metajudge.io import check_output_file

    if not output:
        raise InputError("say where to write: -o/--output FILE", field="--output")
    c = ResponseCache(path, create=False, read_only=True)
    try:
        check_output_file(output, inputs=[c.path], field="--output")
        return c.export(output, model=model, parser_version=parser_version)
    finally:
        c.close()


def run_cache_repair(path: str | Path | None) -> dict[str, Any]:
    """Rebuild a damaged cache from its readable entries (the damaged file moved aside);
    ``healthy``, ``recovered``, ``dropped``, ``moved_to``."""
    from metajudge.backends.cache import default_cache_path
    from metajudge.backends.cache_repair import repair_cache

    return repair_cache(path or default_cache_path())
