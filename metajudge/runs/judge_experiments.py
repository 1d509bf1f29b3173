"""Sanity experiments for the judges (the figures in the judges' note).

- :func:`run_equivalence_probe` — the answer-equivalence judge on rule-generated probes
  (:func:`~metajudge.metrics.judges.probes.equivalence_probes`): accuracy, false-accept rate
  (label 0 judged equivalent) and false-reject rate (label 1 judged not equivalent) per
  backbone, for the LLM alone (fast path off) and for the full judge (fast path on).
- :func:`run_mtraig_perturb` — MT-RAIG faithfulness on reference insights used as predictions
  and on a copy with changed numbers, for ``per_claim`` and ``batched`` verification: both means
  with bootstrap CIs, the per-claim agreement of the two modes, and each mode's cost per insight.
- :func:`run_mudabench` — the MuDABench judge on a predictions file (``judge mudabench``).

Each writes its result as JSON to ``output`` when given (:func:`metajudge.io.write_json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.data.formats import Input, response_key, split_response_key
from metajudge.metrics.base import ScoreItem


def _mean_ci(values: Sequence[float], rng: np.random.Generator, n_boot: int) -> list[float]:
    """[mean, lo, hi]: the mean and its percentile bootstrap CI (:func:`~metajudge.stats.bootstrap_mean_ci`)."""
    from metajudge.stats import bootstrap_mean_ci

    x = np.asarray(values, dtype=float)
    mean = float(x.mean()) if x.size else float("nan")
    return [mean, *bootstrap_mean_ci(x, rng, n_resamples=n_boot)]


def _rates(labels: Sequence[int], preds: Sequence[float | None]) -> dict[str, Any]:
    from metajudge.stats.classification import accuracy

    pairs = [(lab, p) for lab, p in zip(labels, preds, strict=True)]
    judged = [(lab, int(p)) for lab, p in pairs if p is not None]
    neg = [p for lab, p in judged if lab == 0]
    pos = [p for lab, p in judged if lab == 1]
    n_fail = sum(p is None for _, p in pairs)
    return {
        "n": len(pairs),
        "judged": len(judged),
        "unparseable": n_fail,
        "unparseable_rate": round(n_fail / len(pairs), 4) if pairs else None,
        "accuracy": round(accuracy(*zip(*judged)), 4) if judged else None,
        "false_accept_rate": round(sum(neg) / len(neg), 4) if neg else None,
        "false_reject_rate": round(sum(1 - p for p in pos) / len(pos), 4) if pos else None,
        "n_must_accept": sum(lab == 1 for lab, _ in pairs),
        "n_must_reject": sum(lab == 0 for lab, _ in pairs),
    }


def run_equivalence_probe(
    backbones: Sequence[str],
    *,
    golds: int = 20,
    seed: int = 0,
    variants: Sequence[str] = ("simple", "complex"),
    data_dir: str | Path | None = None,
    prompt_variant: str | None = None,
    output: str | Path | None = None,
) -> dict[str, Any]:
    """Generate the probe set from MuDABench gold answers and judge it under each backbone."""
    from metajudge.data.benchmarks import load_mudabench
    from metajudge.metrics.judges.equivalence import AnswerEquivalence
    from metajudge.metrics.judges.probes import equivalence_probes

    qs = [q for v in variants for q in load_mudabench(v, data_dir=data_dir)]  # type: ignore[arg-type]
    triples = [(f"{q.variant}#{q.index}", q.question, q.final_answer) for q in qs]
    probes = equivalence_probes(triples, np.random.default_rng(seed), max_golds=golds)
    items = [ScoreItem(p.id, p.prediction, p.gold, Input(p.question)) for p in probes]
    labels = [p.label for p in probes]
    out: dict[str, Any] = {
        "seed": seed,
        "golds": golds,
        "probes": [p.to_dict() for p in probes],
        "backbones": {},
    }
    kinds = sorted({p.kind for p in probes})
    for bb in backbones:
        res: dict[str, Any] = {}
        llm = AnswerEquivalence(backbone=bb, variant=prompt_variant, fast_path=False)
        try:
            r_llm = llm.score_batch(items)
            res["llm_only"] = _rates(labels, [r.score for r in r_llm])
            res["llm_only"]["by_kind"] = {
                k: _rates(
                    [lab for lab, p in zip(labels, probes, strict=True) if p.kind == k],
                    [r.score for r, p in zip(r_llm, probes, strict=True) if p.kind == k],
                )
                for k in kinds
            }
            res["llm_only"]["signature"] = llm.signature
            res["llm_only"]["cost"] = llm.summary.get("cost")
            full = AnswerEquivalence(backbone=bb, variant=prompt_variant, fast_path=True)
            full.use_client(llm.client)  # same server; the cache answers the LLM calls again
            r_full = full.score_batch(items)
            res["with_fast_path"] = _rates(labels, [r.score for r in r_full])
            res["with_fast_path"]["fast_path_share"] = full.summary["fast_path_share"]
            res["with_fast_path"]["signature"] = full.signature
            res["examples"] = [
                {
                    "id": p.id,
                    "label": p.label,
                    "kind": p.kind,
                    "llm": r.score,
                    "raw": r.details.get("raw", "")[:200],
                }
                for p, r in list(zip(probes, r_llm, strict=True))[:12]
            ]
            full.use_client(None)
        finally:
            llm.close()
        out["backbones"][bb] = res
    return _written(out, output)


def _written(res: dict[str, Any], output: str | Path | None) -> dict[str, Any]:
    """``res``, written as JSON to ``output`` first when given."""
    if output:
        from metajudge.io import write_json

        write_json(output, res)
    return res


def run_mudabench(
    predictions: str | Path,
    *,
    variant: str,
    backbone: str,
    prompt_variant: str | None = None,
    fast_path: bool = True,
    process: bool = True,
    data_dir: str | Path | None = None,
    output: str | Path | None = None,
) -> dict[str, Any]:
    """The MuDABench judge (:func:`metajudge.metrics.judges.mudabench_judge.judge_mudabench`) on
    the predictions file: final, process and full accuracy over the questions."""
    from metajudge.metrics.judges.mudabench_judge import judge_mudabench, read_predictions

    res = judge_mudabench(
        read_predictions(predictions),
        variant=variant,
        backbone=backbone,
        prompt_variant=prompt_variant,
        fast_path=fast_path,
        process=process,
        data_dir=data_dir,
    )
    return _written(res, output)


def multi_table_items(
    n: int,
    *,
    seed: int = 0,
    data_dir: str | Path | None = None,
    min_tables: int = 2,
    min_numbers: int = 2,
) -> list[Any]:
    """``n`` MT-RAIG items with ≥ ``min_tables`` tables whose reference has ≥ ``min_numbers``
    changeable numbers, in a seeded random order."""
    from metajudge.data.benchmarks import load_mtraig_items
    from metajudge.metrics.judges.probes import perturb_numbers

    items = load_mtraig_items(data_dir=data_dir)
    rng = np.random.default_rng(seed)
    out = []
    for i in rng.permutation(len(items)):
        it = items[int(i)]
        if (
            len(it.tables) >= min_tables
            and perturb_numbers(it.reference, np.random.default_rng(0), min_changed=min_numbers)
            is not None
        ):
            out.append(it)
        if len(out) >= n:
            break
    return out


_COST_KEYS = ("calls", "prompt_tokens", "processed_prompt_tokens", "completion_tokens", "wall_s")


def _perturbed_items(chosen: Sequence[Any], rng: np.random.Generator) -> list[ScoreItem]:
    """Each item's reference insight and a number-perturbed copy, both judged against the tables."""
    from metajudge.metrics.judges.probes import perturb_numbers

    out: list[ScoreItem] = []
    for it in chosen:
        inp = Input(it.question, it.reference, tables=it.tables)
        got = perturb_numbers(it.reference, rng)
        assert got is not None  # multi_table_items keeps only perturbable references
        out.append(ScoreItem(response_key(it.id, "reference"), it.reference, it.reference, inp))
        out.append(ScoreItem(response_key(it.id, "perturbed"), got[0], it.reference, inp))
    return out


