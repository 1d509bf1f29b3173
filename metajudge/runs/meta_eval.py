"""One meta-evaluation run: load a dataset, gather scores, meta-evaluate, write the reports.

``run_meta_eval`` is what ``metajudge meta-eval`` calls, with what it reads as one
:class:`~metajudge.data.source.DataSource` (the dataset or file, its subset, the data folder, the
score specs, the id policy). Scores come from, in order:

1. the source's ``scores`` (``--scores SPEC``, repeatable): score files and the dataset's shipped
   columns, in the grammar of :mod:`metajudge.scores.spec` (``PATH``, ``PATH:COL``,
   ``LABEL=PATH[:COL]``, ``shipped``, ``shipped:COL``), read by
   :func:`metajudge.scores.spec.gather_scores`;
2. registry metrics named in ``metrics`` that no file provides: computed with
   :func:`metajudge.scores.scoring.score_dataset` and cached in ``<out>/scores.jsonl`` — a
   rerun with the same metric signatures is served from that cache.

The run folder then holds ``result.json`` (the full result), the tables and the plots
(:func:`metajudge.reports.render.render_all`).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.analyses.metric_vs_human import trivial
from metajudge.analyses.metric_vs_human.evaluate import MetaEvalResult, meta_evaluate
from metajudge.analyses.metric_vs_human.protocol import AUTO_CORRELATE, Protocol, correlate_for
from metajudge.data.partial import labelled_only
from metajudge.data.source import DataSource
from metajudge.progress import Steps
from metajudge.runs import plot_ahead
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.scores.readers.base import Reading
from metajudge.scores.readers.rows import row_metrics
from metajudge.scores.run_scores import gather_run_scores, score_specs, write_scores_cache
from metajudge.scores.source_rows import dataset_id_policy, read_for
from metajudge.scores.spec import ScoreSpec

log = logging.getLogger(__name__)


def _directions(metrics: Sequence[str]) -> dict[str, str]:
    """Each registry metric's direction, read from its class without instantiating it."""
    from metajudge.metrics import registry

    out = {}
    for m in metrics:
        try:
            out[m] = str(getattr(registry.metric_class(m), "direction", "higher"))
        except Exception:  # noqa: BLE001 - not a registry metric (external column): "higher"
            log.debug("%s: not a registry metric, direction 'higher'", m)
    return out


def _rows_of(metrics: Sequence[str]) -> list[str]:
    """Table rows of the asked metrics: a family is the row its members are read into."""
    from metajudge.metrics.registry import family_row

    return [family_row(m) for m in metrics]


def run_meta_eval(
    source: DataSource, *, out_dir: str | Path, **options: Any
) -> tuple[MetaEvalResult, dict[str, Path]]:
    """:func:`meta_eval_into` holding the lock of ``out_dir`` (:func:`metajudge.run_folder.run_lock`:
    a second run into the same folder refuses, naming the first)."""
    from metajudge.out_folder import check_out_folder
    from metajudge.run_folder import run_lock

    check_out_folder(out_dir)  # before the lock and any work
    with run_lock(out_dir):
        return meta_eval_into(source, out_dir=out_dir, **options)


def run_subsets(
    source: DataSource,
    subsets: Sequence[str] | None,
    *,
    out_dir: str | Path,
    levels: Sequence[str] | None = None,
    table: dict[str, Any] | None = None,
    **kwargs: Any,
) -> tuple[str, list[Path]]:
    """One :func:`run_meta_eval` of ``source`` per subset (``all``: the whole dataset; none:
    the source's own subset) and per level into
    ``out_dir/<subset>/``, ``out_dir/<level>/`` or, with both, ``out_dir/<subset>/<level>/``;
    then the paper table of them (``table``: :func:`metajudge.runs.report.paper_of`'s options),
    written to ``out_dir/paper_table.tex``; returns the table and the run folders' and the
    table's paths."""
    from metajudge.run_folder import write_file
    from metajudge.runs.report import paper_of

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    base = kwargs.pop("protocol", None) or Protocol(correlate=AUTO_CORRELATE)
    results, written = [], []
    for name in subsets or [None]:
        for level in levels or [None]:
            folder = out.joinpath(*[p for p in (name, level) if p])
            proto = base if level is None else base.with_options(level=level, grouped=False)
            src = source if name is None else source.but(subset=None if name == "all" else name)
            res, files = run_meta_eval(src, out_dir=folder, protocol=proto, **kwargs)
            results.append(res)
            written.append(files.get("result.json", folder))
    tex = paper_of(results, **(table or {}))
    written.append(write_file(out, "paper_table.tex", tex))
    return tex, written


