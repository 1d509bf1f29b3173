"""The command-line grammar, walked over the whole parser (every command and subcommand).

One spelling per idea (the rule these tests hold the parser to; tests/cli/test_grammar.py holds
the meanings and the old spellings):

- resampling counts name what is resampled: ``--n-boot N`` is the number of bootstrap resamples
  and ``--n-perm N`` the number of permutations of a permutation test, everywhere. A command whose
  test can be either (``stats rank-clusters --method perm-*|boot-*``) takes the one that matches
  its method and refuses the other.
- ``--quiet`` (not ``--no-progress``), ``--format json`` (not ``--json``), ``--tie-band`` (not
  ``--epsilon``/``--eps``), ``--out DIR`` for a run folder (not ``--out-dir``/``--run-dir``) and
  ``-o/--output FILE`` for one file, ``--subset`` (not ``--variant``); release 0.3.0 removed the
  old spellings, and each is refused.
- a command's subcommands are ``SUBCOMMAND`` in its usage (``setup RESOURCE``).
- commands: ``metajudge NOUN VERB``; ``judge swap`` (the backbone swap; with ``--x/--y`` the
  decision) and ``judge verdicts`` (the accuracy report; with ``--choose`` the choice among the
  judges) are one command per analysis.
"""

from __future__ import annotations

import argparse
import importlib
import re
import shlex
from pathlib import Path

import pytest

from metajudge.cli import _COMMAND_MODULES, build_parser, main
from metajudge.cli.grammar import COMMAND_GROUPS, subparsers_of, visible_commands
from tests.cli.grammar_census import walk

ROOT = Path(__file__).resolve().parents[2]

#: old spellings removed in 0.3.0: no command has them (test_old_spellings_are_refused)
OLD_OPTIONS = frozenset(
    {
        "--n-resamples",
        "--no-progress",
        "--json",
        "--eps",
        "--epsilon",
        "--out-dir",
        "--run-dir",
        "--variant",
        "--llm-cache",
        "--grouped",
        "--external",
    }
)
#: one destination per spelling: the option means the same thing in every command
ONE_DEST = {
    "--n-boot": "n_boot",
    "--n-perm": "n_perm",
    "--seed": "seed",
    "--alpha": "alpha",
    "--alt-epsilon": "epsilon",
    "--format": "format",
    "--data-dir": "data_dir",
    "--out": "out",
    "--output": "output",
    "--quiet": "quiet",
    "--backbone": "backbone",
    "--backbones": "backbones",
}


def _options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    skip = (argparse._HelpAction, argparse._SubParsersAction)
    return [a for a in p._actions if not isinstance(a, skip)]


def test_every_option_and_command_has_help() -> None:
    missing = []
    for path, p in walk(build_parser()):
        for a in _options(p):
            if a.help is not argparse.SUPPRESS and not (a.help or "").strip():
                missing.append(f"{path} {'/'.join(a.option_strings) or a.dest}")
        sub = subparsers_of(p)
        if sub is not None:
            missing += [f"{path} {n} (command)" for n, h in visible_commands(sub).items() if not h]
    assert not missing, missing


def test_one_spelling_per_idea() -> None:
    shown_old, wrong_dest, counts = [], [], []
    for path, p in walk(build_parser(), hidden=False):
        for a in _options(p):
            if a.help is argparse.SUPPRESS:
                continue
            shown_old += [f"{path} {s}" for s in a.option_strings if s in OLD_OPTIONS]
            wrong_dest += [
                f"{path} {s} -> {a.dest}"
                for s in a.option_strings
                if s in ONE_DEST and a.dest != ONE_DEST[s]
            ]
            text = (a.help or "").lower()
            if "bootstrap resamples" in text and a.option_strings != ["--n-boot"]:
                counts.append(f"{path} {a.option_strings}")
            if text.startswith("permutations") and a.option_strings != ["--n-perm"]:
                counts.append(f"{path} {a.option_strings}")
    assert not shown_old, shown_old
    assert not wrong_dest, wrong_dest
    assert not counts, counts
    metavars = {
        path: sub.metavar
        for path, p in walk(build_parser(), hidden=False)
        if path != "metajudge" and (sub := subparsers_of(p)) is not None
    }
    assert set(metavars.values()) <= {"SUBCOMMAND", "RESOURCE"}, metavars  # RESOURCE: setup


