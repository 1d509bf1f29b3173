"""Metric vs metric: is one metric's correlation with humans higher than another's?

Per dimension and pair of metrics, for Pearson and Spearman: the difference of the two
correlations with a paired bootstrap CI and p-value on the shared item resamples (Koehn 2004;
Deutsch, Dror & Roth 2021; p-value: :func:`~metajudge.stats.bootstrap_p_value`), a
paired permutation test (mt-metrics-eval's PermutationSigTest) and Williams' test (Pearson;
Graham & Baldwin 2014), each Holm-corrected across every comparison of the result.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metajudge import stats as st
from metajudge.analyses.metric_vs_human.cells import CellCalc, Run, jnum
from metajudge.analyses.metric_vs_human.levels import n_distinct
from metajudge.analyses.metric_vs_human.partial import common_arrays
from metajudge.analyses.metric_vs_human.protocol import COMPARE_STATS

TESTS = ("p_bootstrap", "p_permutation", "p_williams")
#: one Holm family: the comparisons of one dimension and statistic (m - 1 against a reference,
#: every pair otherwise), per test; stated with every count of tests
HOLM_FAMILY = "per dimension and statistic"


def _bootstrap(comp: dict[str, Any], dd: np.ndarray, level: float) -> None:
    lo, hi = st.percentile_ci(dd, level)
    comp["ci"] = [lo, hi] if np.isfinite([lo, hi]).all() else None
    comp["p_bootstrap"] = jnum(st.bootstrap_p_value(dd))


def _grouped(comp: dict[str, Any], c1: CellCalc, c2: CellCalc, s: str, level: float) -> None:
    sa, sb = c1.samples.get(s), c2.samples.get(s)
    if sa is not None and sb is not None:
        _bootstrap(comp, sa - sb, level)
    comp["p_permutation"] = None
    comp["p_williams"] = None
    comp["note"] = (
        "averaged per-group correlations: paired bootstrap over inputs only (Williams and the "
        "permutation test need one pooled correlation: level global)"
    )


def _rows_of(
    run: Run, c1: CellCalc, c2: CellCalc, s: str
) -> tuple[bool, str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(same rows, statistic taken, x1, x2, y, unit per row)`` of ``s`` on the rows both
    cells scored; under a control the residuals are taken again on those rows."""
    r1, r2 = c1.rows, c2.rows
    if r1.same_rows(r2):  # the usual case (no missing scores): the cells' own arrays
        taken, x1, y = c1.arrays(s)
        return True, taken, x1, c2.arrays(s)[1], y, r1.pair
    k1, k2 = r1.keys(), r2.keys()
    common = np.intersect1d(k1, k2)
    i1, i2 = np.searchsorted(k1, common), np.searchsorted(k2, common)
    if run.control is not None:
        taken, x1, x2, y = common_arrays(run, s, c1, c2, i1, i2)
        return False, taken, x1, x2, y, r1.pair[i1]
    taken, x1, y = c1.arrays(s)
    return False, taken, x1[i1], c2.arrays(s)[1][i2], y[i1], r1.pair[i1]