def run_mtraig_perturb(
    *,
    backbone: str,
    n_items: int = 20,
    seed: int = 0,
    modes: Sequence[str] = ("per_claim", "batched"),
    data_dir: str | Path | None = None,
    prompt_variant: str | None = None,
    n_boot: int = 2000,
    output: str | Path | None = None,
) -> dict[str, Any]:
    """Faithfulness of reference insights vs perturbed copies, per verification mode, with cost."""
    from metajudge.metrics.judges.mtraig import MTRAIGFaithfulness

    rng = np.random.default_rng(seed)
    chosen = multi_table_items(n_items, seed=seed, data_dir=data_dir)
    score_items = _perturbed_items(chosen, rng)
    out: dict[str, Any] = {"backbone": backbone, "n_items": len(chosen), "seed": seed, "modes": {}}
    verdicts: dict[str, dict[str, list[float | None]]] = {}
    claims_of: dict[str, dict[str, list[str]]] = {}
    shared = None
    decomp_cost: dict[str, Any] | None = None
    try:
        for mode in modes:
            m = MTRAIGFaithfulness(backbone=backbone, mode=mode, variant=prompt_variant)  # type: ignore[arg-type]
            before = None
            if shared is not None:
                m.use_client(shared)
                before = shared.stats.to_dict()
            res = m.score_batch(score_items)
            shared = m.client
            stage = dict(m.stage_stats)
            # the decomposition is the same request in every mode: it runs once (the first mode)
            # and is served from the cache after; each mode's cost counts it as run once
            decomp_cost = stage["decompose"] if decomp_cost is None else decomp_cost
            stage["decompose_cached"], stage["decompose"] = stage["decompose"], decomp_cost
            out["modes"][mode] = _mode_result(m, res, stage, rng, n_boot, len(score_items))
            out["modes"][mode]["run_cost_delta"] = _delta(before, shared.stats.to_dict())
            verdicts[mode] = {r.key: list(r.details.get("verdicts") or []) for r in res}
            claims_of[mode] = {r.key: list(r.details.get("claims") or []) for r in res}
        if len(modes) == 2:
            out.update(_compare_modes(out["modes"], modes, verdicts, claims_of))
        out["examples"] = [
            {"key": it.key, "text": (it.response or "")[:300]} for it in score_items[:4]
        ]
    finally:
        if shared is not None:
            shared.close()
    return _written(out, output)


