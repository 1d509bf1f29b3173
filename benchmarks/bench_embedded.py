"""Embedded judge throughput vs llama.cpp's own: the same G-Eval prompts, the same threads.

The prompts: G-Eval faithfulness (SmolLM2-135M, the default embedded backbone, logprobs mode) on
the responses of the first ``--records`` records of ``lftqa_mitigation_pradhumant`` (table QA;
10 records = 20 responses), built by metajudge's own prompt code. Per round:

- **metajudge**: ``score_batch`` of the real G-Eval metric on the real embedded backend (its
  replicas started before the clock starts; a fresh, empty LLM cache each round). Records which
  distinct requests each replica took, in order. Throughput: the prompt tokens the servers
  evaluated (from their logs: prefix reuse excluded) / wall second.
- **direct**: llama.cpp through ``Llama.eval`` doing the same work: one process (in a session of
  its own, like each server: autogroup scheduling) per replica with
  the threads of one replica (so the same total threads), each evaluating the chat-formatted
  token sequences of the requests its replica took, in the same order, keeping the KV prefix
  shared with the previous one exactly as ``llama_cpp.server`` does (:func:`reuse_prefix`), only
  the last token's logits (what the server child computes, ``_llama_child``). Throughput:
  evaluated prompt tokens / wall second. Its evaluated and sent token counts are printed beside
  metajudge's (equal sent counts: the same tokenization). Odd rounds run metajudge first and
  direct on its split, even rounds direct first on the previous round's split (on a shared
  machine the load drifts: neither side always runs last).

The ratio direct/metajudge of evaluated tok/s is the issue's measure (target <= 1.3): what the
HTTP server, the Python per-request work and the client's scheduling cost beyond llama.cpp on
the same evaluated tokens. Prefix-affinity routing (``backends/routing``) lowers the evaluated
tokens themselves: ``--least-in-flight-rounds N`` adds rounds with it switched off, to compare
the wall time of the same 20 responses. Asserts the G-Eval scores are the same in every round
and equal the stored ones (``--expect`` FILE, written with ``--write-expect``; default
``benchmarks/data/bench_embedded_scores.json``).

Usage::

    python benchmarks/bench_embedded.py [--records 10] [--rounds 2] [--least-in-flight-rounds 1]
        [--backbone smollm2-135m] [--expect FILE | --write-expect FILE] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_EXPECT = HERE / "data" / "bench_embedded_scores.json"


def _setup_env() -> None:
    data = HERE.parents[1] / "shared" / "human_labels"
    if not os.environ.get("METAJUDGE_DATA_DIR") and data.is_dir():
        os.environ["METAJUDGE_DATA_DIR"] = str(data)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _items(n_records: int) -> list[Any]:
    from metajudge.data.loading import load as load_dataset
    from metajudge.metrics.base import ScoreItem, iter_responses

    ds = load_dataset("lftqa_mitigation_pradhumant")
    refs = list(iter_responses(ds.records[:n_records]))
    return [ScoreItem(r.key, r.response, r.reference, r.input) for r in refs]


def _metric(backbone: str) -> Any:
    from metajudge.metrics.registry import get_metric

    return get_metric("geval_faithfulness", backbone=backbone)


def _distinct_messages(items: list[Any], backbone: str) -> list[list[dict[str, str]]]:
    """The chat messages of the distinct requests G-Eval sends for ``items`` (nothing is sent)."""
    m = _metric(backbone)
    seen: dict[str, list[dict[str, str]]] = {}
    for it in items:
        built = m._request(it)
        if isinstance(built, str):
            continue
        req = built[0]
        key = json.dumps(req.to_dict(), sort_keys=True)
        seen.setdefault(key, [dict(x) for x in req.messages])
    return list(seen.values())


def _tokens(llm: Any, messages: list[dict[str, str]]) -> list[int]:
    """The prompt tokens llama-cpp-python's server builds for ``messages`` (the GGUF's template)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    tmpl = llm.metadata["tokenizer.chat_template"]
    eos = llm._model.token_get_text(llm.token_eos())
    bos = llm._model.token_get_text(llm.token_bos())
    prompt = Jinja2ChatFormatter(template=tmpl, eos_token=eos, bos_token=bos)(
        messages=messages
    ).prompt
    return list(llm.tokenize(prompt.encode("utf-8"), special=True))


