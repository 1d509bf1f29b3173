"""Scale benchmark (issue 17): a Chatbot-Arena-sized pairwise meta-evaluation on one machine.

A synthetic pairwise set is generated here by a seeded script (never stored): ``--pairs`` pairs,
2 annotators (labels in -2..2 around a latent preference), ``--metrics`` metric columns
(latent preference + Gaussian noise of increasing scale, so the metrics differ). It is
meta-evaluated through the public API (``mj.meta_evaluate``) with ``--n-boot`` resamples,
percentile CIs and the metric-vs-metric comparisons; the benchmark prints wall time, peak RSS
and the ratio against the figures measured before the change (``--base-wall``/``--base-rss``,
default: the 50k-pair figures of the issue, 123 s and 4.7 GB).

Run: ``python benchmarks/bench_scale.py --pairs 50000`` (``--json FILE`` writes the result
values, to compare two checkouts for equality: ``--compare A.json B.json`` lists every kind of
value that differs by more than 1e-12 or is present in one file only). CPU time and the load
average are printed with the wall time: on a shared machine the wall time depends on the load.

Measured on the 2-core development machine (load average 3.3, LLM jobs running beside it):
1M pairs in 105 s wall (75 s CPU), peak RSS 3.6 GB; 50k pairs 85 s wall (59 s CPU) and
434 MB, against 522 s (218 s CPU) and 667 MB before (commit f7d8d12). At 50k every value
is unchanged to 7e-14 except the permutation p-values (swaps now shared by the comparisons:
one of 90 differs, by 1/1001) and the matched reference's Kendall CIs (now above
``kendall_ci_max_rows``, as in the cells: Fisher-z only).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np


def synthetic(pairs: int, metrics: int, seed: int = 17) -> tuple[Any, Iterator[dict[str, Any]]]:
    """The dataset (records) and a generator of its score rows."""
    from metajudge.data.formats import (
        DatasetCard,
        Input,
        PairwiseRecord,
        Response,
        Scale,
        response_key,
    )
    from metajudge.data.registry import Dataset

    rng = np.random.default_rng(seed)
    latent = rng.normal(0.0, 1.0, pairs)
    labels = np.clip(np.rint(latent[:, None] + rng.normal(0, 0.8, (pairs, 2))), -2, 2)
    inp = Input(question="q")
    ra, rb = Response("sys_a", None), Response("sys_b", None)
    # the 25 possible label pairs as 25 shared (never mutated) mappings: ~0.3 GB less at 1M pairs
    shared: dict[tuple[float, float], dict[str, tuple[float, float]]] = {}
    records = [
        PairwiseRecord(f"p{i}", inp, ra, rb, shared.setdefault(lab, {"overall": lab}))
        for i, lab in enumerate(map(tuple, labels.tolist()))
    ]
    card = DatasetCard(
        name="synthetic_scale",
        kind="pairwise",
        description="seeded synthetic pairwise set (benchmarks/bench_scale.py)",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=("overall",),
        scale=Scale(-2.0, 2.0),
        annotators=2,
        direction="positive = b better",
    )
    noise = [rng.normal(0.0, 0.5 + 0.25 * k, pairs) for k in range(metrics)]

    def rows() -> Iterator[dict[str, Any]]:
        for k in range(metrics):
            sb = latent + noise[k]
            for i in range(pairs):
                pid = f"p{i}"
                yield {"key": response_key(pid, "a"), "metric": f"m{k}", "score": 0.0}
                yield {"key": response_key(pid, "b"), "metric": f"m{k}", "score": float(sb[i])}

    return Dataset(card=card, records=records), rows()


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _values(res: Any) -> dict[str, float | None]:
    """Every number of the result (cells, CIs, comparisons), flattened by path."""
    out: dict[str, float | None] = {}

    def walk(o: Any, path: str) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if k != "timing_s":
                    walk(v, f"{path}/{k}")
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, f"{path}[{i}]")
        elif isinstance(o, (int, float)) and not isinstance(o, bool):
            out[path] = float(o)
        elif o is None:
            out[path] = None

    walk(res.data, "")
    return out


def compare(a: str, b: str, tol: float = 1e-12) -> int:
    """Two ``--json`` files value by value (:func:`compare_values`)."""
    va, vb = (json.loads(Path(p).read_text()) for p in (a, b))
    return compare_values(va, vb, tol)


_ABSENT = object()


def _what(v: Any) -> str:
    return "absent" if v is _ABSENT else "number" if isinstance(v, float) else repr(v)


def compare_values(va: dict[str, Any], vb: dict[str, Any], tol: float = 1e-12) -> int:
    """Two flat ``{path: value}`` maps; prints, per kind of value (list indices and metric
    names collapsed), how many numbers differ by more than ``tol`` and the largest difference,
    the strings that differ (a changed CI method: ``old -> new``) and the values present (or
    defined) in one map only. Returns 1 when anything differs."""
    worst: dict[str, float] = {}
    over: dict[str, int] = {}
    only: dict[str, int] = {}
    for k in sorted(set(va) | set(vb)):
        kind = re.sub(r"/m\d+/", "/m*/", re.sub(r"\[\d+\]", "[]", k))
        x, y = va.get(k, _ABSENT), vb.get(k, _ABSENT)
        if not (isinstance(x, float) and isinstance(y, float)):
            if x != y or x is _ABSENT or y is _ABSENT:
                tag = f"{kind}: {_what(x)} -> {_what(y)}"
                only[tag] = only.get(tag, 0) + 1
            continue
        if math.isnan(x) and math.isnan(y):
            continue
        d = abs(x - y)
        worst[kind] = max(worst.get(kind, 0.0), d)
        over[kind] = over.get(kind, 0) + (d > tol)
    print(f"{len(va)} vs {len(vb)} values; max |diff| = {max(worst.values(), default=0.0):.3g}")
    for kind in sorted(k for k, n in over.items() if n):
        print(f"  differs > {tol:g}: {kind}: {over[kind]} values, max {worst[kind]:.3g}")
    for tag, n in sorted(only.items()):
        print(f"  changed / in one only / defined in one only: {tag} ({n})")
    return 1 if only or any(over.values()) else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=50_000)
    ap.add_argument("--metrics", type=int, default=10)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--base-wall", type=float, default=123.0)
    ap.add_argument("--base-rss", type=float, default=4700.0, help="MB")
    ap.add_argument("--json", help="write every result value to this file")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    a = ap.parse_args(argv)
    if a.compare:
        return compare(*a.compare)
    import metajudge as mj

    t0 = time.perf_counter()
    ds, rows = synthetic(a.pairs, a.metrics)
    t_gen = time.perf_counter() - t0
    res = mj.meta_evaluate(ds, rows, mj.Protocol(n_boot=a.n_boot))
    wall = time.perf_counter() - t0
    rss = _peak_rss_mb()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(
        f"pairs={a.pairs} rows={2 * a.pairs} metrics={a.metrics} n_boot={a.n_boot}: "
        f"wall {wall:.1f} s (data {t_gen:.1f} s; CPU {ru.ru_utime + ru.ru_stime:.1f} s; "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores), "
        f"peak RSS {rss:.0f} MB; "
        f"vs before: wall x{a.base_wall / wall:.2f} faster, RSS x{a.base_rss / rss:.2f} smaller"
    )
    if a.json:
        Path(a.json).write_text(json.dumps(_values(res)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
