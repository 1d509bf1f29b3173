"""Backend benchmarks against the real embedded llama.cpp server (SmolLM2-135M).

1. Throughput: 64 short judge prompts at client concurrency 1, 2, 4, with one server process
   (1 thread) vs two replicas of 1 thread each (llama-cpp-python's server has no slots;
   ``n_parallel`` starts replicas) and one server with 2 threads — requests/s, the ratio, and the
   server CPU seconds per request. Rounds are interleaved; the best round is reported.
2. A fully cached rerun of the same 64 requests: wall time and backend calls.
3. Prefix reuse: 20 requests sharing a ~1,500-token prefix (a table) with different suffixes —
   prompt tokens the server actually evaluated (from its log) vs the naive total.

Usage: ``python benchmarks/bench_backends.py [--json out.json] [--requests 64]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from metajudge.backends.base import Completion, Request
from metajudge.backends.registry import get_backend
from metajudge.backends.server import prompt_eval_stats

SENTENCES = [
    "The cat sat on the mat.",
    "Dogs is barking loud at night.",
    "Quantum chromodynamics describes the strong force.",
    "I has a apple yesterday.",
    "The meeting was postponed until further notice.",
    "Colourless green ideas sleep furiously.",
    "She sells sea shells by the sea shore.",
    "Him and me goes to the market.",
]


def judge_prompts(n: int) -> list[Request]:
    return [
        Request(
            messages=(
                {
                    "role": "user",
                    "content": f"Rate the fluency of this sentence from 1 to 5. Sentence {i}: "
                    f"{SENTENCES[i % len(SENTENCES)]} Answer with one digit.",
                },
            ),
            max_tokens=4,
            temperature=0.0,
        )
        for i in range(n)
    ]


CONFIGS = (
    ("1 server x 1 thread", {"n_parallel": 1, "n_threads": 1}),
    ("2 replicas x 1 thread", {"n_parallel": 2, "n_threads": 2}),
    ("1 server x 2 threads", {"n_parallel": 1, "n_threads": 2}),
)


def _cpu_s(pids: list[int]) -> float:
    """utime + stime of the server processes, in seconds (Linux /proc)."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


def throughput(n_requests: int, run_root: Path, rounds: int) -> dict[str, Any]:
    """req/s per (server layout, client concurrency); rounds are interleaved across layouts and the
    best round is reported (the machine is shared: the best round is the least disturbed one)."""
    reqs = judge_prompts(n_requests)
    backends = {}
    try:
        for label, overrides in CONFIGS:
            be = get_backend(
                "smollm2-135m",
                run_dir=run_root / label.replace(" ", "_"),
                cache=False,
                n_ctx=512,
                **overrides,
            )
            be.start()
            be.complete(reqs[:2])  # warm-up
            backends[label] = be
        cells: dict[str, dict[int, list[dict[str, float]]]] = {
            label: {1: [], 2: [], 4: []} for label, _ in CONFIGS
        }
        for rnd in range(rounds):
            for conc in (1, 2, 4):
                for label, _ in CONFIGS:
                    be = backends[label]
                    pids = [s.pid for s in be.servers]
                    cpu0 = _cpu_s(pids)
                    t0 = time.perf_counter()
                    res = be.complete(reqs, concurrency=conc)
                    dt = time.perf_counter() - t0
                    cpu = _cpu_s(pids) - cpu0
                    ok = sum(isinstance(r, Completion) for r in res)
                    cells[label][conc].append(
                        {
                            "req_per_s": ok / dt,
                            "wall_s": dt,
                            "server_cpu_s_per_req": cpu / max(ok, 1),
                            "ok": ok,
                        }
                    )
                    print(
                        f"  round {rnd + 1} {label:<22} concurrency {conc}: {ok / dt:6.2f} req/s "
                        f"({dt:5.1f} s, server CPU {cpu / max(ok, 1):.3f} s/request)",
                        flush=True,
                    )
    finally:
        for be in backends.values():
            be.close()
    out: dict[str, Any] = {}
    for label, _ in CONFIGS:
        out[label] = {}
        for conc, runs in cells[label].items():
            rates = sorted(r["req_per_s"] for r in runs)
            out[label][conc] = {
                "req_per_s_best": round(rates[-1], 3),
                "req_per_s_all": [round(r["req_per_s"], 3) for r in runs],
                "server_cpu_s_per_req_min": round(min(r["server_cpu_s_per_req"] for r in runs), 4),
                "ok": min(r["ok"] for r in runs),
            }
    for label in ("2 replicas x 1 thread", "1 server x 2 threads"):
        for conc in (1, 2, 4):
            out[label][conc]["ratio_vs_1_server_1_thread"] = round(
                out[label][conc]["req_per_s_best"]
                / out["1 server x 1 thread"][conc]["req_per_s_best"],
                3,
            )
    return out


