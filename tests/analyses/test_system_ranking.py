"""Rank clusters (greedy, as mt-metrics-eval), their renderings, and the power / rank-clusters CLIs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from metajudge.analyses.metric_vs_human.matrices import ScoreMatrices
from metajudge.analyses.system_ranking import ClusterOptions, rank_table
from metajudge.cli import main
from metajudge.reports import system_ranking as rc
from metajudge.stats import power
from metajudge.stats.clusters import rank_clusters


def _sm() -> ScoreMatrices:
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(8, 40))
    mets = {
        "good": Z + rng.normal(0, 0.3, Z.shape),
        "good2": Z + rng.normal(0, 0.32, Z.shape),
        "noise": rng.normal(size=Z.shape),
    }
    return ScoreMatrices("q", [f"s{i}" for i in range(8)], [f"i{j}" for j in range(40)], Z, mets)


def test_greedy_clusters_split_at_the_first_significant_gap() -> None:
    p = np.full((4, 4), 0.5)
    p[0, 2] = p[2, 0] = 0.01  # the third is worse than the best
    assert rank_clusters(np.array([0.9, 0.85, 0.5, 0.45]), p).tolist() == [1, 1, 2, 2]
    assert rank_clusters(np.array([0.1, np.nan]), np.full((2, 2), 0.5)).tolist() == [1, 1]


def test_rank_table_orders_and_clusters_and_renders(tmp_path: Path) -> None:
    t = rank_table(_sm(), "toy", ClusterOptions(level="global", n_resamples=199, seed=1))
    assert [r["metric"] for r in t.rows][-1] == "noise"
    assert t.rows[-1]["cluster"] > t.rows[0]["cluster"] == 1
    assert {r["cluster"] for r in t.rows[:2]} == {1}
    j = json.loads(rc.render_ranking(t, "json"))
    assert j["options"]["seed"] == 1 and j["options"]["n_resamples"] == 199
    assert "Holm over all 3 pairs" in j["multiple_comparisons"]
    assert all("p_holm" in p for p in j["pairs"])
    assert "| cluster | metric |" in rc.render_ranking(
        t, "md"
    ) and "199 resamples, seed 1" in rc.caption(t)
    assert rc.render_ranking(t, "csv").splitlines()[0].startswith("cluster,metric,correlation")
    assert "\\begin{tabular}" in rc.render_ranking(t, "tex")
    assert rc.plot_ranking(t, tmp_path / "c.png").stat().st_size > 0


def test_too_few_resamples_for_holm_are_noted() -> None:
    t = rank_table(_sm(), "toy", ClusterOptions(level="global", n_resamples=19))
    assert t.note is not None and "cannot reach" in t.note
    j = t.to_dict()
    assert j["p_floor"]["rule"] == "1/(k + 1)" and j["p_floor"]["floor"] == pytest.approx(0.05)
    assert j["p_floor"]["n_tests"] == len(j["pairs"]) and j["p_floor"]["note"] == t.note
    boot = rank_table(_sm(), "toy", ClusterOptions("global", method="boot-both", n_resamples=19))
    assert boot.p_floor.floor == pytest.approx(0.1)  # the bootstrap p's floor is 2/(B + 1)
    assert all(isinstance(p["p_at_floor"], bool) for p in boot.to_dict()["pairs"])


def test_p_floor_after_holm_over_18_comparisons() -> None:
    """Issue 25 item 10: B = 1000 and Holm over 18 tests: nothing below 0.036."""
    from metajudge.stats import PFloor

    f = PFloor.bootstrap(1000, 18)
    assert f.floor == pytest.approx(2 / 1001) and f.holm_floor == pytest.approx(36 / 1001)
    assert round(f.holm_floor, 3) == 0.036
    assert f.text(2 / 1001) == "≤0.002" and f.text(f.holm_floor, raw=2 / 1001) == "≤0.036"
    assert f.text(0.004) == "0.004" and f.note(0.05) is None
    assert "cannot fall below 0.036" in (f.note(0.01) or "")


def test_power_of_a_difference_at_r12_zero_is_not_independent_samples() -> None:
    """Issue 25 item 9: r12 = 0 gives 296 items for 0.5 vs 0.3, two independent samples 276."""
    q = 1.959963984540054 + 0.8416212335729143
    dz = np.arctanh(0.5) - np.arctanh(0.3)
    c = (-0.5 * 0.15 * (1 - 0.25 - 0.09)) / (0.75 * 0.91)
    n0 = power.n_for_correlation_difference(0.5, 0.3, 0.0)
    assert n0 == pytest.approx(2 * (1 - c) * (q / dz) ** 2 + 3, rel=1e-9)
    assert math.ceil(n0) == 296 and round(2 * (q / dz) ** 2 + 3) == 276  # independent: c = 0
    assert math.ceil(power.n_for_correlation_difference(0.5, 0.3, 0.6)) == 127
    assert power.n_for_correlation_difference(0.5, 0.5, 0.3) == float("inf")
    with pytest.raises(TypeError):
        power.n_for_correlation_difference(0.5, 0.3)  # type: ignore[call-arg]  # no default r12


def test_power_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "power", "--r", "0.3"]) == 0
    assert ": 85 (Fisher z" in capsys.readouterr().out
    assert (
        main(["stats", "power", "--r1", "0.5", "--r2", "0.3"]) == 2
    )  # r12 is required, no silent 0
    assert "give --r12" in capsys.readouterr().err
    assert main(["stats", "power", "--r1", "0.5", "--r2", "0.3", "--r12", "0"]) == 0
    assert ": 296 (Fisher z" in capsys.readouterr().out
    assert main(["stats", "power", "--r1", "0.5", "--r2", "0.3", "--r12", "0.6"]) == 0
    assert ": 127 (Fisher z" in capsys.readouterr().out
    assert main(["stats", "power", "--r", "0.3", "--r1", "0.2"]) != 0


def test_power_cli_estimates_r12_from_two_metrics(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """LFTQA-Eval's G-Eval faithfulness under gpt-4o and gpt-4o-mini correlate 0.5855 over
    2,988 responses: 131 items for 0.5 vs 0.3, not the 296 of r12 = 0."""
    base = ["stats", "power", "--r1", "0.5", "--r2", "0.3", "--data-dir", str(data_dir)]
    gv = "geval_gpt-4o_faithfulness,geval_gpt-4o-mini_faithfulness"
    assert main([*base, "--dataset", "lftqa_eval", "--scores", "shipped", "--metrics", gv]) == 0
    out = capsys.readouterr().out
    assert ": 131 (Fisher z" in out and "r12 = 0.5855 estimated" in out and "2988 responses" in out
    rc = ["--dataset", "ragchecker_meta_eval", "--scores", "shipped"]
    rc += ["--metrics", "ragchecker_correctness,ragchecker_completeness"]
    assert main([*base, *rc]) == 0
    out = capsys.readouterr().out
    assert "r12 = 0.3803 estimated" in out and "280 pairs" in out and ": 192 (Fisher z" in out
    assert main([*base, *rc, "--r12", "0.2"]) == 2  # both: refused, not one silently ignored


@pytest.mark.usefixtures("capsys")
def test_rank_clusters_cli_on_lftqa(tmp_path: Path) -> None:
    out = tmp_path / "rc.json"
    argv = ["stats", "rank-clusters", "--dataset", "lftqa_eval", "--scores", "shipped", "--dimension",
            "faithfulness", "--metrics", "bleu,rouge,meteor,bertscore", "--level", "system",
            "--n-perm", "99", "--format", "json", "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    j = json.loads(out.read_text())
    assert j["n_systems"] == 10 and len(j["rows"]) == 4 and j["options"]["level"] == "system"


def test_kendall_cli_reports_eps_and_its_optimism(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "k.json"
    argv = ["stats", "kendall", "--dataset", "lftqa_eval", "--scores", "shipped", "--dimension", "faithfulness",
            "--metrics", "bleu,rouge", "--level", "item", "--n-perm", "50", "--format", "json",
            "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    j = json.loads(out.read_text())
    assert "same pairs" in j["note"] and j["spa_permutations"] == 50
    for r in j["rows"]:
        assert r["acc23_calibrated"] >= r["acc23"] - 1e-12 and r["epsilon"] >= 0
        assert 0 <= r["spa"] <= 1 and -1 <= r["tau_b"] <= 1
