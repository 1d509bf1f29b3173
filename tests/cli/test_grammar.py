"""The command grammar of issue 37, walked over the whole parser.

- One meaning per option name: every option named in :data:`metajudge.cli.options.MEANINGS` is
  made by the one function of ``cli/options.py`` that declares its meaning (its action carries
  ``meaning``), in every command.
- One name per meaning: an option whose help states one of those meanings (a tie band, a
  progress bar, a miscoverage, ...) is spelled with that meaning's name.
- No hidden old spelling is left (release 0.3.0 removed them): the removed ones are refused, and
  CHANGELOG.md lists them.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from metajudge.cli import build_parser, main
from metajudge.cli.grammar import COMING, subparsers_of
from metajudge.cli.options import MEANINGS
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


#: the old command names release 0.3.0 removed (CHANGELOG.md's 0.2.0 table): none parses now
REMOVED_COMMANDS = (
    "agreement",
    "score",
    "kendall",
    "rank-clusters",
    "power",
    "backbone-swap",
    "decide swap",
    "decide verdicts",
    "judge-diagnostics",
    "judge judge-bench",
)


def test_no_hidden_spelling_is_left() -> None:
    """Release 0.3.0: no hidden command name, no hidden option (the census counts both)."""
    assert census(build_parser()).hidden == 0
    hidden = [
        f"{path} {a.option_strings or a.dest}"
        for path, p in walk(build_parser(), hidden=False)
        for a in options(p)
        if a.help is argparse.SUPPRESS
    ]
    assert not hidden and not hidden_commands(build_parser()), hidden


#: Input words with one meaning each (issue 61): the option -> what its help must say.
INPUT_WORDS: dict[str, str] = {
    "--input": r"jsonl|dataset",  # a dataset, in any layout metajudge reads
    "--out": r"folder",  # a run folder
    "--judge": r"column",  # a score column
    "--margin": r"^non-inferiority margin",  # judge swap / verdicts' δ
}


@pytest.mark.parametrize("word, meaning", sorted(INPUT_WORDS.items()))
def test_each_input_word_keeps_its_one_meaning(word: str, meaning: str) -> None:
    uses = [(path, a) for path, a in _visible() if word in a.option_strings]
    assert uses, word
    wrong = [
        f"{path}: {a.help}"
        for path, a in uses
        if not re.search(meaning, str(a.help), re.IGNORECASE)
    ]
    assert not wrong, wrong


def test_only_the_named_jobs_are_bare() -> None:
    """NOUN VERB: a top-level command without verbs is one of the two named jobs."""
    sub = subparsers_of(build_parser())
    assert sub is not None
    bare = {n for n in sub.choices if subparsers_of(sub.choices[n]) is None}
    assert bare == {"meta-eval", "demo"}


#: The census's ceilings (issue 61: 51 commands, 522 options, 93 hidden spellings at 7aa1c6b): a
#: count may only fall; lower the ceiling with it (475 = 462 + issue 67's --tracking-uri, a root
#: option, and --log-to-mlflow on judge card and calibrate plan; + issue 62's `judge card
#: --require EXPR`, the CI gate, and `--probes DIR` for a CJE folder; + issue 64's --williams,
#: --levels and --table SPEC on both meta-eval and report render, which replaced --mark,
#: --decimals, --metric-names and --ci-style).
CENSUS_CEILING = (47, 467, 0)


def test_the_census_only_falls() -> None:
    c = census(build_parser())
    assert c.commands <= CENSUS_CEILING[0] and c.options <= CENSUS_CEILING[1] and c.hidden == 0


@pytest.mark.parametrize("old", REMOVED_COMMANDS)
def test_removed_commands_are_refused_and_listed(
    old: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*old.split(), "--help"]) == 2, old
    assert "invalid choice" in capsys.readouterr().err
    assert f"| `metajudge {old}` |" in CHANGELOG


def test_removed_level_and_method_values_are_refused() -> None:
    for argv in (
        ["stats", "kendall", "--dataset", "d", "--dimension", "x", "--level", "system-level"],
        ["stats", "kendall", "--dataset", "d", "--dimension", "x", "--level", "item-grouped"],
        ["calibrate", "conformal", "--input", "f.csv", "--method", "cqr"],
    ):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)


def test_coming_spellings_are_documented_not_registered() -> None:
    import metajudge

    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    paths = {path for path, _ in walk(build_parser())}
    for spelling, _ in COMING:
        assert f"`{spelling}`" in reference and f"`{spelling}`" in CHANGELOG
        assert spelling not in paths  # reserved, no stub command
    assert metajudge.__version__ == "0.3.0"
    assert 'version = "0.3.0"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
