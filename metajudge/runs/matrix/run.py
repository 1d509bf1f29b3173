"""``metajudge matrix run``: fill one metric × dataset cell and store it.

1. the dataset (``--dataset`` | ``--input``) and the cell's applicability
   (:func:`metajudge.runs.matrix.table.applicability`; a cell that does not apply is refused);
2. a seeded random subset of ``--limit`` items (:func:`metajudge.data.subsample.select`, the
   rule of every command with ``--limit``), or the ``--first`` items; all labelled items
   without either;
3. scores through :func:`metajudge.scores.scoring.score_dataset` on one cached backend (the
   user response cache: a rerun is answered from it) — or, for the pairwise judge, both orders
   through :func:`metajudge.runs.judge_diagnostics.diagnose_backbone` (what ``metajudge judge
   diagnostics`` runs);
4. the meta-evaluation with the dataset's natural protocol
   (:func:`metajudge.runs.matrix.table.natural_protocol`) through
   :func:`metajudge.analyses.metric_vs_human.evaluate.meta_evaluate`;
5. the cell JSON (``metajudge/data/schemas/matrix_cell.schema.json``), written atomically
   (:func:`cell_target`) into the run folder ``--out`` (default: a fresh folder under the user
   cache, :func:`metajudge.paths.user_cache_dir`), with ``table.md`` of the cell; into the
   stored baselines (``<DIR>/judges/<metric>__<dataset>.json``) only with ``--baselines DIR``.

``--dry-run`` stops after step 2 and prints the cost estimate (:mod:`metajudge.runs.matrix.cost`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from metajudge import __version__
from metajudge.errors import InputError
from metajudge.runs.matrix.prepare import CellOptions, Prepared, open_backend, prepare_cell


def _judge_options(opts: CellOptions, backend: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"backend": backend}
    if opts.prompt_variant:
        out["variant"] = opts.prompt_variant
    return out


def _score_metric(opts: CellOptions, prep: Prepared) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score rows and the ledger of a registry metric on the subset."""
    from metajudge.metrics.registry import is_judge, metric_class
    from metajudge.scores.scoring import score_dataset

    recs = list(prep.dataset.records)
    if not is_judge(opts.metric):
        t0 = time.perf_counter()
        rows = score_dataset(recs, [opts.metric], progress=opts.progress)
        return rows, {**_zero_ledger(), "wall_s": round(time.perf_counter() - t0, 2)}
    from metajudge.runs.demo import score_judge

    pv = str(getattr(metric_class(opts.metric), "parser_version", ""))
    backend, counter = open_backend(opts.backbone, pv, opts.seed)
    try:
        rows, run = score_judge(
            recs, opts.metric, backend, section="matrix", options=_judge_options(opts, backend)
        )
    finally:
        backend.close()
    ledger = {
        "requests": run.calls + run.cache_hits,
        "calls": run.calls,
        "cached": run.cache_hits,
        "prompt_tokens": run.prompt_tokens,
        "processed_prompt_tokens": run.processed_prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "prompt_chars": counter.chars,
        "model_s": round(counter.model_s, 2),
        "start_s": round(counter.start_s, 2),
        "responses": run.n_responses,
        "unscored": run.unscored,
        "parse_failures": run.parse_failures,
        "wall_s": run.wall_s,
        "cached_cost": {k: round(v, 2) for k, v in run.cached_cost.items()},
    }
    return rows, ledger


def _zero_ledger() -> dict[str, Any]:
    keys = ("requests", "calls", "cached", "prompt_tokens", "completion_tokens", "prompt_chars")
    return dict.fromkeys(keys, 0)


def _results(
    res: Any, metric: str, proto: dict[str, str], dims: Sequence[str]
) -> list[dict[str, Any]]:
    """Per dimension and statistic: value, CI and its method, n (from a meta-eval result). ``n`` counts the
    units resampled: pairs (pairwise-difference), inputs (pointwise, per input) or responses
    (pointwise, pooled)."""
    pairwise = proto["correlate"] == "pairwise-difference"
    n_key = "n_pairs" if pairwise else ("n_items" if proto["level"] == "item" else "n_responses")
    out = []
    for dim in dims:
        try:
            cell = res.cell(metric, dim)
        except KeyError:
            continue
        for stat, ent in (cell.get("stats") or {}).items():
            if not pairwise and stat not in ("pearson", "spearman", "kendall"):
                continue  # pairwise accuracies need pairs
            ci = ent.get("ci")
            out.append(
                {
                    "dimension": dim,
                    "statistic": stat,
                    "value": ent.get("value"),
                    "ci": list(ci) if ci else None,
                    "ci_method": ent.get("ci_method"),
                    "n": int(cell.get(n_key) or 0),
                    "undefined": ent.get("undefined"),
                }
            )
    return out


