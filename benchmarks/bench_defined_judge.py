"""Throughput of a judge defined in a file (``judge:PATH``) against the built-in G-Eval on the same
prompts (issue 38: within 10%).

The definition is written from G-Eval's own prompt file (``geval_consistency``, the variant the
backbone gets), ``{document}`` → ``{{ context }}`` and ``{summary}`` → ``{{ response }}``, with
G-Eval's decoding (log-probabilities, top 10, the 1–5 digit grammar, one token) and G-Eval's
context budget, so both judges send the same requests (checked: the first request's text is
equal). Each judge scores the first N responses of ``summeval_summac_consistency`` on its own
fresh cache (a cold run: every request reaches the model); printed: responses per second of
each, the ratio defined / built-in, and the CPU seconds of each judge's own process (templating,
client, parsing: where the two can differ, since the model's requests are the same) and of its
model server. On a shared, loaded machine the wall-time ratio carries the other jobs' noise; the
CPU ratios are the steadier reading.

Usage::

    python benchmarks/bench_defined_judge.py [--items 40] [--backbone smollm2-135m] [--repeats 2]

Needs the embedded llama.cpp server (llama-cpp-python) and the data folder
(``$METAJUDGE_DATA_DIR``, default ``../shared/human_labels``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any


def _definition(folder: Path, variant: str) -> Path:
    """A definition file holding G-Eval's consistency prompt and decoding."""
    import yaml

    from metajudge.metrics.judges.prompts import load_prompt

    text = load_prompt("geval_consistency", variant).text
    template = text.replace("{document}", "{{ context }}").replace("{summary}", "{{ response }}")
    doc = {
        "name": "geval-consistency-as-a-file",
        "kind": "rating",
        "scale": {"min": 1, "max": 5},
        "prompt": {"user": template},
        "parse": {"method": "logprobs", "constrained": True},
        "sampling": {"temperature": 0, "max_tokens": 1, "top_logprobs": 10},
    }
    path = folder / "geval_consistency.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def _timed(name: str, items: list[Any], backbone: str, cache: Path, **opts: Any) -> dict[str, Any]:
    """Score ``items`` with metric ``name`` on a fresh cache (the first item starts the server,
    untimed): wall time, responses per second, calls, unscored."""
    os.environ["METAJUDGE_CACHE_DIR"] = str(cache)
    from metajudge.metrics.registry import get_metric

    m = get_metric(name, backbone=backbone, **opts)
    children0 = _children_cpu()
    try:
        m.score_batch(items[:1])  # starts the server (not timed)
        t0, c0 = time.perf_counter(), time.process_time()
        res = m.score_batch(items[1:])
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        summary = m.summary
    finally:
        m.close()
    return {
        "metric": name,
        "n": len(items) - 1,
        "wall_s": round(wall, 3),
        "per_s": round((len(items) - 1) / wall, 3) if wall > 0 else None,
        "judge_cpu_s": round(cpu, 3),  # this process: templating, client, parsing
        "server_cpu_s": round(_children_cpu() - children0, 3),  # the model (with its start)
        "calls": summary["cost"]["calls"],
        "unscored": sum(r.score is None for r in res),
    }


def _children_cpu() -> float:
    """CPU seconds of this process's ended children (the llama.cpp server, once closed)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _first_request(name: str, item: Any, backbone: str, **opts: Any) -> dict[str, Any]:
    """The request ``name`` builds for ``item``, as the cache keys it (no model call)."""
    from metajudge.metrics.registry import get_metric

    m = get_metric(name, backbone=backbone, **opts)
    if hasattr(m, "_item_request"):
        req = m._item_request(item, 0)
    else:
        req = m._request(item)[0]
    return req.to_dict()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--backbone", default="smollm2-135m")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args(argv)

    repo = Path(__file__).resolve().parents[1]
    data = repo.parent / "shared" / "human_labels"
    if not os.environ.get("METAJUDGE_DATA_DIR") and data.is_dir():
        os.environ["METAJUDGE_DATA_DIR"] = str(data)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from metajudge.data.loading import load
    from metajudge.metrics.base import iter_responses
    from metajudge.metrics.registry import get_metric

    items = [r.score_item() for r in iter_responses(load("summeval_summac_consistency").records)]
    items = items[: args.items + 1]
    tmp = Path(tempfile.mkdtemp(prefix="mj-bench-defined-"))
    geval = get_metric("geval_consistency", backbone=args.backbone)
    variant, budget = geval.variant, geval.max_table_chars
    geval.close()
    defined = f"judge:{_definition(tmp, variant)}"
    same = _first_request("geval_consistency", items[1], args.backbone) == _first_request(
        defined, items[1], args.backbone, max_chars=budget
    )
    print(f"same request as G-Eval ({variant} variant, {budget} chars of article): {same}")
    runs = []
    for k in range(args.repeats):  # alternate the order: neither judge always runs first
        order = [("geval_consistency", {}), (defined, {"max_chars": budget})]
        for name, opts in order if k % 2 == 0 else order[::-1]:
            r = _timed(name, items, args.backbone, tmp / f"cache-{k}-{len(runs)}", **opts)
            runs.append(r)
            print(
                f"{name[:40]:40s} {r['n']} responses in {r['wall_s']:.2f} s = {r['per_s']} /s "
                f"(judge CPU {r['judge_cpu_s']:.2f} s, server CPU {r['server_cpu_s']:.2f} s)"
            )
    ratios = {}
    for key in ("wall_s", "judge_cpu_s", "server_cpu_s"):
        per = {
            n: sum(r[key] for r in runs if r["metric"] == n) for n in ("geval_consistency", defined)
        }
        ratios[key] = per["geval_consistency"] / per[defined] if per[defined] else None
    print(f"throughput ratio defined / built-in G-Eval (wall time): {ratios['wall_s']:.3f}")
    print(
        f"built-in / defined CPU: judge process {ratios['judge_cpu_s']:.3f}, "
        f"model server {ratios['server_cpu_s']:.3f}; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    if args.out:
        doc = {"same_prompt": same, "runs": runs, "ratio": ratios["wall_s"], "ratios": ratios}
        Path(args.out).write_text(json.dumps(doc, indent=1))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