def test_old_spellings_are_refused() -> None:
    registered = {s for _, p in walk(build_parser()) for a in _options(p) for s in a.option_strings}
    assert not registered & OLD_OPTIONS, registered & OLD_OPTIONS
    p = build_parser()
    for argv in (
        ["judge", "swap", "--dataset", "d", "--metric", "m", "--eps", "0.1"],
        ["meta-eval", "--dataset", "d", "--out", "o", "--no-progress"],
        ["judge", "swap", "--dataset", "d", "--metric", "m", "--json"],
        ["judge", "mudabench", "--predictions", "p", "--variant", "complex"],
        ["calibrate", "conformal", "--input", "f", "--alpha", "0.2"],
        ["cache", "stats", "--path", "c.sqlite"],
        ["data", "show", "hanna"],
    ):
        with pytest.raises(SystemExit):
            p.parse_args(argv)


def test_rank_clusters_takes_the_count_of_its_method() -> None:
    from metajudge.cli.stats import _n_resamples
    from metajudge.errors import InputError

    base = ["stats", "rank-clusters", "--dataset", "d", "--dimension", "x"]
    p = build_parser()
    assert _n_resamples(p.parse_args(base)) == 1000
    assert _n_resamples(p.parse_args([*base, "--n-perm", "7"])) == 7
    assert _n_resamples(p.parse_args([*base, "--method", "boot-sys", "--n-boot", "8"])) == 8
    with pytest.raises(InputError, match="--n-boot does not apply to --method perm-both"):
        _n_resamples(p.parse_args([*base, "--n-boot", "8"]))
    with pytest.raises(InputError, match="--n-perm does not apply"):
        _n_resamples(p.parse_args([*base, "--method", "boot-inp", "--n-perm", "8"]))
    assert p.parse_args(["stats", "kendall", "--dataset", "d", "--dimension", "x"]).n_perm == 1000


def test_help_groups_every_command_once(capsys: pytest.CaptureFixture[str]) -> None:
    grouped = [c for _, cmds in COMMAND_GROUPS for c in cmds]
    sub = subparsers_of(build_parser())
    assert sub is not None
    assert sorted(grouped) == sorted(visible_commands(sub))  # each visible command exactly once
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    titles = [out.index(f"\n{t}:\n") for t, _ in COMMAND_GROUPS]
    assert titles == sorted(titles)
    listed = re.findall(r"^  ([a-z][a-z-]*(?: [a-z][a-z-]*)?)", out, flags=re.MULTILINE)
    assert [c.split()[0] for c in listed] == [c for c in grouped for _ in _leaves(c)]
    # every command that runs is listed, in the groups' order: judge card and data doctor too
    assert listed == [c for g in grouped for c in _leaves(g)]
    assert "judge card" in listed and "data doctor" in listed


def _leaves(name: str) -> list[str]:
    """The commands that run under the top-level command ``name`` (itself for a named job)."""
    sub = subparsers_of(build_parser())
    assert sub is not None
    verbs = subparsers_of(sub.choices[name])
    return [name] if verbs is None else [f"{name} {v}" for v in visible_commands(verbs)]


