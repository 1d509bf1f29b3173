"""CLI: ``metajudge calibrate fit | apply | conformal`` (and ``selective``, see below).

- ``fit``: fit a map from a judge's output to the human scale, report held-out errors
  before/after, write a calibrator file (the judge's signature, the data's hash);
- ``apply``: apply a calibrator file to a judge's scores (refused for another signature);
- ``conformal``: split-conformal intervals for ratings, their coverage and mean width.

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
        help=f"share of rows that {what.split('/')[0]} (default 0.5)",
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
    f.add_argument("--html", metavar="FILE", help="write a page with the reliability diagram")
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


#: metajudge.analyses.calibration.conformal.METHODS and AUTO (not imported: --help stays fast)
_CONFORMAL = ("split", "binned", "cqr", "isotonic-split", "isotonic-binned", "auto")


def _register_conformal(sub: Any) -> None:
    k = sub.add_parser(
        "conformal",
        help="split-conformal intervals for ratings: coverage and mean width on held-out rows",
    )
    _add_source(k)
    k.add_argument("--alpha", type=float, default=0.1, help="miscoverage in (0, 1) (default 0.1)")
    k.add_argument(
        "--method",
        action="append",
        choices=_CONFORMAL,
        help=f"repeatable (default all: {', '.join(_CONFORMAL)}; cqr needs a distribution)",
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
        help="write each test row's interval of the first split, per method (CSV: widths per item)",
    )
    k.add_argument(
        "--shift-alpha",
        type=float,
        default=0.05,
        help="level of the KS shift warning (default 0.05)",
    )
    add_format(k)
    k.set_defaults(func=_cmd_conformal)


def _table(args: argparse.Namespace) -> tuple[Any, dict[str, int]]:
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
    from metajudge.reports.calibration import fit_html, fit_markdown

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
    if html is not None:
        with atomic_write(html) as fh:
            fh.write(fit_html(res))
        print(f"wrote {html}", file=sys.stderr)
    return _emit(args, res, fit_markdown(res, dropped))


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
        METHODS,
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
    table, dropped = _table(args)
    target = (
        table_from_csv(args.target, distribution=args.distribution, data_dir=args.data_dir)
        if args.target
        else None
    )
    methods = args.method or [m for m in (*METHODS, AUTO) if m == AUTO or m in candidates(table)]
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
        keep_items=bool(args.intervals),
    )
    if res.target and res.target["warning"]:
        print(f"warning: {res.target['warning']}", file=sys.stderr)
    if args.intervals:
        _write_intervals(args.intervals, res.items)
    return _emit(args, res, conformal_markdown(res, dropped))


def _write_intervals(path: str, items: list[dict[str, Any]]) -> None:
    import csv

    from metajudge.io import atomic_write

    with atomic_write(path) as fh:
        w = csv.DictWriter(fh, fieldnames=list(items[0]))
        w.writeheader()
        w.writerows(items)
    print(f"wrote {len(items)} intervals to {path}", file=sys.stderr)
