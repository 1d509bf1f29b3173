"""``metajudge calibrate fit | apply | conformal | selective``: the work of each command.

The input is a rating table (a :class:`~metajudge.data.source.DataSource`: ``--input`` CSV in the published
rating-distribution format, or a dataset with ``--scores`` naming one judge column), built by
:func:`calibration_table`; on a pairwise or categorical dataset ``conformal`` takes the verdict
table (:mod:`metajudge.analyses.calibration.verdict_sets`) instead. Each run function returns the
result, its Markdown and the files it wrote (``--output``, the run
folder ``--out`` through :func:`metajudge.run_folder.run_folder`), in the order written; the CLI
(:mod:`metajudge.cli.calibrate`) prints.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metajudge.data.source import DataSource
from metajudge.errors import InputError

#: the prediction-set methods for categorical / pairwise verdicts
#: (:data:`metajudge.stats.calibration.SET_METHODS`)
SETS = ("lac", "aps")


@dataclass
class CalibrationRun:
    """A calibrate command's result, its Markdown, and the files written:
    ``wrote`` ([(what, path)] of ``--output``) and ``folder`` (the run
    folder's files at their final paths)."""

    result: Any
    markdown: str
    wrote: list[tuple[str, Path]] = field(default_factory=list)
    folder: list[Path] = field(default_factory=list)


def calibration_table(
    src: DataSource, *, sets: bool = False, class_reading: Any = None
) -> tuple[Any, dict[str, int]]:
    """The rating table of the input (and the rows dropped per reason); with ``sets`` and a
    pairwise / categorical dataset, the verdict table instead (``class_reading``: the judge's
    class probabilities and the human classes already read,
    :func:`~metajudge.analyses.selective.read_classes`)."""
    from metajudge.analyses.calibration.sources import table_from_csv, table_from_scores

    if not src.scores:
        if src.dataset:
            raise InputError("--dataset needs --scores (the judge column)", field="--scores")
        return table_from_csv(
            src.path, distribution=src.distribution, judge=src.judge, data_dir=src.data_dir
        ), {}
    ds = src.load()
    if sets:
        from metajudge.analyses.calibration.verdict_sets import is_verdict_dataset, verdict_table

        if is_verdict_dataset(ds.card):
            from metajudge.scores.source_rows import source_rows

            rows = source_rows(src, labels=False)
            return verdict_table(ds, rows, dimension=src.dimension, class_reading=class_reading), {}
    return table_from_scores(
        ds, src.scores, dimension=src.dimension, data_dir=src.data_dir, ids=src.ids
    )


def write_folder(
    out: str | Path, res: Any, texts: dict[str, str], plots: list[Any], payload: Any
) -> list[Path]:
    """A calibrate command's run folder, written as a set (:func:`metajudge.run_folder.run_folder`):
    ``result.json``, the ``texts`` ({file name: text}), the ``plots`` ([(file name, draw(path))])
    and ``report.html`` (``payload`` with the folder's plots); the files' final paths."""
    from metajudge.reports.html_page import write_page
    from metajudge.run_folder import run_folder

    with run_folder(out) as rf:
        d = rf.stage
        rf.write_text("result.json", res.to_json() + "\n")
        for name, text in texts.items():
            rf.write_text(name, text)
        for name, draw in plots:
            draw(d / name)
        page = write_page(d, payload)
    return [rf.final(d / n) for n in ("result.json", *texts, *(n for n, _ in plots), page.name)]


def _calibrator_text(res: Any) -> str:
    return json.dumps(res.calibrator, indent=1) + "\n"


def run_fit(
    src: DataSource,
    method: str,
    *,
    seed: int = 0,
    repeats: int = 50,
    fraction: float = 0.5,
    folds: int | None = None,
    out: str | None = None,
) -> CalibrationRun:
    """``calibrate fit``: the fit with its held-out errors; a run folder to ``out`` (checked
    before any work): the calibrator (``calibrator.json``), ``report.html`` with the
    reliability diagram."""
    from metajudge.analyses.calibration.fit import calibrate_fit
    from metajudge.io import check_out_dir
    from metajudge.reports.calibration import fit_markdown
    from metajudge.scores.spec import input_paths

    inputs = input_paths(src)
    if out:
        check_out_dir(out, inputs=inputs, field="--out")
    table, dropped = calibration_table(src)
    res = calibrate_fit(table, method, seed=seed, repeats=repeats, fraction=fraction, folds=folds)
    run = CalibrationRun(res, fit_markdown(res, dropped))
    if out:
        from metajudge.reports.calibration_html import (
            RELIABILITY_FILE,
            fit_payload,
            plot_reliability,
        )

        texts = {"fit.md": run.markdown, "calibrator.json": _calibrator_text(res)}
        plot = (RELIABILITY_FILE, lambda path: plot_reliability(res, path))
        run.folder = write_folder(out, res, texts, [plot], fit_payload(res))
    return run


def run_apply(src: DataSource, calibrator: str, *, output: str | None = None) -> CalibrationRun:
    """``calibrate apply``: the calibrator applied to the judge's scores; the calibrated score
    rows written to ``output``."""
    from metajudge.analyses.calibration.fit import apply_result, calibrated_rows, check_calibrator
    from metajudge.io import check_output_file, read_json
    from metajudge.reports.calibration import apply_markdown
    from metajudge.scores.scoring import write_scores
    from metajudge.scores.spec import input_paths

    cal = check_calibrator(read_json(calibrator), calibrator)
    out = check_output_file(output, inputs=[*input_paths(src), calibrator]) if output else None
    table, dropped = calibration_table(src)
    res = apply_result(cal, table, calibrator)
    run = CalibrationRun(res, apply_markdown(res, dropped))
    if out is not None:
        n = write_scores(out, calibrated_rows(cal, table, res.scores))
        run.wrote.append((f"{n} rows", out))
    return run


@dataclass(frozen=True)
class ConformalOptions:
    """``calibrate conformal``'s settings: ``methods`` (None: every method that applies),
    the miscoverage ``alpha``, the binning, the splits and the shift check on ``target``."""

    methods: Sequence[str] | None = None
    alpha: float = 0.1
    bins: int | None = None
    min_bin: int | None = None
    fit_fraction: float | None = None
    seed: int = 0
    repeats: int = 50
    fraction: float = 0.5
    target: str | None = None
    shift_alpha: float = 0.05


def _intervals_csv(items: list[dict[str, Any]]) -> str:
    import io

    from metajudge.io import CsvDictWriter

    buf = io.StringIO()
    w = CsvDictWriter(buf, fieldnames=list(items[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(items)
    return buf.getvalue()


def _conformal_files(run: CalibrationRun, src: DataSource, out: str | None) -> CalibrationRun:
    """``--out DIR`` of ``calibrate conformal`` (``intervals.csv``: each test item's interval /
    set of the first split)."""
    res = run.result
    if out:
        from metajudge.reports.calibration_html import conformal_payload

        dataset = src.load() if src.scores else None
        payload = conformal_payload(res, src.name, dataset)
        texts = {"conformal.md": run.markdown, "intervals.csv": _intervals_csv(res.items)}
        run.folder = write_folder(out, res, texts, [], payload)
    return run


def _sets(table: Any, opts: ConformalOptions, keep_items: bool) -> tuple[Any, str]:
    """``calibrate conformal`` on verdicts: prediction sets (lac / aps) and their Markdown."""
    from metajudge.analyses.calibration.verdict_sets import calibrate_sets
    from metajudge.reports.calibration import sets_markdown

    if opts.target:
        raise InputError(
            "--target is for ratings; prediction sets are measured on held-out splits only",
            field="--target",
        )
    res = calibrate_sets(
        table,
        opts.methods or SETS,
        alpha=opts.alpha,
        seed=opts.seed,
        repeats=opts.repeats,
        fraction=opts.fraction,
        keep_items=keep_items,
    )
    return res, sets_markdown(res)


def _intervals(
    table: Any, dropped: dict[str, int], src: DataSource, opts: ConformalOptions, keep: bool
) -> tuple[Any, str]:
    """``calibrate conformal`` on ratings: intervals and their Markdown."""
    from metajudge.analyses.calibration.conformal import (
        AUTO,
        CONFORMAL_METHODS,
        Options,
        calibrate_conformal,
        candidates,
    )
    from metajudge.analyses.calibration.sources import table_from_csv
    from metajudge.reports.calibration import conformal_markdown

    if opts.methods and set(opts.methods) & set(SETS):
        raise InputError(
            f"{', '.join(SETS)} give prediction sets for categorical / pairwise verdicts; "
            "these are ratings",
            field="--method",
        )
    target = (
        table_from_csv(opts.target, distribution=src.distribution, data_dir=src.data_dir)
        if opts.target
        else None
    )
    methods = opts.methods or [
        m for m in (*CONFORMAL_METHODS, AUTO) if m == AUTO or m in candidates(table)
    ]
    o = Options(
        alpha=opts.alpha,
        bins=opts.bins,
        min_bin=opts.min_bin,
        fit_fraction=opts.fit_fraction,
        seed=opts.seed,
    )
    res = calibrate_conformal(
        table,
        methods,
        options=o,
        repeats=opts.repeats,
        fraction=opts.fraction,
        target=target,
        shift_alpha=opts.shift_alpha,
        keep_items=keep,
    )
    return res, conformal_markdown(res, dropped)


def run_conformal(
    src: DataSource,
    opts: ConformalOptions,
    *,
    out: str | None = None,
    class_reading: Any = None,
) -> CalibrationRun:
    """``calibrate conformal``: intervals for ratings, prediction sets for verdicts; each test
    item's interval / set of the first split written to ``out``'s ``intervals.csv``
    (each checked before any work). ``result.target["warning"]``: the shift warning, if any.
    ``class_reading``: the judge's class probabilities and the human classes already read
    (verdicts: :func:`~metajudge.analyses.selective.read_classes`), not read again."""
    from metajudge.analyses.calibration.table import check_alpha
    from metajudge.io import check_out_dir
    from metajudge.scores.spec import input_paths

    check_alpha(opts.alpha)
    check_alpha(opts.shift_alpha, "--shift-alpha")
    if out:
        check_out_dir(out, inputs=[*input_paths(src), opts.target], field="--out")
    if src.scores and out:  # the table and the report read one dataset
        src = src.loaded_once()
    table, dropped = calibration_table(src, sets=True, class_reading=class_reading)
    keep = bool(out)
    if not hasattr(table, "pred"):
        res, md = _sets(table, opts, keep)
    else:
        res, md = _intervals(table, dropped, src, opts, keep)
    return _conformal_files(CalibrationRun(res, md), src, out)


def run_selective(
    src: DataSource,
    judges: Sequence[str],
    *,
    costs: dict[str, float] | None = None,
    alpha: float = 0.15,
    delta: float = 0.1,
    repeats: int = 1,
    calibration: int | None = None,
    seed: int = 0,
    thresholds: Any = None,
    out: str | None = None,
    class_reading: Any = None,
) -> CalibrationRun:
    """``calibrate selective``: Trust-or-Escalate's selective judging cascade
    (:func:`metajudge.analyses.selective.selective_judging`) of the ``judges``' columns of
    ``src``, tolerated disagreement ``alpha`` with risk ``delta``; a run folder to ``out``
    (checked before any work); ``class_reading``: a judge's class probabilities and the human
    classes already read (:func:`~metajudge.analyses.selective.read_classes`)."""
    from metajudge.analyses.selective import check_level, judge_columns, selective_judging
    from metajudge.reports.selective import selective_markdown
    from metajudge.scores.source_rows import source_rows
    from metajudge.scores.spec import input_paths

    check_level(alpha, "alpha")
    check_level(delta, "delta")
    if out:
        from metajudge.io import check_out_dir

        check_out_dir(out, inputs=input_paths(src))
    ds = src.load()
    rows = source_rows(src, labels=False)
    costs = dict(costs or {})
    data = judge_columns(
        ds, rows, judges, costs=costs, dimension=src.dimension, class_reading=class_reading
    )
    res = selective_judging(
        data,
        alpha=alpha,
        delta=delta,
        repeats=repeats,
        n_calibration=calibration,
        seed=seed,
        thresholds=thresholds,
    )
    run = CalibrationRun(res, selective_markdown(res, "cost units" if costs else "calls"))
    if out:
        run.folder = _selective_folder(out, res, run.markdown, src.name)
    return run


def _selective_folder(out: str, res: Any, md: str, source: Any) -> list[Path]:
    """The run folder of ``calibrate selective``, written as a set."""
    from metajudge.reports.html_page import write_page
    from metajudge.reports.selective import PLOT_FILE, plot_coverage_agreement, selective_payload
    from metajudge.run_folder import run_folder

    with run_folder(out) as rf:
        d = rf.stage
        rf.write_text("result.json", res.to_json() + "\n")
        rf.write_text("selective.md", md)
        plot_coverage_agreement(res, d / PLOT_FILE)
        page = write_page(d, selective_payload(res, Path(source).name))
    return [rf.final(d / p) for p in ("result.json", "selective.md", PLOT_FILE, page.name)]
