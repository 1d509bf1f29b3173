"""``calibrate estimate --method ppi|rogan-gladen`` reproduces ``decide ppi`` (removed in 0.3.0):
the numbers below are what ``decide ppi`` printed with ``--format json`` on 7aa1c6b, the same
arguments each (``decide ppi`` → ``calibrate estimate --method ppi``); and the options of one
method are refused with the other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

LFTQA = ["--dataset", "lftqa_eval", "--metric", "geval_faithfulness", "--scores", "shipped:gpt-4o"]
TOE = ["--dataset", "trust_or_escalate_jung2025", "--metric", "geval_faithfulness"]
TOE += ["--scores", "shipped:gpt-4-turbo", "--n-labelled", "60", "--seed", "2"]
_PPI_TOE = [0.49573238801450453, 0.39495999764513107, 0.596504778383878]
_HUMAN_TOE = [0.48333333333333334, 0.35424141463321546, 0.6124252520334512]
_JUDGE_TOE = [0.502, 0.4581742235815896, 0.5458257764184103]
_TOE = {
    "ppi": _PPI_TOE,
    "human_only": _HUMAN_TOE,
    "judge_only": _JUDGE_TOE,
    "lam": 0.5845268635409278,
}
_TOE |= {"n": 60, "N": 440, "effective_n": 98.46145319684892, "full_human_mean": 0.518}

#: (arguments after ``--method ppi``, decide ppi's numbers: [value, lo, hi] per estimate)
BEFORE = {
    "lftqa n=50 seed 1": (
        [*LFTQA, "--n-labelled", "50", "--seed", "1"],
        {
            "ppi": [3.8066754137259537, 3.4859394538628217, 4.127411373589086],
            "human_only": [3.8, 3.4176522350799914, 4.182347764920008],
            "judge_only": [3.673163533223289, 3.621905928372546, 3.7244211380740317],
            "lam": 0.516480998108719,
            "n": 50,
            "N": 2938,
            "effective_n": 71.05453591629357,
            "full_human_mean": 3.7918340026773762,
        },
    ),
    "lftqa one system, z, alpha 0.1": (
        [*LFTQA, "--n-labelled", "40", "--seed", "3", "--estimate-system", "GPT-4o"]
        + ["--critical", "z", "--alpha", "0.1"],
        {
            "ppi": [4.6625, 4.541253045388652, 4.783746954611347],
            "human_only": [4.6625, 4.541253045388652, 4.783746954611347],
            "judge_only": [4.403364214181693, 4.3270687355398865, 4.479659692823499],
            "lam": 0.0,
            "n": 40,
            "N": 260,
            "effective_n": 40.0,
            "full_human_mean": 4.526666666666666,
        },
    ),
    "pairwise, binary: Rogan-Gladen beside": (
        TOE,
        _TOE | {"rogan_gladen": [0.5151692214296555, 0.3447984749455337, 0.6806778455284552]},
    ),
    "pairwise, binary, --n-boot 500": (
        [*TOE, "--n-boot", "500"],
        _TOE | {"rogan_gladen": [0.5151692214296555, 0.36583925705813086, 0.7073459238612542]},
    ),
}


def _run(argv: list[str], data_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main([*argv, "--data-dir", str(data_dir), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("case", sorted(BEFORE))
def test_method_ppi_reproduces_decide_ppi(
    case: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, want = BEFORE[case]
    j = _run(["calibrate", "estimate", "--method", "ppi", *argv], data_dir, capsys)
    assert j["method"] == "ppi"
    for key, w in want.items():
        got = [j[key][k] for k in ("value", "lo", "hi")] if isinstance(w, list) else j[key]
        assert got == pytest.approx(w, rel=1e-12, abs=1e-15), key


def test_method_rogan_gladen_leads_with_it(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same numbers, Rogan–Gladen first; refused on data that is not 0/1."""
    j = _run(["calibrate", "estimate", "--method", "rogan-gladen", *TOE], data_dir, capsys)
    assert j["method"] == "rogan-gladen"
    rg = [j["rogan_gladen"][k] for k in ("value", "lo", "hi")]
    assert rg == pytest.approx(BEFORE["pairwise, binary: Rogan-Gladen beside"][1]["rogan_gladen"])
    argv = ["calibrate", "estimate", "--method", "rogan-gladen", *TOE, "--data-dir", str(data_dir)]
    assert main(argv) == 0
    assert capsys.readouterr().out.split("\n")[2].startswith("**Rogan–Gladen 0.515 [0.345, 0.681]")
    argv = ["calibrate", "estimate", "--method", "rogan-gladen", *LFTQA, "--n-labelled", "30"]
    assert main([*argv, "--data-dir", str(data_dir)]) == 2
    assert "rogan-gladen needs 0/1 human labels" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("method", "extra", "refused"),
    [
        ("aipw", ["--n-labelled", "5"], "--n-labelled goes with --method ppi or rogan-gladen"),
        ("aipw", ["--critical", "z"], "--critical goes with --method ppi or rogan-gladen"),
        ("aipw", ["--tie-band", "0.5"], "--tie-band goes with --method ppi or rogan-gladen"),
        ("ppi", ["--n-labelled", "5", "--cluster-field", "id"], "--cluster-field goes with"),
    ],
)
def test_the_options_of_one_method_are_refused_with_the_other(
    method: str, extra: list[str], refused: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--dataset", "lftqa_eval", "--scores", "shipped:gpt-4o", "--dimension", "faithfulness"]
    assert main(["calibrate", "estimate", "--method", method, *data, *extra]) == 2
    assert refused in capsys.readouterr().err


def test_method_ppi_refuses_a_cje_folder(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = data_dir / "cje_arena_sample" / "fresh_draws"
    argv = ["calibrate", "estimate", "--method", "ppi", "--input", str(folder)]
    assert main([*argv, "--n-labelled", "30"]) == 2
    assert "a CJE folder goes with --method aipw" in capsys.readouterr().err