def _metric_cell(opts: CellOptions, prep: Prepared) -> dict[str, Any]:
    from metajudge.analyses.metric_vs_human.evaluate import meta_evaluate
    from metajudge.analyses.metric_vs_human.protocol import Protocol

    rows, ledger = _score_metric(opts, prep)
    scored = [r for r in rows if r["score"] is not None]
    if not scored:
        errs = sorted({str(r["error"]) for r in rows})[:3]
        raise InputError(f"{opts.metric}: no response could be scored ({'; '.join(errs)})")
    proto = prep.protocol
    protocol = Protocol(
        correlate=proto["correlate"],
        level=proto["level"],
        n_boot=opts.n_boot,
        seed=opts.seed,
        compare=False,
        missing="drop",
    )
    res = meta_evaluate(prep.dataset, rows, protocol, metrics=[opts.metric])
    return {
        "signature": scored[0]["signature"],
        "results": _results(res, opts.metric, proto, prep.facts.dimensions),
        "ledger": ledger,
        "protocol_options": res.to_dict().get("options", {}),
    }


def _pairwise_cell(opts: CellOptions, prep: Prepared) -> dict[str, Any]:
    from metajudge.runs.matrix.pairwise import pairwise_cell

    return pairwise_cell(opts, prep)


def _defined_headline(dim: str | None, stat: str, results: Sequence[dict[str, Any]]) -> str | None:
    """The headline dimension, or the first whose statistic is defined when it is not (UniEval's
    subsets rate different dimensions: a metric may be undefined on the first one)."""
    ok = [r["dimension"] for r in results if r["statistic"] == stat and r["value"] is not None]
    return dim if dim in ok or not ok else ok[0]


def run_cell(opts: CellOptions) -> tuple[dict[str, Any], Path]:
    """Steps 1–5 of the module docstring; returns the stored cell and its path."""
    from metajudge.metrics.judges.engine import resolve_backbone
    from metajudge.metrics.registry import is_judge
    from metajudge.runs.matrix.cell import write_cell
    from metajudge.runs.matrix.table import PAIRWISE_JUDGE, headline_dimension

    t0 = time.perf_counter()
    prep = prepare_cell(opts)
    judge = opts.metric == PAIRWISE_JUDGE or is_judge(opts.metric)
    out = _pairwise_cell(opts, prep) if opts.metric == PAIRWISE_JUDGE else _metric_cell(opts, prep)
    proto = dict(prep.protocol)
    proto["options"] = out.pop("protocol_options", {})
    cell = {
        "schema": "metajudge.matrix_cell/1",
        "metric": opts.metric,
        "dataset": prep.facts.name,
        "source": prep.source,
        "backbone": resolve_backbone(opts.backbone) if judge else None,
        "subset": prep.draw.describe(opts.seed),
        "protocol": proto,
        "headline": {
            "dimension": _defined_headline(
                headline_dimension(opts.metric, prep.facts.dimensions),
                proto["statistic"],
                out["results"],
            ),
            "statistic": proto["statistic"],
        },
        **out,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": round(time.perf_counter() - t0, 2),
        "metajudge_version": __version__,
        "command": opts.command(),
    }
    run_dir, stored = cell_targets(opts, prep.facts.name)
    cell["measured"] = measured_cost(cell, stored or run_dir / CELL_FILE)
    if stored is not None:
        write_cell(stored, cell)
    write_cell_run(run_dir, cell)
    return cell, stored or run_dir / CELL_FILE


#: The cell's file in a ``matrix run`` run folder (beside ``table.md``).
CELL_FILE = "cell.json"


def cell_targets(opts: CellOptions, dataset: str) -> tuple[Path, Path | None]:
    """Where a cell run writes: its run folder (``--out``, else
    :func:`metajudge.paths.default_run_dir` under the user cache: never the source tree) and
    the stored cell (``<--baselines DIR>/judges/<metric>__<dataset>.json``; None without
    ``--baselines``)."""
    from metajudge.paths import default_run_dir
    from metajudge.runs.matrix.table import cell_path

    # a judge defined in a file (judge:PATH) is named by its file's stem in folder names
    row = opts.metric if ":" not in opts.metric else "judge-" + Path(opts.metric[6:]).stem
    name = f"{row}__{dataset}"
    run_dir = Path(opts.out) if opts.out else default_run_dir("matrix", name)
    if opts.baselines:
        return run_dir, cell_path(opts.baselines, row, dataset)
    return run_dir, None


def write_cell_run(run_dir: Path, cell: dict[str, Any]) -> Path:
    """The run folder of a cell (:func:`metajudge.run_folder.run_folder`, written as a set):
    :data:`CELL_FILE` and ``table.md`` (:func:`metajudge.reports.matrix.cell_markdown`)."""
    from metajudge.reports.matrix import cell_markdown
    from metajudge.run_folder import run_folder
    from metajudge.runs.matrix.cell import write_cell

    with run_folder(run_dir) as rf:
        write_cell(rf.stage / CELL_FILE, cell)
        rf.write_text("table.md", cell_markdown(cell))
    return run_dir


