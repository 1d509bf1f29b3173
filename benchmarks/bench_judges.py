"""Cost of MT-RAIG faithfulness verification: ``per_claim`` (the paper's pattern) vs ``batched``.

On N multi-table items of ``mtraig_precursor_kwondu`` (reference insights as predictions and a
copy with changed numbers — 2N insights), per evaluated insight: backend calls, prompt tokens
sent, prompt tokens the server actually processed (llama.cpp prefix reuse excluded, read from
the server log), completion tokens and wall time, for each mode; the ratio per_claim/batched
(target: batched ≥ 5× fewer processed prompt tokens). Then the same run again on the same
cache: every call must be served from the cache (0 backend calls).

Usage::

    python benchmarks/bench_judges.py [--items 20] [--backbone smollm2-135m] [--cache-dir DIR] [--out FILE]

Needs the embedded llama.cpp server (llama-cpp-python) and the data folder
(``$METAJUDGE_DATA_DIR``, default ``../shared/human_labels``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=20)
    ap.add_argument("--backbone", default="smollm2-135m")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--cache-dir", help="cache folder (default: a fresh temporary folder: a cold first run)"
    )
    ap.add_argument("--out", help="write both runs' results as JSON here")
    args = ap.parse_args(argv)

    repo = Path(__file__).resolve().parents[1]
    data = repo.parent / "shared" / "human_labels"
    if not os.environ.get("METAJUDGE_DATA_DIR") and data.is_dir():
        os.environ["METAJUDGE_DATA_DIR"] = str(data)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cache = args.cache_dir or tempfile.mkdtemp(prefix="mj-bench-judges-")
    os.environ["METAJUDGE_CACHE_DIR"] = cache

    from metajudge.runs.judge_experiments import run_mtraig_perturb

    cold = not (Path(cache) / "llm-cache.sqlite").exists()
    runs = []
    for attempt in (1, 2):
        t0 = time.perf_counter()
        res = run_mtraig_perturb(backbone=args.backbone, n_items=args.items, seed=args.seed)
        res["total_wall_s"] = round(time.perf_counter() - t0, 2)
        runs.append(res)
        print(
            f"== run {attempt} ({'cold cache' if attempt == 1 and cold else 'warm cache'}): {res['total_wall_s']:.1f} s, cache {cache}"
        )
        for mode, r in res["modes"].items():
            d = r["run_cost_delta"]
            print(
                f"  {mode:<9} backend calls {d['calls']}  cached {d['cached']}  requests {d['requests']}"
            )

    res = runs[0]
    n_ins = 2 * res["n_items"]
    print(
        f"\nper evaluated insight ({n_ins} insights = {res['n_items']} items x reference/perturbed), backbone {args.backbone}"
    )
    print(
        "| mode | calls | prompt tokens sent | prompt tokens processed | completion tokens | wall s |"
    )
    print("|---|---|---|---|---|---|")
    for mode, r in res["modes"].items():
        c = r["cost_per_insight"]
        print(
            f"| {mode} | {c['calls']:.2f} | {c['prompt_tokens']:.0f} | {c['processed_prompt_tokens']:.0f} | {c['completion_tokens']:.1f} | {c['wall_s']:.2f} |"
        )
    print("verification stage only:")
    for mode, r in res["modes"].items():
        c = r["verify_cost_per_insight"]
        print(
            f"| {mode} (verify) | {c['calls']:.2f} | {c['prompt_tokens']:.0f} | {c['processed_prompt_tokens']:.0f} | {c['completion_tokens']:.1f} | {c['wall_s']:.2f} |"
        )
    if "ratios" in res:
        r = res["ratios"]
        print(f"\nratio per_claim / batched, whole pipeline: {json.dumps(r)}")
        print(f"ratio per_claim / batched, verification only: {json.dumps(res['verify_ratios'])}")
        ok = (r.get("processed_prompt_tokens") or 0) >= 5
        print(
            f"target batched >= 5x fewer processed prompt tokens (whole pipeline): {'met' if ok else 'NOT met'} ({r.get('processed_prompt_tokens')}x)"
        )
    second_calls = sum(m["run_cost_delta"]["calls"] for m in runs[1]["modes"].values())
    print(f"second run of the same command: {second_calls} backend calls (target 0)")
    for mode, r in res["modes"].items():
        (mr, lr, hr), (mp, lp, hp) = r["reference_mean_ci"], r["perturbed_mean_ci"]
        print(
            f"faithfulness {mode}: reference {mr:.3f} [{lr:.3f}, {hr:.3f}] vs perturbed {mp:.3f} [{lp:.3f}, {hp:.3f}]"
        )
    if "agreement" in res:
        a = res["agreement"]
        print(f"per_claim vs batched agreement: {a['agree']}/{a['claims_compared']} = {a['share']}")
    if args.out:
        from metajudge.io import atomic_write

        with atomic_write(args.out) as fh:
            json.dump({"runs": runs, "cache_dir": cache}, fh, indent=1, default=str)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
