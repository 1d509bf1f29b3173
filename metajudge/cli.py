"""The ``metajudge`` command line: a thin layer over the library.

Each concern has a ``cli`` module exposing ``register(subparsers)``; it adds its subcommands with
``set_defaults(func=...)``. Those modules import only argparse at module level, so
``metajudge --help`` stays fast; the library is imported inside each command's function.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from metajudge import __version__

# Each module's register(subparsers) adds its subcommands. Keep this list the only wiring.
_COMMAND_MODULES: tuple[str, ...] = (
    "metajudge.data.cli",
    "metajudge.metrics.cli",
    "metajudge.backends.cli",
    "metajudge.pipeline.swap_cli",
    "metajudge.pipeline.cli",
    "metajudge.pipeline.agreement_cli",
    "metajudge.pipeline.verdicts_cli",
    "metajudge.pipeline.decide_cli",
    "metajudge.metrics.judges.cli",
    "metajudge.pipeline.judge_cli",  # `judge diagnostics`, into the group the line above adds
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metajudge",
        description="Meta-evaluation and judge calibration: how far can you trust a metric or an "
        "LLM judge compared with humans, and does it hold when the judge's backbone changes?",
    )
    parser.add_argument("--version", action="version", version=f"metajudge {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _COMMAND_MODULES:
        importlib.import_module(mod).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    from metajudge.errors import MetajudgeError

    try:
        rc = func(args)
    except MetajudgeError as e:
        print(f"metajudge: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("metajudge: interrupted", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
