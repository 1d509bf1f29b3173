"""The decision's statistics against hand-computed values and scipy (issue 15).

ppi-python and judgy were not installed (not in the venv; not added as dev extras): PPI++ is
checked against values computed by hand from the formulas of Angelopoulos et al. 2023 (which
are ppi_py.ppi_mean_ci's), Rogan–Gladen against its closed form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from metajudge import stats
from metajudge.analyses.decide import frontier
from metajudge.analyses.decide.noninferiority import non_inferiority, verdict_of
from metajudge.stats import ppi


def test_verdict_rule_and_labels_needed() -> None:
    assert verdict_of(0.01, 0.2, 0.05) == "superior"
    assert verdict_of(-0.049, 0.2, 0.05) == "non-inferior"
    assert verdict_of(-0.3, -0.051, 0.05) == "inferior"
    assert verdict_of(-0.06, 0.0, 0.05) == "inconclusive"
    rng = np.random.default_rng(0)
    sx = rng.normal(0.5, 0.02, 2000)
    sy = sx + rng.normal(-0.04, 0.03, 2000)  # Δ ≈ −0.04: bound below −0.05 → inconclusive
    r = non_inferiority("x", "y", 0.5, 0.46, sx, sy, n=100, statistic="acc", margin=0.05)
    assert r.verdict == "inconclusive" and r.additional_labels > 0
    sd = float(np.std(sy - sx, ddof=1)) * 10
    assert r.labels_needed == pytest.approx(stats.n_for_margin(-0.04, -0.05, sd))
    assert "more human-labelled items" in r.sentence()


def test_power_formula() -> None:
    z = 1.959963984540054 + 0.8416212335729143
    assert stats.n_for_correlation(0.3) == pytest.approx((z / math.atanh(0.3)) ** 2 + 3)


def test_cochran_q_by_hand() -> None:
    r, n = [0.2, 0.5, 0.7], [40, 60, 100]
    z = np.arctanh(r)
    w = np.array(n) - 3.0
    zbar = (w * z).sum() / w.sum()
    q = float((w * (z - zbar) ** 2).sum())
    h = stats.cochran_q(r, n)
    assert h.q == pytest.approx(q) and h.df == 2
    from scipy import stats as ss

    assert h.p == pytest.approx(ss.chi2.sf(q, 2))


def test_ppi_by_hand_and_limits() -> None:
    rng = np.random.default_rng(1)
    y = rng.normal(size=50)
    f = y + rng.normal(scale=0.5, size=50)
    fu = rng.normal(size=500) + rng.normal(scale=0.5, size=500)
    lam = np.mean((y - y.mean()) * (f - f.mean())) / (
        (1 + 50 / 500) * np.var(np.concatenate([f, fu]), ddof=1)
    )
    r = ppi.ppi_mean(y, f, fu, critical="z")
    assert r.lam == pytest.approx(min(1, max(0, lam)))
    theta = y.mean() + r.lam * (fu.mean() - f.mean())
    se = math.sqrt(np.var(r.lam * fu) / 500 + np.var(y - r.lam * f) / 50)
    assert r.ppi.value == pytest.approx(theta)
    assert r.ppi.hi - r.ppi.lo == pytest.approx(2 * 1.959963984540054 * se)
    assert r.effective_n > 50  # a good judge buys labels
    r0 = ppi.ppi_mean(y, f, fu, lam=0.0, critical="z")  # λ = 0 is the human-only estimate
    assert r0.ppi.value == pytest.approx(r0.human_only.value)
    assert r0.ppi.se == pytest.approx(r0.human_only.se)


def test_rogan_gladen() -> None:
    assert ppi.rogan_gladen(0.5, 0.9, 0.8) == pytest.approx((0.5 + 0.8 - 1) / (0.9 + 0.8 - 1))
    assert ppi.rogan_gladen(0.05, 0.9, 0.8) == 0.0  # clipped
    assert math.isnan(ppi.rogan_gladen(0.5, 0.4, 0.5))  # judge no better than chance
    rng = np.random.default_rng(0)
    truth = rng.random(4000) < 0.3
    judge = np.where(truth, rng.random(4000) < 0.85, rng.random(4000) < 0.2).astype(float)
    e = ppi.rogan_gladen_ci(
        truth[:300].astype(float), judge[:300], judge[300:], rng=rng, n_resamples=500
    )
    assert e.lo <= 0.3 <= e.hi and abs(judge.mean() - 0.3) > 0.05  # raw rate is biased


def test_ppi_coverage_small_simulation() -> None:
    rng = np.random.default_rng(0)
    h = rng.normal(3, 1, 2000)
    j = 0.8 * h + rng.normal(0.5, 0.5, 2000)
    out = ppi.coverage_simulation(h, j, 50, draws=300, rng=rng)
    assert out["PPI++"]["coverage"] >= 0.9 and out["human-only"]["coverage"] >= 0.9
    assert out["PPI++"]["mean_width"] < out["human-only"]["mean_width"]
    assert out["judge-only"]["coverage"] < 0.5


def test_frontier_dominance() -> None:
    P = frontier.JudgePoint
    pts = [
        P("cheap-good", 0.70, 1.0, 2000),
        P("dear-bad", 0.60, 5.0, 2000),
        P("dear-same", 0.705, 9.0, 2000),
        P("free?", 0.5, None, 10),
    ]
    fr = frontier.pareto_frontier(pts, frontier.independent_better, cost_unit="$", test="z")
    assert fr.dominated_by["dear-bad"] == ["cheap-good"]
    assert fr.dominated_by["dear-same"] == []  # not significantly better, so not dominated
    assert fr.frontier == ["cheap-good", "dear-same"] and fr.unplaced == ["free?"]