def meta_eval_into(
    source: DataSource,
    *,
    out_dir: str | Path,
    protocol: Protocol | None = None,
    metrics: Sequence[str] | None = None,
    plots: bool = True,
    progress: bool = True,
    rescore: bool = False,
    backbone: str | None = None,
    asked: Sequence[str] = (),
    baselines: bool = True,
    report: dict[str, Any] | None = None,
    reading: Reading | None = None,
) -> tuple[MetaEvalResult, dict[str, Path]]:
    """Run the whole meta-evaluation of ``source`` into ``out_dir``; returns the result and the
    written files (``result.json`` with the published numbers attached, tables, plots).
    ``source``: the dataset (loaded once: the one it carries, :meth:`DataSource.loaded_once`),
    its score specs (:mod:`metajudge.scores.spec`; their rows and id policy those it carries,
    gathered once: :func:`~metajudge.scores.source_rows.scored_once`) and id policy
    (``ids.strict``: refuse rows for ids the dataset lacks, else dropped and counted,
    :func:`_counted`);
    ``baselines``: the :mod:`~metajudge.analyses.metric_vs_human.trivial` rows; ``protocol``: every
    option of the evaluation (n_boot, seed, ci_level …) as one explicit value (None: the
    defaults; its ``correlate`` ``auto``: the data's kind chooses, :func:`_protocol_of`); ``backbone``:
    the judges'; ``asked``: flags refused for categorical or binary data; ``report``: options;
    ``reading``: a framework file's join (:func:`_recorded`)."""
    t0 = time.perf_counter()
    out, data_dir, subset = Path(out_dir), source.data_dir, source.subset
    bars = Steps(progress)  # drawn only on a terminal
    specs = score_specs(source.scores)
    texts = bool(metrics) or not text_free(source.path, specs)
    ds = source.load(progress=bars.step("load", "line"), texts=texts)
    proto = _protocol_of(ds, protocol, say=progress)
    run = {"dataset": source.name, "subset": subset, "source": ds.source}
    if ds.card.label_kind in ("categorical", "binary"):
        from metajudge.runs.meta_eval_categorical import refuse_asked, run_categorical

        refuse_asked(proto, asked, ds.card.label_kind)  # before any scoring
    read = None if reading else read_for(source, ds)  # rows gathered once (the judge card)
    ids = read.ids if read else dataset_id_policy(source, ds)
    cache: list[dict[str, Any]] = []  # a new scores.jsonl: written with the run's files
    rows, to_score = gather_run_scores(
        ds,
        out_dir=out,
        metrics=metrics,
        scores=specs,
        data_dir=data_dir,
        progress=progress,
        rescore=rescore,
        backbone=backbone,
        ids=ids,
        pending=cache,
        reading=reading,
        spec_rows=read.rows if read else None,
    )
    run |= {"score_ids": _counted(ids), **_recorded(reading)}
    ds, run["unlabelled_left_out"] = labelled_only(ds, what="meta-eval")
    if ds.card.label_kind in ("categorical", "binary"):
        run["scores"] = [s.text for s in specs]
        kw = {"protocol": proto, "metrics": metrics, "data_dir": data_dir, "run": run}
        return run_categorical(ds, rows, out_dir=out, scores_cache=cache, **kw)  # type: ignore[return-value,arg-type]
    points = functools.partial(_evaluate_points, proto, metrics, baselines)
    with plot_ahead.drawing(ds, rows, points, plots) as ahead:  # the plots meanwhile
        res = _evaluate(ds, rows, proto, metrics, baselines, bars.step("bootstrap", "resample"))
        res.data["run"] = {
            **run,
            "scores": [s.text for s in specs],
            **_run_options(to_score, rescore, baselines, t0),
        }
        report_kw = {"plots": plots, "data_dir": data_dir, "dataset": ds, "rows": rows}
        report_kw |= {"ahead": ahead, "scores_cache": cache, **(report or {})}
        return res, _write_report(res, out, bars, report_kw)