def reuse_prefix(prev: list[int], toks: list[int]) -> int:
    """The prompt tokens whose KV ``llama_cpp.server`` keeps from the previous request:
    ``Llama.generate``'s rule (the longest common prefix; one less when the whole prompt matches,
    so that its last token is evaluated again for the logits)."""
    k = 0
    for a, b in zip(prev, toks, strict=False):
        if a != b:
            break
        k += 1
    return k - 1 if k == len(toks) and k > 0 else k


def _direct_worker(args: tuple[str, int, int, list[list[dict[str, str]]], list[int], Any]) -> None:
    model, n_ctx, threads, prompts, order, conn = args
    # a session of its own, as each embedded server has (start_new_session): with the kernel's
    # autogroup scheduling on, a busy machine shares CPU time per session, so workers left in
    # the benchmark's session would get one share between them where the servers get one each
    os.setsid()
    from llama_cpp import Llama

    llm = Llama(
        model_path=model,
        n_ctx=n_ctx,
        n_threads=threads,
        n_threads_batch=threads,
        logits_all=False,
        verbose=False,
    )
    toks = [_tokens(llm, p) for p in prompts]
    conn.send("ready")
    conn.recv()  # start together
    t0 = time.perf_counter()
    prev: list[int] = []
    sent = evaluated = 0
    for i in order:  # the requests this replica took, in the order it took them
        t = toks[i]
        k = reuse_prefix(prev, t)
        llm.n_tokens = k  # Llama.eval drops the KV cache from here on
        llm.eval(t[k:])
        sent += len(t)
        evaluated += len(t) - k
        prev = t
    conn.send((sent, evaluated, time.perf_counter() - t0))


def direct_round(
    model: str, n_ctx: int, threads: int, prompts: list[Any], split: list[list[int]]
) -> dict:
    """llama.cpp's own prompt throughput on metajudge's work: one process of ``threads``
    threads per replica, evaluating the requests that replica took (``split``), in its order,
    keeping the KV prefix shared with the previous one as the server does."""
    ctx = mp.get_context("spawn")
    pipes, procs = [], []
    for order in split:
        a, b = ctx.Pipe()
        p = ctx.Process(target=_direct_worker, args=((model, n_ctx, threads, prompts, order, b),))
        p.start()
        pipes.append(a)
        procs.append(p)
    for a in pipes:
        assert a.recv() == "ready"
    t0 = time.perf_counter()
    for a in pipes:
        a.send("go")
    res = [a.recv() for a in pipes]
    wall = time.perf_counter() - t0
    for p in procs:
        p.join()
    sent = sum(r[0] for r in res)
    evaluated = sum(r[1] for r in res)
    return {
        "tokens": sent,
        "prompt_tokens_evaluated": evaluated,
        "wall_s": round(wall, 3),
        "tok_s": round(evaluated / wall, 1),
        "worker_s": [round(r[2], 2) for r in res],
    }


def _messages_key(messages: Any) -> str:
    return json.dumps([dict(m) for m in messages], sort_keys=True)