def _pairs(
    run: Run,
    comp: dict[str, Any],
    c1: CellCalc,
    c2: CellCalc,
    s: str,
    rng: np.random.Generator,
    shared: st.DiffResult | None,
    values: tuple[float, float],
) -> None:
    """A pooled comparison; ``values``: the two cells' point values of ``s``."""
    same, taken, x1, x2, y, pairs = _rows_of(run, c1, c2, s)
    n = n_distinct(pairs, run.n_units)
    comp["n"] = n
    if (
        n < 3
        or st.undefined_reason(x1, y, statistic=taken)
        or st.undefined_reason(x2, y, statistic=taken)
    ):
        comp["note"] = "undefined on the rows both metrics scored"
        return
    # on the same rows the cells' point values are these differences' terms (bit-identical)
    v1, v2 = values if same else (st.statistic(taken, x1, y), st.statistic(taken, x2, y))
    comp["diff"] = v1 - v2
    groups = run.unit_item[pairs]
    note = run.proto.ci_skipped(taken, y.size)
    if run.W is not None and note is not None:
        comp["ci_note"] = note.replace("see fisher_ci", "see p_permutation")
    elif run.W is not None:
        paired = None
        if same and s in c1.samples and s in c2.samples:
            paired = (c1.samples[s], c2.samples[s])  # same rows: the stored resamples are paired
        diff = st.paired_bootstrap_diff(
            x1,
            x2,
            y,
            statistic=taken,
            resamples=run.W[:, groups],
            samples=paired,
            level=run.proto.ci_level,
            observed=(v1, v2),
        )
        lo_hi = [diff.lo, diff.hi]
        comp["ci"] = lo_hi if np.isfinite(lo_hi).all() else None
        comp["p_bootstrap"] = jnum(diff.p_value)
    if shared is not None:
        comp["p_permutation"] = jnum(shared.p_value)
    elif run.proto.permutations > 0:
        pr = st.permutation_test_diff(
            x1, x2, y, statistic=taken, groups=groups, n_resamples=run.proto.permutations, rng=rng
        )
        comp["p_permutation"] = jnum(pr.p_value)
    if s == "pearson":
        _williams(run, comp, x1, x2, y, pairs, n)


def _williams(
    run: Run,
    comp: dict[str, Any],
    x1: np.ndarray,
    x2: np.ndarray,
    y: np.ndarray,
    units: Any,
    n: int,
) -> None:
    """Williams' test of two dependent correlations; under a control on the residuals (partial
    correlations) with n less the control's parameters."""
    k = run.control.parameters(units) if run.control is not None else 0
    comp["williams_n"] = n - k
    w = st.williams_test(st.pearson(x1, y), st.pearson(x2, y), st.pearson(x1, x2), n - k)
    comp["williams_t"] = jnum(w.t)
    if run.proto.williams == "one-sided":  # in the direction of the observed difference (FRANK)
        comp["p_williams"] = jnum(min(w.p_one_sided, 1.0 - w.p_one_sided))
    else:
        comp["p_williams"] = jnum(w.p_two_sided)


def _shared_permutations(
    run: Run,
    metrics: Sequence[str],
    cells: Mapping[tuple[str, str], tuple[dict[str, Any], CellCalc]],
    d: str,
    rng: np.random.Generator,
    reference: str | None = None,
) -> dict[tuple[str, str, str], st.DiffResult]:
    """Permutation tests of every pair of metrics on dimension ``d`` with shared swaps
    (:func:`~metajudge.stats.shared_permutation_tests`) when every metric has the
    same rows (the usual case: no missing scores); otherwise {} (each pair then draws its own)."""
    ms = [m for m in metrics if (m, d) in cells]
    if run.proto.permutations <= 0 or len(ms) < 2:
        return {}
    calcs = [cells[(m, d)][1] for m in ms]
    rows = [c.rows for c in calcs]
    if not all(rows[0].same_rows(r) for r in rows[1:]):
        return {}
    pairs = list(itertools.combinations(range(len(ms)), 2))
    if reference is not None:
        pairs = [(i, j) for i, j in pairs if reference in (ms[i], ms[j])]
    problems = []
    for s in COMPARE_STATS:
        taken, _, y = calcs[0].arrays(s)
        problems.append((taken, [c.arrays(s)[1] for c in calcs], y))
    res = st.shared_permutation_tests(
        problems,
        pairs,
        groups=run.unit_item[rows[0].pair],
        n_resamples=run.proto.permutations,
        rng=rng,
    )
    return {
        (ms[i], ms[j], s): r
        for s, per_pair in zip(COMPARE_STATS, res, strict=True)
        for (i, j), r in zip(pairs, per_pair, strict=True)
    }


def metric_pairs(metrics: Sequence[str], reference: str | None) -> list[tuple[str, str]]:
    """The pairs compared: every pair, or (``reference``) the reference against each other
    metric, the reference first.

    >>> metric_pairs(["a", "b", "c"], "b")
    [('b', 'a'), ('b', 'c')]
    """
    if reference is None:
        return list(itertools.combinations(metrics, 2))
    return [(reference, m) for m in metrics if m != reference]


