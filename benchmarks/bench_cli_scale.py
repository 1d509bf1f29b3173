"""Command-line scale benchmark (issue 29): ``metajudge meta-eval`` on an Arena-sized file.

The seeded synthetic pairwise set of ``bench_scale.py`` (``--pairs`` pairs, 2 annotators with
labels in -2..2 around a latent preference, ``--metrics`` metric columns = latent + Gaussian
noise of growing scale; never stored) is written as a canonical JSONL file with a card line
and a wide scores CSV (``item,side,m0..``), and the REAL command line

    metajudge meta-eval --input ds.jsonl --scores scores.csv --n-boot 1000 --no-plots --out OUT

runs in a subprocess (``report.html`` included; ``--plots`` keeps the PNG plots, which the
issue's measurement skipped). Printed: wall time, CPU of the child (user + sys), its peak RSS
(``ru_maxrss`` of that child, ``os.wait4``; the files are generated in a child of their own, so
that the command's peak does not include this process's memory, which a child's ``ru_maxrss``
takes over at ``exec``), the load average before and after, and the targets of the
issue 43 (200k pairs: 15 s and 1 GB; 1M pairs: 60 s and 2 GB) with the ratio to them, the
fraction of an estimated hardware bound (:func:`hardware_bound` says how it is estimated) and a
check that every cell has a percentile-bootstrap CI for Pearson and Spearman and Kendall's
tau_b a CI with its method (the bootstrap up to ``kendall_ci_max_rows`` rows, Fisher z above).

``--compare RESULT.json`` compares the run's ``result.json`` value by value with a stored one
(numbers to 1e-12, and every string, so that a changed CI method is named per kind of value);
``--src DIR`` runs the metajudge of another checkout (a baseline); ``--data DIR`` keeps (and
reuses) the generated files; ``--diff A B`` compares two ``result.json`` files without a run;
``--profile FILE`` runs the child under cProfile (its times then include cProfile's cost).

``--records arena`` (:func:`write_arena`, issue 65): ``--pairs`` synthetic Chatbot Arena battles
in Arena's columns (Parquet) and a judge's column (its probability that each side is the better)
in a wide Parquet score table; the REAL ``metajudge meta-eval`` and then ``metajudge judge card
--judge judge_p`` run on them, each measured and set against the same targets.

``--records realistic`` (:func:`realistic`, issue 65): the same labels and metric columns on
records shaped like real ones: distinct prompts and responses with lognormal lengths (medians
300 and 1,200 characters, log-scale sigma 0.6), 24 systems, three annotators. ``--format
parquet`` writes the dataset as a Parquet table (the canonical columns, the card as metadata)
instead of JSONL; both give the same ``result.json`` values (``--diff``).

Run: ``python benchmarks/bench_cli_scale.py --pairs 200000`` (the default, as ``make bench`` runs it).
"""

from __future__ import annotations

import argparse
import csv
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

from bench_scale import compare_values, synthetic

# (pairs, wall s, peak RSS MB) issue 43 asks for; the nearest one at or above --pairs applies
TARGETS = ((200_000, 15.0, 1024.0), (1_000_000, 60.0, 2048.0))


def hardware_bound(rows: int, columns: int, n_boot: int) -> tuple[float, float, float]:
    """The estimated hardware bound of the run's bootstrap: ``(multiply-adds, rate/s, s)``.

    Every bootstrap statistic needs at least one weighted sum over the rows per resample and
    column: for Pearson the moments, for Spearman the rank sums (O(n) each once the ranks are
    sorted), so at least ``rows x n_boot x columns x 2`` multiply-adds (``columns``: the
    metrics and the human label). The rate is measured here: a weighted row sum
    (``einsum('ij,j->i')``) over a cache-sized float64 block of resamples on one core, the
    fastest form of that work numpy has (the command runs on one core)."""
    import timeit

    W = np.random.default_rng(0).integers(0, 3, size=(32, 8192)).astype(float)
    v = np.ones(8192)
    reps = 200
    t = min(timeit.repeat(lambda: np.einsum("ij,j->i", W, v), number=reps, repeat=5))
    rate = W.size * reps / t
    ops = float(rows) * n_boot * columns * 2
    return ops, rate, ops / rate


