"""``docs/cli.md`` is generated from the parser (:mod:`metajudge.cli.reference`) and committed; it
must match what the parser says now, whatever the terminal's width."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from metajudge.cli import build_parser
from metajudge.cli.reference import COMMAND, commands, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_docs_cli_md_is_current() -> None:
    fresh = render(build_parser())
    if DOC.read_text(encoding="utf-8") != fresh:
        pytest.fail(f"docs/cli.md is stale; regenerate it with: {COMMAND}")


@pytest.mark.parametrize("columns", ["30", "250"])
def test_reference_does_not_depend_on_the_terminal(
    monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    assert render(build_parser()) == DOC.read_text(encoding="utf-8")


def test_reference_names_every_command_and_option() -> None:
    text = DOC.read_text(encoding="utf-8")
    paths = [path for path, _, _ in commands(build_parser())]
    assert "metajudge judge run-bench" in paths and "metajudge matrix run" in paths
    for path, parser, _ in commands(build_parser()):
        section = text.split(f"### `{path}`\n", 1)[1].split("\n### ", 1)[0]
        for a in parser._actions:
            if (
                a.option_strings
                and a.help not in (None, argparse.SUPPRESS)
                and "-h" not in a.option_strings
            ):
                assert f"`{a.option_strings[0]}" in section, (path, a.option_strings)