def test_each_label_question_has_one_command_found_from_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ "How many labels do I need?": one command per question; its help line names its question
    and the commands of the others, and `metajudge --help` lists the three."""
    from metajudge.cli.grammar import LABEL_QUESTIONS, parser_at

    assert main(["--help"]) == 0
    top = " ".join(capsys.readouterr().out.split())
    for command, question in LABEL_QUESTIONS:
        assert f"{question}: `metajudge {command}`" in top
        path, verb = command.rsplit(" ", 1)
        sub = subparsers_of(parser_at(build_parser(), path))
        assert sub is not None
        line = visible_commands(sub)[verb]
        assert line.startswith(f"how many labels for {question}:"), line
        others = [c for c, _ in LABEL_QUESTIONS if c != command]
        assert all(f"`{c}`" in line for c in others), line


def test_each_module_registers_only_its_own_commands() -> None:
    """No module adds into a group another one made: each registers alone into an empty parser,
    and together they make the whole command set, each name from one module."""
    owner: dict[str, str] = {}
    for mod in _COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(mod).register(sub)
        for name in sub.choices:
            assert name not in owner, f"{name}: {owner.get(name)} and {mod}"
            owner[name] = mod
    full = subparsers_of(build_parser())
    assert full is not None
    assert sorted(owner) == sorted(full.choices)  # no hidden old names


def test_registration_order_does_not_matter(monkeypatch: pytest.MonkeyPatch) -> None:
    from metajudge import cli
    from metajudge.cli.reference import render

    before = render(build_parser())
    monkeypatch.setattr(cli, "_COMMAND_MODULES", tuple(reversed(cli._COMMAND_MODULES)))
    assert render(cli.build_parser()) == before
    assert cli.build_parser().format_help() == build_parser().format_help()


def _documented_commands() -> list[str]:
    """Every ``metajudge ...`` command line of the code blocks of the README and the user guide
    (docs/, but the generated docs/cli.md) and of the Makefile."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [
        body
        for p in pages
        if p.name != "cli.md"
        for lang, body in re.findall(
            r"^```(\w*)\n(.*?)^```$", p.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE
        )
        if lang in ("", "bash", "sh")
    ]
    text = (
        "\n".join(blocks)
        + "\n"
        + (ROOT / "Makefile").read_text(encoding="utf-8").replace("$(VENV)/bin/", "")
    )
    text = text.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("metajudge "):
            out.append(line.split(" #", 1)[0].strip())
    return out


def test_readme_and_makefile_commands_parse() -> None:
    cmds = _documented_commands()
    assert len(cmds) > 30
    p = build_parser()
    for cmd in cmds:
        argv = shlex.split(cmd)[1:]
        if "--help" in argv:
            continue
        try:
            args = p.parse_args(argv)
        except SystemExit:
            pytest.fail(f"does not parse: {cmd}")
        assert callable(getattr(args, "func", None)), cmd


def test_root_options_are_taken_before_or_after_the_command(capsys) -> None:  # type: ignore[no-untyped-def]
    """``--data-dir``, ``--strict-ids`` and ``--quiet`` are options of ``metajudge`` itself
    (one each in the census) that every command reads, wherever they stand on the line."""
    from metajudge.cli.options import ROOT_OPTIONS, lift_root_options

    p = build_parser()
    cmd = ["meta-eval", "--dataset", "d", "--out", "o"]
    after = p.parse_args([*cmd, "--data-dir", "D", "--strict-ids", "--quiet"])
    before = p.parse_args(["--data-dir=D", "--strict-ids", "--quiet", *cmd])
    assert vars(after) == vars(before)
    assert (after.data_dir, after.strict_ids, after.quiet) == ("D", True, True)
    plain = p.parse_args(["data", "list"])  # every command's namespace has them
    assert (plain.data_dir, plain.strict_ids, plain.quiet) == (None, False, False)
    on_commands = {
        s for path, q in walk(p, hidden=False) if path != "metajudge" for a in _options(q)
        for s in a.option_strings
    }  # fmt: skip
    assert not on_commands & set(ROOT_OPTIONS)
    # nothing after `--` is lifted; a --data-dir without its value is refused
    assert lift_root_options(["a", "--quiet", "--", "--quiet"]) == ["--quiet", "a", "--", "--quiet"]
    assert main(["data", "list", "--data-dir"]) == 2
    assert "argument --data-dir: expected one argument" in capsys.readouterr().err
