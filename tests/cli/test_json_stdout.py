"""``--format json`` on standard output is exactly one JSON document (issue 25 item 10, for ``| jq``).

Every command that offers ``--format json`` is run through :func:`metajudge.cli.main` and its whole
standard output read with ``json.loads``; lines about written files go to standard error then.
Two commands need a live judge backbone and are not run here: ``backends check`` and
``judge run-bench`` (the slow tier runs the latter), and ``judge diagnostics`` calls a judge too.
:func:`test_every_json_command_is_covered` keeps this list complete.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from metajudge.cli import build_parser, main

BBS = "shipped:gpt-4o,gpt-4o-mini,Meta-Llama-3.1-70B-Instruct-Turbo"
SWAP = ["--dataset", "lftqa_eval", "--metric", "geval_faithfulness", "--scores"]
BYOD = Path(__file__).parents[1] / "fixtures" / "byod" / "pairwise.jsonl"


def _judgebench(d: Path) -> list[str]:
    files = sorted((d / "judgebench" / "outputs").glob("*.jsonl"))[:2]
    return [a for p in files for a in ("--verdicts", str(p))]


def _cache(tmp: Path) -> str:
    from metajudge.backends.cache import ResponseCache

    ResponseCache(tmp / "c.sqlite").close()
    return str(tmp / "c.sqlite")


def _meta_eval_dir(tmp: Path, d: Path) -> str:
    out = tmp / "run"
    argv = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", "shipped"]
    argv += ["--n-boot", "20", "--no-plots", "--no-baselines", "--quiet", "--out", str(out)]
    assert main([*argv, "--data-dir", str(d)]) == 0
    return str(out)


def _sheng(d: Path) -> str:
    return str(d / "conformal_judge_sheng2025" / "summeval" / "4omini_relevance.csv")


def _calibrator(tmp: Path, d: Path) -> str:
    out = tmp / "fit"
    assert (
        main(["calibrate", "fit", "--ratings", _sheng(d), "--repeats", "2", "--out", str(out)]) == 0
    )
    return str(out / "calibrator.json")


Argv = Callable[[Path, Path], list[str]]
#: command -> argv (tmp_path, data_dir) -> the arguments before ``--format json``
COMMANDS: dict[str, Argv] = {
    "data agreement": lambda t, d: ["data", "agreement", "--dataset", "ragchecker_meta_eval"],
    "backends list": lambda t, d: ["backends", "list"],
    "cache stats": lambda t, d: ["cache", "stats", "--cache-file", _cache(t)],
    "data list": lambda t, d: ["data", "list"],
    "data doctor": lambda t, d: [
        "data",
        "doctor",
        str(Path(__file__).parents[1] / "fixtures" / "frameworks" / "inspect" / "graded.json"),
    ],
    "judge swap --x/--y": lambda t, d: (
        ["judge", "swap", *SWAP, BBS, "--x", "gpt-4o"]
        + ["--y", "gpt-4o-mini", "--n-boot", "20", "--out", str(t / "o")]
    ),
    "judge verdicts --choose": lambda t, d: [
        "judge",
        "verdicts",
        "--choose",
        *_judgebench(d),
        "--n-boot",
        "20",
    ],
    "decide frontier": lambda t, d: ["decide", "frontier", "--out", str(t / "o")],
    "decide drift": lambda t, d: (
        ["decide", "drift", *SWAP, "shipped:gpt-4o,gpt-4o-mini"]
        + ["--limit", "30", "--n-boot", "20"]
    ),
    "calibrate estimate --method ppi": lambda t, d: (
        ["calibrate", "estimate", "--method", "ppi", *SWAP, "shipped:gpt-4o", "--n-labelled", "30"]
    ),
    "judge verdicts": lambda t, d: ["judge", "verdicts", *_judgebench(d), "--n-boot", "20"],
    "matrix list": lambda t, d: ["matrix", "list"],
    "matrix run": lambda t, d: (
        ["matrix", "run", "--metric", "bleu", "--input", str(BYOD)]
        + ["--limit", "4", "--dry-run", "--baselines", str(t)]
    ),
    "meta-eval": lambda t, d: (
        ["meta-eval", "--dataset", "ragchecker_meta_eval"]
        + ["--scores", "shipped", "--n-boot", "20", "--no-plots", "--out", str(t / "me")]
    ),
    "report render": lambda t, d: ["report", "render", _meta_eval_dir(t, d), "--no-plots"],
    "metrics list": lambda t, d: ["metrics", "list"],
    "stats rank-clusters": lambda t, d: (
        ["stats", "rank-clusters", "--dataset", "lftqa_eval", "--scores"]
        + ["shipped", "--dimension", "faithfulness", "--metrics", "bleu,rouge,meteor"]
        + ["--n-perm", "20"]
    ),
    "stats kendall": lambda t, d: (
        ["stats", "kendall", "--dataset", "lftqa_eval", "--scores", "shipped"]
        + ["--dimension", "faithfulness", "--metrics", "bleu,rouge", "--n-perm", "20"]
    ),
    "judge swap": lambda t, d: (
        ["judge", "swap", *SWAP, BBS, "--n-boot", "20"] + ["--no-plots", "--out", str(t / "bs")]
    ),
    "metrics show": lambda t, d: ["metrics", "show", "rouge_l"],
    "calibrate fit": lambda t, d: ["calibrate", "fit", "--ratings", _sheng(d), "--repeats", "2"],
    "calibrate apply": lambda t, d: (
        ["calibrate", "apply", "--ratings", _sheng(d), "--calibrator", _calibrator(t, d)]
    ),
    "calibrate conformal": lambda t, d: (
        ["calibrate", "conformal", "--ratings", _sheng(d), "--method", "split", "--repeats", "2"]
    ),
    "calibrate selective": lambda t, d: (
        ["calibrate", "selective", "--dataset", "trust_or_escalate_jung2025"]
        + ["--judge", "gpt-4-turbo", "--out", str(t / "sel")]
    ),
    "calibrate estimate": lambda t, d: (
        ["calibrate", "estimate", "--input", str(d / "cje_arena_sample" / "fresh_draws")]
    ),
    "calibrate plan": lambda t, d: (
        ["calibrate", "plan", "--input", str(d / "cje_arena_sample" / "fresh_draws")]
        + ["--half-width", "0.03"]
    ),
    "decide alt-test": lambda t, d: (
        ["decide", "alt-test", "--dataset", "alt_test_calderon2025", "--subset", "mtbench"]
        + ["--out", str(t / "alt")]
    ),
    "decide alt-test-plan": lambda t, d: (
        ["decide", "alt-test-plan", "--reps", "2", "--n", "30", "--alt-epsilon", "0.2"]
    ),
    "judge jury": lambda t, d: (
        ["judge", "jury", "--dataset", "alt_test_calderon2025", "--subset", "mtbench"]
    ),
    "judge card": lambda t, d: (
        ["judge", "card", "--dataset", "trust_or_escalate_jung2025", "--judge", "gpt-4-turbo"]
        + ["--n-boot", "20", "--repeats", "2", "--out", str(t / "card")]
    ),
    "judge self-preference": lambda t, d: (
        ["judge", "self-preference", "--dataset", "judging_the_judges_thakur2024"]
        + ["--judge", "GPT-4", "--family", "gpt-4t", "--n-boot", "20"]
    ),
}
#: commands without --data-dir
NO_DATA_DIR = {
    "backends list",
    "cache stats",
    "metrics list",
    "metrics show",
    "matrix run",
    "report render",
}
NO_DATA_DIR |= {"judge verdicts --choose", "judge verdicts", "decide alt-test-plan"}
NO_DATA_DIR |= {"data doctor"}
#: commands that call a judge backbone (not run in the fast tier)
NEEDS_A_JUDGE = {"backends check", "judge run-bench", "judge diagnostics"}


def _json_commands() -> set[str]:
    """Every (visible) command whose ``--format`` offers json."""
    found: set[str] = set()

    def walk(p: argparse.ArgumentParser, path: list[str]) -> None:
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                visible = {c.dest for c in a._choices_actions}
                for name, sp in a.choices.items():
                    if name in visible:
                        walk(sp, [*path, name])
            elif "--format" in a.option_strings and "json" in (a.choices or ()):
                found.add(" ".join(path))

    walk(build_parser(), [])
    return found


#: the options that make a command answer another view (one command per analysis)
VIEWS = {"judge swap --x/--y", "judge verdicts --choose", "calibrate estimate --method ppi"}


def test_every_json_command_is_covered() -> None:
    assert _json_commands() == set(COMMANDS) - VIEWS | NEEDS_A_JUDGE


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_format_json_prints_one_document(
    command: str, tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*COMMANDS[command](tmp_path, data_dir), "--format", "json"]
    if command not in NO_DATA_DIR:
        argv += ["--data-dir", str(data_dir)]
    capsys.readouterr()  # what a setup step printed
    rc = main(argv)
    cap = capsys.readouterr()
    assert rc in (0, 1), cap.err  # decide drift's gate may fail (1) and still print its result
    json.loads(cap.out)  # the whole of standard output
