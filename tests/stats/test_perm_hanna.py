"""Perm-Both on two of metajudge's own metrics on HANNA vs nlpstats: the same p, seed for seed.

nlpstats draws its swaps from numpy's global RandomState (``rand(m, 1) > .5`` for systems, then
``rand(1, n) > .5`` for inputs, per permutation); those draws are replayed into metajudge's
``masks``, so both count the same permutations. Across 5 seeds the p-values agree within 0.01
(they differ only by metajudge's add-one rule, (c + 1)/(k + 1) against nlpstats' c/k).
"""

from __future__ import annotations

import numpy as np
import pytest

from metajudge.stats import resampling_tests as rt

nlp = pytest.importorskip("nlpstats.correlations")


def _hanna(load, own: bool):  # type: ignore[no-untyped-def]
    from metajudge.analyses.metric_vs_human.matrices import score_matrices
    from metajudge.scores.scoring import score_dataset
    from metajudge.scores.shipped import shipped_scores

    ds = load("hanna")
    if own:  # metajudge's own BLEU and ROUGE-L (about 80 s on 2 cores)
        names = ["bleu", "rouge_l"]
        rows = score_dataset(ds, names, progress=False)
    else:  # the BLEU and ROUGE-L columns HANNA ships
        names = ["hanna.bleu", "hanna.rouge-l_f-score"]
        rows = shipped_scores(ds, metrics=names)
    sm = score_matrices(ds.records, rows, "coherence", names)
    X, Y, Z = sm.metrics[names[0]], sm.metrics[names[1]], sm.human
    bad = ~(np.isfinite(X) & np.isfinite(Y) & np.isfinite(Z))  # nlpstats: same NaN cells
    return tuple(np.where(bad, np.nan, a) for a in (X, Y, Z))


@pytest.mark.slow
@pytest.mark.parametrize("level", ["global", "system"])
def test_perm_both_on_hanna_own_metrics_matches_nlpstats(load, level: str) -> None:  # type: ignore[no-untyped-def]
    _check(*_hanna(load, own=True), level)


@pytest.mark.parametrize("level", ["global", "system"])
def test_perm_both_on_hanna_shipped_columns_matches_nlpstats(load, level: str) -> None:  # type: ignore[no-untyped-def]
    _check(*_hanna(load, own=False), level)


def _check(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str) -> None:
    m, n = Z.shape
    k = 300
    lv = "global" if level == "global" else "system"
    for seed in range(5):
        np.random.seed(seed)
        ref = nlp.permutation_test(X, Y, Z, lv, "pearson", "both", n_resamples=k)
        np.random.seed(seed)
        S, T = np.zeros((k, m)), np.zeros((k, n))
        for b in range(k):
            S[b] = np.random.rand(m) > 0.5
            T[b] = np.random.rand(n) > 0.5
        got = rt.perm_test(X, Y, Z, level=level, masks=(S, T))
        assert abs(got.p_value - ref.pvalue) <= 0.01
        assert got.p_value == pytest.approx((ref.pvalue * k + 1) / (k + 1), abs=1e-9)
