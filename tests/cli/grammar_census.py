"""A census of the command line: visible commands, visible options and hidden old spellings,
walked over the whole argparse tree (issue 37 counts them before and after the grammar change).

``python -m tests.cli.grammar_census`` prints the three counts.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass

from metajudge.cli.grammar import subparsers_of, visible_commands

_SKIP = (argparse._HelpAction, argparse._SubParsersAction, argparse._VersionAction)


def walk(
    p: argparse.ArgumentParser, path: str = "metajudge", hidden: bool = True
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(path, parser)`` of every parser under ``p`` (hidden aliases too when ``hidden``; an
    alias shares its parser, so it is walked under its old path as well)."""
    yield path, p
    sub = subparsers_of(p)
    if sub is None:
        return
    shown = visible_commands(sub)
    for name, q in sub.choices.items():
        if hidden or name in shown:
            yield from walk(q, f"{path} {name}", hidden)


def options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's own arguments (not -h, not its subcommands)."""
    return [a for a in p._actions if not isinstance(a, _SKIP)]


def hidden_commands(p: argparse.ArgumentParser, path: str = "metajudge") -> list[str]:
    """Every hidden command name (an old spelling answering with another command's parser)."""
    out: list[str] = []
    sub = subparsers_of(p)
    if sub is None:
        return out
    shown = visible_commands(sub)
    for name, q in sub.choices.items():
        if name not in shown:
            out.append(f"{path} {name}")
        else:
            out += hidden_commands(q, f"{path} {name}")
    return out


@dataclass(frozen=True)
class Census:
    commands: int  # visible leaf commands (a command that runs, e.g. `metajudge data list`)
    options: int  # visible options and positionals of every visible parser (root and groups too)
    hidden: int  # hidden spellings: old command names, and suppressed options per command


def census(parser: argparse.ArgumentParser) -> Census:
    parsers = list(walk(parser, hidden=False))
    leaves = [p for _, p in parsers if subparsers_of(p) is None]
    shown = [a for _, p in parsers for a in options(p) if a.help is not argparse.SUPPRESS]
    old = [a for _, p in parsers for a in options(p) if a.help is argparse.SUPPRESS]
    return Census(len(leaves), len(shown), len(old) + len(hidden_commands(parser)))


if __name__ == "__main__":
    from metajudge.cli import build_parser

    print(census(build_parser()))
