"""Progress bars (metajudge/progress.py): every long step of ``meta-eval`` draws a bar with rate
and ETA on a terminal, and nothing is drawn when stderr is not one, or with --quiet / --format json."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.progress import Steps

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "byod" / "pairwise.jsonl"
#: a tqdm bar: "desc:  50%|█████     | 4/8 [00:01<00:01, 3.9line/s]" (elapsed<ETA, rate)
BAR = r"{}(, pass \d+)?: +\d+%\|[^|]*\| \d+/\d+ \[\d\d:\d\d<[\d:?]+, +[\d.?]+{}/s\]"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _args(out: Path, *extra: str) -> list[str]:
    return [
        "meta-eval",
        "--input",
        str(FIXTURE),
        "--metrics",
        "rouge_l",
        "--n-boot",
        "50",
        "--no-plots",
        "--out",
        str(out),
        *extra,
    ]


def test_meta_eval_bars_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert main(_args(tmp_path / "run")) == 0
    text = term.getvalue()
    for desc, unit in [("load", "line"), ("rouge_l", "resp"), ("bootstrap", "resample")]:
        assert re.search(BAR.format(desc, unit), text), (desc, text)
    assert re.search(BAR.format("report", "view"), text), text
    assert re.search(r"bootstrap, pass 2: ", text), text  # one bar per pass over the resamples


@pytest.mark.parametrize("extra", [(), ("--quiet",), ("--format", "json")])
def test_meta_eval_draws_nothing_elsewhere(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
) -> None:
    if extra:  # a terminal, but the bars are asked off
        term = _Terminal()
        monkeypatch.setattr(sys, "stderr", term)
    assert main(_args(tmp_path / "run", *extra)) == 0
    err = term.getvalue() if extra else capsys.readouterr().err
    assert "%|" not in err and "\r" not in err and "bootstrap" not in err, err


def test_steps_start_a_bar_per_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    steps = Steps()
    cb = steps.step("passes", "resample")
    assert cb is not None
    for _ in range(3):
        for done in (40, 80, 100):
            cb(done, 100)
    steps.close()
    text = term.getvalue()
    assert "passes: " in text and "passes, pass 3: " in text and "pass 4" not in text
    assert Steps(enabled=False).step("x") is None
