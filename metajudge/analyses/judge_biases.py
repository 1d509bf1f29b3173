"""Judge diagnostics per backbone: position bias, length bias, run-to-run variance, accuracy, cost.

Inputs are pairwise verdicts
(:class:`~metajudge.metrics.judges.pairwise.PairwiseVerdict`, mapped back to the record's sides)
and the records' human labels (positive = b better).

- **Position bias** (Zheng et al. 2023, MT-Bench §3.3; Wang et al. 2023, "Large Language Models
  are not Fair Evaluators"): judge every pair in both orders. *Consistency rate* = share of
  pairs whose two verdicts name the same side (tie = tie), a pair with an unparsed verdict
  counting as inconsistent (:data:`~metajudge.stats.decisions.CONSISTENCY_RULE`; the unparsed
  pairs are counted); *P(first
  wins)* = share of decisive verdicts (A or B) that chose the response shown first, over both
  orders (0.5 = no position preference).
- **Length bias** (Dubois et al. 2024, length-controlled AlpacaEval): among pairs whose two
  responses differ in length (whitespace words), the share of decisive judge verdicts that
  prefer the longer one, beside the same share for the humans (mean label's sign) on the same
  kind of pairs — a judge above the humans' rate prefers length more than people do.
- **Accuracy vs humans** with a named tie policy (``exclude_human_ties``, ``three_way``,
  ``half_credit``): :func:`metajudge.stats.decisions.pairwise_accuracy` defines them.
- **Run-to-run variance**: repeated sampled runs (temperature > 0, different seeds): the mean
  over pairs of the standard deviation of the verdict value (−1/0/+1) across runs, and the mean
  share of run pairs that agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from metajudge.data.formats import PairwiseRecord, mean_label
from metajudge.errors import InputError
from metajudge.results import ItemAccess, Result
from metajudge.stats.decisions import (
    CONSISTENCY_RULE,
    TIE_POLICIES,
    Pref,
    TiePolicy,
    accuracy_tally,
    p_first_wins,
    position_consistency,
    pref_array,
    spell,
    tie_decisions,
)

BIASES_VERSION = "1"


def _r(v: float) -> float | None:
    return None if not math.isfinite(v) else round(float(v), 6)


def position_bias(ab: Sequence[Any], ba: Sequence[Any]) -> dict[str, Any]:
    """Consistency rate and P(first wins) from verdicts of the same records in orders ab and ba.

    >>> from metajudge.metrics.judges.pairwise import PairwiseVerdict as V
    >>> A, B = Pref.A, Pref.B
    >>> ab = [V("1", "ab", A, A), V("2", "ab", A, A), V("3", "ab", B, B)]
    >>> ba = [V("1", "ba", A, B), V("2", "ba", B, A), V("3", "ba", A, B)]
    >>> d = position_bias(ab, ba); d["consistency"], d["p_first_wins"]
    (0.666667, 0.666667)
    """
    if len(ab) != len(ba):
        raise InputError(
            f"position bias needs the same records in both orders ({len(ab)} vs {len(ba)} verdicts)"
        )
    pc = position_consistency([x.preferred for x in ab], [y.preferred for y in ba])
    first, n_decisive = p_first_wins([v.decision for v in (*ab, *ba)])
    per_order = {}
    for name, vs in (("ab", ab), ("ba", ba)):
        fw, nd = p_first_wins([v.decision for v in vs])
        per_order[name] = {
            "p_first_wins": _r(fw) if nd else None,
            "p_tie": _r(sum(v.decision == Pref.TIE for v in vs) / len(vs)) if vs else None,
            "unparsed": sum(v.decision is None for v in vs),
        }
    return {
        "consistency": _r(pc.rate) if pc.n else None,
        "n_both_orders": pc.n,
        "n_unparsed": pc.unparsed,
        "consistency_rule": CONSISTENCY_RULE,
        "p_first_wins": _r(first) if n_decisive else None,
        "n_decisive": n_decisive,
        "per_order": per_order,
    }


def _words(text: str | None) -> int:
    return len((text or "").split())


def human_sign(record: PairwiseRecord, dimension: str) -> float | None:
    """Sign of the annotators' mean label (+1 b better, −1 a better, 0 tie), None if unlabelled."""
    m = mean_label(record.labels.get(dimension, ()))
    return None if m is None else float(tie_decisions(m))


