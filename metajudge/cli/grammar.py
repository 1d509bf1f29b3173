"""The shape of the command line: which job each top-level command serves (the groups of
``metajudge --help`` and of ``docs/cli.md``), hidden aliases of old names, and the grouped
command list.

Only argparse, sys and textwrap are imported here.

>>> sorted(c for _, cmds in COMMAND_GROUPS for c in cmds)[:3]
['backends', 'baselines', 'cache']
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

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

#: Old command names (path under ``metajudge``), each a hidden alias of the new command's parser:
#: ``(old, new, shown as, defaults set when the old name is used)``.
OLD_COMMANDS: tuple[tuple[str, str, str, dict[str, Any]], ...] = (
    ("agreement", "data agreement", "metajudge data agreement", {}),
    ("score", "metrics run", "metajudge metrics run", {}),
    ("kendall", "stats kendall", "metajudge stats kendall", {}),
    ("rank-clusters", "stats rank-clusters", "metajudge stats rank-clusters", {}),
    ("power", "stats power", "metajudge stats power", {}),
    ("backbone-swap", "judge swap", "metajudge judge swap", {}),
    ("decide swap", "judge swap", "metajudge judge swap --x X --y Y", {}),
    ("decide verdicts", "judge verdicts", "metajudge judge verdicts --choose", {"choose": True}),
    ("judge-diagnostics", "judge diagnostics", "metajudge judge diagnostics", {}),
    ("judge judge-bench", "judge run-bench", "metajudge judge run-bench", {}),
)

#: Groups whose old spelling was one command: ``(group, verb, old, new)`` (:func:`default_verb`).
OLD_DEFAULT_VERBS: tuple[tuple[str, str, str, str], ...] = (
    ("report", "render", "metajudge report DIR", "metajudge report render DIR"),
)

#: The release that removes every hidden old spelling (CHANGELOG.md lists them).
REMOVED_IN = "0.3.0"

#: Width of the text ``metajudge --help`` wraps itself (the epilog), whatever the terminal.
WIDTH = 88


def deprecation(old: str, new: str) -> str:
    """The one deprecation line of an old spelling (a command or an option)."""
    return f"metajudge: '{old}' is deprecated; use '{new}' (removed in {REMOVED_IN})"


def warn_deprecated(old: str, new: str) -> None:
    """Print :func:`deprecation` on standard error."""
    print(deprecation(old, new), file=sys.stderr)


class _Choices(dict):  # type: ignore[type-arg]
    """The subcommands of a group with a default verb: any word that is not an option is a
    choice (the old ``metajudge report DIR`` reaches ``report render DIR``)."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (dict.__contains__(self, key) or not key.startswith("-"))


class _Subcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """A subcommands action that knows its hidden old names: choosing one prints its
    deprecation line once, then parses with the new command's parser (and its ``defaults``)."""

    old_names: dict[str, tuple[str, dict[str, Any]]]
    default_verb: tuple[str, str, str] | None = None

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        name = values[0]
        if not dict.__contains__(self._name_parser_map, name) and self.default_verb:
            verb, old, new = self.default_verb
            warn_deprecated(old, new)
            values = [verb, *values]
            name = verb
        new_name, defaults = self.old_names.get(name, (None, {}))
        if new_name is not None:
            warn_deprecated(f"{self._prog_prefix} {name}", new_name)
        super().__call__(parser, namespace, values, option_string)
        for key, value in defaults.items():
            setattr(namespace, key, value)


def _aliasing(sub: argparse._SubParsersAction) -> _Subcommands:  # type: ignore[type-arg]
    if not isinstance(sub, _Subcommands):
        sub.__class__ = _Subcommands
        sub.old_names = {}
    assert isinstance(sub, _Subcommands)
    return sub


def hidden_alias(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    parser: argparse.ArgumentParser,
    *old: str,
    new: str | None = None,
    defaults: dict[str, Any] | None = None,
) -> None:
    """Make ``parser`` answer to the ``old`` names of ``sub`` too, left out of ``--help`` (an
    old spelling kept until :data:`REMOVED_IN`: the same parser, hence the same options and
    function). Using one prints one deprecation line naming ``new`` (default: the parser's
    own command line); ``defaults`` are set on the parsed arguments (an old command that is
    now an option of the new one)."""
    aliasing = _aliasing(sub)
    for name in old:
        if name in sub.choices:
            raise ValueError(f"command {name!r} is registered twice")
        sub.choices[name] = parser
        aliasing.old_names[name] = (new or parser.prog, dict(defaults or {}))


def default_verb(sub: argparse._SubParsersAction, verb: str, old: str, new: str) -> None:  # type: ignore[type-arg]
    """A group whose old spelling was one command: a first word that is not one of its
    subcommands goes to ``verb`` (``metajudge report DIR`` = ``metajudge report render DIR``),
    with one deprecation line (``old`` -> ``new``)."""
    aliasing = _aliasing(sub)
    choices = _Choices(sub.choices)
    sub.choices = choices
    sub._name_parser_map = choices
    aliasing.default_verb = (verb, old, new)


def parser_at(parser: argparse.ArgumentParser, path: str) -> argparse.ArgumentParser:
    """The parser of the command ``path`` (``"judge swap"``) under ``parser``."""
    for word in path.split():
        sub = subparsers_of(parser)
        assert sub is not None, path
        parser = sub.choices[word]
    return parser


def install_old_names(parser: argparse.ArgumentParser) -> None:
    """Register :data:`OLD_COMMANDS` and :data:`OLD_DEFAULT_VERBS` on the whole parser (after
    every module registered its commands: an old name may sit in another group than the new)."""
    for old, new, shown, defaults in OLD_COMMANDS:
        *above, name = old.split()
        sub = subparsers_of(parser_at(parser, " ".join(above)))
        assert sub is not None, old
        hidden_alias(sub, parser_at(parser, new), name, new=shown, defaults=defaults)
    for group, verb, old, new in OLD_DEFAULT_VERBS:
        sub = subparsers_of(parser_at(parser, group))
        assert sub is not None, group
        default_verb(sub, verb, old, new)


def hidden_names(sub: argparse._SubParsersAction) -> dict[str, str]:  # type: ignore[type-arg]
    """``{old name: new command line}`` of ``sub``'s hidden aliases."""
    return {k: v[0] for k, v in getattr(sub, "old_names", {}).items()}


def default_verb_of(sub: argparse._SubParsersAction) -> tuple[str, str, str] | None:  # type: ignore[type-arg]
    """``(verb, old, new)`` of a group made by :func:`default_verb`, else None."""
    return getattr(sub, "default_verb", None)


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