#: ``--records realistic``: systems, annotators, and the lognormal medians (characters) and
#: log-scale sigma of the prompts' and responses' lengths
SYSTEMS, ANNOTATORS, PROMPT_CHARS, RESPONSE_CHARS, SIGMA = 24, 3, 300, 1200, 0.6


def realistic(pairs: int, metrics: int, seed: int = 17) -> tuple[Any, Any]:
    """``synthetic``'s set (the same latent preference and metric columns) on records shaped
    like real ones: a distinct prompt per pair and a distinct response per side, their lengths
    lognormal with medians :data:`PROMPT_CHARS` and :data:`RESPONSE_CHARS` (sigma
    :data:`SIGMA`), the two sides drawn from :data:`SYSTEMS` systems, :data:`ANNOTATORS`
    annotators' labels in -2..2 around the latent."""
    from metajudge.data.formats import Input, PairwiseRecord, Response

    ds, rows = synthetic(pairs, metrics, seed)
    rng = np.random.default_rng([seed, 65])
    words = [
        "the",
        "judge",
        "model",
        "answer",
        "prompt",
        "system",
        "label",
        "score",
        "pair",
        "data",
        "text",
        "of",
        "and",
        "a",
    ]
    pool = " ".join(rng.choice(words, 400_000).tolist())  # text cut from a random offset
    names = [f"system_{k:02d}" for k in range(SYSTEMS)]

    def text(n: int, i: int, tag: str) -> str:
        start = int(rng.integers(0, len(pool) - n))
        return f"{tag}{i} " + pool[start : start + n]

    lq = rng.lognormal(np.log(PROMPT_CHARS), SIGMA, pairs).astype(int).clip(10, 20_000)
    lr = rng.lognormal(np.log(RESPONSE_CHARS), SIGMA, (pairs, 2)).astype(int).clip(10, 50_000)
    sides = np.array([rng.choice(SYSTEMS, 2, replace=False) for _ in range(pairs)])
    extra = np.clip(np.rint(rng.normal(0, 0.8, (pairs, ANNOTATORS - 2))), -2, 2).tolist()
    records = []
    for i, r in enumerate(ds.records):
        lab = (*r.labels["overall"], *extra[i])
        a = Response(names[sides[i, 0]], text(int(lr[i, 0]), i, "a"))
        b = Response(names[sides[i, 1]], text(int(lr[i, 1]), i, "b"))
        records.append(
            PairwiseRecord(r.id, Input(text(int(lq[i]), i, "q")), a, b, {"overall": lab})
        )
    ds.records = records
    ds.card = replace(ds.card, annotators=ANNOTATORS, description=realistic.__doc__.split("\n")[0])
    return ds, rows


