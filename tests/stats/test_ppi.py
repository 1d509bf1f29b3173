"""``metajudge decide ppi`` and the drift gate's per-response statistics (fast; real data)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from metajudge.cli import main
from tests.conftest import Load

PPI = ["decide", "ppi", "--dataset", "lftqa_eval", "--metric", "geval_faithfulness",
       "--scores", "shipped:gpt-4o"]  # fmt: skip


def test_ppi_cli_lftqa_geval(data_dir: Path, tmp_path: Path) -> None:
    """G-Eval (gpt-4o) scores on all 2,988 responses, 50 human labels drawn with seed 1."""
    args = [*PPI, "--n-labelled", "50", "--seed", "1", "--data-dir", str(data_dir)]
    assert main([*args, "--out", str(tmp_path), "--format", "json"]) == 0
    j = json.loads((tmp_path / "ppi.json").read_text())
    assert j["n"] == 50 and j["N"] == 2938 and j["n_unscored"] == 0
    assert j["full_human_mean"] == pytest.approx(3.792, abs=5e-4)
    assert j["ppi"]["value"] == pytest.approx(3.807, abs=5e-4)
    assert j["judge_only"]["value"] == pytest.approx(3.673, abs=5e-4)
    assert j["covers_full"] == {"PPI++": True, "human-only": True, "judge-only": False}
    assert j["ess_gain"] > 1.3 and j["lam"] == pytest.approx(0.516, abs=5e-4)
    assert (j["ppi"]["hi"] - j["ppi"]["lo"]) < (j["human_only"]["hi"] - j["human_only"]["lo"])
    md = (tmp_path / "ppi.md").read_text()
    assert md.startswith("# Prediction-powered estimate") and "PPI++ 3.807" in md
    # λ̂ = Cov(Y, f) / ((1 + n/N)·Var(f ∪ f̃)): f = f̃ = Y gives (1/2)·(n−1)/n·2n/(2n−1) = 19/40
    from metajudge.stats.ppi import ppi_mean

    lab = np.random.default_rng(0).normal(size=10)
    assert ppi_mean(lab, lab, lab).lam == pytest.approx(19 / 40)


def test_ppi_fraction_and_system(data_dir: Path, capsys: pytest.CaptureFixture) -> None:
    base = [*PPI, "--data-dir", str(data_dir), "--format", "json"]
    assert main([*base, "--labelled-fraction", "0.05"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["n"] == round(0.05 * 2988)
    assert main([*base, "--n-labelled", "30", "--estimate-system", "nosuchsystem"]) == 2


@pytest.mark.parametrize(
    "extra",
    [
        ["--n-labelled", "5", "--labelled-fraction", "0.1"],  # both
        [],  # neither
        ["--n-labelled", "1"],  # too few
        ["--n-labelled", "5000"],  # more than there are
    ],
)
def test_ppi_refusals(extra: list[str], data_dir: Path) -> None:
    assert main([*PPI, "--data-dir", str(data_dir), *extra]) == 2


def test_ppi_two_judges_refused(data_dir: Path) -> None:
    args = [*PPI[:-1], "gpt-4o,gpt-4o-mini", "--n-labelled", "20", "--data-dir", str(data_dir)]
    assert main(args) == 2


def test_rogan_gladen_on_binary_labels() -> None:
    from metajudge.stats.ppi import ppi_on_labels

    rng = np.random.default_rng(3)
    h = (rng.random(600) < 0.3).astype(float)
    j = np.where(rng.random(600) < 0.85, h, 1 - h)  # a judge with TPR = TNR ≈ 0.85
    out = ppi_on_labels(h, j, 150, rng=np.random.default_rng(4), n_boot=300)
    rg = out["rogan_gladen"]
    assert rg["lo"] <= out["full_human_mean"] <= rg["hi"] and out["covers_full"]["Rogan-Gladen"]


def _pair_data(load: Load, after: float) -> object:
    from metajudge.analyses.backbone_swap import build_swap_data
    from metajudge.data.formats import response_key

    recs = load("lftqa_mitigation_pradhumant").records[:20]
    keys = [response_key(r.id, s) for r in recs for s in ("a", "b")]
    scores = {"before": dict.fromkeys(keys, 1.0), "after": dict.fromkeys(keys, after)}
    return build_swap_data(
        recs, scores, dimension="faithfulness", metric="geval_faithfulness", dataset="m"
    )


def test_drift_change_rate_when_every_pair_ties(load: Load) -> None:
    """A judge that gives one score to all (every pair a tie) has no flips (n/a) — the change
    rate still sees the drift."""
    from metajudge.analyses.decide.drift import drift

    res = drift(_pair_data(load, 5.0), rng=np.random.default_rng(0), n_boot=200)  # type: ignore[arg-type]
    assert not res.passed and res.reasons[0].startswith("change rate 1.000")
    assert res.n_decisive == 0 and res.to_dict()["flip_rate"] is None
    assert res.decision_change["value"] == 0.0 and res.shift["value"] == 4.0
    same = drift(_pair_data(load, 1.0), rng=np.random.default_rng(0), n_boot=200)  # type: ignore[arg-type]
    assert same.passed and same.change["value"] == 0.0 and same.shift["p"] == 1.0
    assert "PASS" in same.sentence()


def test_swap_report_ppi_section(data_dir: Path, tmp_path: Path) -> None:
    """``judge swap --x X --y Y --ppi-labelled N``: the decision report carries the PPI section for Y."""
    args = ["judge", "swap", "--dataset", "lftqa_eval", "--metric", "geval_faithfulness",
            "--scores", "shipped:gpt-4o,gpt-4o-mini", "--x", "gpt-4o", "--y", "gpt-4o-mini",
            "--n-boot", "50", "--ppi-labelled", "100", "--data-dir", str(data_dir),
            "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    p = json.loads((tmp_path / "decision.json").read_text())["ppi"]
    assert p["judge"] == "gpt-4o-mini" and p["n"] == 100
    assert p["covers_full"]["PPI++"] and not p["covers_full"]["judge-only"]
    assert (
        "## Estimates with the candidate as the judge (PPI)"
        in (tmp_path / "decision.md").read_text()
    )


def test_estimate_system_is_the_one_spelling(capsys: pytest.CaptureFixture) -> None:
    """``decide ppi --estimate-system`` estimates that system; the old ``--system`` (removed in
    0.3.0) is refused: ``--system`` is the framework files' option elsewhere."""
    from metajudge.cli import build_parser

    argv = ["decide", "ppi", "--dataset", "x", "--metric", "m", "--n-labelled", "3"]
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--system", "s"])
    capsys.readouterr()
    assert build_parser().parse_args([*argv, "--estimate-system", "s"]).estimate_system == "s"
