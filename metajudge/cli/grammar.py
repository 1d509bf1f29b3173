"""The shape of the command line: which job each top-level command serves (the groups of
``metajudge --help`` and of ``docs/cli.md``), hidden aliases of old names, and the grouped
command list.

Only argparse and textwrap are imported here.

>>> sorted(c for _, cmds in COMMAND_GROUPS for c in cmds)[:3]
['agreement', 'backbone-swap', 'backends']
"""

from __future__ import annotations

import argparse
import textwrap

#: The user's jobs, in the order ``metajudge --help`` lists them, each with its top-level
#: commands. Every visible top-level command is in exactly one group (tests/cli/test_parser.py).
COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Data (built-in datasets and your own files)", ("data",)),
    ("Score (run metrics on responses)", ("score", "metrics")),
    (
        "Evaluate (metrics against human labels)",
        ("meta-eval", "report", "kendall", "rank-clusters", "power", "matrix", "baselines"),
    ),
    ("Judges (LLM judges and their backbones)", ("judge", "backbone-swap")),
    ("Decide (can judge Y replace judge X)", ("decide",)),
    ("Calibrate (how far to trust each verdict)", ("calibrate",)),
    ("Agreement (between the human annotators)", ("agreement",)),
    ("Setup and tools", ("setup", "backends", "cache", "demo")),
)

#: Width of the text ``metajudge --help`` wraps itself (the epilog), whatever the terminal.
WIDTH = 88


def hidden_alias(
    sub: argparse._SubParsersAction, parser: argparse.ArgumentParser, *old: str
) -> None:  # type: ignore[type-arg]
    """Make ``parser`` answer to the ``old`` names too, left out of ``--help`` (an old spelling
    kept for one release: the same parser, hence the same options and function)."""
    for name in old:
        if name in sub.choices:
            raise ValueError(f"command {name!r} is registered twice")
        sub.choices[name] = parser


def visible_commands(sub: argparse._SubParsersAction) -> dict[str, str]:  # type: ignore[type-arg]
    """``{name: one-line help}`` of the commands ``--help`` lists (hidden aliases left out)."""
    return {a.dest: a.help or "" for a in sub._choices_actions}


def subparsers_of(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:  # type: ignore[type-arg]
    """The parser's subcommands action, or None."""
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a
    return None


def command_overview(sub: argparse._SubParsersAction) -> str:  # type: ignore[type-arg]
    """The grouped command list of ``metajudge --help`` (wrapped at :data:`WIDTH`)."""
    helps = visible_commands(sub)
    grouped = [c for _, cmds in COMMAND_GROUPS for c in cmds]
    missing = sorted(set(helps) - set(grouped))
    unknown = sorted(set(grouped) - set(helps))
    if missing or unknown:
        raise ValueError(f"COMMAND_GROUPS out of date: ungrouped {missing}, unknown {unknown}")
    lines: list[str] = []
    for title, cmds in COMMAND_GROUPS:
        lines += [f"{title}:"]
        for c in cmds:
            lines += _entry(c, helps[c])
        lines.append("")
    lines.append(
        "Run `metajudge COMMAND --help` for a command's options; docs/cli.md lists them all."
    )
    return "\n".join(lines)


def _entry(name: str, text: str, indent: int = 2, col: int = 18) -> list[str]:
    pad = " " * col
    first = f"{' ' * indent}{name}"
    body = textwrap.wrap(text, WIDTH - col) or [""]
    if len(first) + 2 > col:
        return [first, *(pad + b for b in body)]
    return [first.ljust(col) + body[0], *(pad + b for b in body[1:])]


def wrap(text: str) -> str:
    """``text`` wrapped at :data:`WIDTH` (the description of ``metajudge --help``)."""
    return textwrap.fill(text, WIDTH)
