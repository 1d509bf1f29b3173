"""Several judges on the same items: their paired tests and the one-line answer (which judge,
and is the difference significant).

Label judges (binary, categorical, pairwise verdicts): each pair of judges' correctness on the
items both judged, McNemar's test (:func:`metajudge.analyses.verdict_accuracy.mcnemar`, as
``judge jury`` runs it), Holm-adjusted over the pairs. Rating judges: the comparisons meta-eval
already runs (Williams, paired bootstrap, permutation, Holm) are read as they are.
:func:`answer` names the best judge (better than every other on the first comparison's
statistic) and tests it against its runner-up at ``alpha``. Nothing is
rendered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

ANSWER_ALPHA = 0.05


def label_comparisons(
    gold: Sequence[str | None], preds: Mapping[str, Sequence[str | None]]
) -> list[dict[str, Any]]:
    """McNemar between every two judges of ``preds`` (a verdict per record, None where none)
    against ``gold`` (None: unlabelled) on the records both judged, Holm over the pairs."""
    from metajudge.analyses.verdict_accuracy import mcnemar
    from metajudge.stats.significance import holm

    rows = []
    for a, b in combinations(list(preds), 2):
        keep = [
            i
            for i, g in enumerate(gold)
            if g is not None and preds[a][i] is not None and preds[b][i] is not None
        ]
        ra = [preds[a][i] == gold[i] for i in keep]
        rb = [preds[b][i] == gold[i] for i in keep]
        only_a, only_b, p, method = mcnemar(ra, rb)
        n = len(keep)
        rows.append(
            {
                "statistic": "accuracy",
                "metric_a": a,
                "metric_b": b,
                "n": n,
                "value_a": sum(ra) / n if n else None,
                "value_b": sum(rb) / n if n else None,
                "diff": (sum(ra) - sum(rb)) / n if n else None,
                "only_a_right": only_a,
                "only_b_right": only_b,
                "test": f"McNemar ({method})",
                "p": p,
            }
        )
    for r, adj in zip(rows, holm([r["p"] for r in rows]) if rows else [], strict=True):
        r["p_holm"] = float(adj)
    return rows


def _p(c: Mapping[str, Any]) -> tuple[float | None, str]:
    """The comparison's Holm-adjusted p and its test's name."""
    if "p_holm" in c:
        return c["p_holm"], c["test"]
    for key, name in (("p_williams_holm", "Williams"), ("p_bootstrap_holm", "paired bootstrap")):
        if c.get(key) is not None:
            return c[key], name
    return None, "no test"


def _better(c: Mapping[str, Any]) -> str:
    return c["metric_a"] if (c.get("diff") or 0) >= 0 else c["metric_b"]


def _closest_to_best(comparisons: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """Of the comparisons on the first one's statistic and dimension: the best judge's (better
    than every other) against its runner-up (the smallest margin); else the first."""
    first = comparisons[0]
    same = [
        c
        for c in comparisons
        if c.get("statistic") == first.get("statistic")
        and c.get("dimension") == first.get("dimension")
        and c.get("diff") is not None
    ]
    judges = {j for c in same for j in (c["metric_a"], c["metric_b"])}
    for j in sorted(judges):
        mine = [c for c in same if j in (c["metric_a"], c["metric_b"])]
        if mine and all(_better(c) == j for c in mine):
            return min(mine, key=lambda c: abs(c["diff"]))
    return first


def answer(comparisons: Sequence[Mapping[str, Any]], alpha: float = ANSWER_ALPHA) -> str:
    """One line: the better judge of the first comparison (the headline statistic), its margin
    and whether the paired test (Holm) finds the difference significant at ``alpha``."""
    if not comparisons:
        return "no paired comparison between the judges"
    c = _closest_to_best(comparisons)
    if c.get("diff") is None:
        return f"{c['metric_a']} and {c['metric_b']}: no item judged by both"
    better, worse = (
        (c["metric_a"], c["metric_b"]) if c["diff"] >= 0 else (c["metric_b"], c["metric_a"])
    )
    p, test = _p(c)
    margin = f"{c['statistic']} higher by {abs(c['diff']):.3f} on {c['n']} items"
    if p is None:
        return f"{better} over {worse} ({margin}); no paired test"
    more = f" of {len(comparisons)} comparisons" if len(comparisons) > 1 else ""
    tested = f"{test} p = {p:.3g} (Holm{more})"
    if p < alpha:
        return f"use {better}: {margin} than {worse}; {tested}, significant at {alpha:g}"
    return (
        f"{better} leads: {margin} than {worse}; {tested}, not significant at {alpha:g} — "
        "on this data the judges do not differ"
    )
