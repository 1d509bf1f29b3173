"""``docs/cli.md``: the command-line reference, generated from the parser.

``python -m metajudge.cli.reference > docs/cli.md`` rewrites it; ``tests/cli/test_reference.py``
fails when the committed file is stale. The text does not depend on the terminal: usage lines are
wrapped at :data:`metajudge.cli.grammar.WIDTH`, everything else is written here.

Only argparse is imported here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from metajudge.cli.grammar import (
    COMING,
    COMMAND_GROUPS,
    SHARED_VERBS,
    WIDTH,
    subparsers_of,
    visible_commands,
)

COMMAND = "python -m metajudge.cli.reference > docs/cli.md"

#: The spellings shared by every command beside :data:`metajudge.cli.options.MEANINGS`.
CONVENTIONS = (
    "`--dataset NAME` (a built-in dataset) or `--input FILE` (a canonical JSONL file)",
    (
        "`--data-dir DIR` (the local data folder, default `$METAJUDGE_DATA_DIR`), `--strict-ids` "
        "(refuse score rows for unknown ids) and `--quiet` (no progress bar): options of "
        "`metajudge` itself that every command takes, before or after its name "
        "(`metajudge --data-dir DIR data list` = `metajudge data list --data-dir DIR`)"
    ),
    "`-o`/`--output FILE` writes one file; `--out DIR` writes a run folder",
    "`--format`: what is printed (`md`, `csv`, `json`, `tex`, ... as the command offers)",
    "`--backbone NAME` (one judge backbone) and `--backbones A,B` (several)",
)


def grammar(parser: argparse.ArgumentParser) -> list[str]:
    """The head of ``docs/cli.md``: the grammar, stated once."""
    from metajudge.cli.options import MEANINGS

    sub = subparsers_of(parser)
    assert sub is not None
    jobs, nouns = [], []
    for _, names in COMMAND_GROUPS:
        for name in names:
            verbs = subparsers_of(sub.choices[name])
            if verbs is None:
                jobs.append(name)
            else:
                nouns.append(f"- `{name}`: " + ", ".join(visible_commands(verbs)))
    return [
        "## The grammar",
        "",
        "`metajudge NOUN VERB [options]`. Two named jobs stay bare: "
        + " and ".join(f"`{j}`" for j in jobs)
        + ". Everything else is a verb of a noun group:",
        "",
        *nouns,
        "",
        "Shared verbs mean the same in every group:",
        "",
        *(f"- `{verb}`: {meaning}" for verb, meaning in SHARED_VERBS),
        "",
        "Each option name has one meaning in every command, and each meaning one name:",
        "",
        *(f"- `{name}`: {meaning}" for name, meaning in MEANINGS.items()),
        *(f"- {c}" for c in CONVENTIONS),
        "",
        *(
            [
                "Coming in the next releases (the spellings are reserved; not commands yet):",
                "",
                *(f"- `{spelling}`: {what}" for spelling, what in COMING),
                "",
            ]
            if COMING
            else []
        ),
        (
            "Every command and option has one spelling: release 0.3.0 removed the old ones "
            "(CHANGELOG.md lists them, old -> new)."
        ),
        "",
    ]


def commands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
    """``(path, parser, one-line help)`` of every visible command, top-level commands in the order
    of :data:`~metajudge.cli.grammar.COMMAND_GROUPS`, subcommands in registration order."""
    sub = subparsers_of(parser)
    assert sub is not None
    helps = visible_commands(sub)
    for _, names in COMMAND_GROUPS:
        for name in names:
            yield from _walk(f"metajudge {name}", sub.choices[name], helps[name])


def _walk(
    path: str, parser: argparse.ArgumentParser, helptext: str
) -> Iterator[tuple[str, argparse.ArgumentParser, str]]:
    yield path, parser, helptext
    sub = subparsers_of(parser)
    if sub is not None:
        for name, h in visible_commands(sub).items():
            yield from _walk(f"{path} {name}", sub.choices[name], h)


def render(parser: argparse.ArgumentParser) -> str:
    """The whole of ``docs/cli.md``."""
    out = [
        "# The `metajudge` command line",
        "",
        f"<!-- Generated from the parser by `{COMMAND}`; do not edit by hand. -->",
        "",
        parser.description.replace("\n", " ") if parser.description else "",
        "",
        *grammar(parser),
        "Every command and option follows, grouped by job.",
        "",
        "Before the command: "
        + ", ".join(f"`{_spelling(a)}` ({a.help})" for a in _globals(parser))
        + ".",
        "",
        *_contents(parser),
    ]
    sub = subparsers_of(parser)
    assert sub is not None
    helps = visible_commands(sub)
    for title, names in COMMAND_GROUPS:
        out += [f"## {title}", ""]
        for name in names:
            for path, p, h in _walk(f"metajudge {name}", sub.choices[name], helps[name]):
                out += _command(path, p, h)
    return "\n".join(out).rstrip("\n") + "\n"


def _globals(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if _documented(a)]


def _contents(parser: argparse.ArgumentParser) -> list[str]:
    sub = subparsers_of(parser)
    assert sub is not None
    out = ["## Contents", ""]
    for title, names in COMMAND_GROUPS:
        links = ", ".join(f"[`{n}`](#{_anchor('metajudge ' + n)})" for n in names)
        out.append(f"- {title}: {links}")
    return [*out, ""]


def _anchor(path: str) -> str:
    """GitHub's anchor of the heading ``` `path` ``` (lower case, spaces to dashes)."""
    return path.lower().replace(" ", "-")


def _command(path: str, parser: argparse.ArgumentParser, helptext: str) -> list[str]:
    out = [f"### `{path}`", "", _one_line(helptext), ""]
    if parser.description and parser.description != helptext:
        out += [_one_line(parser.description), ""]
    out += ["```", _usage(path, parser), "```", ""]
    rows = [_row(a) for a in parser._actions if _documented(a)]
    if rows:
        out += ["| option | meaning |", "|---|---|", *rows, ""]
    return out


def _one_line(text: str) -> str:
    """``text`` on one line, with the characters Markdown would eat escaped."""
    text = " ".join(text.split())
    return text.replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*")


def _usage(path: str, parser: argparse.ArgumentParser) -> str:
    fmt = argparse.HelpFormatter(prog=path, width=WIDTH)
    fmt.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return fmt.format_help().strip()


def _documented(a: argparse.Action) -> bool:
    return a.help is not argparse.SUPPRESS and not isinstance(
        a, argparse._HelpAction | argparse._SubParsersAction
    )


def _spelling(a: argparse.Action) -> str:
    """``-o, --output FILE`` / ``--format {md,json}`` / ``NAME`` as argparse's help writes them."""
    fmt = argparse.HelpFormatter(prog="metajudge", width=10**6)
    return fmt._format_action_invocation(a)


def _row(a: argparse.Action) -> str:
    text = _one_line(str(a.help or "") % {**vars(a), "prog": "metajudge"})
    if a.required and a.option_strings:
        text += " (required)"
    return f"| `{_spelling(a)}` | {text} |"


def main() -> int:
    from metajudge.cli import build_parser

    sys.stdout.write(render(build_parser()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
