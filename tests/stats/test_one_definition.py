"""One definition per statistic: each is defined once in the package and found by name.

Scans ``metajudge/`` with :mod:`ast` (no import): the names below are each defined exactly once,
in the module named; no module outside ``metajudge/stats`` takes a percentile / quantile (the
percentile CI of a bootstrap is :func:`metajudge.stats.intervals.percentile_ci`), except the short
allowlist of non-CI uses; and no module outside ``metajudge/stats`` spells its own mapping of
pairwise sides to −1/0/+1 (the decision type is :class:`metajudge.stats.decisions.Pref`).
"""

from __future__ import annotations

import ast
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

PKG = Path(__file__).resolve().parents[2] / "metajudge"

#: name -> the one module (relative to metajudge/) that defines it
ONE_DEFINITION = {
    "Pref": "stats/decisions.py",
    "to_pref": "stats/decisions.py",
    "tie_decisions": "stats/decisions.py",
    "pairwise_accuracy": "stats/decisions.py",
    "accuracy_tally": "stats/decisions.py",
    "protocol_correct": "stats/decisions.py",
    "position_consistency": "stats/decisions.py",
    "p_first_wins": "stats/decisions.py",
    "TIE_POLICIES": "stats/decisions.py",
    "ORDER_PROTOCOLS": "stats/decisions.py",
    "majority_label": "stats/classification.py",
    "accuracy": "stats/classification.py",
    "macro_f1": "stats/classification.py",
    "confusion_scores": "stats/classification.py",
    "cohen_kappa": "stats/agreement.py",
    "kappa_from_confusion": "stats/agreement.py",
    "percentile_ci": "stats/intervals.py",
    "bootstrap_mean_ci": "stats/bootstrap.py",
    "pearson": "stats/correlation.py",
    "pearson_from_sums": "engine/formulas.py",
    "pearson_from_moments": "engine/formulas.py",
    "pearson_rows": "stats/correlation.py",
    "spearman": "stats/correlation.py",
    "kendall_tau_b": "stats/correlation.py",
    "accuracy_rows": "stats/correlation.py",
    "accuracy_from_sums": "engine/formulas.py",
    "bootstrap_ci": "stats/bootstrap.py",
    "resample": "stats/bootstrap.py",
    "correlate": "stats/correlation.py",
    "paired_bootstrap_diff": "stats/significance.py",
    "grouped_correlation": "stats/bootstrap.py",
}

#: the old names of copies that were merged: none may come back under them
GONE = (
    "majority",
    "confusion_stats",
    "bootstrap_accuracy",
    # the private Pearson / accuracy copies folded into correlation.py's one formula each
    "r_from_moments",
    "_pearson_rows",
    "_wacc_rows",
    "resample_rows",
    # the slow reference loop lives in tests/stats/reference.py
    "bootstrap_ci_reference",
)

#: percentile / quantile calls outside stats/ that are not a bootstrap CI: (module, reason)
QUANTILE_ALLOWED = {
    "analyses/metric_vs_human/normalize.py": "candidate tie bands ε: quantiles of |d| subsample "
    "the sweep's thresholds",
    "analyses/backbone_swap.py": "calibration curve: quantile bin edges of the judge's scores",
}
QUANTILE_FUNCS = {"percentile", "quantile", "nanpercentile", "nanquantile"}


def _modules() -> dict[str, ast.Module]:
    return {
        str(p.relative_to(PKG)): ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
        for p in sorted(PKG.rglob("*.py"))
    }


@pytest.fixture(scope="module")
def modules() -> dict[str, ast.Module]:
    return _modules()


def _definitions(modules: dict[str, ast.Module]) -> dict[str, list[str]]:
    """name -> modules defining it (functions, classes, module-level assignments)."""
    out: dict[str, list[str]] = defaultdict(list)
    for rel, tree in modules.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out[node.name].append(rel)
        for node in tree.body:  # module-level constants
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    out[t.id].append(rel)
    return out


def test_each_statistic_is_defined_once(modules: dict[str, ast.Module]) -> None:
    defs = _definitions(modules)
    wrong = {
        name: defs.get(name, [])
        for name, where in ONE_DEFINITION.items()
        if defs.get(name, []) != [where]
    }
    assert not wrong, f"defined elsewhere or more than once (want one each): {wrong}"


def test_merged_copies_stay_gone(modules: dict[str, ast.Module]) -> None:
    defs = _definitions(modules)
    back = {name: defs[name] for name in GONE if name in defs}
    assert not back, f"a merged copy is back: {back}"


