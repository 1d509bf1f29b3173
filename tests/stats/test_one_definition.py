"""One definition per statistic: each is defined once in the package and found by name.

Scans ``metajudge/`` with :mod:`ast` (no import): the names below are each defined exactly once,
in the module named; no module outside ``metajudge/stats`` takes a percentile / quantile (the
percentile CI of a bootstrap is :func:`metajudge.stats.intervals.percentile_ci`), except the short
allowlist of non-CI uses; and no module outside ``metajudge/stats`` spells its own mapping of
pairwise sides to −1/0/+1 (the decision type is :class:`metajudge.stats.decisions.Pref`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

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
    "pearson_from_sums": "stats/correlation.py",
    "pearson_from_moments": "stats/correlation.py",
    "pearson_rows": "stats/correlation.py",
    "spearman": "stats/correlation.py",
    "kendall_tau_b": "stats/correlation.py",
    "accuracy_rows": "stats/correlation.py",
    "accuracy_from_sums": "stats/correlation.py",
    "bootstrap_ci": "stats/bootstrap.py",
    "resample": "stats/bootstrap.py",
    "correlate": "stats/bootstrap.py",
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


def _quantile_calls(tree: ast.Module) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            )
            if name in QUANTILE_FUNCS:
                lines.append(node.lineno)
        if (
            isinstance(node, ast.ImportFrom)
            and node.module in ("numpy", "scipy.stats")
            and any(a.name in QUANTILE_FUNCS for a in node.names)
        ):
            lines.append(node.lineno)
    return lines


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
