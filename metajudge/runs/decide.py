"""``metajudge decide`` end to end: load data, decide, write the decision report.

- :func:`run_decide` — "can Y replace X?" on a dataset with per-backbone scores
  (:func:`~metajudge.runs.backbone_swap.load_swap_data`), slices = the dataset's subsets.
- :func:`run_decide_verdicts` — released pairwise verdicts (JudgeBench ``outputs/*.jsonl``).
- :func:`run_frontier_table` — the frontier of a published judge table (AlpacaEval's).
- :func:`run_drift` — two runs of a judge on the same anchor items, with the gate.

Each command's run (:func:`run_swap_decision`, :func:`run_choose_verdicts`, :func:`run_frontier`,
:func:`run_drift_gate`, :func:`run_ppi_report`) returns a :class:`~metajudge.runs.alt_test.DecisionRun`
(payload, Markdown, the files written into ``out``, as a set: :func:`~metajudge.runs.alt_test.decision_folder`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.analyses.backbone_swap import SwapData
from metajudge.analyses.decide.drift import DriftGate, DriftResult, drift
from metajudge.analyses.decide.frontier import Frontier, alpaca_eval_frontier
from metajudge.analyses.decide.noninferiority import DEFAULT_MARGIN
from metajudge.analyses.decide.swap_decision import SwapDecision, decide_swap
from metajudge.analyses.decide.verdict_decision import (
    VerdictDecision,
    decide_verdicts,
    estimated_costs,
)
from metajudge.runs.alt_test import DecisionRun, decision_folder, final_run
from metajudge.runs.backbone_swap import judge_scores, load_swap_data
from metajudge.scores.spec import ScoreSpec, judge_specs, n_columns


def run_decide(
    dataset: str | None,
    metric: str,
    x: str,
    y: str,
    *,
    scores: Sequence[ScoreSpec | str] = (),
    external: Sequence[str] = (),
    backbones: Sequence[str] = (),
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
    eps: float = 0.0,
    ppi_labelled: int | None = None,
    **load: Any,
) -> SwapDecision:
    """Can backbone ``y`` replace ``x``? Scores as for ``backbone-swap`` (``scores`` specs, their
    old spelling ``external``, ``backbones``).

    ``ppi_labelled``: also the PPI++ estimate of the mean human score (win rate for pairwise
    data) with ``y`` as the judge and that many human labels drawn at random (``seed``)."""
    from metajudge.runs.backbone_swap import swap_dataset

    ds = swap_dataset(
        dataset, load.pop("input_file", None), load.get("subset"), load.get("data_dir")
    )
    data, runs, records = load_swap_data(
        ds, metric, scores=scores, external=external, backbones=backbones, seed=seed, **load
    )
    sub = {r.id: str(r.meta.get("subset", "")) for r in records}
    slices = [sub.get(i, "") for i in data.view.items]
    res = decide_swap(
        data,
        x,
        y,
        rng=np.random.default_rng(seed),
        n_boot=n_boot,
        margin=margin,
        alpha=alpha,
        eps=eps,
        slices=slices if len(set(slices)) > 1 else None,
    )
    if runs:
        res.extra["runs"] = runs
    if ds.source:
        res.extra["source"] = ds.source  # the report loads the items from there
    if ppi_labelled:
        from dataclasses import replace

        from metajudge.stats.ppi import ppi_on_labels, ppi_units

        k = data.backbones.index(y)
        h, j, target = ppi_units(replace(data, backbones=(y,), scores=data.scores[[k]]), eps=eps)
        rng = np.random.default_rng(seed)
        res.extra["ppi"] = ppi_on_labels(h, j, ppi_labelled, rng=rng, alpha=alpha) | {
            "dataset": data.dataset,
            "judge": y,
            "target": target,
        }
    return res


def _texts(path: Path) -> tuple[int, int]:
    """Characters each judge call reads (question + both responses, per order) and writes."""
    cin = cout = 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            js = d.get("judgments") or []
            base = (
                len(d.get("question", ""))
                + len(d.get("response_A", ""))
                + len(d.get("response_B", ""))
            )
            cin += base * max(len(js), 1)
            cout += sum(len(str((j.get("judgment") or {}).get("response", ""))) for j in js)
    return cin, cout


def run_decide_verdicts(
    paths: Sequence[str | Path],
    *,
    margin: float = DEFAULT_MARGIN,
    alpha: float = 0.05,
    n_boot: int = 1000,
    seed: int = 0,
) -> VerdictDecision:
    """Rank released judges, non-inferiority against the best, cost frontier (stated prices)."""
    from metajudge.scores.released_verdicts import read_judgebench_outputs

    judges = [read_judgebench_outputs(p) for p in paths]
    texts = {v.judge: _texts(Path(p)) for v, p in zip(judges, paths, strict=True)}
    costs = estimated_costs(judges, texts)
    return decide_verdicts(
        judges,
        rng=np.random.default_rng(seed),
        margin=margin,
        alpha=alpha,
        n_boot=n_boot,
        costs=costs,
    )


def run_frontier_table(
    path: str | Path | None = None, *, data_dir: str | Path | None = None, alpha: float = 0.05
) -> Frontier:
    """The cost–agreement frontier of AlpacaEval's judge leaderboard (or a table like it)."""
    return alpaca_eval_frontier(path, data_dir=data_dir, alpha=alpha)


