"""The command grammar of issue 37, walked over the whole parser.

- One meaning per option name: every option named in :data:`metajudge.cli.options.MEANINGS` is
  made by the one function of ``cli/options.py`` that declares its meaning (its action carries
  ``meaning``), in every command.
- One name per meaning: an option whose help states one of those meanings (a tie band, a
  progress bar, a miscoverage, ...) is spelled with that meaning's name.
- Each hidden old spelling (a command or an option) prints exactly one deprecation line, in the
  format of :func:`metajudge.cli.grammar.deprecation`, and is listed in CHANGELOG.md.
- The ``--help`` of each command and group shows the new names only.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from metajudge.cli import build_parser, main
from metajudge.cli.grammar import (
    COMING,
    OLD_COMMANDS,
    OLD_DEFAULT_VERBS,
    deprecation,
    hidden_names,
    subparsers_of,
)
from metajudge.cli.options import MEANINGS, OLD_LEVELS, is_old
from tests.cli.grammar_census import census, hidden_commands, options, walk

ROOT = Path(__file__).resolve().parents[2]
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")

#: help text that states a meaning of :data:`MEANINGS` -> the one name of that meaning
SYNONYMS: dict[str, str] = {
    r"progress bar": "--quiet",
    r"^tie band\b|count as ties": "--tie-band",
    r"alt-test's .*margin|cost-benefit margin": "--alt-epsilon",
    r"^significance level|\b(one|two)-sided (test )?level|^test level": "--alpha",
    r"miscoverage": "--miscoverage",
    r"tolerated disagreement": "--risk",
    r"response cache|cache file": "--cache-file",
    r"^print only the paths": "--paths-only",
    r"^correlate all rows at once": "--level",
    r"^bootstrap resamples": "--n-boot",
    r"^permutations": "--n-perm",
    r"carries the item id": "--id-field",
    r"system a framework's score file scored": "--system",
    r"epochs or repeats": "--epochs",
}


def _visible() -> list[tuple[str, argparse.Action]]:
    return [
        (path, a)
        for path, p in walk(build_parser(), hidden=False)
        for a in options(p)
        if a.help is not argparse.SUPPRESS
    ]


def test_one_meaning_per_option_name() -> None:
    wrong = [
        f"{path} {s}: {getattr(a, 'meaning', None)!r}"
        for path, a in _visible()
        for s in a.option_strings
        if s in MEANINGS and getattr(a, "meaning", None) != s
    ]
    assert not wrong, wrong  # each made by its options.add_* (one help, one type, one default)


def test_one_name_per_meaning() -> None:
    wrong = []
    for path, a in _visible():
        text = str(a.help or "").lower()
        for pattern, name in SYNONYMS.items():
            if re.search(pattern, text) and a.option_strings != [name]:
                wrong.append(f"{path} {a.option_strings or a.dest}: {name} ({pattern})")
    assert not wrong, wrong


def test_synonyms_match_their_meanings() -> None:
    """The patterns find each declared option (the test above cannot pass by matching nothing)."""
    seen = {name for _, a in _visible() for name in a.option_strings}
    for pattern, name in SYNONYMS.items():
        hits = [a for _, a in _visible() if re.search(pattern, str(a.help or "").lower())]
        assert hits or name not in seen, (pattern, name)


def _old_options() -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    return [
        (path, p, a)
        for path, p in walk(build_parser(), hidden=False)
        for a in options(p)
        if a.help is argparse.SUPPRESS
    ]


def test_every_hidden_option_is_a_deprecated_alias() -> None:
    plain = [
        f"{path} {a.option_strings or a.dest}" for path, _, a in _old_options() if not is_old(a)
    ]
    assert not plain, plain  # made with options.add_old (one deprecation line), not bare SUPPRESS


def _value(a: argparse.Action) -> list[str]:
    if a.nargs == 0:
        return []
    if a.option_strings == ["--external"]:
        return ["shipped"]
    if a.choices:
        return [str(next(iter(a.choices)))]
    for text in ("1", "0.5", "x"):  # the first value the option's type takes
        try:
            (a.type or str)(text)  # type: ignore[operator]
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
        return [text]
    raise AssertionError(f"no value for {a.option_strings}")


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str], old: str, new: str) -> None:
    assert main([*argv, "--help"]) == 0, argv
    err = capsys.readouterr().err.splitlines()
    assert err == [deprecation(old, new)], argv


@pytest.mark.parametrize(
    "path, old, new",
    sorted({(path, a.old, a.new) for path, _, a in _old_options() if is_old(a)}),
)
def test_each_hidden_option_prints_one_line_and_is_in_the_changelog(
    path: str, old: str, new: str, capsys: pytest.CaptureFixture[str]
) -> None:
    a = next(a for q, _, a in _old_options() if q == path and is_old(a) and a.old == old)
    argv = path.split()[1:]
    argv += [*a.option_strings, *_value(a)] if a.option_strings else ["x"]
    if old == "--external":  # the new spelling it names is the value's (--scores shipped...)
        assert main([*argv, "--help"]) == 0
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("metajudge: '--external' is deprecated; use '--scores shipped")
    else:
        _one_line(capsys, argv, old, new)
    assert f"`{old}`" in CHANGELOG and f"`{new}`" in CHANGELOG, old


@pytest.mark.parametrize("old, new, shown, defaults", OLD_COMMANDS)
def test_each_old_command_works_prints_one_line_and_is_in_the_changelog(
    old: str, new: str, shown: str, defaults: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_line(capsys, old.split(), f"metajudge {old}", shown)
    assert f"| `metajudge {old}` | `{shown}` |" in CHANGELOG


def _required(new: str) -> list[str]:
    """Arguments enough for ``new`` to parse (what each command requires)."""
    return {
        "data agreement": ["--dataset", "d"],
        "metrics run": ["--dataset", "d", "--metrics", "bleu", "-o", "s.jsonl"],
        "stats kendall": ["--dataset", "d", "--dimension", "x"],
        "stats rank-clusters": ["--dataset", "d", "--dimension", "x"],
        "stats power": ["--r", "0.3"],
        "judge swap": ["--dataset", "d", "--metric", "m"],
        "judge verdicts": ["--input", "a.jsonl"],
        "judge diagnostics": ["--dataset", "d", "--backbones", "b"],
        "judge run-bench": ["--dataset", "d", "-o", "r.json"],
    }[new]


def test_old_commands_reach_the_new_parser() -> None:
    p = build_parser()
    for old, new, _, defaults in OLD_COMMANDS:
        a = p.parse_args([*old.split(), *_required(new)])
        b = p.parse_args([*new.split(), *_required(new)])
        assert a.func is b.func, old
        for k, v in defaults.items():
            assert getattr(a, k) == v and getattr(b, k) != v, (old, k)


def test_default_verbs(capsys: pytest.CaptureFixture[str]) -> None:
    for group, verb, old, new in OLD_DEFAULT_VERBS:
        _one_line(capsys, [group, "somedir"], old, new)
        args = build_parser().parse_args([group, "somedir"])
        assert args.func is build_parser().parse_args([group, verb, "somedir"]).func
        assert f"| `{old}` | `{new}` |" in CHANGELOG


@pytest.mark.parametrize("old, new", sorted(OLD_LEVELS.items()))
def test_old_level_choices(old: str, new: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["stats", "kendall", "--dataset", "d", "--dimension", "x", "--level", old]
    assert build_parser().parse_args(argv).level == new
    assert capsys.readouterr().err.splitlines() == [deprecation(f"--level {old}", f"--level {new}")]
    assert f"`--level {old}`" in CHANGELOG
    assert build_parser().parse_args([*argv[:-1], new]).level == new
    assert capsys.readouterr().err == ""


def test_help_shows_new_names_only() -> None:
    olds = {a.old for _, _, a in _old_options() if is_old(a) and a.old.startswith("-")}
    olds -= {name for _, a in _visible() for name in a.option_strings}  # --alpha, --out: live too
    bad = []
    for path, p in walk(build_parser(), hidden=False):
        sub = subparsers_of(p)
        hidden = set(hidden_names(sub)) if sub is not None else set()
        text = p.format_help()
        bad += [
            f"{path}: {o}" for o in olds if re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)
        ]
        shown_old = {o for o, _ in OLD_LEVELS.items() if o in text}
        bad += [f"{path}: --level {o}" for o in shown_old]
        if subparsers_of(p) is not None:
            listed = set(re.findall(r"^    ([a-z][a-z-]*)", text, flags=re.MULTILINE))
            listed |= set(re.findall(r"^  ([a-z][a-z-]*)", p.epilog or "", flags=re.MULTILINE))
            bad += [f"{path}: command {c}" for c in listed & hidden]
    assert not bad, bad


def test_every_old_spelling_is_counted_and_listed() -> None:
    """The census (visible commands, visible options, hidden spellings) and CHANGELOG.md agree:
    each hidden command name is a row of the changelog."""
    c = census(build_parser())
    assert c.commands >= 40 and c.options >= 400 and c.hidden >= 60  # the CLI's size, roughly
    for path in hidden_commands(build_parser()):
        assert f"`{path}`" in CHANGELOG, path
    for sub_path, p in walk(build_parser(), hidden=False):
        sub = subparsers_of(p)
        if sub is not None:
            for name, new in hidden_names(sub).items():
                assert f"`{new}`" in CHANGELOG, (sub_path, name)


def test_coming_spellings_are_documented_not_registered() -> None:
    import metajudge

    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    paths = {path for path, _ in walk(build_parser())}
    for spelling, _ in COMING:
        assert f"`{spelling}`" in reference and f"`{spelling}`" in CHANGELOG
        assert spelling not in paths  # reserved, no stub command
    assert metajudge.__version__ == "0.2.0"
    assert 'version = "0.2.0"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