def _calls(tree: ast.Module, funcs: set[str], modules: tuple[str, ...] | None = None) -> list[int]:
    """Lines that call one of ``funcs`` (by name or attribute) or import one of them (from
    ``modules`` only, when given)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            )
            if name in funcs:
                lines.append(node.lineno)
        if (
            isinstance(node, ast.ImportFrom)
            and (modules is None or node.module in modules)
            and any(a.name in funcs for a in node.names)
        ):
            lines.append(node.lineno)
    return lines


def _quantile_calls(tree: ast.Module) -> list[int]:
    return _calls(tree, QUANTILE_FUNCS, ("numpy", "scipy.stats"))


def test_no_percentile_outside_stats(modules: dict[str, ast.Module]) -> None:
    found = {
        rel: lines
        for rel, tree in modules.items()
        if not rel.startswith("stats/") and (lines := _quantile_calls(tree))
    }
    unexpected = {rel: lines for rel, lines in found.items() if rel not in QUANTILE_ALLOWED}
    assert not unexpected, (
        f"percentile/quantile outside metajudge/stats (use stats.percentile_ci): {unexpected}"
    )
    stale = set(QUANTILE_ALLOWED) - set(found)
    assert not stale, f"allowlisted but no longer calling a quantile (drop them): {stale}"


def _side_maps(tree: ast.Module) -> list[int]:
    """Dict literals mapping the sides a / b / tie (or A>B / B>A) to numbers."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        numeric = all(
            isinstance(v, ast.Constant)
            and isinstance(v.value, (int, float))
            or isinstance(v, ast.UnaryOp)
            for v in node.values
        )
        sides = {"a", "b"} <= {str(k).lower() for k in keys} or {"A>B", "B>A"} <= keys
        if sides and numeric and node.values:
            lines.append(node.lineno)
    return lines


# the label converters of the data layer read a file's own spelling into the label scale
SIDE_MAPS_ALLOWED = {"data/convert_pairwise.py"}


def test_one_decision_type(modules: dict[str, ast.Module]) -> None:
    found = {
        rel: lines
        for rel, tree in modules.items()
        if rel != "stats/decisions.py"
        and rel not in SIDE_MAPS_ALLOWED
        and (lines := _side_maps(tree))
    }
    assert not found, f"a second side -> ±1 mapping (use stats.decisions.to_pref): {found}"


def test_the_scan_sees_the_package(modules: dict[str, ast.Module]) -> None:
    mods = modules
    assert "stats/decisions.py" in mods and len(mods) > 100
    # the scan would catch a copy: a module defining a second majority_label is reported
    extra = ast.parse("def majority_label(xs):\n    return None\n")
    defs = _definitions({**mods, "analyses/copy.py": extra})
    assert defs["majority_label"] == ["stats/classification.py", "analyses/copy.py"]
    assert _quantile_calls(ast.parse("import numpy as np\nnp.percentile([1], 5)\n")) == [2]


# ---------------------------------------------------------------------------------------------
# Behaviour: every product path that reports a statistic runs its one definition.
#
# The one definition of each statistic is replaced by a marked version in every metajudge
# module that holds it (the name bound by ``from ... import``, too); each product path is run
# on a small dataset and must report the mark. A private re-implementation anywhere (a module
# computing Pearson's r or an accuracy on its own) does not see the mark, and fails here.


def _replace_everywhere(monkeypatch: pytest.MonkeyPatch, original: object, marked: object) -> int:
    """Rebind every metajudge module attribute that is ``original`` to ``marked``."""
    import sys

    n = 0
    for name, mod in list(sys.modules.items()):
        if not name.startswith("metajudge") or mod is None:
            continue
        for attr, val in list(vars(mod).items()):
            if val is original:
                monkeypatch.setattr(mod, attr, marked)
                n += 1
    return n


def _import_product() -> None:
    """The product paths checked below, imported before the marks are placed."""
    import metajudge.analyses.backbone_swap
    import metajudge.analyses.judge_bench
    import metajudge.analyses.juries
    import metajudge.analyses.metric_vs_human.evaluate
    import metajudge.stats.resampling_tests  # noqa: F401


