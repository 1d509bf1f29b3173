"""Scale paths of the meta-evaluation (issue 17): shared permutation swaps, CI row limits."""

from __future__ import annotations

import numpy as np
import pytest

import metajudge as mj
from metajudge import stats as st
from metajudge.engine.moments import TILE_ROWS
from metajudge.stats import intervals


@pytest.mark.parametrize("per_chunk", [None, 1, 2])
def test_shared_permutation_tests_are_the_swap_test_with_those_swaps(
    monkeypatch: pytest.MonkeyPatch, per_chunk: int | None
) -> None:
    """Every test is the swap test with the shared swaps, whether the metrics' per-item sums
    are taken all at once or in chunks of 1 or 2 metrics (each chunk the same swaps, the
    generator left where one draw leaves it)."""
    from metajudge.engine import moments

    if per_chunk is not None:
        monkeypatch.setattr(moments, "PASS_ITEM_ELEMENTS", 3 * 45 * per_chunk)
    rng = np.random.default_rng(3)
    n_items = 45
    groups = np.repeat(np.arange(n_items), 2)
    y = rng.integers(-2, 3, groups.size).astype(float)
    xs = [y + rng.normal(0, s, y.size) for s in (1.0, 1.5, 3.0)]
    n_perm = 2 * TILE_ROWS + 5
    pairs = [(0, 1), (0, 2), (1, 2)]
    drawn = np.random.default_rng(8)
    got = st.shared_permutation_tests(
        [("pearson", xs, y), ("spearman", xs, y)],
        pairs,
        groups=groups,
        n_resamples=n_perm,
        rng=drawn,
    )
    # the same swaps, drawn explicitly: one bit per item per permutation, 64 to a word
    gen = np.random.default_rng(8).bit_generator
    words = -(-n_items // 64)
    swaps = []
    for p0 in range(0, n_perm, TILE_ROWS):
        rows = min(TILE_ROWS, n_perm - p0)
        raw = gen.random_raw(rows * words).reshape(rows, words).view(np.uint8)
        swaps.append(np.unpackbits(raw, axis=1, count=n_items, bitorder="little"))
    swap = np.concatenate(swaps)[:, groups].astype(bool)
    assert drawn.bit_generator.random_raw() == gen.random_raw()
    for k, stat in enumerate(("pearson", "spearman")):
        rank = st.correlation._rankdata if stat == "spearman" else (lambda a: a)
        A = [(rank(x) - rank(x).mean()) / rank(x).std() for x in xs]
        ya = rank(y)
        for (i, j), res in zip(pairs, got[k], strict=True):
            X1, X2 = np.where(swap, A[j], A[i]), np.where(swap, A[i], A[j])
            d = np.array([st.pearson(p, ya) - st.pearson(q, ya) for p, q in zip(X1, X2)])
            obs = st.pearson(A[i], ya) - st.pearson(A[j], ya)
            p = (1 + (np.abs(d) >= abs(obs) - 1e-12).sum()) / (1 + n_perm)
            assert res.diff == pytest.approx(obs, abs=1e-12)
            assert res.p_value == pytest.approx(p, abs=1e-12), (stat, i, j)


def _small(n: int = 60) -> tuple:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[3] / "benchmarks"))
    from bench_scale import synthetic

    return synthetic(n, 3)


