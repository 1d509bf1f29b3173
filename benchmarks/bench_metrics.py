"""Benchmark: score all 560 RAGChecker responses with BLEU, ROUGE-L, METEOR and BERTScore.

Prints per-metric throughput (responses/s), BERTScore's speed-up over the naive use of the
library (``bert_score.score([cand], [ref], ...)`` once per pair, which reloads the model on every
call) with the max |ΔF1| between the two on the same pairs, and the peak RSS.

The naive path is slow, so it runs on a subset (``--naive-pairs``, default 40, spread evenly over
the 560); the ratio compares per-pair wall time: naive per pair on the subset vs. ours per pair
on the whole run (one model load + batched scoring of all 560), and also ours on the same subset.

Run: ``.venv/bin/python benchmarks/bench_metrics.py`` (needs METAJUDGE_DATA_DIR or
``../shared/human_labels``; HF_HUB_OFFLINE=1 is set here).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
_REPO = Path(__file__).resolve().parents[1]
if not os.environ.get("METAJUDGE_DATA_DIR") and (_REPO.parent / "shared" / "human_labels").is_dir():
    os.environ["METAJUDGE_DATA_DIR"] = str(_REPO.parent / "shared" / "human_labels")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="ragchecker_meta_eval")
    ap.add_argument("--naive-pairs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    import torch

    from metajudge.data.loading import load as load_dataset
    from metajudge.metrics.base import ScoreItem, iter_responses
    from metajudge.metrics.registry import get_metric

    refs = list(iter_responses(load_dataset(args.dataset).records))
    items = [ScoreItem(r.key, r.response, r.reference) for r in refs]
    n = len(items)
    words = sum(len((i.response or "").split()) for i in items) / n
    rwords = sum(len((i.reference or "").split()) for i in items) / n
    print(
        f"dataset {args.dataset}: {n} responses, mean {words:.0f} words (reference {rwords:.0f} words)"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, torch threads {torch.get_num_threads()}"
    )
    print()
    print(f"{'metric':<10} {'load s':>7} {'score s':>8} {'resp/s':>8}  signature")
    results = {}
    for name in ("bleu", "rouge_l", "meteor", "bertscore"):
        t0 = time.perf_counter()
        opts = {"batch_size": args.batch_size} if name == "bertscore" else {}
        m = get_metric(name, **opts)
        sig = m.signature
        if name == "bertscore":
            _ = m.scorer  # load the model once, timed as load
        elif name == "meteor":
            m.score_batch(items[:1])  # WordNet load
        t1 = time.perf_counter()
        res = m.score_batch(items)
        t2 = time.perf_counter()
        assert all(r.score is not None for r in res), [r.error for r in res if r.score is None][:3]
        results[name] = (m, res, t1 - t0, t2 - t1)
        print(f"{name:<10} {t1 - t0:7.2f} {t2 - t1:8.2f} {n / (t2 - t1):8.1f}  {sig}")
    print(f"peak RSS after the four metrics: {peak_rss_mib():.0f} MiB")

    bs, bres, bload, bscore = results["bertscore"]
    trunc = sum(1 for r in bres if r.details.get("truncated"))
    print(f"pairs with a text truncated at {bs.max_length} tokens: {trunc}/{n}")
    worst = _naive_vs_ours(items, bres, bload, bscore, bs, args, "full texts")
    # the same comparison on short texts (first 25 words of each text), where model loading dominates
    short = [
        ScoreItem(i.key, _first_words(i.response, 25), _first_words(i.reference, 25)) for i in items
    ]
    m3 = get_metric("bertscore", batch_size=args.batch_size)
    t0 = time.perf_counter()
    _ = m3.scorer
    t1 = time.perf_counter()
    sres = m3.score_batch(short)
    t2 = time.perf_counter()
    m3.close()
    print(
        f"\nshort texts (first 25 words): ours {n} pairs in {t2 - t1:.1f} s ({n / (t2 - t1):.1f} pairs/s), load {t1 - t0:.1f} s"
    )
    worst = max(worst, _naive_vs_ours(short, sres, t1 - t0, t2 - t1, bs, args, "short texts"))
    print(f"\npeak RSS: {peak_rss_mib():.0f} MiB")
    return 0 if worst <= 1e-6 else 1


def _first_words(text: str | None, k: int) -> str | None:
    return None if text is None else " ".join(text.split()[:k])


def _naive_vs_ours(items, res, load_s, score_s, bs, args, label) -> float:  # type: ignore[no-untyped-def]
    """Naive bert_score.score per pair on a subset vs ours; prints the ratio, returns max |dF1|."""
    import bert_score

    from metajudge.metrics.registry import get_metric

    n = len(items)
    # the naive path crashes on empty texts (bert-score 0.3.13 + transformers 5.x): non-empty pairs only
    ok = [
        i
        for i, it in enumerate(items)
        if (it.response or "").strip() and (it.reference or "").strip()
    ]
    k = min(args.naive_pairs, len(ok))
    idx = sorted({ok[round(i * (len(ok) - 1) / max(k - 1, 1))] for i in range(k)})
    sub = [items[i] for i in idx]
    ours_per_pair_full = (load_s + score_s) / n
    t0 = time.perf_counter()
    m2 = get_metric("bertscore", batch_size=args.batch_size)
    sub_res = m2.score_batch(sub)
    ours_sub = time.perf_counter() - t0
    m2.close()
    naive_f: list[float] = []
    t0 = time.perf_counter()
    for it in sub:
        _, _, F = bert_score.score(
            [it.response],
            [it.reference],
            model_type=str(bs.model_dir),
            num_layers=bs.num_layers,
            verbose=False,
        )
        naive_f.append(float(F[0]))
    naive = time.perf_counter() - t0
    naive_pp = naive / len(sub)
    diff_full = max(abs(naive_f[j] - res[i].score) for j, i in enumerate(idx))
    diff_sub = max(abs(naive_f[j] - sub_res[j].score) for j in range(len(sub)))
    print(f"\n[{label}] empty response or reference (0.0 without the model): {n - len(ok)}/{n}")
    print(
        f"[{label}] naive bert_score.score per pair (model reloaded each call), {len(sub)} pairs: "
        f"{naive:.1f} s = {naive_pp:.3f} s/pair"
    )
    print(
        f"[{label}] ours, whole run of {n} pairs (one load {load_s:.1f} s + batched {score_s:.1f} s): "
        f"{ours_per_pair_full:.4f} s/pair"
    )
    print(
        f"[{label}] ours, the same {len(sub)} pairs (fresh load included): {ours_sub:.1f} s = {ours_sub / len(sub):.4f} s/pair"
    )
    print(
        f"[{label}] speed-up vs naive per pair: whole run {naive_pp / ours_per_pair_full:.1f}x, "
        f"same subset {naive_pp / (ours_sub / len(sub)):.1f}x; naive extrapolated to {n} pairs: "
        f"{naive_pp * n:.0f} s vs ours {load_s + score_s:.1f} s"
    )
    worst = max(diff_full, diff_sub)
    print(
        f"[{label}] max |F1 ours - F1 naive| on those pairs: whole-run batch {diff_full:.2e}, subset batch "
        f"{diff_sub:.2e} ({'OK <= 1e-6' if worst <= 1e-6 else 'EXCEEDS 1e-6'})"
    )
    return worst


if __name__ == "__main__":
    sys.exit(main())
