"""``judge swap`` and ``judge verdicts``: one command per analysis (issue 37). The decision view
(``--x/--y``, ``--choose``) takes its own options; an option of the other view is refused, naming
it, before any work (nothing is ignored silently). The numbers of both views are asserted where
they were before the merge (tests/analyses/decide/test_real.py, tests/analyses/test_backbone_swap.py,
tests/cli/test_json_stdout.py)."""

from __future__ import annotations

import pytest

from metajudge.cli import main

SWAP = ["judge", "swap", "--dataset", "lftqa_eval", "--metric", "geval_faithfulness"]
VERDICTS = ["judge", "verdicts", "--verdicts", "a.jsonl", "--verdicts", "b.jsonl"]


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--x", "gpt-4o"], "--x and --y"),
        (["--margin", "0.1"], "--margin does not apply without --x/--y"),
        (["--alpha", "0.1"], "--alpha does not apply without --x/--y"),
        (["--ppi-labelled", "5"], "--ppi-labelled does not apply without --x/--y"),
        (["--x", "a", "--y", "b", "--dimension", "d"], "--dimension does not apply with --x/--y"),
        (["--x", "a", "--y", "b", "--no-plots"], "--no-plots does not apply with --x/--y"),
    ],
)
def test_judge_swap_refuses_the_other_views_options(
    extra: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*SWAP, *extra]) == 2
    assert named in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, named",
    [
        (["--margin", "0.1"], "--margin does not apply without --choose"),
        (["--out", "o"], "--out does not apply without --choose"),
        (["--choose", "-o", "r.md"], "--output does not apply with --choose"),
        (["--choose", "--format", "csv"], "--format csv does not apply with --choose"),
    ],
)
def test_judge_verdicts_refuses_the_other_views_options(
    extra: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*VERDICTS, *extra]) == 2
    assert named in capsys.readouterr().err


def test_judge_verdicts_needs_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", "verdicts"]) == 2
    assert "give a verdict file (--verdicts FILE" in capsys.readouterr().err
