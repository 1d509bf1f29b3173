"""CLI: ``metajudge calibrate fit | apply | conformal`` (and ``selective``, see below).

- ``fit``: fit a map from a judge's output to the human scale, report held-out errors
  before/after, write a calibrator file (the judge's signature, the data's hash);
- ``apply``: apply a calibrator file to a judge's scores (refused for another signature);
- ``conformal``: split-conformal intervals for ratings, their coverage and mean width; on a
  pairwise or categorical dataset, prediction sets from the judge's class probabilities (lac,
  aps), their coverage and mean set size;
- ``--out DIR`` (fit, conformal): a run folder with report.html (:mod:`~metajudge.reports.calibration_html`).

Input: ``--input FILE`` in the published rating-distribution format (columns ``1``..``5`` of
log-probabilities, last column the human score), or ``--dataset NAME`` (or ``--input`` a dataset
file) with ``--scores SPEC`` naming one judge column and ``--dimension``.
Only argparse is imported here; the library loads inside each command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from metajudge.cli.options import (
    add_data_dir,
    add_format,
    add_miscoverage,
    add_scores,
    add_seed,
    id_policy,
    warn_dropped,
)
from metajudge.cli.types import positive_int


def _add_source(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--input",
        metavar="FILE",
        help="a rating-distribution CSV as published (columns 1..5 of log-probabilities, last "
        "column the human score); with --scores: a dataset file",
    )
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (with --scores)")
    add_scores(
        p,
        help="with --dataset: where the judge column comes from (one column), e.g. "
        "shipped:sheng.4omini_coherence or FILE:COLUMN",
    )
    p.add_argument("--dimension", help="the human dimension (default: the dataset's only one)")
    p.add_argument(
        "--distribution",
        choices=("logprobs", "probs"),
        default="logprobs",
        help="what the CSV's rating columns hold (default logprobs; probs must sum to 1)",
    )
    p.add_argument("--judge", metavar="NAME", help="the CSV judge's name (default: the file's)")
    add_data_dir(p)


def _add_split(p: argparse.ArgumentParser, what: str) -> None:
    add_seed(p, "the splits")
    p.add_argument(
        "--repeats", type=positive_int, default=50, help=f"seeded {what} splits (default 50)"
    )
    p.add_argument(
        "--fraction",
        type=float,
        default=0.5,
        help=f"share of rows on the {what.split('/')[0]} side of each split, the rest are test "
        "rows (default 0.5)",
    )


def _add_out(p: argparse.ArgumentParser, files: str) -> None:
    p.add_argument(
        "--out",
        metavar="DIR",
        help=f"also write a run folder: result.json, {files} and report.html",
    )


def register(subparsers: Any) -> None:
    c = subparsers.add_parser(
        "calibrate",
        help="calibrated judge scores, conformal intervals and selective judging: fit, apply, "
        "conformal, selective",
        description="How far can one verdict be trusted: map a judge's output to the human scale "
        "(fit/apply), and give each rating an interval with a coverage guarantee (conformal).",
    )
    sub = c.add_subparsers(dest="calibrate_command", metavar="SUBCOMMAND")
    f = sub.add_parser(
        "fit", help="fit a calibration map; held-out MAE/RMSE (Brier, ECE) before/after"
    )
    _add_source(f)
    f.add_argument(
        "--method",
        choices=("isotonic", "linear", "ordinal", "temperature", "platt"),
        default="isotonic",
        help="isotonic, linear, ordinal (proportional-odds logistic) for ratings; temperature "
        "(distributions) or platt (a probability of a binary label) (default isotonic)",
    )
    _add_split(f, "fit/test")
    f.add_argument(
        "--folds", type=positive_int, help="K-fold cross-fitting instead of repeated splits"
    )
    f.add_argument(
        "-o", "--output", metavar="FILE", help="write the calibrator (JSON; fitted on all rows)"
    )
    f.add_argument(
        "--html", metavar="FILE", help="write the report page (with the reliability diagram)"
    )
    _add_out(f, "fit.md, calibrator.json, reliability.png (the reliability diagram)")
    add_format(f)
    f.set_defaults(func=_cmd_fit)
    a = sub.add_parser("apply", help="apply a calibrator file to a judge's scores")
    _add_source(a)
    a.add_argument(
        "--calibrator", required=True, metavar="FILE", help="a file from `calibrate fit`"
    )
    a.add_argument("-o", "--output", metavar="FILE", help="write the calibrated score rows (JSONL)")
    add_format(a)
    a.set_defaults(func=_cmd_apply)
    _register_conformal(sub)
    from metajudge.cli import calibrate_selective

    calibrate_selective.add_parser(sub)
    c.set_defaults(func=lambda args: (c.print_help(), 2)[1])


#: analyses.calibration.conformal.CONFORMAL_METHODS and AUTO (not imported: --help stays fast)
_CONFORMAL = ("split", "binned", "cqr", "isotonic-split", "isotonic-binned", "auto")
#: metajudge.stats.calibration.SET_METHODS: prediction sets for categorical / pairwise verdicts
_SETS = ("lac", "aps")


def _register_conformal(sub: Any) -> None:
    k = sub.add_parser(
        "conformal",
        help="split-conformal intervals for ratings, prediction sets for categorical / pairwise "
        "verdicts: coverage and mean width (set size) on held-out rows",
        description="Ratings (--input CSV, or a Likert dataset with --scores): intervals, "
        "methods split, binned, cqr, isotonic-split, isotonic-binned, auto. Categorical or "
        "pairwise verdicts (a pairwise or categorical dataset with --scores naming one judge "
        "column of class probabilities: pairwise side a / b = p(a better) / p(b better), "
        "categorical details.probs): prediction sets, methods lac (1 - p(true class); a set may "
        "be empty) and aps (adaptive prediction sets, non-randomised; never empty).",
    )
    _add_source(k)
    add_miscoverage(k)
    k.add_argument(
        "--method",
        action="append",
        choices=_CONFORMAL + _SETS,
        help=f"repeatable (ratings, default all: {', '.join(_CONFORMAL)}; cqr needs a "
        f"distribution; verdicts: {', '.join(_SETS)}, default both)",
    )
    k.add_argument(
        "--bins", type=positive_int, default=3, help="bins of the binned methods (default 3)"
    )
    k.add_argument(
        "--min-bin", type=positive_int, default=30, help="fewest rows of a bin (default 30)"
    )
    k.add_argument(
        "--fit-fraction",
        type=float,
        default=0.5,
        help="isotonic-*: share of the calibration rows that fit the map (default 0.5)",
    )
    _add_split(k, "calibration/test")
    k.add_argument(
        "--target", metavar="FILE", help="calibrate on all rows, measure on this CSV (same format)"
    )
    k.add_argument(
        "--intervals",
        metavar="FILE",
        help="write each test row's interval (verdicts: prediction set) of the first split, per "
        "method (CSV: widths / set sizes per item)",
    )
    k.add_argument(
        "--shift-alpha",
        type=float,
        default=0.05,
        help="level of the KS shift warning (default 0.05)",
    )
    _add_out(k, "conformal.md, intervals.csv (each test item's interval / set of the first split)")
    add_format(k)
    k.set_defaults(func=_cmd_conformal)


def _table(args: argparse.Namespace, *, sets: bool = False) -> tuple[Any, dict[str, int]]:
    """The rating table of the input; with ``sets`` and a pairwise / categorical dataset, the
    verdict table (:mod:`metajudge.analyses.calibration.verdict_sets`) instead."""
    from metajudge.analyses.calibration.sources import table_from_csv, table_from_scores
    from metajudge.data.loading import open_dataset
    from metajudge.errors import InputError

    if not args.scores:
        if args.dataset:
            raise InputError("--dataset needs --scores (the judge column)", field="--scores")
        return table_from_csv(
            args.input, distribution=args.distribution, judge=args.judge, data_dir=args.data_dir
        ), {}
    ds = open_dataset(args.dataset, args.input, data_dir=args.data_dir)
    ids = id_policy(args)
    if sets:
        from metajudge.analyses.calibration.verdict_sets import is_verdict_dataset, verdict_table
        from metajudge.scores.spec import gather_scores

        if is_verdict_dataset(ds.card):
            rows = gather_scores(ds, args.scores, data_dir=args.data_dir, labels=False, ids=ids)
            warn_dropped(ids)
            return verdict_table(ds, rows, dimension=args.dimension), {}
    table = table_from_scores(
        ds, args.scores, dimension=args.dimension, data_dir=args.data_dir, ids=ids
    )
    warn_dropped(ids)
    return table


def _emit(args: argparse.Namespace, res: Any, md: str) -> int:
    if args.format == "json":
        sys.stdout.write(res.to_json() + "\n")
    else:
        sys.stdout.write(md)
    return 0


def _cmd_fit(args: argparse.Namespace) -> int:
    import json

    from metajudge.analyses.calibration.fit import calibrate_fit
    from metajudge.io import atomic_write, check_output_file
    from metajudge.reports.calibration import fit_markdown

    out = (
        check_output_file(args.output, inputs=[args.input], field="--output")
        if args.output
        else None
    )
    html = (
        check_output_file(args.html, inputs=[args.input, out], field="--html")
        if args.html
        else None
    )
    if args.out:
        from metajudge.io import check_out_dir

        check_out_dir(args.out, inputs=[args.input], field="--out")
    table, dropped = _table(args)
    res = calibrate_fit(
        table,
        args.method,
        seed=args.seed,
        repeats=args.repeats,
        fraction=args.fraction,
        folds=args.folds,
    )
    if out is not None:
        with atomic_write(out) as fh:
            fh.write(json.dumps(res.calibrator, indent=1) + "\n")
        print(f"wrote the calibrator to {out}", file=sys.stderr)
    md = fit_markdown(res, dropped)
    if html is not None:
        with atomic_write(html) as fh:
            fh.write(_fit_page(res))
        print(f"wrote {html}", file=sys.stderr)
    if args.out:
        from metajudge.reports.calibration_html import (
            RELIABILITY_FILE,
            fit_payload,
            plot_reliability,
        )

        texts = {"fit.md": md, "calibrator.json": json.dumps(res.calibrator, indent=1) + "\n"}
        plot = (RELIABILITY_FILE, lambda path: plot_reliability(res, path))
        write_folder(args.out, res, texts, [plot], fit_payload(res), args.format)
    return _emit(args, res, md)


def _fit_page(res: Any) -> str:
    """``--html FILE``: the report page of the fit, its reliability diagram inlined."""
    import tempfile
    from pathlib import Path

    from metajudge.reports.calibration_html import RELIABILITY_FILE, fit_payload, plot_reliability
    from metajudge.reports.html_page import plots_of, render_page

    with tempfile.TemporaryDirectory() as d:
        plot_reliability(res, Path(d) / RELIABILITY_FILE)
        return render_page(fit_payload(res), plots_of(Path(d)))


def write_folder(
    out: str, res: Any, texts: dict[str, str], plots: list[Any], payload: Any, fmt: str
) -> None:
    """A calibrate command's run folder, written as a set (:func:`metajudge.run_folder.run_folder`):
    ``result.json``, the ``texts`` ({file name: text}), the ``plots`` ([(file name, draw(path))])
    and ``report.html`` (``payload`` with the folder's plots)."""
    from metajudge.cli.options import notice
    from metajudge.io import atomic_write
    from metajudge.reports.html_page import write_page
    from metajudge.run_folder import run_folder

    with run_folder(out) as rf:
        d = rf.stage
        with atomic_write(d / "result.json") as fh:
            fh.write(res.to_json() + "\n")
        for name, text in texts.items():
            with atomic_write(d / name) as fh:
                fh.write(text)
        for name, draw in plots:
            draw(d / name)
        page = write_page(d, payload)
    for name in ("result.json", *texts, *(n for n, _ in plots), page.name):
        notice(fmt, str(rf.final(d / name)))


def _cmd_apply(args: argparse.Namespace) -> int:
    from metajudge.analyses.calibration.fit import apply_result, calibrated_rows, check_calibrator
    from metajudge.io import check_output_file, read_json
    from metajudge.reports.calibration import apply_markdown
    from metajudge.scores.scoring import write_scores

    cal = check_calibrator(read_json(args.calibrator), args.calibrator)
    out = (
        check_output_file(args.output, inputs=[args.input, args.calibrator])
        if args.output
        else None
    )
    table, dropped = _table(args)
    res = apply_result(cal, table, args.calibrator)
    if out is not None:
        n = write_scores(out, calibrated_rows(cal, table, res.scores))
        print(f"wrote {n} rows to {out}", file=sys.stderr)
    return _emit(args, res, apply_markdown(res, dropped))


def _cmd_conformal(args: argparse.Namespace) -> int:
    from metajudge.analyses.calibration.conformal import (
        AUTO,
        CONFORMAL_METHODS,
        Options,
        calibrate_conformal,
        candidates,
    )
    from metajudge.analyses.calibration.sources import table_from_csv
    from metajudge.analyses.calibration.table import check_alpha
    from metajudge.reports.calibration import conformal_markdown

    check_alpha(args.alpha)
    check_alpha(args.shift_alpha, "--shift-alpha")
    if args.intervals:
        from metajudge.io import check_output_file

        check_output_file(args.intervals, inputs=[args.input, args.target], field="--intervals")
    if args.out:
        from metajudge.io import check_out_dir

        check_out_dir(args.out, inputs=[args.input, args.target], field="--out")
    table, dropped = _table(args, sets=True)
    if not hasattr(table, "pred"):
        return _cmd_sets(args, table)
    if args.method and set(args.method) & set(_SETS):
        from metajudge.errors import InputError

        raise InputError(
            f"{', '.join(_SETS)} give prediction sets for categorical / pairwise verdicts; "
            "these are ratings",
            field="--method",
        )
    target = (
        table_from_csv(args.target, distribution=args.distribution, data_dir=args.data_dir)
        if args.target
        else None
    )
    methods = args.method or [
        m for m in (*CONFORMAL_METHODS, AUTO) if m == AUTO or m in candidates(table)
    ]
    o = Options(
        alpha=args.alpha,
        bins=args.bins,
        min_bin=args.min_bin,
        fit_fraction=args.fit_fraction,
        seed=args.seed,
    )
    res = calibrate_conformal(
        table,
        methods,
        options=o,
        repeats=args.repeats,
        fraction=args.fraction,
        target=target,
        shift_alpha=args.shift_alpha,
        keep_items=bool(args.intervals or args.out),
    )
    if res.target and res.target["warning"]:
        print(f"warning: {res.target['warning']}", file=sys.stderr)
    return _conformal_out(args, res, conformal_markdown(res, dropped))


def _conformal_out(args: argparse.Namespace, res: Any, md: str) -> int:
    """``--intervals FILE`` and ``--out DIR`` of ``calibrate conformal``, then the output."""
    if args.intervals:
        _write_intervals(args.intervals, res.items)
    if args.out:
        from metajudge.reports.calibration_html import conformal_payload

        dataset = None
        if args.scores:
            from metajudge.data.loading import open_dataset

            dataset = open_dataset(args.dataset, args.input, data_dir=args.data_dir)
        source = args.dataset or str(args.input)
        payload = conformal_payload(res, source, dataset)
        texts = {"conformal.md": md, "intervals.csv": _intervals_csv(res.items)}
        write_folder(args.out, res, texts, [], payload, args.format)
    return _emit(args, res, md)


def _cmd_sets(args: argparse.Namespace, table: Any) -> int:
    """``calibrate conformal`` on verdicts: prediction sets (lac / aps)."""
    from metajudge.analyses.calibration.verdict_sets import calibrate_sets
    from metajudge.errors import InputError
    from metajudge.reports.calibration import sets_markdown

    if args.target:
        raise InputError(
            "--target is for ratings; prediction sets are measured on held-out splits only",
            field="--target",
        )
    res = calibrate_sets(
        table,
        args.method or _SETS,
        alpha=args.alpha,
        seed=args.seed,
        repeats=args.repeats,
        fraction=args.fraction,
        keep_items=bool(args.intervals or args.out),
    )
    return _conformal_out(args, res, sets_markdown(res))


def _intervals_csv(items: list[dict[str, Any]]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(items[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(items)
    return buf.getvalue()


def _write_intervals(path: str, items: list[dict[str, Any]]) -> None:
    from metajudge.io import atomic_write

    with atomic_write(path) as fh:
        fh.write(_intervals_csv(items))
    print(f"wrote {len(items)} intervals to {path}", file=sys.stderr)
