"""The shape of the command line: which job each top-level command serves (the groups of
``metajudge --help`` and of ``docs/cli.md``) and the grouped command list. Release 0.3.0
removed every hidden old spelling: each command and option has one name.

Only argparse and textwrap are imported here.

>>> sorted(c for _, cmds in COMMAND_GROUPS for c in cmds)[:3]
['backends', 'baselines', 'cache']
"""

from __future__ import annotations

import argparse
import textwrap

#: The user's jobs, in the order ``metajudge --help`` lists them, each with its top-level
#: commands (``metajudge NOUN VERB``; ``meta-eval`` and ``demo`` are the two named jobs). Every
#: visible top-level command is in exactly one group (tests/cli/test_parser.py).
COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Named jobs", ("meta-eval", "demo")),
    ("Data (built-in datasets, your own files, agreement between annotators)", ("data",)),
    ("Metrics (the registry; run metrics on responses)", ("metrics",)),
    ("Evaluate (metrics against human labels)", ("report", "stats", "matrix", "baselines")),
    ("Judges (LLM judges and their backbones)", ("judge",)),
    ("Decide (drift gate, PPI, cost frontier; may an LLM replace the annotators)", ("decide",)),
    ("Calibrate (how far to trust each verdict)", ("calibrate",)),
    ("Setup and tools", ("setup", "backends", "cache")),
)

#: The shared verbs of the noun groups, each with its one meaning (``docs/cli.md`` states them).
SHARED_VERBS: tuple[tuple[str, str], ...] = (
    ("list", "what there is, one line each"),
    ("show", "one thing in detail"),
    ("validate", "check a file against its format"),
    ("export", "write something out as a file"),
    ("fetch", "download (if needed) and verify"),
    ("run", "compute, and write the result"),
    ("check", "compare against what is expected or stored"),
    ("fit", "learn from labelled data"),
    ("apply", "use what `fit` learned"),
    ("render", "write a run folder's report again, without recomputing"),
)

#: Spellings reserved for the next issues: named in ``docs/cli.md`` as coming, not registered.
COMING: tuple[tuple[str, str], ...] = ()

#: "How many labels do I need?": the one command answering it for each question (each command's
#: help line names its question and points to the others; ``metajudge --help`` lists all three).
LABEL_QUESTIONS: tuple[tuple[str, str], ...] = (
    ("stats power", "a correlation or a correlation difference"),
    ("calibrate plan", "an estimate's CI"),
    ("decide alt-test-plan", "the Alt-Test"),
)


def label_help(command: str, text: str) -> str:
    """The help line of a :data:`LABEL_QUESTIONS` command: how many labels for its question,
    ``text``, and where the other questions are answered."""
    own = dict(LABEL_QUESTIONS)[command]
    others = "; ".join(f"{q}: `{c}`" for c, q in LABEL_QUESTIONS if c != command)
    return f"how many labels for {own}: {text} (other questions: {others})"


#: Width of the text ``metajudge --help`` wraps itself (the epilog), whatever the terminal.
WIDTH = 88


def parser_at(parser: argparse.ArgumentParser, path: str) -> argparse.ArgumentParser:
    """The parser of the command ``path`` (``"judge swap"``) under ``parser``."""
    for word in path.split():
        sub = subparsers_of(parser)
        assert sub is not None, path
        parser = sub.choices[word]
    return parser


def visible_commands(sub: argparse._SubParsersAction) -> dict[str, str]:  # type: ignore[type-arg]
    """``{name: one-line help}`` of the commands ``--help`` lists."""
    return {a.dest: a.help or "" for a in sub._choices_actions}


def subparsers_of(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:  # type: ignore[type-arg]
    """The parser's subcommands action, or None."""
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a
    return None


def command_overview(sub: argparse._SubParsersAction) -> str:  # type: ignore[type-arg]
    """The grouped command list of ``metajudge --help``: every command that runs (``NOUN VERB``
    or a named job) with its help line, wrapped at :data:`WIDTH`."""
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
            verbs = subparsers_of(sub.choices[c])
            if verbs is None:
                lines += _entry(c, helps[c])
                continue
            for verb, text in visible_commands(verbs).items():
                lines += _entry(f"{c} {verb}", text)
        lines.append("")
    lines += textwrap.wrap(
        "How many labels do I need? For "
        + "; for ".join(f"{q}: `metajudge {c}`" for c, q in LABEL_QUESTIONS)
        + ".",
        WIDTH,
        break_on_hyphens=False,
    )
    lines.append(
        "Run `metajudge COMMAND --help` for a command's options; docs/cli.md lists them all."
    )
    return "\n".join(lines)


def _entry(name: str, text: str, indent: int = 2, col: int = 26) -> list[str]:
    pad = " " * col
    first = f"{' ' * indent}{name}"
    body = textwrap.wrap(text, WIDTH - col, break_on_hyphens=False) or [""]
    if len(first) + 2 > col:
        return [first, *(pad + b for b in body)]
    return [first.ljust(col) + body[0], *(pad + b for b in body[1:])]


def wrap(text: str) -> str:
    """``text`` wrapped at :data:`WIDTH` (the description of ``metajudge --help``)."""
    return textwrap.fill(text, WIDTH)