def run_drift(
    dataset: str | None,
    metric: str,
    *,
    scores: Sequence[ScoreSpec | str] = (),
    external: Sequence[str] = (),
    backbones: Sequence[str] = (),
    gate: DriftGate | None = None,
    judge_runs: Mapping[str, Any] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    eps: float = 0.0,
    **load: Any,
) -> DriftResult:
    """Drift between two score sources (before, after) on the same anchor items, or between two
    runs of the judge (``judge_runs``: :func:`drift_judge_data`'s ``before``, ``after``, ``options``)."""
    if judge_runs is not None:
        data, runs = drift_judge_data(dataset, metric, seed=seed, **judge_runs, **load)
        res = drift(data, gate=gate, rng=np.random.default_rng(seed), n_boot=n_boot, eps=eps)
        res.runs = runs
        return res
    specs = judge_specs(scores, external)
    if n_columns(specs) + len(backbones) != 2:
        from metajudge.errors import InputError

        raise InputError("drift compares exactly two runs (before, after)", field="scores")
    data, _, _ = load_swap_data(
        dataset, metric, scores=specs, backbones=backbones, seed=seed, **load
    )
    return drift(data, gate=gate, rng=np.random.default_rng(seed), n_boot=n_boot, eps=eps)


def drift_judge_data(
    dataset: str | None,
    metric: str,
    before: str,
    after: str | None = None,
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    input_file: str | Path | None = None,
    subset: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    data_dir: str | Path | None = None,
    first: int | None = None,
) -> tuple[SwapData, dict[str, Any]]:
    """Run judge ``metric`` twice on the anchor items: ``before`` and ``after`` (default: the same
    backbone), each with its metric options ``options["before"|"after"]`` (e.g. ``temperature``).

    The scoring is :func:`~metajudge.runs.backbone_swap.judge_scores` (cache included: a rerun
    of an unchanged judge is answered from the cache). Labels: ``before:BACKBONE[k=v]``.
    """
    from metajudge.analyses.backbone_swap import build_swap_data
    from metajudge.runs.backbone_swap import need_pairs, subset_records, swap_dataset
    from metajudge.scores.swap_sources import metric_dimension

    ds = swap_dataset(dataset, input_file, subset, data_dir)
    records = subset_records(ds.records, limit, first, seed)
    need_pairs(ds, records)
    dim = metric_dimension(metric, ds.card.dimensions)
    scores: dict[str, Any] = {}
    sigs: dict[str, str] = {}
    runs: dict[str, Any] = {}
    for side, bb in (("before", before), ("after", after or before)):
        opts = dict((options or {}).get(side, {}))
        label = f"{side}:{bb}" + (
            "[" + ",".join(f"{k}={v}" for k, v in sorted(opts.items())) + "]" if opts else ""
        )
        s, g, r = judge_scores(records, metric, [bb], seed=seed, metric_options=opts)
        scores[label], sigs[label], runs[label] = s[bb], g[bb], r[bb]
    name = ds.card.name + (f"/{subset}" if subset else "")
    data = build_swap_data(
        records, scores, dimension=dim, metric=metric, dataset=name, signatures=sigs
    )
    return data, runs


def write_frontier_plot(fr: Frontier, out_dir: str | Path, stem: str = "frontier") -> Path:
    from metajudge.reports.decision_report import plot_frontier

    return plot_frontier(fr, Path(out_dir) / f"{stem}.png")


