"""``metajudge judge diagnostics`` end to end: load pairs, judge both orders per backbone.

The judging lives here (:func:`diagnose_backbone`); the statistics of the verdicts are
:func:`metajudge.analyses.judge_biases.verdict_diagnostics`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.analyses.judge_biases import (
    BIASES_VERSION,
    DiagnosticsResult,
    TiePolicy,
    verdict_diagnostics,
    verdict_rows,
)
from metajudge.backends.ledger import CACHED_COST
from metajudge.data.formats import PairwiseRecord
from metajudge.errors import InputError


def run_judge_diagnostics(
    dataset: str | None,
    backbones: Sequence[str],
    *,
    input_file: str | Path | None = None,
    limit: int | None = 100,
    dimension: str | None = None,
    tie_policy: TiePolicy = "exclude_human_ties",
    runs: int = 1,
    temperature: float = 0.7,
    seed: int = 0,
    data_dir: str | Path | None = None,
    judge_options: Mapping[str, Any] | None = None,
    first: int | None = None,
    metric: str = "pairwise_judge",
) -> DiagnosticsResult:
    """Load a pairwise dataset, judge ``limit`` pairs drawn with ``seed`` (or the ``first``
    pairs: :func:`metajudge.data.subsample.select`, the rule of every command; pairs without
    both response texts are then left out) in both orders under each backbone.

    ``dataset``: a registry name, or None with ``input_file`` (any file
    :func:`~metajudge.data.loading.load` reads). ``metric``: the built-in pairwise judge, or a
    pairwise judge defined in a file (``judge:PATH``, :func:`pairwise_judge`). This is what
    ``metajudge judge diagnostics`` runs. Backbones run one after the other.
    """
    from metajudge.data.loading import open_dataset

    ds = open_dataset(dataset, input_file, data_dir=data_dir)
    dataset = ds.card.name
    if ds.card.kind != "pairwise":
        raise InputError(
            "judge diagnostics need a pairwise dataset with response texts (pairs of responses "
            f"to one input); {dataset!r} is {ds.card.kind}",
            path=input_file,
            field="dataset",
        )
    records, subset = diagnostics_pairs(ds.records, limit=limit, first=first, seed=seed)
    if not records:
        raise InputError(
            f"dataset {dataset!r} has no pairs with both response texts", path=input_file
        )
    dim = dimension or ds.card.dimensions[0]
    if dim not in ds.card.dimensions:
        raise InputError(
            f"dataset {dataset!r} has no dimension {dim!r} (it has {', '.join(ds.card.dimensions)})",
            field="dimension",
        )
    out = DiagnosticsResult(
        dataset=dataset,
        dimension=dim,
        n_pairs=len(records),
        protocol=f"judge-diagnostics|orders:ab+ba|tie_policy:{tie_policy}|runs:{runs}|temp_runs:{temperature:g}"
        f"|length:words|{_subset_bit(limit, first)}|seed:{seed}|version:{BIASES_VERSION}",
        source=ds.source or None,  # the report loads the pairs from there
        subset=subset,
    )
    for bb in backbones:
        judge = pairwise_judge(metric, bb, seed=seed, judge_options=judge_options)
        try:
            out.backbones[bb] = diagnose_backbone(
                judge,
                records,
                dimension=dim,
                tie_policy=tie_policy,
                runs=runs,
                temperature=temperature,
                seed=seed,
                confidence_metric=None if judge.confidence == "none" else f"confidence_{bb}",
            )
        finally:
            judge.close()
    return out


def pairwise_judge(
    metric: str, backbone: str, *, seed: int = 0, judge_options: Mapping[str, Any] | None = None
) -> Any:
    """The pairwise judge ``metric`` names on ``backbone``: the built-in ``pairwise_judge``
    (``judge_options``: its options), or a pairwise definition ``judge:PATH``, whose file
    decides its prompt, parser and confidence (``judge_options`` are refused)."""
    from metajudge.metrics.judges.pairwise import PairwiseJudge
    from metajudge.metrics.registry import get_metric

    if metric == PairwiseJudge.name:
        return PairwiseJudge(backbone=backbone, seed=seed, **dict(judge_options or {}))
    if not metric.startswith("judge:"):
        raise InputError(
            f"{metric!r} is not a pairwise judge: pairwise_judge or judge:PATH of a pairwise "
            "definition",
            field="--metric",
        )
    if judge_options:
        raise InputError(
            f"{', '.join(judge_options)}: a judge defined in a file takes its parser and "
            "confidence from the file (parse: logprobs gives class probabilities)",
            field="--confidence",
        )
    judge = get_metric(metric, backbone=backbone, seed=seed)
    if getattr(judge, "kind", None) != "pairwise":
        judge.close()
        raise InputError(f"{metric} is a {judge.kind} judge, not pairwise", field="--metric")
    return judge


def diagnostics_pairs(
    records: Sequence[Any], *, limit: int | None, first: int | None = None, seed: int = 0
) -> tuple[list[PairwiseRecord], dict[str, Any]]:
    """The pairs ``judge diagnostics`` judges: the subset of
    :func:`metajudge.data.subsample.select` (``limit`` drawn with ``seed``, or the ``first``),
    less the pairs without both response texts (counted in the description, ``no_texts``)."""
    from metajudge.data.subsample import select

    draw = select(records, limit=limit, first=first, seed=seed)
    pairs = [
        r
        for r in draw.records
        if isinstance(r, PairwiseRecord) and r.a.response is not None and r.b.response is not None
    ]
    subset = {**draw.describe(seed), "no_texts": len(draw.records) - len(pairs)}
    return pairs, subset


def _subset_bit(limit: int | None, first: int | None) -> str:
    """The protocol's subset part: ``limit:N`` (the seeded draw) or ``first:N``."""
    return f"first:{first}" if first is not None else f"limit:{limit}"