def cached_rerun(n_requests: int, run_root: Path) -> dict[str, Any]:
    reqs = judge_prompts(n_requests)
    with get_backend(
        "smollm2-135m",
        run_dir=run_root / "cache",
        cache=run_root / "cache.sqlite",
        n_ctx=512,
        parser_version="bench",
    ) as be:
        t0 = time.perf_counter()
        be.complete(reqs)
        first = time.perf_counter() - t0
        calls_before = be.ledger.calls
        logs = [s.log_path for s in be.inner.servers]
        served_before = sum(prompt_eval_stats(p)["requests"] for p in logs)
        t0 = time.perf_counter()
        res = be.complete(reqs)
        rerun = time.perf_counter() - t0
        calls = be.ledger.calls - calls_before
        served = sum(prompt_eval_stats(p)["requests"] for p in logs) - served_before
    assert all(isinstance(r, Completion) and r.cached for r in res)
    print(
        f"  first run {first:.2f} s; cached rerun of {n_requests}: {rerun * 1000:.1f} ms, backend calls {calls}, "
        f"server requests {served}",
        flush=True,
    )
    return {
        "first_run_s": round(first, 3),
        "cached_rerun_s": round(rerun, 4),
        "backend_calls": calls,
        "server_requests": served,
    }


def table_prefix(target_tokens: int = 1500) -> str:
    """A synthetic markdown table of about ``target_tokens`` SmolLM2 tokens (counted with its tokenizer)."""
    from llama_cpp import Llama

    from metajudge.backends.config import all_configs
    from metajudge.backends.models import resolve_gguf

    cfg = all_configs()["smollm2-135m"]
    tok = Llama(str(resolve_gguf(str(cfg.gguf))), vocab_only=True, verbose=False)
    rows = ["| city | country | population (k) | area (km2) | founded |", "|---|---|---|---|---|"]
    i = 0
    while True:
        row = f"| City{i} | Country{i % 17} | {(i * 7919) % 9000 + 100} | {(i * 104729) % 5000 + 50} | {1200 + (i * 37) % 800} |"
        text = "Table:\n" + "\n".join([*rows, row]) + "\n\n"
        if len(tok.tokenize(text.encode())) > target_tokens:
            return "Table:\n" + "\n".join(rows) + "\n\n"
        rows.append(row)
        i += 1


def prefix_reuse(run_root: Path) -> dict[str, Any]:
    prefix = table_prefix()
    claims = [
        f"Claim {j}: City{j * 3} has a population above {(j * 311) % 9000} thousand.\nVerdict (true/false):"
        for j in range(20)
    ]
    reqs = [Request(prompt=prefix + c, max_tokens=2, temperature=0.0) for c in claims]
    with get_backend(
        "smollm2-135m",
        run_dir=run_root / "prefix",
        cache=False,
        n_ctx=2048,
        concurrency=1,
        n_parallel=1,  # one server: its KV prefix reuse is what is measured
        n_threads=2,
    ) as be:
        be.start()
        log = be.servers[0].log_path
        offset = log.stat().st_size
        t0 = time.perf_counter()
        res = be.complete(reqs)
        wall = time.perf_counter() - t0
    comps = [r for r in res if isinstance(r, Completion)]
    naive = sum(c.prompt_tokens for c in comps)
    stats = prompt_eval_stats(log, offset)
    lat = [c.latency_s for c in comps]
    out = {
        "requests": len(comps),
        "prompt_tokens_each": comps[0].prompt_tokens if comps else None,
        "naive_prompt_tokens": naive,
        "server_prompt_tokens_evaluated": stats["prompt_tokens_evaluated"],
        "server_prefix_hit_tokens": stats["prefix_hit_tokens"],
        "evaluated_share": round(stats["prompt_tokens_evaluated"] / naive, 4) if naive else None,
        "first_request_s": round(lat[0], 3) if lat else None,
        "later_requests_mean_s": round(sum(lat[1:]) / max(1, len(lat) - 1), 3),
        "wall_s": round(wall, 2),
    }
    print(
        f"  {out['requests']} requests x {out['prompt_tokens_each']} prompt tokens: naive {naive} tokens, server evaluated "
        f"{stats['prompt_tokens_evaluated']} ({100 * (out['evaluated_share'] or 0):.1f}%), prefix hits {stats['prefix_hit_tokens']}; "
        f"first request {out['first_request_s']} s, later mean {out['later_requests_mean_s']} s",
        flush=True,
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument(
        "--rounds", type=int, default=2, help="interleaved repetitions of the throughput grid"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mj-bench-backends-") as tmp:
        root = Path(tmp)
        print(
            f"1. throughput, {args.requests} short judge prompts (SmolLM2-135M, embedded llama.cpp)"
        )
        tp = throughput(args.requests, root, args.rounds)
        print("2. fully cached rerun")
        cr = cached_rerun(args.requests, root)
        print("3. prefix reuse (20 requests, shared ~1,500-token table prefix)")
        pr = prefix_reuse(root)
    figures = {"throughput": tp, "cached_rerun": cr, "prefix_reuse": pr}
    print(json.dumps(figures, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