def run_ppi(
    dataset: str | None,
    metric: str,
    *,
    scores: Sequence[ScoreSpec | str] = (),
    external: Sequence[str] = (),
    backbones: Sequence[str] = (),
    n_labelled: int | None = None,
    labelled_fraction: float | None = None,
    system: str | None = None,
    alpha: float = 0.05,
    critical: str = "t",
    n_boot: int = 2000,
    seed: int = 0,
    eps: float = 0.0,
    dimension: str | None = None,
    **load: Any,
) -> dict[str, Any]:
    """PPI++ (and Rogan–Gladen for binary verdicts) with one judge's scores on every unit and the
    dataset's human labels on a random labelled subset: ``n_labelled`` units, or
    ``labelled_fraction`` of those with a label (seeded by ``seed``); ``dimension``: the human
    dimension (default: the one the metric tracks). Intervals are clipped to the target's scale
    (the dimension's, or [0, 1] for a win rate)."""
    from metajudge.errors import InputError
    from metajudge.stats.ppi import ppi_on_labels, ppi_units

    specs = judge_specs(scores, external)
    if n_columns(specs) + len(backbones) != 1:
        raise InputError("ppi takes exactly one judge (--scores or --backbones)", field="scores")
    if (n_labelled is None) == (labelled_fraction is None):
        raise InputError(
            "give exactly one of --n-labelled and --labelled-fraction", field="n-labelled"
        )
    data, runs, scale = _one_judge_data(
        dataset, metric, specs, backbones, seed=seed, dimension=dimension, **load
    )
    h, j, target = ppi_units(data, system=system, eps=eps)
    if data.kind != "likert":
        scale = (0.0, 1.0)
    if labelled_fraction is not None:
        n_labelled = max(2, round(labelled_fraction * int(np.sum(np.isfinite(h) & np.isfinite(j)))))
    try:
        out = ppi_on_labels(
            h,
            j,
            int(n_labelled or 0),
            rng=np.random.default_rng(seed),
            alpha=alpha,
            critical=critical,  # type: ignore[arg-type]
            n_resamples=n_boot,
            scale=scale,
        )
    except ValueError as e:
        raise InputError(str(e), field="n-labelled") from e
    out |= {"dataset": data.dataset, "metric": metric, "judge": data.backbones[0]}
    out |= {"target": target, "seed": seed, "runs": runs}
    return out


def _one_judge_data(
    dataset: str | None,
    metric: str,
    specs: Sequence[ScoreSpec],
    backbones: Sequence[str],
    *,
    seed: int,
    input_file: str | Path | None = None,
    subset: str | None = None,
    limit: int | None = None,
    data_dir: str | Path | None = None,
    first: int | None = None,
    dimension: str | None = None,
) -> tuple[SwapData, dict[str, Any], tuple[float, float] | None]:
    """One judge's scores aligned with the records (as :func:`load_swap_data`, for one source),
    and the human dimension's (min, max) when its scale has a numeric range."""
    from metajudge.analyses.metric_vs_human.aligned import align
    from metajudge.errors import InputError
    from metajudge.runs.backbone_swap import subset_records, swap_dataset
    from metajudge.scores.swap_sources import external_scores, metric_dimension

    ds = swap_dataset(dataset, input_file, subset, data_dir)
    records = subset_records(ds.records, limit, first, seed)
    if dimension is not None and dimension not in ds.card.dimensions:
        raise InputError(
            f"unknown dimension {dimension!r} (known: {', '.join(ds.card.dimensions)})",
            field="--dimension",
        )
    dim = dimension or metric_dimension(metric, ds.card.dimensions)
    ds_scale = ds.card.scale_of(dim)
    numeric = ds_scale is not None and ds_scale.labels is None and ds_scale.max > ds_scale.min
    scale = (float(ds_scale.min), float(ds_scale.max)) if numeric else None
    runs: dict[str, Any] = {}
    if specs:
        columns, _ = external_scores(ds, specs, dimension=dim, data_dir=data_dir)
    else:
        columns, _, runs = judge_scores(records, metric, backbones, seed=seed)
    [(label, sc)] = columns.items()
    view = align(records, dimensions=[dim], dataset=ds.card.name + (f"/{subset}" if subset else ""))
    s = view.values(sc)[None, :]
    return SwapData(view.dataset, metric, dim, view, (label,), s), runs, scale


# --- the commands: each result with its Markdown, its report written into ``out`` ---------------


