"""The ``metajudge`` command line: a thin layer over the library.

Each module of :data:`_COMMAND_MODULES` exposes ``register(subparsers)`` and adds the top-level
commands it owns (with their subcommands, ``set_defaults(func=...)``); no module adds into a
group another one made, so the order of the list does not matter. The grammar is ``metajudge
NOUN VERB`` plus two named jobs (``meta-eval``, ``demo``); no command has a hidden old name
(release 0.3.0 removed them). ``metajudge --help`` groups
the commands by job (:data:`metajudge.cli.grammar.COMMAND_GROUPS`); ``docs/cli.md`` is generated
from the parser (:mod:`metajudge.cli.reference`). The modules import only argparse at module
level, so ``metajudge --help`` stays fast; the library is imported inside each command.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from metajudge import __version__

# Each module's register(subparsers) adds its top-level commands. Keep this list the only wiring;
# its order does not matter (the help groups are metajudge.cli.grammar.COMMAND_GROUPS).
_COMMAND_MODULES: tuple[str, ...] = (
    "metajudge.cli.backends",  # `backends`, `cache`
    "metajudge.cli.calibrate",  # `calibrate` (fit, apply, conformal; selective)
    "metajudge.cli.baselines",  # `baselines`
    "metajudge.cli.data",  # `data` (and `data agreement`)
    "metajudge.cli.decide",  # `decide`
    "metajudge.cli.demo",  # `demo`
    "metajudge.cli.judge",  # `judge` and every `judge ...` subcommand (swap, verdicts, ...)
    "metajudge.cli.matrix",  # `matrix`
    "metajudge.cli.meta_eval",  # `meta-eval`, `report render`
    "metajudge.cli.metrics",  # `metrics` (list, show, run), `setup`
    "metajudge.cli.stats",  # `stats` (power, rank-clusters, kendall)
)

DESCRIPTION = (
    "Meta-evaluation and judge calibration: how far can you trust a metric or an LLM judge "
    "compared with humans, and does it hold when the judge's backbone changes?"
)


class _RootParser(argparse.ArgumentParser):
    """The ``metajudge`` parser: its options (``--data-dir``, ``--strict-ids``, ``--quiet``) are
    taken wherever they stand on the line (lifted to the front before parsing:
    :func:`metajudge.cli.options.lift_root_options`)."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        from metajudge.cli.options import lift_root_options

        try:
            argv = lift_root_options(sys.argv[1:] if args is None else list(args))
        except argparse.ArgumentError as e:
            self.error(str(e))
        return super().parse_known_args(argv, namespace)


def build_parser() -> argparse.ArgumentParser:
    from metajudge.cli.grammar import command_overview, wrap
    from metajudge.cli.options import add_root_options

    parser = _RootParser(
        prog="metajudge",
        description=wrap(DESCRIPTION),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"metajudge {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    add_root_options(parser)
    # the command list is the grouped epilog below, not argparse's flat one
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS)
    for mod in _COMMAND_MODULES:
        importlib.import_module(mod).register(sub)
    parser.usage = "metajudge [-h] [--version] [-v] [--data-dir DIR] [--strict-ids] [--quiet] [--tracking-uri URI] COMMAND ..."  # after the subcommands' prog
    parser.epilog = command_overview(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (argparse's own exits — ``--help``, a refused
    argument — are returned too, so in-process callers get 0/2 instead of ``SystemExit``)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        rc = int(func(args) or 0)
        sys.stdout.flush()  # a reader gone (``| head``) is seen here, not at the exit
        return rc
    except KeyboardInterrupt:
        print("metajudge: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError as e:
        if not _stdout_closed():
            return _report(e)
        return _quiet_stdout()
    except Exception as e:  # noqa: BLE001 - only what _user_error names; anything else re-raised
        return _report(_placed(e, args))


def _placed(e: Exception, args: argparse.Namespace) -> Exception:
    """A :class:`~metajudge.errors.RecordError` (a record's fault found where its file is not
    known) placed at the ``--input`` file and the record's line there; any other error as it is."""
    from pathlib import Path

    from metajudge.errors import RecordError

    src = getattr(args, "input", None)
    if isinstance(src, (list, tuple)):
        src = src[0] if len(src) == 1 else None
    if not isinstance(e, RecordError) or e.path is not None or not isinstance(src, (str, Path)):
        return e
    if not Path(src).is_file():
        return e
    from metajudge.data.formats import record_line

    return e.at(src, record_line(src, e.record_id, e.system))


def _report(e: Exception) -> int:
    """Exit 2 with the message of an error :func:`_user_error` names; re-raise any other."""
    msg = _user_error(e)
    if msg is None:
        raise e
    print(f"metajudge: error: {msg}", file=sys.stderr)
    return 2


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (``metajudge data list | head
    -1``): ``poll`` reports an error on its write end."""
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _quiet_stdout() -> int:
    """End quietly on a closed pipe, as a Unix tool killed by SIGPIPE (exit 141): standard output
    is pointed at /dev/null so that nothing more is written, nor said at the interpreter's exit."""

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def _user_error(e: BaseException) -> str | None:
    """The one place an error becomes a message with exit 2: errors raised on purpose
    (:class:`~metajudge.errors.MetajudgeError`) and the failures bad input or a bad environment
    cause (a file that cannot be read or written, bytes that are not UTF-8, too little memory).
    Anything else is a bug and keeps its traceback."""
    from metajudge.errors import MetajudgeError

    if isinstance(e, MetajudgeError):
        return str(e)
    if isinstance(e, UnicodeDecodeError):
        return (
            f"an input is not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}); "
            "convert it to UTF-8"
        )
    if isinstance(e, OSError):
        where = e.filename if e.filename is not None else "a file"
        what = e.strerror or type(e).__name__
        if isinstance(e, IsADirectoryError):
            what += " (a folder was given where a file is expected)"
        elif isinstance(e, FileExistsError | NotADirectoryError):
            what += " (a file was given where a folder is expected)"
        return f"{where}: {what}"
    if isinstance(e, MemoryError):
        return "out of memory; use smaller inputs or fewer resamples"
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