def length_bias(
    records: Sequence[PairwiseRecord], preferred: Sequence[Pref | None], *, dimension: str
) -> dict[str, Any]:
    """P(judge prefers the longer response) vs the humans' rate, on pairs of unequal length."""
    if len(records) != len(preferred):
        raise InputError(f"{len(records)} records but {len(preferred)} verdicts")
    j_long = j_n = h_long = h_n = 0
    for r, p in zip(records, preferred, strict=True):
        la, lb = _words(r.a.response), _words(r.b.response)
        if la == lb:
            continue
        longer = Pref.B if lb > la else Pref.A
        if p is not None and p != Pref.TIE:
            j_n += 1
            j_long += p == longer
        h = human_sign(r, dimension)
        if h is not None and h != 0:
            h_n += 1
            h_long += (Pref.B if h > 0 else Pref.A) == longer
    return {
        "judge_p_longer": _r(j_long / j_n) if j_n else None,
        "n_judge": j_n,
        "human_p_longer": _r(h_long / h_n) if h_n else None,
        "n_human": h_n,
        "length_unit": "whitespace words",
    }


def accuracy_vs_humans(
    records: Sequence[PairwiseRecord],
    preferred: Sequence[Pref | None],
    *,
    dimension: str,
    policy: TiePolicy = "exclude_human_ties",
) -> dict[str, Any]:
    """Accuracy of the judge against the humans' majority (sign of the mean label) under ``policy``.

    An unparsed verdict (None) counts as wrong under every policy (and is counted in ``unparsed``).

    >>> from metajudge.data.formats import Input, Response
    >>> rec = lambda i, lab: PairwiseRecord(str(i), Input("q"), Response("x", "r"), Response("y", "s"), {"p": (lab,)})
    >>> recs = [rec(0, 1.0), rec(1, -1.0), rec(2, 0.0), rec(3, 1.0)]
    >>> prefs = [Pref.B, Pref.B, Pref.TIE, Pref.TIE]
    >>> [accuracy_vs_humans(recs, prefs, dimension="p", policy=p)["value"] for p in TIE_POLICIES]
    [0.333333, 0.5, 0.5]
    """
    if policy not in TIE_POLICIES:
        raise InputError(
            f"unknown tie policy {policy!r}; choose one of {', '.join(TIE_POLICIES)}",
            field="tie_policy",
        )
    if len(records) != len(preferred):
        raise InputError(f"{len(records)} records but {len(preferred)} verdicts")
    human = [human_sign(r, dimension) for r in records]
    t = accuracy_tally(
        human=[math.nan if h is None else h for h in human],
        judge=pref_array(preferred),
        policy=policy,
        unjudged="wrong",
    )
    value = _r(t.value) if t.n else None
    return {"value": value, "n": t.n, "unparsed": t.unjudged, "policy": policy}


def run_to_run_variance(runs: Sequence[Sequence[Pref | None]]) -> dict[str, Any]:
    """Spread of verdicts across repeated runs: mean per-pair SD of the verdict value, agreement rate.

    >>> A, B, T = Pref.A, Pref.B, Pref.TIE
    >>> run_to_run_variance([[A, B, T], [A, A, T]])["agreement"]
    0.666667
    """
    if len(runs) < 2:
        return {
            "runs": len(runs),
            "mean_sd": None,
            "agreement": None,
            "note": "needs two or more runs",
        }
    m = np.array([pref_array(run) for run in runs])  # runs × pairs
    ok = np.isfinite(m).sum(0) >= 2
    sd = np.array([np.nanstd(m[:, j], ddof=1) for j in np.flatnonzero(ok)])
    agree = []
    k = m.shape[0]
    for j in np.flatnonzero(ok):
        col = m[:, j][np.isfinite(m[:, j])]
        pairs = [(col[a] == col[b]) for a in range(col.size) for b in range(a + 1, col.size)]
        agree.append(float(np.mean(pairs)))
    return {
        "runs": k,
        "mean_sd": _r(float(sd.mean())) if sd.size else None,
        "agreement": _r(float(np.mean(agree))) if agree else None,
        "n_pairs": int(ok.sum()),
    }