def _halve_pearson(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pearson's one formula (engine.formulas.pearson_from_sums) returns r / 2: every value
    built on it halves exactly (a percentile of halved samples is the halved percentile), and a
    test statistic compared with its permuted or resampled copies keeps its p-value only when
    both sides run the one formula."""
    _import_product()
    from metajudge.stats import correlation

    original = correlation.pearson_from_sums

    def halved(*args: object, **kw: object) -> np.ndarray:
        return original(*args, **kw) / 2  # type: ignore[arg-type]

    assert _replace_everywhere(monkeypatch, original, halved) >= 2


def _full_credit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one accuracy (stats.decisions.pair_credit) gives every scored pair full credit."""
    _import_product()
    from metajudge.stats import decisions

    original = decisions.pair_credit

    def marked(*args: object, **kw: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        credit, keep, missing = original(*args, **kw)  # type: ignore[arg-type]
        return np.ones_like(credit), keep, missing

    assert _replace_everywhere(monkeypatch, original, marked) >= 2


def _toy_meta_eval(n_boot: int = 40) -> dict:
    """meta-eval on 30 synthetic pairs, two metrics (cells, bootstrap CIs, comparisons)."""
    from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
    from tests.analyses.metric_vs_human.test_evaluate import _rows, _toy

    ds, truth = _toy(30, seed=4)
    rng = np.random.default_rng(1)
    rows = _rows("good", [0.0] * 30, list(truth + rng.normal(scale=0.3, size=30)))
    rows += _rows("bad", [0.0] * 30, list(rng.normal(scale=1.0, size=30) + 0.5 * truth))
    return meta_evaluate(ds, rows, metrics=["good", "bad"], n_boot=n_boot, seed=0).data


def _half(v: object) -> object:
    return [b / 2 for b in v] if isinstance(v, list) else v / 2  # type: ignore[operator]


def test_meta_eval_pearson_and_spearman_run_the_one_pearson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = _toy_meta_eval()
    _halve_pearson(monkeypatch)
    marked = _toy_meta_eval()
    for c0, c1 in zip(plain["cells"], marked["cells"], strict=True):
        for s in ("pearson", "spearman"):  # Spearman: the Pearson formula on ranks
            e0, e1 = c0["stats"][s], c1["stats"][s]
            assert e1["ci_method"] == "percentile bootstrap"
            assert e1["value"] == _half(e0["value"]), (c0["metric"], s)
            assert e1["ci"] == _half(e0["ci"]), (c0["metric"], s)
        assert c1["stats"]["kendall"] == c0["stats"]["kendall"]  # not a Pearson
    assert plain["comparisons"]
    for k0, k1 in zip(plain["comparisons"], marked["comparisons"], strict=True):
        # paired bootstrap and permutation tests: the observed and the resampled differences
        # both halve, so the p-values stay; a private formula on either side moves them
        assert k1["diff"] == pytest.approx(k0["diff"] / 2, abs=1e-15)
        assert k1["ci"] == pytest.approx(_half(k0["ci"]), abs=1e-15)
        assert (k1["p_bootstrap"], k1["p_permutation"]) == (k0["p_bootstrap"], k0["p_permutation"])
        assert 0 < k0["p_permutation"] < 1 or k0["p_bootstrap"] < 1


def test_meta_eval_accuracies_run_the_one_accuracy(monkeypatch: pytest.MonkeyPatch) -> None:
    _full_credit(monkeypatch)
    data = _toy_meta_eval()
    for cell in data["cells"]:
        for s in ("acc_ties", "acc_no_ties"):
            e = cell["stats"][s]
            assert e["value"] == 1.0, (cell["metric"], s)
            assert e["ci"] == [1.0, 1.0], (cell["metric"], s)


def _significance(rng_seed: int = 0) -> list[float]:
    from metajudge import stats as st

    rng = np.random.default_rng(rng_seed)
    y = rng.normal(size=40)
    x1, x2 = y + rng.normal(size=40), y + rng.normal(scale=2.0, size=40)
    g = np.arange(40) // 2
    b = st.paired_bootstrap_diff(x1, x2, y, groups=g, n_resamples=30, rng=np.random.default_rng(1))
    perm = st.permutation_test_diff(
        x1, x2, y, groups=g, n_resamples=30, rng=np.random.default_rng(1)
    )
    ci = st.bootstrap_ci(x1, y, groups=g, n_resamples=30, rng=np.random.default_rng(1))
    out = [b.diff, b.lo, b.hi, perm.diff, ci.estimate, ci.lo, ci.hi]
    X, Y, Z = (rng.normal(size=(6, 8)) for _ in range(3))
    Y += X
    for test in (st.perm_tests, st.boot_tests):
        res = test({"x": X, "y": Y}, Z, level="global", n_resamples=20, rng=0)[("x", "y")]
        out.append(res.delta)
    return out + [b.p_value, perm.p_value]


def test_significance_and_resampling_tests_run_the_one_pearson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = _significance()
    _halve_pearson(monkeypatch)
    marked = _significance()
    assert marked[:-2] == pytest.approx([v / 2 for v in plain[:-2]], abs=1e-15)
    assert marked[-2:] == plain[-2:]  # p-values of the paired bootstrap and permutation test


def _swap() -> dict:
    from metajudge.analyses.backbone_swap import backbone_swap, build_swap_data
    from tests.analyses.test_backbone_swap import _likert, _noisy

    recs, truth = _likert(n_items=30, n_sys=4)
    data = build_swap_data(
        recs,
        {"big": _noisy(truth, 0.2, 1), "cheap": _noisy(truth, 1.0, 2)},
        dimension="faithfulness",
        metric="m",
        dataset="synthetic",
    )
    return backbone_swap(data, rng=np.random.default_rng(0), n_boot=40, human_protocol="pooled")


def test_backbone_swap_agreement_runs_the_one_pearson(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _swap()
    _halve_pearson(monkeypatch)
    marked = _swap()
    p0, p1 = plain["pairs"][0], marked["pairs"][0]
    for s in ("pearson", "spearman"):
        assert p1[s]["value"] == _half(p0[s]["value"]), s
        assert p1[s]["ci"] == _half(p0[s]["ci"]), s
    b0, b1 = plain["per_backbone"]["big"], marked["per_backbone"]["big"]
    assert b1["pooled_pearson"]["value"] == _half(b0["pooled_pearson"]["value"])


def test_judge_bench_and_jury_correlations_run_the_one_pearson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from metajudge.analyses.judge_bench import _correlations
    from metajudge.analyses.juries import _error_correlation

    pairs = [(1.0, 2.0), (2.0, 1.0), (3.0, 5.0), (4.0, 3.0)]
    wrong = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    plain = _correlations(pairs, ("pearson", "spearman")), _error_correlation(["a", "b"], wrong)
    _halve_pearson(monkeypatch)
    got = _correlations(pairs, ("pearson", "spearman"))
    assert got == {s: v / 2 for s, v in plain[0].items()}
    assert _error_correlation(["a", "b"], wrong)["a"]["b"] == plain[1]["a"]["b"] / 2


def test_jury_weights_run_the_one_categorical_accuracy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The weighted vote's judge accuracies (fitting split) are stats.classification.accuracy."""
    import math

    from metajudge.analyses.juries import jury
    from metajudge.stats import classification
    from tests.analyses.test_juries import _case

    _replace_everywhere(monkeypatch, classification.accuracy, lambda human, judge: 0.75)
    gold, preds, groups = _case()
    res = jury(gold, preds, groups, ("no", "yes"), fit_fraction=0.5, seed=3)
    assert res.weights == pytest.approx({j: math.log(3.0) for j in preds})


def test_the_marks_would_catch_a_private_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pearson written out privately does not see the mark (the check can fail)."""
    from metajudge.stats import correlation

    def private(x: np.ndarray, y: np.ndarray) -> float:
        xc, yc = x - x.mean(), y - y.mean()
        return float(np.clip(xc @ yc / np.sqrt((xc @ xc) * (yc @ yc)), -1, 1))

    x, y = np.array([1.0, 2.0, 3.0, 5.0]), np.array([2.0, 1.0, 4.0, 3.0])
    before = correlation.pearson(x, y)
    assert private(x, y) == before
    _halve_pearson(monkeypatch)
    assert correlation.pearson(x, y) == before / 2
    assert private(x, y) == before


# ---------------------------------------------------------------------------------------------
# No module outside stats/ computes a correlation itself

CORRELATION_FUNCS = {"corrcoef", "pearsonr", "spearmanr", "kendalltau", "weightedtau"}
#: module -> why it may call one of CORRELATION_FUNCS
CORRELATION_ALLOWED: dict[str, str] = {
    "engine/reference.py": "the reference engine: the textbook statistic of each expanded "
    "resample, to check the fast engine against (--engine reference)",
}


def _correlation_calls(tree: ast.Module) -> list[int]:
    return _calls(tree, CORRELATION_FUNCS)


def test_no_correlation_outside_stats(modules: dict[str, ast.Module]) -> None:
    found = {
        rel: lines
        for rel, tree in modules.items()
        if not rel.startswith("stats/") and (lines := _correlation_calls(tree))
    }
    unexpected = {rel: lines for rel, lines in found.items() if rel not in CORRELATION_ALLOWED}
    assert not unexpected, (
        f"a correlation computed outside metajudge/stats (use stats.pearson / spearman / "
        f"kendall_tau_b / statistic): {unexpected}"
    )
    assert _correlation_calls(ast.parse("import numpy as np\nnp.corrcoef([1], [2])\n")) == [2]
    assert _correlation_calls(ast.parse("from scipy.stats import pearsonr\n")) == [1]


#: the one module that defines Pearson's r (and the other correlations): it alone may call a
#: library correlation (today none does), beside the reference engine's independent check
#: (:data:`CORRELATION_ALLOWED`)
CORRELATION_HOME = "stats/correlation.py"


def test_no_library_correlation_outside_the_one_definition(
    modules: dict[str, ast.Module],
) -> None:
    """Inside metajudge/stats too: a ``np.corrcoef`` or ``scipy.stats.pearsonr`` (or any of
    :data:`CORRELATION_FUNCS`) anywhere but :data:`CORRELATION_HOME` is a Pearson the marks of
    :func:`_halve_pearson` cannot see (``stats/power.py`` had one)."""
    found = {
        rel: lines
        for rel, tree in modules.items()
        if rel != CORRELATION_HOME
        and rel not in CORRELATION_ALLOWED
        and (lines := _correlation_calls(tree))
    }
    assert not found, f"a library correlation outside {CORRELATION_HOME}: {found}"
    copy = "import numpy as np\n\ndef r12(x, y):\n    return np.corrcoef(x, y)[0, 1]\n"
    assert _correlation_calls(ast.parse(copy)) == [4]
    copy = "import scipy.stats as ss\nss.pearsonr([1, 2, 3], [1, 3, 2])\n"
    assert _correlation_calls(ast.parse(copy)) == [2]


def test_power_r12_runs_the_one_pearson(monkeypatch: pytest.MonkeyPatch) -> None:
    """``stats power``'s r12 estimate (two metrics' scores) is the one Pearson."""
    import metajudge.runs.stats_commands  # noqa: F401  (the command's path, imported before the mark)
    from metajudge.stats.power import r12_from_scores

    a = {"x": 1.0, "y": 2.0, "z": 4.0, "v": 3.0, "w": None}
    b = {"x": 1.0, "y": 3.0, "z": 4.0, "v": 2.0}
    r, n = r12_from_scores(a, b)
    assert (round(r, 4), n) == (0.8, 4)
    _halve_pearson(monkeypatch)
    assert r12_from_scores(a, b) == (r / 2, 4)
    assert math.isnan(r12_from_scores({"x": 1.0, "y": 1.0, "z": 1.0}, b)[0])  # constant side


# ---------------------------------------------------------------------------------------------
# One parameter vocabulary in metajudge/stats

#: the fast engine modules (their names are another change's): not scanned
ENGINE_MODULES = {
    "stats/weighted.py",
    "stats/moments.py",
    "stats/resample.py",
    "stats/rank_pass.py",
    "stats/count_pass.py",
    "stats/weighted_kendall.py",
}
#: the old names of a resample count and of randomness -> the one name
OLD_PARAMETERS = {"n_boot": "n_resamples", "n_perm": "n_resamples", "seed": "rng"}


def _old_parameters(tree: ast.Module) -> list[str]:
    return [
        f"{node.name}({a.arg})"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        if a.arg in OLD_PARAMETERS
    ]


def test_one_parameter_vocabulary_in_stats(modules: dict[str, ast.Module]) -> None:
    """A public function of metajudge/stats takes ``n_resamples`` resamples and ``rng`` (a
    Generator or an int seed), not ``n_boot`` / ``n_perm`` / ``seed``."""
    found = {
        rel: names
        for rel, tree in modules.items()
        if rel.startswith("stats/")
        and rel not in ENGINE_MODULES
        and (names := _old_parameters(tree))
    }
    assert not found, f"use n_resamples / rng: {found}"
    assert _old_parameters(ast.parse("def f(x, *, n_boot=10, rng=None): ...")) == ["f(n_boot)"]