def write_parquet(path: Path, ds: Any) -> None:
    """The dataset as a Parquet table of the canonical columns, the card as its metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.Table.from_pylist([r.to_dict() for r in ds.records])
    meta = {"metajudge.card": json.dumps(ds.card.to_dict())}
    pq.write_table(t.replace_schema_metadata(meta), path)


#: ``--records arena``: models, Arena users (the ``judge`` field), languages, and the share of
#: battles of 1, 2 and 3 turns
ARENA_MODELS, ARENA_USERS = 64, 50_000
ARENA_LANGUAGES = {
    "English": 0.8,
    "Chinese": 0.06,
    "Russian": 0.05,
    "German": 0.05,
    "unknown": 0.04,
}
ARENA_TURNS = (0.85, 0.1, 0.05)
#: ``--records arena``: the judge's column in the scores file
ARENA_JUDGE = "judge_p"


def arena_batch(rng: Any, start: int, n: int, strength: Any, pool: str) -> tuple[Any, Any]:
    """Battles ``start .. start + n`` of :func:`write_arena` as an Arrow table in Arena's columns,
    and the judge's probability that each side is the better (``(n, 2)``, rows summing to 1)."""
    import pyarrow as pa

    m = rng.permuted(np.tile(np.arange(ARENA_MODELS), (n, 1)), axis=1)[:, :2]
    quality = strength[m] + rng.normal(0, 1, (n, 2))  # each side's answer
    d = quality[:, 1] - quality[:, 0] + rng.logistic(0, 0.5, n)
    bothbad = quality.mean(axis=1) < -0.5
    winner = np.where(d > 0.6, "model_b", np.where(d < -0.6, "model_a", "tie"))
    winner = np.where((winner == "tie") & bothbad, "tie (bothbad)", winner)
    p_b = 1 / (1 + np.exp(-1.5 * (quality[:, 1] - quality[:, 0] + rng.normal(0, 0.8, n))))
    judge = np.column_stack([1 - p_b, p_b])
    turns = rng.choice(len(ARENA_TURNS), n, p=ARENA_TURNS) + 1
    messages = int(turns.sum()) * 2
    lq = rng.lognormal(np.log(PROMPT_CHARS), SIGMA, messages // 2).astype(int).clip(10, 20_000)
    lr = rng.lognormal(np.log(RESPONSE_CHARS), SIGMA, (2, messages // 2)).astype(int)
    at = rng.integers(0, len(pool) - 50_000, (3, messages // 2)).tolist()
    lq, lr = lq.tolist(), lr.clip(10, 50_000).tolist()
    roles = pa.array(["user", "assistant"] * (messages // 2))
    offsets = pa.array(np.concatenate([[0], np.cumsum(turns * 2)]).astype(np.int32))
    sides = []
    for s in range(2):
        content: list[str] = []
        for k in range(messages // 2):  # the user turns are the same on both sides
            content.append(f"q{start}.{k} " + pool[at[0][k] : at[0][k] + lq[k]])
            j = at[1 + s][k]
            content.append(f"{'ab'[s]}{start}.{k} " + pool[j : j + lr[s][k]])
        msgs = pa.StructArray.from_arrays([pa.array(content), roles], ["content", "role"])
        sides.append(pa.ListArray.from_arrays(offsets, msgs))
    names = [f"model_{k:02d}" for k in range(ARENA_MODELS)]
    users = rng.zipf(1.3, n) % ARENA_USERS
    lang = rng.choice(list(ARENA_LANGUAGES), n, p=list(ARENA_LANGUAGES.values()))
    cols = {
        "question_id": [
            f"{x:016x}{start + i:08x}" for i, x in enumerate(rng.integers(0, 2**62, n))
        ],
        "model_a": [names[k] for k in m[:, 0]],
        "model_b": [names[k] for k in m[:, 1]],
        "winner": winner.tolist(),
        "judge": [f"arena_user_{u}" for u in users],
        "conversation_a": sides[0],
        "conversation_b": sides[1],
        "turn": turns.tolist(),
        "anony": [True] * n,
        "language": lang.tolist(),
        "tstamp": (1.682e9 + 30.0 * np.arange(start, start + n)).tolist(),
    }
    return pa.table(cols), judge


def write_arena(folder: Path, battles: int, seed: int = 65) -> tuple[Path, Path]:
    """A synthetic Chatbot Arena battle file (Parquet, Arena's columns: ``question_id``,
    ``model_a``, ``model_b``, ``winner`` in model_a / model_b / tie / tie (bothbad), ``judge``
    (a user among :data:`ARENA_USERS`, Zipf-distributed), ``conversation_a``/``_b`` (lists of
    ``{content, role}`` messages over ``turn`` turns, prompts and responses lognormal around
    :data:`PROMPT_CHARS` and :data:`RESPONSE_CHARS` characters), ``turn``, ``anony``,
    ``language``, ``tstamp``) of :data:`ARENA_MODELS` models with Gaussian strengths, the
    winner from each side's quality; and the judge's probability that each side is the better
    (a logistic of the quality difference + noise; the pairwise class probabilities that
    ``calibrate selective`` and ``conformal`` read) as a wide Parquet score table (``item``,
    ``side``, :data:`ARENA_JUDGE`). Generated
    once per ``(battles, seed)`` in ``folder``, written in row groups of 100,000."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ds_path = folder / f"arena_{battles}.parquet"
    sc_path = folder / f"arena_scores_{battles}.parquet"
    if ds_path.is_file() and sc_path.is_file():
        return ds_path, sc_path
    rng = np.random.default_rng(seed)
    vocab = ["".join(rng.choice(list("etaoinshrdlucmfw"), k)) for k in rng.integers(1, 9, 2000)]
    pool = " ".join(rng.choice(vocab, 400_000).tolist())
    strength = rng.normal(0, 0.7, ARENA_MODELS)
    writer, items, scores = None, [], []
    for start in range(0, battles, 100_000):
        t, judge = arena_batch(rng, start, min(100_000, battles - start), strength, pool)
        writer = writer or pq.ParquetWriter(ds_path.with_suffix(".tmp"), t.schema)
        writer.write_table(t)
        items.append(t.column("question_id").to_numpy(zero_copy_only=False))
        scores.append(judge)
    writer.close()
    item, judge = np.concatenate(items), np.concatenate(scores)
    table = {"item": np.repeat(item, 2), "side": np.tile(["a", "b"], len(item))}
    table[ARENA_JUDGE] = judge.reshape(-1)
    pq.write_table(pa.table(table), sc_path)
    ds_path.with_suffix(".tmp").replace(ds_path)
    return ds_path, sc_path


def write_inputs(
    folder: Path, pairs: int, metrics: int, records: str = "plain", fmt: str = "jsonl"
) -> tuple[Path, Path]:
    """The dataset (``fmt`` ``jsonl``: card line + records; ``parquet``: a table, the card as
    metadata) and the wide scores CSV, generated once per ``(pairs, metrics, records)`` in
    ``folder``; ``records``: ``plain`` (``synthetic``'s) or ``realistic`` (:func:`realistic`)."""
    from metajudge.data.formats import split_response_key, write_jsonl

    tag = "" if records == "plain" else f"{records}_"
    ds_path = folder / f"ds_{tag}{pairs}.{fmt}"
    sc_path = folder / f"scores_{pairs}_{metrics}.csv"
    if ds_path.is_file() and sc_path.is_file():
        return ds_path, sc_path
    ds, rows = (realistic if records == "realistic" else synthetic)(pairs, metrics)
    if fmt == "parquet":
        write_parquet(ds_path, ds)
    else:
        write_jsonl(ds_path, ds.records, ds.card)
    del ds
    table = np.zeros((pairs, 2, metrics))
    for r in rows:  # metric-major: (m0, p0 a), (m0, p0 b), (m0, p1 a), ...
        item, side = split_response_key(r["key"])
        table[int(item[1:]), int(side == "b"), int(r["metric"][1:])] = r["score"]
    tmp = sc_path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "side", *(f"m{k}" for k in range(metrics))])
        for i in range(pairs):
            for s, side in enumerate("ab"):
                w.writerow([f"p{i}", side, *(repr(float(v)) for v in table[i, s])])
    tmp.replace(sc_path)
    return ds_path, sc_path


def run_meta_eval(
    ds: Path,
    scores: Path,
    out: Path,
    *,
    n_boot: int,
    src: Path,
    plots: bool = False,
    profile: Path | None = None,
    extra: list[str] | None = None,
) -> dict:
    """``metajudge meta-eval`` in a subprocess (under cProfile with ``profile``; ``extra``
    options added); wall, CPU and peak RSS of the child (:func:`run_command`)."""
    args = ["meta-eval", "--input", str(ds), "--scores", str(scores), "--n-boot", str(n_boot)]
    args += ["--out", str(out), "--quiet"]  # --quiet: also a baseline --src
    if not plots:
        args.append("--no-plots")
    return run_command(args + (extra or []), src=src, profile=profile)


def run_card(
    ds: Path, scores: Path, out: Path, *, n_boot: int, src: Path, profile: Path | None = None
) -> dict:
    """``metajudge judge card`` of :data:`ARENA_JUDGE` in a subprocess, as :func:`run_command`."""
    args = ["judge", "card", "--input", str(ds), "--scores", str(scores), "--judge", ARENA_JUDGE]
    args += ["--n-boot", str(n_boot), "--out", str(out), "--format", "json"]
    return run_command(args, src=src, profile=profile)


def run_command(args: list[str], *, src: Path, profile: Path | None = None) -> dict:
    """``metajudge ARGS`` in a subprocess (under cProfile with ``profile``): its command line,
    wall, CPU (user + sys) and peak RSS, and the load average before and after."""
    prof = ["-m", "cProfile", "-o", str(profile)] if profile else []
    cmd = [sys.executable, *prof, "-m", "metajudge", *args]
    env = dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1")
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    # cwd=src: ``python -m`` puts the working directory first on sys.path, before PYTHONPATH;
    # wait4: this child's own CPU and peak RSS (RUSAGE_CHILDREN's peak is the largest child's)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=src)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here
        if proc.returncode:
            log.seek(0)
            sys.stderr.write(log.read())
            raise SystemExit(f"{args[0]} failed (exit {proc.returncode})")
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "command": " ".join(cmd),
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_rss_mb": usage.ru_maxrss / 1024.0,
        "load_before": load0,
        "load_after": os.getloadavg()[0],
    }


def flatten(obj: Any) -> dict[str, Any]:
    """Every number, string and null of a ``result.json`` (or ``card.json``), by path (timings
    left out, and a card's command lines, which name its run folder)."""
    skip = ("timing", "seconds", "command")
    out: dict[str, Any] = {}

    def walk(o: Any, path: str) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if not any(t in k for t in skip):
                    walk(v, f"{path}/{k}")
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, f"{path}[{i}]")
        elif isinstance(o, bool) or o is None or isinstance(o, str):
            out[path] = o
        elif isinstance(o, (int, float)):
            out[path] = float(o)

    walk(obj, "")
    return out


def check_cells(result: dict, require_bootstrap: tuple[str, ...] = ("pearson", "spearman")) -> bool:
    """Print and check every metric cell's correlations: a percentile bootstrap CI for each
    statistic of ``require_bootstrap``, and for Kendall's tau_b a CI with its method (bootstrap,
    or Fisher z above ``kendall_ci_max_rows``). True when every cell passes."""
    bad: list[str] = []
    methods: dict[str, set[str]] = {}
    cells = [c for c in result["cells"] if c.get("metric") not in ("length", "random")]
    for c in cells:
        for s in ("pearson", "spearman", "kendall"):
            e = c["stats"].get(s)
            if e is None or e.get("undefined"):
                continue
            methods.setdefault(s, set()).add(str(e.get("ci_method")))
            boot = e.get("ci_method") == "percentile bootstrap"
            if (
                e.get("ci") is None
                or not e.get("ci_method")
                or (s in require_bootstrap and not boot)
            ):
                bad.append(
                    f"{c['metric']}/{c['dimension']}/{s}: ci {e.get('ci')} ({e.get('ci_method')})"
                )
    for s, ms in sorted(methods.items()):
        print(f"  {s}: CI in all {len(cells)} metric cells by {' / '.join(sorted(ms))}")
    print(f"every cell has its intervals: {'yes' if not bad else 'NO'}")
    for b in bad[:10]:
        print(f"  missing: {b}")
    return not bad


def report(m: dict, pairs: int, metrics: int, n_boot: int, annotators: int = 2) -> None:
    print(f"$ {m['command']}")
    if m["command"].split(" -m metajudge ")[-1].startswith("judge card"):
        return measured(m, pairs, "battles")
    measured(m, pairs)
    ops, rate, bound = hardware_bound(annotators * pairs, metrics + 1, n_boot)
    print(
        f"hardware bound: {ops:.2e} multiply-adds ({annotators} annotator rows x {pairs:,} pairs x "
        f"{n_boot} resamples x {metrics + 1} columns x 2 statistics) at {rate:.2e}/s "
        f"(einsum weighted row sums, one core, measured now) = {bound:.1f} s; the run took "
        f"{m['wall_s'] / bound:.1f}x the bound ({bound / m['wall_s']:.0%} of it)"
    )


def measured(m: dict, pairs: int, unit: str = "pairs") -> None:
    """A run's wall, CPU, peak RSS and load average, and its ratios to :data:`TARGETS`."""
    print(
        f"{unit}={pairs}: wall {m['wall_s']:.1f} s, CPU {m['cpu_s']:.1f} s (user+sys), "
        f"peak RSS {m['peak_rss_mb']:.0f} MB; load average {m['load_before']:.2f} -> "
        f"{m['load_after']:.2f} on {os.cpu_count()} cores"
    )
    target = next((t for t in TARGETS if pairs <= t[0]), TARGETS[-1])
    print(
        f"target at {target[0]:,} {unit}: {target[1]:.0f} s and {target[2]:.0f} MB; "
        f"wall {m['wall_s'] / target[1]:.2f}x, RSS {m['peak_rss_mb'] / target[2]:.2f}x of it"
        + (f" (fewer {unit} than the target's)" if pairs < target[0] else "")
    )


def generated(write: Any, *args: Any) -> tuple[Path, Path]:
    """The files ``write(*args)`` generates (once per arguments, in their folder), written in a
    spawned child so that this process stays small (see the module docstring), then their paths."""
    gen = multiprocessing.get_context("spawn").Process(target=write, args=args)
    gen.start()
    gen.join()
    if gen.exitcode:
        raise SystemExit(f"generating the inputs failed (exit {gen.exitcode})")
    return write(*args)


def arena(a: argparse.Namespace, data: Path, out: Path) -> int:
    """``--records arena``: ``meta-eval`` (into ``out/meta_eval``) and the judge card (into
    ``out/card``) of :data:`ARENA_JUDGE` on :func:`write_arena`'s battle file of ``--pairs``
    battles; ``--profile FILE``: the card's profile beside it (``FILE.card``); ``--compare
    DIR``: a stored ``--out`` folder of such a run, both files compared."""
    t0 = time.perf_counter()
    ds, scores = generated(write_arena, data, a.pairs)
    print(f"data: {ds.name}, {scores.name} ({time.perf_counter() - t0:.1f} s)")
    src, prof = a.src.resolve(), a.profile
    meta = run_meta_eval(
        ds, scores, out / "meta_eval", n_boot=a.n_boot, plots=a.plots, src=src, profile=prof
    )
    report(meta, a.pairs, 1, a.n_boot, 1)
    card_prof = prof.with_name(prof.name + ".card") if prof else None
    card = run_card(ds, scores, out / "card", n_boot=a.n_boot, src=src, profile=card_prof)
    report(card, a.pairs, 1, a.n_boot, 1)
    if a.json:
        a.json.write_text(json.dumps([meta, card], indent=1))
    ok = check_cells(json.loads((out / "meta_eval" / "result.json").read_text()))
    differ = 0
    for name in ("meta_eval/result.json", "card/card.json") if a.compare else ():
        print(f"{name}:")
        stored, new = (flatten(json.loads((d / name).read_text())) for d in (a.compare, out))
        differ |= compare_values(stored, new)
    return differ or int(not ok)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=200_000)
    ap.add_argument("--metrics", type=int, default=5)
    ap.add_argument(
        "--records",
        choices=("plain", "realistic", "arena"),
        default="plain",
        help="plain: 2 systems, 2 annotators, no text; realistic: see realistic(); arena: "
        "--pairs Chatbot Arena battles in Parquet (write_arena), meta-eval and judge card",
    )
    ap.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl", help="dataset file")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--plots", action="store_true", help="keep the PNG plots")
    ap.add_argument("--data", type=Path, help="folder for (and reuse of) the generated files")
    ap.add_argument("--out", type=Path, help="run folder (default: a temporary one)")
    ap.add_argument("--src", type=Path, default=REPO, help="checkout whose metajudge runs")
    ap.add_argument("--compare", type=Path, help="a stored result.json to compare to (1e-12)")
    ap.add_argument("--json", type=Path, help="write the measurements to this file")
    ap.add_argument("--profile", type=Path, help="run the child under cProfile, stats to this file")
    ap.add_argument("--diff", nargs=2, type=Path, metavar=("A", "B"), help="compare, no run")
    a = ap.parse_args(argv)
    if a.diff:
        return compare_values(*(flatten(json.loads(p.read_text())) for p in a.diff))
    with tempfile.TemporaryDirectory(prefix="bench_cli_scale_") as tmp:
        data = a.data or Path(tmp)
        data.mkdir(parents=True, exist_ok=True)
        out = a.out or Path(tmp) / "out"
        if a.records == "arena":
            return arena(a, data, out)
        t0 = time.perf_counter()
        ds, scores = generated(write_inputs, data, a.pairs, a.metrics, a.records, a.format)
        print(f"data: {ds.name}, {scores.name} ({time.perf_counter() - t0:.1f} s)")
        m = run_meta_eval(
            ds, scores, out, n_boot=a.n_boot, plots=a.plots, src=a.src.resolve(), profile=a.profile
        )
        report(m, a.pairs, a.metrics, a.n_boot, ANNOTATORS if a.records == "realistic" else 2)
        if a.json:
            a.json.write_text(json.dumps(m, indent=1))
        ok = check_cells(json.loads((out / "result.json").read_text()))
        if a.compare:
            stored = flatten(json.loads(a.compare.read_text()))
            new = flatten(json.loads((out / "result.json").read_text()))
            return compare_values(stored, new) or int(not ok)
    return int(not ok)


if __name__ == "__main__":
    sys.exit(main())