#: score files whose rows are joined by key alone (never by a record's texts)
_KEYED = (".csv", ".tsv", ".parquet", ".arrow", ".feather", ".ipc")
#: the size from which a dataset file is loaded without its texts where nothing reads them
TEXT_FREE_BYTES = 64 << 20


def text_free(input_file: Any, specs: Sequence[ScoreSpec]) -> bool:
    """Is the run's dataset loaded text-free (``texts`` of :func:`~metajudge.data.loading.load`:
    only the word counts the length baseline reads)? When no registry metric is computed (the
    caller's test), every spec is a score table joined by key, and the file holds at least
    :data:`TEXT_FREE_BYTES` (a smaller one keeps its texts for the report's browser)."""
    keyed = all(not s.shipped and Path(s.source).suffix.lower() in _KEYED for s in specs)
    p = Path(str(input_file)) if input_file is not None else None
    return keyed and p is not None and p.is_file() and p.stat().st_size >= TEXT_FREE_BYTES


def _run_options(to_score: Any, rescore: bool, baselines: bool, t0: float) -> dict[str, Any]:
    """What ``result.json`` records of the run beside its dataset and score specs."""
    return {
        "registry_metrics": to_score,
        "rescore": rescore,
        "trivial_baselines": list(trivial.TRIVIAL) if baselines else [],
        "seconds": round(time.perf_counter() - t0, 3),
    }


def _evaluate_points(
    proto: Protocol,
    metrics: Sequence[str] | None,
    baselines: bool,
    ds: Any,
    rows: list[Any],
    **options: Any,
) -> MetaEvalResult:
    """:func:`_evaluate` under ``proto`` with ``options`` (the scatter child's: no resamples)."""
    return _evaluate(ds, rows, proto.with_options(**options), metrics, baselines, None)


def _write_report(res: MetaEvalResult, out: Path, bars: Any, kw: dict[str, Any]) -> dict[str, Path]:
    """:func:`write_run` with the report's progress bar (the report shows the gathered rows; the
    trivial baselines are not browsed); ``bars`` are closed whatever happens."""
    try:
        return write_run(res, out, progress=bars.step("report", "view"), **kw)
    finally:
        bars.close()


def _evaluate(
    ds: Any,
    rows: list[Any],
    proto: Protocol,
    metrics: Sequence[str] | None,
    baselines: bool,
    progress: Any,
) -> MetaEvalResult:
    """:func:`meta_evaluate` of the gathered ``rows`` (plus the trivial baseline rows);
    ``progress``: the bootstrap passes' callback."""
    have = sorted(row_metrics(rows))
    directions = _directions(metrics or have)  # registry metrics; score files declare their own
    if baselines:
        rows = rows + trivial.trivial_rows(ds.records, proto.seed)  # columns stay columns
    wanted = list(dict.fromkeys(_rows_of(metrics))) if metrics else None
    return meta_evaluate(
        ds,
        rows,
        proto,
        metrics=trivial.with_trivial(wanted) if baselines else wanted,
        directions=directions,
        progress=progress,
    )


def _protocol_of(ds: Any, protocol: Protocol | None, say: bool) -> Protocol:
    """``protocol`` (None: the defaults); when its ``correlate`` is ``auto`` (or there is
    none), the data's kind chooses (:func:`_chosen_correlate`)."""
    proto = protocol if protocol is not None else Protocol(correlate=AUTO_CORRELATE)
    if proto.correlate != AUTO_CORRELATE:
        return proto
    return proto.with_options(correlate=_chosen_correlate(ds, say))


def _recorded(reading: Reading | None) -> dict[str, Any]:
    """``run.reading`` of ``result.json``: a framework file's ``--id-field``, ``--system`` and
    ``--epochs`` when any differs from the default (``report render`` reads the file so again)."""
    if reading is None or reading == Reading():
        return {}
    return {"reading": dataclasses.asdict(reading)}