def metajudge_round(items: list[Any], backbone: str, prompts: list[Any]) -> dict:
    """End to end through the real embedded backend, on a fresh empty cache; ``split``: the
    distinct requests (indices into ``prompts``) each replica took, in the order it took them."""
    os.environ["METAJUDGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="mj-bench-embedded-")
    index = {_messages_key(p): i for i, p in enumerate(prompts)}
    m = _metric(backbone)
    picks: list[tuple[str, int]] = []
    try:
        be = getattr(m.client.backend, "inner", m.client.backend)
        be._ensure_started()  # model load is not throughput
        pick = be._pick_endpoint

        def recorded(kw: Any) -> str:
            ep = pick(kw)
            if kw is not None:
                picks.append((ep, index[_messages_key(kw["messages"])]))
            return ep

        be._pick_endpoint = recorded
        t0 = time.perf_counter()
        res = m.score_batch(items)
        wall = time.perf_counter() - t0
        cost = m.summary["cost"]
        eps = be._endpoints()
    finally:
        m.close()
    evaluated = int(cost["processed_prompt_tokens"])
    return {
        "calls": int(cost["calls"]),
        "prompt_tokens_sent": int(cost["prompt_tokens"]),
        "prompt_tokens_evaluated": evaluated,
        "wall_s": round(wall, 3),
        "tok_s": round(evaluated / wall, 1),
        "split": [[i for e, i in picks if e == ep] for ep in eps],
        "scores": {str(it.key): r.score for it, r in zip(items, res, strict=True)},
    }


def check_scores(got: dict[str, float | None], want: dict[str, float | None]) -> list[str]:
    """Keys of ``got`` whose score differs from the stored one by more than 1e-6 (or has none)."""
    bad = []
    for k in sorted(got):
        a, b = got.get(k), want.get(k)
        if a is None or b is None:
            if a is not b:
                bad.append(k)
        elif not math.isclose(a, b, rel_tol=0, abs_tol=1e-6):
            bad.append(k)
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--backbone", default="smollm2-135m")
    ap.add_argument("--expect", default=str(DEFAULT_EXPECT))
    ap.add_argument("--write-expect", help="store this run's G-Eval scores here (no check)")
    ap.add_argument("--json", help="write the rounds as JSON here")
    ap.add_argument(
        "--least-in-flight-rounds",
        type=int,
        default=1,
        help="also this many rounds routed least-in-flight only (prefix affinity off), after the others",
    )
    ap.add_argument(
        "--scores-only", action="store_true", help="one metajudge round, no direct llama.cpp"
    )
    args = ap.parse_args(argv)
    _setup_env()
    from metajudge.backends import routing
    from metajudge.backends.embedded import EmbeddedBackend
    from metajudge.backends.models import resolve_gguf
    from metajudge.metrics.judges.engine import backbone_config

    affinity_chars = routing.AFFINITY_MIN_CHARS
    cfg = backbone_config(args.backbone)
    model = str(resolve_gguf(str(cfg.gguf), cfg.gguf_sha256))
    threads = max(1, cfg.n_threads // cfg.n_parallel)
    items = _items(args.records)
    prompts = _distinct_messages(items, args.backbone)
    print(
        f"{len(items)} responses, {len(prompts)} distinct G-Eval requests; {cfg.n_parallel} "
        f"replica(s) x {threads} thread(s); logits_all={cfg.logits_all} "
        f"prompt_cache={cfg.prompt_cache}"
    )
    assert EmbeddedBackend  # the backend the metric uses
    rounds: list[dict[str, Any]] = []
    prev_split: list[list[int]] | None = None
    for i in range(args.rounds + args.least_in_flight_rounds):
        routing.AFFINITY_MIN_CHARS = affinity_chars if i < args.rounds else math.inf
        if args.scores_only:
            j = metajudge_round(items, args.backbone, prompts)
            rounds.append({"metajudge": j})
            print(f"metajudge: {j['wall_s']:.1f} s, {j['tok_s']:.0f} evaluated tok/s")
            break
        load0 = os.getloadavg()[0]
        if i % 2 == 0 or prev_split is None:  # metajudge first, direct on its split
            j = metajudge_round(items, args.backbone, prompts)
            d = direct_round(model, cfg.n_ctx or 4096, threads, prompts, j["split"])
        else:  # direct first (the previous round's split), so neither side always runs last
            d = direct_round(model, cfg.n_ctx or 4096, threads, prompts, prev_split)
            j = metajudge_round(items, args.backbone, prompts)
        prev_split = j["split"]
        load = os.getloadavg()[0]
        affinity = i < args.rounds
        rounds.append(
            {
                "direct": d,
                "metajudge": j,
                "affinity": affinity,
                "load1_before": load0,
                "load1": load,
            }
        )
        same = "" if d["tokens"] == j["prompt_tokens_sent"] else " (TOKENIZATION DIFFERS)"
        print(
            f"round {i + 1} ({'prefix affinity' if affinity else 'least in flight'}): metajudge {j['prompt_tokens_evaluated']} evaluated "
            f"({j['prompt_tokens_sent']} sent, {j['calls']} calls, per replica "
            f"{[len(x) for x in j['split']]}) in {j['wall_s']:.2f} s = {j['tok_s']:.0f} tok/s | "
            f"direct {d['prompt_tokens_evaluated']} evaluated ({d['tokens']} sent{same}) in "
            f"{d['wall_s']:.2f} s = {d['tok_s']:.0f} tok/s | ratio {d['tok_s'] / j['tok_s']:.2f} "
            f"(wall {j['wall_s'] / d['wall_s']:.2f}) | load {load0:.2f} -> {load:.2f}"
        )
    if not args.scores_only:
        summarize(rounds)
    rc = _scores_check(args, rounds)
    if args.json:
        Path(args.json).write_text(json.dumps(rounds, indent=1) + "\n")
    return rc


def summarize(rounds: list[dict[str, Any]]) -> None:
    """Per routing: the best throughput of each side, their ratio, the per-round ratios, the
    evaluated tokens; then the load average."""
    for affinity in (True, False):
        rs = [r for r in rounds if r["affinity"] is affinity]
        if not rs:
            continue
        best_d = max(r["direct"]["tok_s"] for r in rs)
        best_j = max(r["metajudge"]["tok_s"] for r in rs)
        ratios = sorted(r["direct"]["tok_s"] / r["metajudge"]["tok_s"] for r in rs)
        walls = [r["metajudge"]["wall_s"] for r in rs]
        evaluated = [r["metajudge"]["prompt_tokens_evaluated"] for r in rs]
        print(
            f"{'prefix affinity' if affinity else 'least in flight'}: best direct {best_d:.0f} "
            f"evaluated tok/s, best metajudge {best_j:.0f}: ratio of bests {best_d / best_j:.2f}; "
            f"per-round ratios {', '.join(f'{x:.2f}' for x in ratios)} (median "
            f"{ratios[len(ratios) // 2]:.2f}; target <= 1.3); metajudge evaluated {evaluated} "
            f"tokens in {walls} s"
        )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _scores_check(args: Any, rounds: list[dict[str, Any]]) -> int:
    """Write (``--write-expect``) or compare the G-Eval scores; 1 when any differs."""
    scores = rounds[0]["metajudge"]["scores"]
    for r in rounds[1:]:
        assert not check_scores(r["metajudge"]["scores"], scores), "scores vary between rounds"
    rc = 0
    if args.write_expect:
        Path(args.write_expect).parent.mkdir(parents=True, exist_ok=True)
        Path(args.write_expect).write_text(json.dumps(scores, indent=1, sort_keys=True) + "\n")
        print(f"G-Eval scores written to {args.write_expect}")
    elif Path(args.expect).is_file():
        want = json.loads(Path(args.expect).read_text())
        bad = check_scores(scores, want)
        print(
            f"G-Eval scores vs {args.expect}: {len(scores) - len(bad)}/{len(scores)} equal (1e-6), "
            f"{sum(want.get(k) == v for k, v in scores.items())} bit for bit"
            + (f"; differ: {bad}" if bad else "")
        )
        rc = 1 if bad else 0
    return rc


if __name__ == "__main__":
    sys.exit(main())