def _report(
    stem: str, payload: dict[str, Any], markdown: str, out: str | Path | None
) -> DecisionRun:
    """A :class:`~metajudge.runs.alt_test.DecisionRun`; with ``out``, ``stem.md`` and
    ``stem.json`` written there (:func:`metajudge.reports.decision_report.write_report`)."""
    from metajudge.reports.decision_report import write_report

    run = DecisionRun(payload, markdown)
    if out:
        run.written = write_report(out, stem, payload, markdown)
    return run


def run_swap_decision(
    dataset: str | None, metric: str, x: str, y: str, *, out: str | Path | None = None, **kw: Any
) -> DecisionRun:
    """``judge swap --x X --y Y``: :func:`run_decide` (``kw``: its keywords), with ``out`` the
    report ``decision.md``/``.json``, ``decision.png`` and ``report.html`` written there."""
    from metajudge.reports.decision_report import plot_decision, swap_decision_markdown

    with decision_folder(out, [kw.get("input_file")]) as stage:
        j = run_decide(dataset, metric, x, y, **kw).to_dict()
        run = _report("decision", j, swap_decision_markdown(j), stage)
        if stage:
            from metajudge.reports.html_run import write_decision_html

            run.written.append(plot_decision(j, stage / "decision.png"))
            html = write_decision_html(
                stage,
                metric=metric,
                external=kw.get("scores"),
                input_file=kw.get("input_file"),
                data_dir=kw.get("data_dir"),
            )
            run.written.append(html)
        return final_run(run)


def run_choose_verdicts(
    paths: Sequence[str | Path], *, out: str | Path | None = None, **kw: Any
) -> DecisionRun:
    """``judge verdicts --choose``: :func:`run_decide_verdicts` on two or more JudgeBench
    outputs files (``kw``: its keywords), with ``out`` the report ``decision.md``/``.json`` and
    the frontier plot written there."""
    from metajudge.reports.decision_report import verdicts_markdown

    with decision_folder(out, paths) as stage:
        if len(paths) < 2:
            from metajudge.errors import InputError

            raise InputError(
                "give at least two verdict files (--input FILE, repeated)", field="--input"
            )
        res = run_decide_verdicts(paths, **kw)
        j = res.to_dict()
        run = _report("decision", j, verdicts_markdown(j), stage)
        if stage and res.frontier is not None:
            run.written.append(write_frontier_plot(res.frontier, stage))
        return final_run(run)


def run_frontier(
    path: str | Path | None = None,
    *,
    data_dir: str | Path | None = None,
    alpha: float = 0.05,
    out: str | Path | None = None,
) -> DecisionRun:
    """``decide frontier``: :func:`run_frontier_table`, with ``out`` ``frontier.md``/``.json``
    and ``frontier.png`` written there."""
    from metajudge.reports.decision_report import frontier_lines

    with decision_folder(out, [path]) as stage:
        fr = run_frontier_table(path, data_dir=data_dir, alpha=alpha)
        j = fr.to_dict()
        md = "\n".join(["# Judges: cost against agreement", *frontier_lines(j)]) + "\n"
        run = _report("frontier", j, md, stage)
        if stage:
            run.written.append(write_frontier_plot(fr, stage))
        return final_run(run)


def run_drift_gate(
    dataset: str | None, metric: str, *, out: str | Path | None = None, **kw: Any
) -> DecisionRun:
    """``decide drift``: :func:`run_drift` (``kw``: its keywords), its gate in ``passed``, with
    ``out`` ``drift.md``/``.json`` written there."""
    from metajudge.reports.decision_report import drift_markdown

    with decision_folder(out, [kw.get("input_file")]) as stage:
        res = run_drift(dataset, metric, **kw)
        j = res.to_dict()
        run = _report("drift", j, drift_markdown(j, res.sentence()), stage)
        run.passed = bool(res.passed)
        return final_run(run)


def run_ppi_report(
    dataset: str | None, metric: str, *, out: str | Path | None = None, **kw: Any
) -> DecisionRun:
    """``decide ppi``: :func:`run_ppi` (``kw``: its keywords), with ``out`` ``ppi.md``/``.json``
    written there."""
    from metajudge.reports.decision_report import ppi_markdown

    with decision_folder(out, [kw.get("input_file")]) as stage:
        j = run_ppi(dataset, metric, **kw)
        return final_run(_report("ppi", j, ppi_markdown(j), stage))