def diagnose_backbone(
    judge: Any,
    records: Sequence[PairwiseRecord],
    *,
    dimension: str,
    tie_policy: TiePolicy = "exclude_human_ties",
    runs: int = 1,
    temperature: float = 0.7,
    seed: int = 0,
    confidence_metric: str | None = None,
) -> dict[str, Any]:
    """Judge ``records`` in both orders (and ``runs`` sampled times when > 1) with one pairwise
    judge (a :class:`PairwiseJudge`); its diagnostics, parse failures, calls and ledger.
    ``confidence_metric``: also the ab-order verdicts' probabilities as score rows of that
    metric (:func:`confidence_rows`), under ``confidence_rows``."""
    import time

    t0 = time.perf_counter()
    ab = judge.judge(records, order="ab")
    ba = judge.judge(records, order="ba")
    sampled = []
    if runs > 1:
        sampled = [
            judge.judge(records, order="ab", seed=seed + 1 + i, temperature=temperature)
            for i in range(runs)
        ]
    stats = verdict_diagnostics(
        records,
        ab,
        ba,
        dimension=dimension,
        tie_policy=tie_policy,
        sampled=sampled,
        temperature=temperature,
    )
    out: dict[str, Any] = {"n": len(records), "signature": judge.signature, **stats}
    summ = judge.summary
    out["parse_failure_rate"] = summ.get("parse_failure_rate")
    out["parse_failures"] = summ.get("parse_failures")
    out["calls"] = summ.get("calls")
    out["ledger"] = _ledger(summ, time.perf_counter() - t0)
    out["verdicts"] = verdict_rows(ab, ba)
    if confidence_metric is not None:
        out["confidence_missing"] = summ.get("confidence_missing", 0)
        out["confidence_rows"] = confidence_rows(ab, records, confidence_metric, judge.signature)
    return out


def _ledger(summ: Mapping[str, Any], wall: float) -> dict[str, Any]:
    """Tokens, calls, cache hits and cost of one judge run (its ``summary``), with the wall time."""
    cost = dict(summ.get("cost", {}))
    ledger = dict(summ.get("ledger", {}))
    return {
        "prompt_tokens": cost.get("prompt_tokens", ledger.get("prompt_tokens")),
        "processed_prompt_tokens": cost.get("processed_prompt_tokens"),
        "completion_tokens": cost.get("completion_tokens", ledger.get("completion_tokens")),
        "backend_calls": cost.get("calls"),
        "cached": cost.get("cached", ledger.get("cached")),
        "cost_usd": ledger.get("cost_usd", 0.0),
        "wall_s": round(wall, 2),
        "cached_cost": {k: cost.get(k, 0) for k in CACHED_COST},
    }


def confidence_rows(
    verdicts: Sequence[Any],
    records: Sequence[PairwiseRecord],
    metric: str,
    signature: str,
) -> list[dict[str, Any]]:
    """The verdicts' class probabilities as score rows, a confidence column that ``calibrate
    selective`` / ``conformal`` read: per pair a side-a row p(a better) and a side-b row
    p(b better), renormalised over a and b when the judge put mass on a tie (the three-class
    ``probs`` kept in details, with ``renormalised``). A verdict without probabilities gives
    rows with no score and the error ``no verdict probabilities``."""
    from metajudge.scores.readers.rows import make_row

    by = {r.id: r for r in records}
    out: list[dict[str, Any]] = []
    for v in verdicts:
        rec = by[v.id]
        probs = v.details.get("probs")
        ab = (probs or {}).get("a", 0.0) + (probs or {}).get("b", 0.0)
        det = {
            k: v.details[k]
            for k in ("probs", "confidence", "probability_mass", "n_samples")
            if k in v.details
        }
        det["renormalised"] = bool(probs) and abs(ab - 1.0) > 1e-9
        for side, resp in (("a", rec.a), ("b", rec.b)):
            score = probs[side] / ab if probs and ab > 0 else None
            err = None if score is not None else "no verdict probabilities"
            row = make_row(
                item=rec.id,
                system=resp.system,
                side=side,
                metric=metric,
                score=score,
                signature=signature,
                details=det,
                error=err,
            )
            out.append(dict(row))
    return out
