"""``metajudge backends list|check`` and ``metajudge cache stats|prune|export|repair``; the CLI's backbone
default (:func:`cli_backbone`, the one place ``$METAJUDGE_BACKBONE`` is read)."""

from __future__ import annotations

import argparse

from metajudge.cli.options import add_cache_file, add_format


def cli_backbone(value: str | None) -> str:
    """``--backbone`` as given, else ``$METAJUDGE_BACKBONE``, else the default embedded backbone.

    Only the command line reads the environment; the library takes ``backbone=`` explicitly.
    """
    import os

    from metajudge.backends.registry import DEFAULT_BACKEND

    return value or os.environ.get("METAJUDGE_BACKBONE") or DEFAULT_BACKEND


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    be = sub.add_parser("backends", help="judge backbones: list the configured ones, check one")
    bsub = be.add_subparsers(dest="backends_command", metavar="SUBCOMMAND", required=True)
    p = bsub.add_parser("list", help="built-in and configured backbones")
    add_format(p)
    p.set_defaults(func=_list)
    p = bsub.add_parser(
        "check", help="send one request; report latency and whether logprobs/JSON mode work"
    )
    p.add_argument("name", help="backbone name, config file or GGUF path")
    p.add_argument(
        "--log-dir",
        metavar="DIR",
        help="folder for the server log and ledger (default: under the user cache)",
    )
    add_format(p)
    p.set_defaults(func=_check)

    from metajudge.cli.types import duration_days

    ca = sub.add_parser("cache", help="the LLM response cache: stats, prune (or repair), export")
    csub = ca.add_subparsers(dest="cache_command", metavar="SUBCOMMAND", required=True)
    for name, helptext, func in (
        ("stats", "entries, size and tokens by model, endpoint and parser version", _stats),
        ("prune", "delete old, unused or selected entries; --damaged: repair the cache", _prune),
        ("export", "write entries as JSON Lines", _export),
    ):
        p = csub.add_parser(name, help=helptext)
        add_cache_file(p, "path")
        p.set_defaults(func=func)
        if name in ("prune", "export"):
            p.add_argument("--model", help="only entries whose model id contains this")
            p.add_argument("--parser-version", help="only entries with this parser version")
        if name == "stats":
            add_format(p)
        if name == "prune":
            p.add_argument(
                "--older-than",
                type=duration_days,
                metavar="DAYS",
                help="not used for this many days (>= 0)",
            )
            p.add_argument("--unused", action="store_true", help="never served from the cache")
            p.add_argument("--all", action="store_true", help="delete every entry")
            p.add_argument(
                "--yes", action="store_true", help="confirm a prune that deletes every entry"
            )
            p.add_argument(
                "--damaged",
                action="store_true",
                help="repair a damaged cache: keep its readable entries, move the file aside "
                "(no other selection applies)",
            )
        if name == "export":
            p.add_argument("-o", "--output", help="output .jsonl file")


def _list(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_json
    from metajudge.runs.backend_commands import backend_listing

    cfgs = backend_listing()  # credentials in a base_url are never printed
    if args.format == "json":
        print_json([c.public_dict() for c in cfgs], indent=2)
        return 0
    print(f"{'NAME':<22} {'KIND':<9} {'CHAT':<5} {'CONTEXT':<8} {'MODEL / ENDPOINT':<48} SOURCE")
    for c in cfgs:
        where = (
            c.gguf
            if c.kind == "embedded"
            else f"{c.model} @ {c.base_url}"
            + (f" (key: ${c.api_key_env})" if c.api_key_env else "")
        )
        ctx = str(c.n_ctx) if c.n_ctx else "server"  # unset: read from /v1/models when used
        print(
            f"{c.name:<22} {c.kind:<9} {'yes' if c.chat else 'no':<5} {ctx:<8} {where!s:<48} "
            f"{c.source}"
        )
    return 0


def _check(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_json
    from metajudge.runs.backend_commands import run_backend_check

    r = run_backend_check(args.name, run_dir=args.log_dir)
    if args.format == "json":
        print_json(r, indent=2)
    else:
        print(f"backend:   {r['backend']} ({r['kind']}) model {r['model']}")
        print(
            f"request:   {'ok' if r['ok'] else 'FAILED'}; latency {r['latency_s']} s; answer {r['answer']!r}"
        )
        print(
            f"logprobs:  {'yes' if r['logprobs'] else 'no'}"
            + (f" top: {r['top_logprobs']}" if r["top_logprobs"] else "")
        )
        print(
            f"json mode: {'yes' if r['json_mode'] else 'no'}"
            + (f" ({r.get('json_answer')!r})" if "json_answer" in r else "")
        )
        for k, v in r["errors"].items():
            print(f"error ({k}): {v}")
    return 0 if r["ok"] else 1


def _stats(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_json
    from metajudge.runs.cache_commands import cache_stats

    s = cache_stats(args.path)
    if args.format == "json":
        print_json(s, indent=2)
        return 0
    print(
        f"cache {s['path']} (schema v{s['schema_version']}): {s['entries']} entries, {s['bytes'] / 1e6:.2f} MB, "
        f"{s['prompt_tokens']} prompt + {s['completion_tokens']} completion tokens, {s['hits']} hits"
    )
    for g in s["groups"]:
        where = {None: " @ (endpoint unknown: recorded before v5, never served)", "": ""}.get(
            g["endpoint"], f" @ {g['endpoint']}"
        )
        print(
            f"  {g['entries']:>8}  {g['kind']:<9} {g['model_id']}{where}  "
            f"parser={g['parser_version'] or '-'}  hits={g['hits']}"
        )
    return 0


def _prune(args: argparse.Namespace) -> int:
    from metajudge.runs.cache_commands import prune_cache

    if args.damaged:
        return _repair(args)

    n, left = prune_cache(
        args.path,
        older_than_days=args.older_than,
        model=args.model,
        parser_version=args.parser_version,
        unused=args.unused,
        everything=args.all,
        yes=args.yes,
    )
    print(f"pruned {n} entries; {left} left")
    return 0


def _export(args: argparse.Namespace) -> int:
    from metajudge.runs.cache_commands import export_cache

    out = args.output
    n = export_cache(args.path, out, model=args.model, parser_version=args.parser_version)
    print(f"exported {n} entries to {out}")
    return 0


def _repair(args: argparse.Namespace) -> int:
    """``cache prune --damaged``: the readable entries kept, the damaged file moved aside."""
    from metajudge.errors import InputError
    from metajudge.runs.cache_commands import run_cache_repair

    chosen = [k for k in ("older_than", "model", "parser_version") if getattr(args, k) is not None]
    chosen += [k for k in ("unused", "all") if getattr(args, k)]
    if chosen:
        raise InputError(f"--damaged takes no selection (--{chosen[0].replace('_', '-')})")

    r = run_cache_repair(args.path)
    if r["healthy"]:
        print(f"the cache is healthy ({r['recovered']} entries); nothing was moved")
        return 0
    print(
        f"kept {r['recovered']} entries, dropped {r['dropped']} unreadable ones; "
        f"the damaged file is now {r['moved_to']}"
    )
    return 0
