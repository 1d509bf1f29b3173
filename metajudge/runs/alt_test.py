"""``metajudge decide alt-test`` and ``decide alt-test-plan``: the Alt-Test (Calderon et al. 2025)
of LLM annotators against human annotators, and its planning simulation.

:func:`run_alt_test` loads the annotation set of a
:class:`~metajudge.data.source.DataSource` (:func:`metajudge.data.alt_test_dir.load_alt_test`),
runs :func:`metajudge.analyses.alt_test.alt_test` (each LLM's winning rate against the humans)
and, with ``out``, writes ``alt_test.md``, ``alt_test.json`` and ``report.html`` there (as a set,
:func:`decision_folder`);
:func:`run_alt_test_plan` runs :func:`metajudge.analyses.alt_test_plan.alt_test_plan` and writes
``alt_test_plan.md`` and ``alt_test_plan.json``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metajudge.errors import InputError

if TYPE_CHECKING:
    from metajudge.data.source import DataSource


@dataclass
class DecisionRun:
    """A ``decide`` result as JSON-ready ``payload``, its Markdown, the files written, and
    whether its gate passed (``decide drift``; exit 1 when not)."""

    payload: dict[str, Any]
    markdown: str
    written: list[Path] = field(default_factory=list)
    passed: bool = True


@contextlib.contextmanager
def decision_folder(
    out: str | Path | None, inputs: Sequence[str | Path | None] = ()
) -> Iterator[Path | None]:
    """A ``decide`` command's ``--out`` written as a set (:func:`metajudge.run_folder.run_folder`):
    refused before any work when ``out`` is a file, below a file or one of ``inputs``; yields the
    stage to write into (None without ``out``). Paths under the stage name the final folder
    once shown (:func:`metajudge.io.final_path`, inside this block)."""
    if not out:
        yield None
        return
    from metajudge.io import check_out_dir
    from metajudge.run_folder import run_folder

    check_out_dir(out, inputs=list(inputs))
    with run_folder(out) as rf:
        yield rf.stage


def final_run(run: DecisionRun) -> DecisionRun:
    """``run`` with its written paths named in the final folder (inside :func:`decision_folder`)."""
    from metajudge.io import final_path

    run.written = [final_path(p) for p in run.written]
    return run


def run_alt_test(
    source: DataSource,
    *,
    epsilon: float | None = None,
    q: float | None = None,
    scoring: str | None = None,
    min_annotators: int | None = None,
    min_items: int | None = None,
    llms: Sequence[str] | None = None,
    out: str | Path | None = None,
    judge: Mapping[str, Any] | None = None,
) -> DecisionRun:
    """The Alt-Test of each LLM (all of them without ``llms``) on ``source`` (an annotation
    folder, or the built-in set's subset) with the margin ``epsilon`` and the FDR level ``q``
    (None: the set's settings, :func:`~metajudge.analyses.alt_test.settings_for`).

    ``judge``: ``{metric, backbone, limit, first, seed}``: the LLM annotator is that judge metric
    (``judge:PATH`` too) run on a labelled ``source`` (a built-in dataset or any records file),
    the humans its annotators (:func:`judge_alt_test_data`)."""
    from metajudge.analyses.alt_test import alt_test, settings_for
    from metajudge.data.alt_test_dir import load_alt_test
    from metajudge.reports.decision_report import alt_test_markdown, write_report
    from metajudge.results import finite

    with decision_folder(out, [source.path]) as stage:
        data = (
            load_alt_test(source.dataset, source.subset, source.path, source.data_dir)
            if judge is None
            else judge_alt_test_data(source, **judge)
        )
        settings = settings_for(
            source.subset if source.dataset and judge is None else None,
            epsilon=epsilon,
            q=q,
            scoring=scoring,
            min_annotators=min_annotators,
            min_items=min_items,
        )
        res = alt_test(data, settings, llms=llms or None)
        j = finite(res.to_dict())
        run = DecisionRun(j, alt_test_markdown(j, res.sentence()))
        if stage:
            from metajudge.reports.html_decision import alt_test_overview
            from metajudge.reports.html_page import write_page

            run.written = write_report(stage, "alt_test", j, run.markdown)
            run.written.append(write_page(stage, alt_test_overview(j, res.sentence())))
        return final_run(run)


def judge_alt_test_data(
    source: DataSource,
    *,
    metric: str,
    backbone: str | None = None,
    limit: int | None = None,
    first: int | None = None,
    seed: int = 0,
) -> Any:
    """Alt-Test annotations from a labelled dataset (``source``, loaded once:
    :meth:`~metajudge.data.source.DataSource.load`) and a judge run on it: each annotator's
    label slot of the source's ``dimension`` (the card's first) is one human; the judge
    ``metric`` on ``backbone`` is the LLM (a Likert response: its score; a pair: the sign of
    p(b) - p(a), +1 b better, as the human labels). Responses it leaves unscored are counted in
    the notes."""
    from metajudge.data.alt_test_dir import AltTestData
    from metajudge.data.subsample import select
    from metajudge.scores.scoring import score_dataset

    ds = source.load()
    dim = source.dimension or ds.card.dimensions[0]
    if dim not in ds.card.dimensions:
        raise InputError(
            f"no dimension {dim!r} (have {', '.join(ds.card.dimensions)})", field="--dimension"
        )
    records = list(select(ds.records, limit=limit, first=first, seed=seed).records)
    rows = score_dataset(records, [metric], progress=False, backbone=backbone)
    humans: dict[str, dict[str, Any]] = {}
    for r in records:
        key = r.id if hasattr(r, "a") else f"{r.id}::{r.system}"
        labels = (r.labels if hasattr(r, "a") else r.scores).get(dim, ())
        for i, v in enumerate(labels):
            if v is not None:
                humans.setdefault(f"annotator_{i + 1}", {})[key] = v
    llm, unscored = _judge_labels(records, rows)
    notes = (f"{metric}: {unscored} response(s) unscored (left out)",) if unscored else ()
    label_type = (
        "numeric"
        if all(isinstance(v, int | float) for h in humans.values() for v in h.values())
        else "categorical"
    )
    return AltTestData(humans, {metric: llm}, label_type, source=ds.card.name, notes=notes)


def _judge_labels(
    records: Sequence[Any], rows: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, Any], int]:
    """The judge's label per item: a Likert response's score; a pair's sign(p(b) - p(a))."""
    by = {(r["item"], r["side"] or r["system"]): r["score"] for r in rows}
    out: dict[str, Any] = {}
    missing = 0
    for r in records:
        if hasattr(r, "a"):
            sa, sb = by.get((r.id, "a")), by.get((r.id, "b"))
            if sa is None or sb is None:
                missing += 1
                continue
            out[r.id] = float((sb > sa) - (sb < sa))
        else:
            s = by.get((r.id, r.system))
            if s is None:
                missing += 1
                continue
            out[f"{r.id}::{r.system}"] = float(s)
    return out, missing


def run_alt_test_plan(
    *,
    categories: int,
    annotators: int,
    annotator_noise: float,
    llm_noise: float,
    n_items: Sequence[int] | None = None,
    epsilons: Sequence[float] | None = None,
    reps: int = 100,
    seed: int = 0,
    q: float = 0.05,
    min_items: int = 30,
    model: str = "dirichlet",
    out: str | Path | None = None,
) -> DecisionRun:
    """The plan: per ε and number of items (defaults: the paper's), the mean winning rate, the
    pass rate and the advantage probability over ``reps`` seeded synthetic sets of the
    simulation ``model`` (the paper's ``dirichlet``, or ``uniform``)."""
    from metajudge.analyses.alt_test_plan import PlanSettings, alt_test_plan, plan_markdown
    from metajudge.reports.decision_report import write_report

    with decision_folder(out) as stage:
        settings = PlanSettings(
            categories=categories,
            annotators=annotators,
            annotator_noise=annotator_noise,
            llm_noise=llm_noise,
            n_items=tuple(n_items or PlanSettings.n_items),
            epsilons=tuple(epsilons or PlanSettings.epsilons),
            reps=reps,
            seed=seed,
            q=q,
            min_items=min_items,
            model=model,
        )
        plan = alt_test_plan(settings)
        run = DecisionRun(plan.to_dict(), plan_markdown(plan))
        if stage:
            run.written = write_report(stage, "alt_test_plan", run.payload, run.markdown)
        return final_run(run)
