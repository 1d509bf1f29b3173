"""The pairwise judge's matrix cell: accuracy against the humans with position consistency,
computed by :func:`metajudge.runs.judge_diagnostics.diagnose_backbone` (what ``metajudge judge
diagnostics`` runs: both orders, ties of the humans excluded), with a bootstrap CI of the
accuracy over pairs (:func:`metajudge.stats.bootstrap_mean_ci`)."""

from __future__ import annotations

from typing import Any

from metajudge.data.formats import PairwiseRecord
from metajudge.errors import InputError

TIE_POLICY = "exclude_human_ties"


def _accuracy_ci(
    value: float | None, n: int, seed: int, n_boot: int
) -> tuple[list[float] | None, str | None]:
    """The CI of an accuracy from its value and n (each pair is right or wrong: the 0/1 vector
    is fixed up to order by the two), and its method: the percentile bootstrap of the mean
    (resamples of :func:`~metajudge.stats.bootstrap_indices`) from
    :data:`~metajudge.stats.intervals.SMALL_N` pairs up, Wilson below, none below 5
    (:func:`~metajudge.stats.intervals.choose`)."""
    import numpy as np

    from metajudge.stats import bootstrap_indices
    from metajudge.stats.intervals import SMALL_N, choose

    if value is None or n == 0:
        return None, None
    k = round(value * n)
    correct = np.array([1.0] * k + [0.0] * (n - k))
    samples = correct[bootstrap_indices(n, n_boot, np.random.default_rng(seed))].mean(axis=1)
    iv = choose("accuracy", value, n, samples, 0.95, small_n=SMALL_N)
    ci = None if iv.ci is None else [round(float(b), 6) for b in iv.ci]
    return ci, iv.method


def _results(dim: str, d: dict[str, Any], n_pairs: int, opts: Any) -> list[dict[str, Any]]:
    """The cell's results: both accuracies with their CIs and methods, position consistency."""
    both, ab = d["accuracy_both_orders"], d["accuracy"]
    pos = d["position"]
    ci_both, how_both = _accuracy_ci(both["value"], both["n"], opts.seed, opts.n_boot)
    ci_ab, how_ab = _accuracy_ci(ab["value"], ab["n"], opts.seed, opts.n_boot)
    return [
        {
            "dimension": dim,
            "statistic": "accuracy_both_orders",
            "value": both["value"],
            "ci": ci_both,
            "ci_method": how_both,
            "n": both["n"],
            "undefined": None if both["value"] is not None else "no pair with a human preference",
        },
        {
            "dimension": dim,
            "statistic": "accuracy_ab",
            "value": ab["value"],
            "ci": ci_ab,
            "ci_method": how_ab,
            "n": ab["n"],
        },
        {
            "dimension": dim,
            "statistic": "position_consistency",
            "value": pos.get("consistency"),
            "ci": None,
            "n": n_pairs,
        },
    ]


def pairwise_cell(opts: Any, prep: Any) -> dict[str, Any]:
    """Judge the subset's pairs in both orders under ``opts.backbone``; the cell's results."""
    from metajudge.metrics.judges.pairwise import PAIRWISE_PARSER_VERSION, PairwiseJudge
    from metajudge.runs.judge_diagnostics import diagnose_backbone
    from metajudge.runs.matrix.prepare import open_backend

    recs = [
        r
        for r in prep.dataset.records
        if isinstance(r, PairwiseRecord) and r.a.response is not None and r.b.response is not None
    ]
    if not recs:
        raise InputError(f"{prep.facts.name}: no pair has both response texts", field="dataset")
    dim = prep.facts.dimensions[0]
    backend, counter = open_backend(opts.backbone, PAIRWISE_PARSER_VERSION, opts.seed)
    kw: dict[str, Any] = {"backend": backend, "seed": opts.seed}
    if opts.prompt_variant:
        kw["variant"] = opts.prompt_variant
    judge = PairwiseJudge(backbone=backend.name, **kw)
    try:
        d = diagnose_backbone(judge, recs, dimension=dim, tie_policy=TIE_POLICY, seed=opts.seed)
    finally:
        judge.close()
        backend.close()
    n_pairs = len(recs)
    results = _results(dim, d, n_pairs, opts)
    led = d["ledger"]
    calls = int(led.get("backend_calls") or 0)
    cached = int(led.get("cached") or 0)
    return {
        "signature": d["signature"],
        "results": results,
        "ledger": {
            "requests": 2 * n_pairs,
            "calls": calls,
            "cached": cached,
            "prompt_tokens": int(led.get("prompt_tokens") or 0),
            "processed_prompt_tokens": int(led.get("processed_prompt_tokens") or 0),
            "completion_tokens": int(led.get("completion_tokens") or 0),
            "prompt_chars": counter.chars,
            "model_s": round(counter.model_s, 2),
            "start_s": round(counter.start_s, 2),
            "responses": 2 * n_pairs,
            "unscored": int(d.get("parse_failures") or 0),
            "parse_failures": int(d.get("parse_failures") or 0),
            "wall_s": led.get("wall_s"),
            "cached_cost": dict(led.get("cached_cost") or {}),
        },
        "protocol_options": {
            "tie_policy": TIE_POLICY,
            "orders": "ab+ba; accuracy: both orders, an inconsistent pair counts as a tie",
            "dimension": dim,
        },
    }