def is_pooled(run: Run) -> bool:
    """Comparisons of one pooled correlation (bootstrap, permutation and Williams): the
    pairwise-difference protocol ungrouped, or the pointwise protocol at level global."""
    if run.pointwise:
        return run.proto.level == "global"
    return not run.proto.grouped


def compare_metrics(
    run: Run,
    metrics: Sequence[str],
    cells: Mapping[tuple[str, str], tuple[dict[str, Any], CellCalc]],
    reference: str | None = None,
) -> list[dict[str, Any]]:
    """Every comparison of two metrics (or of ``reference`` against each other metric) on one
    dimension and statistic, Holm-corrected."""
    out: list[dict[str, Any]] = []
    rng = np.random.default_rng([run.proto.seed, 3])
    pooled = is_pooled(run)
    for d in run.view.dimensions:
        shared = _shared_permutations(run, metrics, cells, d, rng, reference) if pooled else {}
        for m1, m2 in metric_pairs(metrics, reference):
            if (m1, d) not in cells or (m2, d) not in cells:
                continue
            (j1, c1), (j2, c2) = cells[(m1, d)], cells[(m2, d)]
            for s in COMPARE_STATS:
                e1, e2 = j1["stats"].get(s), j2["stats"].get(s)
                if not e1 or not e2 or e1["value"] is None or e2["value"] is None:
                    continue
                comp: dict[str, Any] = {
                    "dimension": d,
                    "statistic": s,
                    "metric_a": m1,
                    "metric_b": m2,
                }
                if pooled:
                    values = (e1["value"], e2["value"])
                    got = shared.get((m1, m2, s)) or shared.get((m2, m1, s))
                    _pairs(run, comp, c1, c2, s, rng, got, values)
                else:
                    comp["diff"] = e1["value"] - e2["value"]
                    comp["n"] = e1.get("n_groups")
                    _grouped(comp, c1, c2, s, run.proto.ci_level)
                out.append(comp)
    holm_adjust(out)
    return out


#: the level the floor note of :func:`p_floors` is stated against
FLOOR_ALPHA = 0.05


def _families(comparisons: list[dict[str, Any]], test: str) -> dict[tuple[str, str], list[int]]:
    """The comparisons holding ``test``, by Holm family (:data:`HOLM_FAMILY`)."""
    out: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(comparisons):
        if c.get(test) is not None:
            out.setdefault((c["dimension"], c["statistic"]), []).append(i)
    return out


def holm_adjust(comparisons: list[dict[str, Any]]) -> None:
    """Add ``<test>_holm`` (Holm 1979, within each family of :data:`HOLM_FAMILY`, per test) in
    place."""
    for test in TESTS:
        for idx in _families(comparisons, test).values():
            adj = st.holm([comparisons[i][test] for i in idx])
            for i, a in zip(idx, adj, strict=True):
                comparisons[i][test + "_holm"] = jnum(float(a))


def p_floors(
    comparisons: list[dict[str, Any]], n_boot: int, n_perm: int, *, reference: str | None = None
) -> dict[str, Any]:
    """The floors of the resampling p-values (:class:`~metajudge.stats.PFloor`) over these
    comparisons' largest Holm family, per test, and ``<test>_at_floor`` on every comparison at
    its floor (in place); against a ``reference`` the note does not suggest one."""
    out: dict[str, Any] = {}
    for test, floor in (
        ("p_bootstrap", st.PFloor.bootstrap),
        ("p_permutation", st.PFloor.permutation),
    ):
        n_tests = max(map(len, _families(comparisons, test).values()), default=0)
        k = n_boot if test == "p_bootstrap" else n_perm
        if not n_tests or k <= 0:
            continue
        f = floor(k, n_tests, HOLM_FAMILY)
        for c in comparisons:
            if c.get(test) is not None:
                c[test + "_at_floor"] = f.at_floor(c[test])
        out[test] = f.to_dict(FLOOR_ALPHA, fewer=reference is None)
    return out