def combine_orders(ab: Sequence[Any], ba: Sequence[Any]) -> list[Pref | None]:
    """The verdict of both orders combined: a side wins only if it wins in both, else a tie."""
    both: list[Pref | None] = []
    for x, y in zip(ab, ba, strict=True):
        if x.preferred is None or y.preferred is None:
            both.append(None)
        else:
            both.append(x.preferred if x.preferred == y.preferred else Pref.TIE)
    return both


def verdict_diagnostics(
    records: Sequence[PairwiseRecord],
    ab: Sequence[Any],
    ba: Sequence[Any],
    *,
    dimension: str,
    tie_policy: TiePolicy = "exclude_human_ties",
    sampled: Sequence[Sequence[Any]] = (),
    temperature: float = 0.7,
) -> dict[str, Any]:
    """Position, length, accuracy and run-to-run diagnostics of one judge's verdicts.

    ``ab`` / ``ba``: the verdicts of ``records`` in both orders; ``sampled``: repeated sampled
    runs in order ab (at ``temperature``; fewer than two: the variance is not defined). The
    judging is the caller's (:func:`metajudge.runs.judge_diagnostics.diagnose_backbone`).
    """
    pref_ab = [v.preferred for v in ab]
    out: dict[str, Any] = {
        "position": position_bias(ab, ba),
        "length": length_bias(records, pref_ab, dimension=dimension),
        "accuracy": accuracy_vs_humans(records, pref_ab, dimension=dimension, policy=tie_policy)
        | {"orders": "ab"},
        "accuracy_both_orders": accuracy_vs_humans(
            records, combine_orders(ab, ba), dimension=dimension, policy=tie_policy
        )
        | {"orders": "both (inconsistent = tie)"},
    }
    if len(sampled) > 1:
        out["variance"] = run_to_run_variance([[v.preferred for v in run] for run in sampled]) | {
            "temperature": temperature
        }
    else:
        out["variance"] = {
            "runs": 1,
            "mean_sd": None,
            "agreement": None,
            "note": "greedy single run (use runs > 1 to sample)",
        }
    return out


def verdict_rows(ab: Sequence[Any], ba: Sequence[Any]) -> list[dict[str, Any]]:
    """Per pair: its id, the decision in each order as the judge said it (``A``/``B``/``tie``,
    positional) and the first 40 characters of each reply."""
    return [
        {
            "id": x.id,
            "ab": spell(x.decision, "positional"),
            "ba": spell(y.decision, "positional"),
            "ab_raw": x.raw[:40],
            "ba_raw": y.raw[:40],
        }
        for x, y in zip(ab, ba, strict=True)
    ]


@dataclass
class DiagnosticsResult(ItemAccess, Result):
    """Judge diagnostics per backbone (:func:`metajudge.runs.judge_diagnostics.run_judge_diagnostics`):
    ``backbones[bb]`` holds :func:`verdict_diagnostics` with the run's signature, parse failures,
    calls, ledger and :func:`verdict_rows`."""

    dataset: str
    dimension: str
    n_pairs: int
    protocol: str
    backbones: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: where the pairs were loaded from (:attr:`metajudge.data.registry.Dataset.source`); the
    #: report loads them again from there. Not written when unknown.
    source: dict[str, Any] | None = None
    #: the pairs judged (:func:`metajudge.data.subsample.Draw.describe`: n of N, how, seed, the
    #: ids) and ``no_texts``, the drawn pairs left out for want of both response texts
    subset: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("source", "subset"):
            if d[key] is None:
                del d[key]
        return d

    def to_pandas(self) -> Any:
        """One row per backbone: its scalar diagnostics (nested blocks flattened with ``.``)."""
        import pandas as pd

        return pd.json_normalize(
            [{"backbone": bb, **d} for bb, d in self.backbones.items()], max_level=1
        )