def _counted(ids: IdPolicy) -> dict[str, Any]:
    """The score rows ``ids`` dropped, warned about once, as ``result.json`` records them."""
    from metajudge.scores.readers.alignment import other_subsets_line

    if ids.warning():
        log.warning("%s", ids.warning())
    if other_subsets_line(ids.summary()):
        log.info("%s", other_subsets_line(ids.summary()))
    return ids.summary()


def _chosen_correlate(ds: Any, say: bool) -> str:
    """The protocol of the data's kind (categorical data keeps the default: it is read as labels);
    one line on stderr names it when ``say``."""
    if ds.card.label_kind in ("categorical", "binary"):
        return Protocol().correlate
    correlate, why = correlate_for(ds.card.kind)
    if say:
        print(
            f"protocol: {correlate} (chosen from the data: {why}; --protocol to change)",
            file=sys.stderr,
        )
    return correlate


def write_run(
    res: MetaEvalResult,
    out: Path,
    *,
    plots: bool,
    data_dir: str | Path | None,
    dataset: Any = None,
    published: str | Path | None = None,
    percent: bool = False,
    rows: Any = None,
    progress: Any = None,
    browser_cap: int | None = None,
    ahead: Any = None,
    scores_cache: Any = None,
    page: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Warn about missing scores, attach the published numbers, and write the run folder as a
    set (:func:`metajudge.run_folder.run_folder`): ``result.json``, the tables,
    the plots, ``report.html`` and ``manifest.json`` (``dataset``: the run's loaded dataset,
    shown in the report; by default the source ``result.json`` records is loaded; ``rows``: its
    gathered score rows, by default gathered again from the specs ``result.json`` records;
    ``progress``: a callback ``(views built, views)`` of the report's item views;
    ``published``: a ``--published`` file of the paper's numbers, attached beside the built-in
    ones (:func:`metajudge.reports.published.read_published_file`); ``percent``: every table
    ×100, recorded in ``result.json`` (:mod:`metajudge.reports.scale`; default 0–1));
    ``browser_cap``: the units per view of the page's browser (default
    :data:`~metajudge.reports.html_items.BROWSER_CAP`; 0: all; not recorded in ``result.json``);
    ``ahead``: the :mod:`~metajudge.runs.plot_ahead` child drawing the plots;
    ``scores_cache``: the rows of a new ``scores.jsonl``, written first
    (:func:`~metajudge.scores.run_scores.write_scores_cache`); ``page``: filled with
    ``report.html``'s payload, :func:`~metajudge.reports.html_run.write_html_report`'s ``keep``)."""
    from metajudge.reports.html_run import write_html_report
    from metajudge.reports.published import attach_published, unmatched_line
    from metajudge.reports.render import RESULT_FILE, render_all
    from metajudge.reports.scale import set_percent
    from metajudge.reports.sections import comparison_lines, missing_lines
    from metajudge.run_folder import run_folder

    set_percent(res.data, percent)
    for line in missing_lines(res):
        log.warning("%s (--missing %s)", line.replace("`", ""), res.data["protocol"]["missing"])
    for line in comparison_lines(res.data):  # a cap or an unreachable alpha: warned
        (log.info if line.startswith("metric-vs-metric comparisons:") else log.warning)("%s", line)
    attach_published(res, user_file=published)
    if unmatched_line(res.data):
        log.warning("%s", unmatched_line(res.data))
    with run_folder(out) as rf:  # written as a set: all files of one run, or none
        stage = rf.stage
        write_scores_cache(rf, scores_cache)
        written = {RESULT_FILE: rf.write_text(RESULT_FILE, res.to_json() + "\n")}
        written.update(render_all(stage, plots=plots, result=res, published=False, ahead=ahead))
        written["report.html"] = write_html_report(
            stage,
            data_dir=data_dir,
            dataset=dataset,
            rows=rows,
            progress=progress,
            keep=page,
            **({} if browser_cap is None else {"cap": browser_cap}),
        )
    return {k: rf.out / Path(v).relative_to(stage) for k, v in written.items()}