def measured_cost(cell: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """The cost of the run that called the model for this cell: this run's when it called it,
    else (a rerun answered from the cache) the stored cell's, when that one has the same
    signature and items; ``None`` when unknown (what the dry-run's throughput is measured on)."""
    led = cell["ledger"]
    if led["calls"] > 0:
        keys = (
            "calls",
            "prompt_tokens",
            "processed_prompt_tokens",
            "completion_tokens",
            "prompt_chars",
            "model_s",
            "start_s",
        )
        out = {
            **{k: led.get(k, 0) for k in keys},
            "wall_s": led.get("wall_s"),
            "date": cell["date"],
        }
        cc = led.get("cached_cost") or {}
        if led.get("cached"):  # part of the cell was computed earlier: its cost, counted apart
            out["from_cache"] = {
                "calls": led["cached"],
                "prompt_tokens": int(cc.get("cached_prompt_tokens", 0)),
                "completion_tokens": int(cc.get("cached_completion_tokens", 0)),
            }
        return out
    if path.is_file():
        from metajudge.io import read_json

        old = read_json(path)
        same = (
            isinstance(old, dict)
            and old.get("signature") == cell["signature"]
            and (old.get("subset") or {}).get("ids") == cell["subset"].get("ids")
        )
        if same and old.get("measured"):
            return _with_processed(old["measured"], cell["ledger"])
    return _cost_from_cache_rows(cell)


def _with_processed(measured: dict[str, Any], led: dict[str, Any]) -> dict[str, Any]:
    """A stored cost without the processed prompt tokens gets them from a full cache replay of
    the same requests (the cache rows keep what the server evaluated for each)."""
    got = (led.get("cached_cost") or {}).get("cached_processed_prompt_tokens")
    hits = int(led.get("cached") or 0)
    full_replay = led.get("calls") == 0 and hits >= measured["calls"] > 0
    if measured.get("processed_prompt_tokens") is None and full_replay and got:
        # duplicates within the run are hits too: scaled to the calls the model made
        return {**measured, "processed_prompt_tokens": round(got * measured["calls"] / hits)}
    return measured


def _cost_from_cache_rows(cell: dict[str, Any]) -> dict[str, Any] | None:
    """A run answered wholly from the cache whose calls were made earlier (by another command):
    the cost those answers had when the model computed them, from the cache rows' stored tokens
    (their latencies overlap under concurrent requests: summed, not a model time)."""
    led = cell["ledger"]
    cc = led.get("cached_cost") or {}
    if not led.get("cached") or not cc.get("cached_latency_s"):
        return None
    return {
        "calls": led["cached"],
        "prompt_tokens": int(cc.get("cached_prompt_tokens", 0)),
        "processed_prompt_tokens": int(cc.get("cached_processed_prompt_tokens", 0)),
        "completion_tokens": int(cc.get("cached_completion_tokens", 0)),
        "prompt_chars": None,
        "model_s": None,
        "latency_s_summed": round(float(cc["cached_latency_s"]), 2),
        "start_s": None,
        "wall_s": None,
        "date": cell["date"],
        "source": "cache rows: the answers were computed before this run (stored tokens and "
        "per-request latencies, which overlap under concurrent requests, so no model time); "
        "wall time and server start unknown",
    }


@dataclass
class CellRun:
    """What ``matrix run`` did: the cost ``estimate`` (``--dry-run``), or the ``cell`` stored at
    ``path`` with its run folder's ``table`` (``table.md``)."""

    estimate: Any = None
    cell: dict[str, Any] | None = None
    path: Path | None = None
    table: Path | None = None


def run_cell_command(opts: CellOptions, *, dry_run: bool) -> CellRun:
    """What ``metajudge matrix run`` does: the estimate (``dry_run``) or the run."""
    if dry_run:
        from metajudge.runs.matrix.cost import estimate_cell

        return CellRun(estimate=estimate_cell(opts))
    cell, path = run_cell(opts)
    run_dir, _ = cell_targets(opts, cell["dataset"])
    return CellRun(cell=cell, path=path, table=run_dir / "table.md")


def cell_summary(cell: dict[str, Any]) -> str:
    """A few lines: the headline result, the subset, the cost."""
    head = cell["headline"]
    hit = next(
        (
            r
            for r in cell["results"]
            if r["dimension"] == head["dimension"] and r["statistic"] == head["statistic"]
        ),
        cell["results"][0],
    )
    ci, method = hit["ci"], hit.get("ci_method")
    ci_txt = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and None not in ci else ""
    ci_txt += f" ({method})" if method and method != "percentile bootstrap" else ""
    val = "undefined" if hit["value"] is None else f"{hit['value']:.3f}{ci_txt}"
    sub, led = cell["subset"], cell["ledger"]
    return (
        f"{cell['metric']} × {cell['dataset']} ({cell['backbone'] or 'no backbone'}): "
        f"{hit['statistic']} ({hit['dimension']}) = {val}, n = {hit['n']}\n"
        f"subset: {sub['n']} of {sub['N']} {sub['unit']} (seed {sub['seed']}); "
        f"protocol {cell['protocol']['correlate']}|{cell['protocol']['level']}\n"
        f"cost: {led['calls']} model calls, {led['cached']} cached, "
        f"{led['prompt_tokens']} + {led['completion_tokens']} tokens, {cell['wall_s']} s"
    )