def test_rank_ci_row_limits_reach_cells_matched_reference_and_comparisons() -> None:
    ds, rows = _small()
    proto = mj.Protocol(n_boot=50, kendall_ci_max_rows=10, spearman_ci_max_rows=10)
    res = mj.meta_evaluate(ds, list(rows), proto).data
    cell = res["cells"][0]["stats"]
    for s in ("kendall", "spearman"):
        # above the limit the value's CI is its Fisher-z CI, named (issue 43: never a bare value)
        assert cell[s]["fisher_ci"] is not None and cell[s]["ci"] == cell[s]["fisher_ci"]
        assert cell[s]["ci_method"] == intervals.FISHER_METHODS[s]
        assert f"{s}_ci_max_rows" in cell[s]["ci_note"]
        matched = res["ceiling"][0]["matched"]["m0"][s]
        assert matched["ci"] == matched["fisher_ci"] and f"{s}_ci_max_rows" in matched["ci_note"]
        # the inter-human reference itself: the same limit, the same note (issue 29)
        human = res["ceiling"][0]["stats"][s]
        assert human["ci"] == human["fisher_ci"] and human["ci_note"] == matched["ci_note"]
        assert human["ci_method"] == intervals.FISHER_METHODS[s]
        assert human["value"] is not None
        # the note's "see fisher_ci" points at a Fisher-z CI on the pairs of one comparison
        n_pairs = res["ceiling"][0]["n_pairs"]
        for e in (human, matched):
            want = intervals.fisher_interval(s, e["value"], n_pairs, 0.95).ci
            assert e["fisher_ci"] == pytest.approx(want, abs=1e-12)
            assert e["fisher_ci"][0] < e["value"] < e["fisher_ci"][1]
    assert cell["pearson"]["ci"] is not None
    assert res["ceiling"][0]["stats"]["pearson"]["ci"] is not None
    assert "ci_note" not in res["ceiling"][0]["stats"]["pearson"]
    sp = [c for c in res["comparisons"] if c["statistic"] == "spearman"]
    assert sp and all("p_bootstrap" not in c and c["p_permutation"] is not None for c in sp)
    assert all("spearman_ci_max_rows" in c["ci_note"] for c in sp)
    assert res["options"]["spearman_ci_max_rows"] == 10
    # under the limits the bootstrap CIs are there
    res2 = mj.meta_evaluate(*_small(), mj.Protocol(n_boot=50)).data
    assert res2["ceiling"][0]["matched"]["m0"]["kendall"]["ci"] is not None
    for s in ("kendall", "spearman"):
        human = res2["ceiling"][0]["stats"][s]
        assert human["ci"] is not None and "ci_note" not in human and "fisher_ci" not in human
        assert human["value"] == res["ceiling"][0]["stats"][s]["value"]
    assert res2["cells"][0]["stats"]["spearman"]["ci"] is not None
    # defaults: Spearman's bootstrap at every size (issue 43; was up to 200,000 rows), Kendall's
    # up to 100,000 (was 5,000)
    assert mj.Protocol().spearman_ci_max_rows is None
    assert res2["options"]["kendall_ci_max_rows"] == 100_000
    for s in ("pearson", "spearman", "kendall"):
        assert res2["cells"][0]["stats"][s]["ci_method"] == intervals.PERCENTILE


def test_table_shows_the_fisher_ci_of_a_value_above_the_row_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # the rendered table: every rank correlation with an interval and, where it is not the
    # bootstrap, its method (issue 43)
    from metajudge.reports.tables import to_markdown

    ds, rows = _small()
    proto = mj.Protocol(n_boot=50, kendall_ci_max_rows=10)
    md = to_markdown(mj.meta_evaluate(ds, list(rows), proto))
    main, other = [ln for ln in md.splitlines() if ln.startswith("| m0 ")][:2]
    cells = [c.strip() for ln in (main, other) for c in ln.strip("|").split("|")[1:]]
    assert all("[" in c for c in cells), (main, other)  # every value with its interval
    assert "(Fisher z)" not in main  # Pearson, Spearman: the bootstrap (stated under the table)
    assert "(Fisher z)" in other.split("|")[2], other  # Kendall's tau_b, the first other column


@pytest.mark.parametrize("flush", [2, 1 << 16])
def test_score_rows_index_into_array_columns(monkeypatch: pytest.MonkeyPatch, flush: int) -> None:
    from metajudge.analyses.metric_vs_human.aligned import ScoreColumn, _Pending, index_score_rows
    from metajudge.errors import InputError

    monkeypatch.setattr(_Pending, "FLUSH", flush)
    rows = [
        {"key": "a", "metric": "m", "score": 1},
        {"key": "b", "metric": "m", "score": float("nan"), "error": "timeout"},
        {"key": "z", "metric": "m", "score": 2.0},
        {"key": "c", "metric": "m", "score": 3.5},
    ]
    cols, info = index_score_rows(rows, ["a", "b", "c", "d"])
    col = cols["m"]
    assert isinstance(col, ScoreColumn)
    assert dict(col) == {"a": 1.0, "b": None, "c": 3.5} and "d" not in col and len(col) == 3
    assert info["m"].n_unmatched == 1 and info["m"].errors == {"timeout": 1}
    with pytest.raises(InputError) as e:
        index_score_rows([*rows, {"key": "b", "metric": "m", "score": 0.5}], ["a", "b", "c"])
    assert e.value.field == "scores[4]" and "duplicate score for 'b'" in str(e.value)


def test_resampled_row_sums_dense_and_lazy_agree() -> None:
    from metajudge.engine.moments import resampled_row_sums
    from metajudge.engine.resample import Resamples

    rng = np.random.default_rng(5)
    items = rng.integers(0, 25, 80)
    V = rng.normal(size=(80, 3))
    dense = st.bootstrap_weights(25, 40, np.random.default_rng(9))
    ref = dense[:, items] @ V
    lazy = resampled_row_sums(Resamples.draw(25, 40, np.random.default_rng(9)), items, V)
    np.testing.assert_allclose(resampled_row_sums(dense, items, V), ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(lazy, ref, rtol=0, atol=1e-12)