def _mode_result(
    m: Any,
    res: Sequence[Any],
    stage: dict[str, Any],
    rng: np.random.Generator,
    n_boot: int,
    n_ins: int,
) -> dict[str, Any]:
    """Scores (reference vs perturbed, paired, bootstrap CIs), parse counts and cost of one mode."""
    ref = [r.score for r in res if split_response_key(r.key)[1] == "reference"]
    per = [r.score for r in res if split_response_key(r.key)[1] == "perturbed"]
    paired = [(a, b) for a, b in zip(ref, per, strict=True) if a is not None and b is not None]
    return {
        "signature": m.signature,
        "scored_pairs": len(paired),
        "unscored": sum(r.score is None for r in res),
        "errors": sorted({r.error for r in res if r.error}),
        "reference_mean_ci": _mean_ci([a for a, _ in paired], rng, n_boot),
        "perturbed_mean_ci": _mean_ci([b for _, b in paired], rng, n_boot),
        "difference_mean_ci": _mean_ci([a - b for a, b in paired], rng, n_boot),
        "perturbed_lower_share": round(sum(a > b for a, b in paired) / len(paired), 4)
        if paired
        else None,
        "parse_failures": m.parse_failures,
        "parse_attempts": m.parse_attempts,
        "stage_cost": stage,
        "cost_per_insight": {k: round(v / n_ins, 3) for k, v in _totals(stage).items()},
        "verify_cost_per_insight": {
            k: round(float(stage["verify"].get(k, 0)) / n_ins, 3) for k in _COST_KEYS
        },
    }


def _compare_modes(
    results: dict[str, dict[str, Any]],
    modes: Sequence[str],
    verdicts: dict[str, dict[str, list[float | None]]],
    claims_of: dict[str, dict[str, list[str]]],
) -> dict[str, Any]:
    """Verdict agreement of two modes on the same claims, and their cost ratios."""
    a, b = modes
    agree = total = 0
    for key, va in verdicts[a].items():
        if claims_of[a].get(key) != claims_of[b].get(key):
            continue  # same decomposition request → same claims (cache); guard anyway
        for x, y in zip(va, verdicts[b].get(key, []), strict=False):
            if x is None or y is None:
                continue
            total += 1
            agree += int(round(x) == round(y))
    ca, cb = results[a]["cost_per_insight"], results[b]["cost_per_insight"]
    va_, vb_ = results[a]["verify_cost_per_insight"], results[b]["verify_cost_per_insight"]
    return {
        "agreement": {
            "modes": [a, b],
            "claims_compared": total,
            "agree": agree,
            "share": round(agree / total, 4) if total else None,
        },
        "ratios": {k: round(ca[k] / cb[k], 3) if cb.get(k) else None for k in _COST_KEYS},
        "verify_ratios": {k: round(va_[k] / vb_[k], 3) if vb_.get(k) else None for k in va_},
    }


def _totals(stage: dict[str, dict[str, Any]]) -> dict[str, float]:
    return {k: float(stage["decompose"].get(k, 0) + stage["verify"].get(k, 0)) for k in _COST_KEYS}


def _delta(before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, Any]:
    if before is None:
        return after
    return {
        k: (
            round(after[k] - before[k], 3)
            if isinstance(after[k], (int, float)) and not isinstance(after[k], bool)
            else after[k]
        )
        for k in after
    }
