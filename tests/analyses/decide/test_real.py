"""The backbone decision on the real data (issue 15 "Done when"); numbers pinned for regressions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from metajudge.cli import main
from metajudge.data.registry import Dataset
from tests.conftest import Load

BBS = ["gpt-4o", "gpt-4o-mini", "Meta-Llama-3.1-70B-Instruct-Turbo"]


@pytest.fixture(scope="module")
def lftqa(data_dir: Path):  # type: ignore[no-untyped-def]
    from metajudge.runs.backbone_swap import load_swap_data

    return load_swap_data("lftqa_eval", "geval_faithfulness", external=BBS, data_dir=data_dir)


# y: (verdict, Δ, CI, τ_xy, τ CI, flip rate)
LFTQA = {
    "gpt-4o-mini": ("inferior", -0.147, (-0.194, -0.100), 0.956, (0.778, 1.0), 0.328),
    "Meta-Llama-3.1-70B-Instruct-Turbo": (
        "inconclusive",
        -0.062,
        (-0.104, -0.023),
        0.956,
        (0.778, 1.0),
        0.278,
    ),
}


# y: (Q, fetaqa CI width) with 150 inputs per slice (issue 25 item 5: 1.48 and 0.070 when the
# 1,495 responses of fetaqa were counted as independent; a cluster bootstrap over inputs: 0.143)
SLICES = {"gpt-4o-mini": (0.146, 0.137), "Meta-Llama-3.1-70B-Instruct-Turbo": (0.258, 0.085)}


def _check_slices(sl: dict, q: float, width: float) -> None:
    from metajudge import stats

    assert sl["cochran_q"]["q"] == pytest.approx(q, abs=2e-3)
    assert sl["cochran_q"]["n"] == "inputs per slice" and "inputs" in sl["method"]
    fetaqa = sl["slices"][0]
    assert fetaqa["slice"] == "fetaqa" and fetaqa["n_inputs"] == fetaqa["n"] == 150
    assert fetaqa["n_responses"] == 1495
    assert fetaqa["ci"][1] - fetaqa["ci"][0] == pytest.approx(width, abs=0.01)
    lo, hi = stats.fisher_z_ci(fetaqa["pearson_xy"], 1495)  # what responses-as-units would give
    assert fetaqa["ci"][1] - fetaqa["ci"][0] > 1.5 * (hi - lo)


@pytest.mark.parametrize("y", list(LFTQA))
def test_lftqa_can_y_replace_gpt4o(lftqa, y: str) -> None:  # type: ignore[no-untyped-def]
    from metajudge.analyses.decide.swap_decision import decide_swap

    data, _, records = lftqa
    sub = {r.id: r.meta["subset"] for r in records}
    res = decide_swap(
        data,
        "gpt-4o",
        y,
        rng=np.random.default_rng(0),
        n_boot=1000,
        margin=0.05,
        slices=[sub[i] for i in data.view.items],
    )
    verdict, delta, ci, tau, tau_ci, fr = LFTQA[y]
    ni = res.non_inferiority
    assert ni.verdict == verdict and ni.margin == 0.05 and ni.n == 300
    assert ni.delta == pytest.approx(delta, abs=5e-4)
    assert ni.ci == pytest.approx(ci, abs=5e-3)
    lb = res.leaderboard
    assert lb["tau_xy"]["value"] == pytest.approx(tau, abs=5e-4)
    assert lb["tau_xy"]["ci"] == pytest.approx(tau_ci, abs=0.03)
    assert len(lb["swapped_pairs"]) == 1 and lb["n_significant_swaps"] == 0
    assert res.decisions["flip_rate"] == pytest.approx(fr, abs=5e-4)
    assert res.slices is not None and res.slices["cochran_q"]["df"] == 1
    _check_slices(res.slices, *SLICES[y])
    j = res.to_dict()
    json.dumps(j, allow_nan=False)
    assert j["verdict"].startswith(f"Can {y} replace gpt-4o? {verdict.capitalize()}")


def test_cli_decide_swap_report(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(
        ["judge", "swap", "--dataset", "lftqa_eval", "--metric", "geval_faithfulness",
         "--scores", "shipped:" + ",".join(BBS), "--x", "gpt-4o", "--y", "gpt-4o-mini", "--n-boot", "200",
         "--data-dir", str(data_dir), "--out", str(tmp_path)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    first = out.splitlines()[2]
    assert first.startswith("**Can gpt-4o-mini replace gpt-4o? Inferior at margin δ = 0.05")
    assert "Cochran's Q" in out and "Wellek 2010" in out and "Kendall τ_b X vs Y" in out
    assert (
        json.loads((tmp_path / "decision.json").read_text())["non_inferiority"]["verdict"]
        == "inferior"
    )


JB_ACC = {
    "o1-mini-2024-09-12": 0.6571,
    "Skywork/Skywork-Reward-Gemma-2-27B": 0.6429,
    "internlm/internlm2-20b-reward": 0.6343,
    "Skywork/Skywork-Reward-Llama-3.1-8B": 0.6229,
    "Ray2333/GRM-Gemma-2B-rewardmodel-ft": 0.5943,
}


def test_judgebench_five_judges(data_dir: Path) -> None:
    from metajudge.runs.decide import run_decide_verdicts

    files = sorted((data_dir / "judgebench" / "outputs").glob("*.jsonl"))
    res = run_decide_verdicts(files, n_boot=1000)
    assert [r["judge"] for r in res.ranking] == list(JB_ACC)
    for r in res.ranking:
        assert r["accuracy"] == pytest.approx(JB_ACC[r["judge"]], abs=1e-4) and r["n"] == 350
    assert res.best == "o1-mini-2024-09-12"
    assert [n.verdict for n in res.against_best] == ["inconclusive"] * 4
    assert res.against_best[0].delta == pytest.approx(-0.0143, abs=1e-4)
    assert [m["p"] for m in res.mcnemar] == pytest.approx([0.709, 0.536, 0.303, 0.080], abs=1e-3)
    fr = res.frontier
    assert fr is not None and not any(
        fr.dominated_by.values()
    )  # no judge is significantly beaten more cheaply
    assert (
        fr.frontier[0] == "Ray2333/GRM-Gemma-2B-rewardmodel-ft"
        and fr.frontier[-1] == "o1-mini-2024-09-12"
    )


def test_alpaca_eval_frontier_and_quirk(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from metajudge.runs.decide import run_frontier_table

    fr = run_frontier_table(data_dir=data_dir)
    assert any(
        "weighted_alpaca_eval_gpt-4o-mini-2024-07-18" in n and "fraction" in n for n in fr.notes
    )
    names = [p.name for p in fr.points]
    assert "weighted_alpaca_eval_gpt-4o-mini-2024-07-18" not in names and len(names) == 31
    assert sorted(fr.unplaced) == ["Self-taught-llama3.1-70B-dpo", "guanaco_33b"]
    dominated = sorted(k for k, v in fr.dominated_by.items() if v)
    assert len(dominated) == 10 and "humans" in dominated and "chatgpt" in dominated
    assert fr.frontier[:3] == ["longest", "alpaca_eval_llama3_70b_fn", "claude"]
    assert fr.frontier[-1] == "alpaca_eval_gpt4_fn"
    rc = main(["decide", "frontier", "--data-dir", str(data_dir), "--out", str(tmp_path)])
    assert rc == 0 and "known quirk" in capsys.readouterr().out
    assert (tmp_path / "frontier.png").stat().st_size > 0


def test_ppi_coverage_lftqa_small(lftqa) -> None:  # type: ignore[no-untyped-def]
    """A fast version of benchmarks/ppi_coverage.py (n = 50, 200 draws)."""
    from metajudge import stats
    from metajudge.stats.ppi import coverage_simulation

    data, _, _ = lftqa
    h, j = stats.annotator_mean(data.human_resp), data.scores[0]
    m = np.isfinite(h) & np.isfinite(j)
    out = coverage_simulation(h[m], j[m], 50, draws=200, rng=np.random.default_rng(50))
    assert out["PPI++"]["coverage"] >= 0.9 and out["human-only"]["coverage"] >= 0.9
    assert out["judge-only"]["coverage"] == 0.0  # G-Eval's mean is biased
    assert out["PPI++"]["mean_width"] < 0.8 * out["human-only"]["mean_width"]
    assert out["PPI++"]["mean_ess_gain"] > 1.5


def _score_file(path: Path, data_dir: Path, ds: Dataset, backbone: str) -> Path:
    from metajudge.scores.swap_sources import external_scores

    scores, _ = external_scores(ds, [backbone], dimension="faithfulness", data_dir=data_dir)
    from metajudge.data.formats import split_response_key

    rows = ["item,system,score"]
    for k, v in scores[backbone].items():
        item, system = split_response_key(k)
        rows.append(f"{item},{system},{'' if v is None else v}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_drift_gate_exit_codes(data_dir: Path, load: Load, tmp_path: Path) -> None:
    """A rerun of the same judge passes (exit 0); another backbone on the same anchors fails (1)."""
    f = _score_file(tmp_path / "g.csv", data_dir, load("lftqa_eval"), "gpt-4o")
    base = ["decide", "drift", "--dataset", "lftqa_eval", "--metric", "geval_faithfulness",
            "--limit", "50", "--n-boot", "200", "--data-dir", str(data_dir)]  # fmt: skip
    assert main([*base, "--scores", f"before={f}:score", "--scores", f"after={f}:score"]) == 0
    assert main([*base, "--scores", "shipped:gpt-4o,gpt-4o-mini"]) == 1
