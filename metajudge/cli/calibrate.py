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
    add_format,
    add_miscoverage,
    add_repeats,
    add_scores,
    add_seed,
    id_policy,
    warn_dropped,
)
from metajudge.cli.types import positive_int


def _add_source(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--ratings",
        metavar="FILE",
        help="a rating-distribution CSV as published (columns 1..5 of log-probabilities, last "
        "column the human score)",
    )
    g.add_argument("--input", metavar="FILE", help="a canonical JSONL dataset file (with --scores)")
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
    p.add_argument(
        "--judge-name",
        dest="judge",
        metavar="NAME",
        help="the --ratings judge's display name (default: the file's)",
    )


def _add_split(p: argparse.ArgumentParser, what: str) -> None:
    add_seed(p, "the splits")
    add_repeats(p, 50, f" {what}")
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
        "conformal, selective; calibrated estimates from few labels: estimate, plan",
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
    _add_out(
        f,
        "fit.md, calibrator.json (the calibrator fitted on all rows, for calibrate "
        "apply), reliability.png (the reliability diagram), report.html",
    )
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
    from metajudge.cli import calibrate_estimate

    calibrate_estimate.add_parsers(sub)
    c.set_defaults(func=lambda args: (c.print_help(), 2)[1])


#: analyses.calibration.conformal.CONFORMAL_METHODS and AUTO (not imported: --help stays fast)
_CONFORMAL = ("split", "binned", "dist-quantile", "isotonic-split", "isotonic-binned", "auto")
#: metajudge.stats.calibration.SET_METHODS: prediction sets for categorical / pairwise verdicts
_SETS = ("lac", "aps")


def _register_conformal(sub: Any) -> None:
    k = sub.add_parser(
        "conformal",
        help="split-conformal intervals for ratings, prediction sets for categorical / pairwise "
        "verdicts: coverage and mean width (set size) on held-out rows",
        description="Ratings (--input CSV, or a Likert dataset with --scores): intervals, "
        "methods split, binned, dist-quantile (the judge's own distribution quantiles, "
        "conformalised; no quantile regression is fitted), isotonic-split, isotonic-binned, "
        "auto; each targets coverage marginally (over all items), binned and isotonic-binned "
        "also per bin of the judge's score, none per human score: the output shows the coverage "
        "per human-score bin beside each. Categorical or pairwise verdicts (a pairwise or "
        "categorical dataset with --scores naming one judge column of class probabilities: "
        "pairwise side a / b = p(a better) / p(b better), categorical details.probs): "
        "prediction sets, methods lac (1 - p(true class); a set may be empty) and aps (adaptive "
        "prediction sets, randomised with seeded uniforms; a set may be empty: the output shows "
        "the share of empty sets).",
    )
    _add_source(k)
    add_miscoverage(k)
    k.add_argument(
        "--method",
        action="append",
        choices=_CONFORMAL + _SETS,
        help=f"repeatable (ratings, default all: {', '.join(_CONFORMAL)}; dist-quantile needs a "
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
        "--shift-alpha",
        type=float,
        default=0.05,
        help="level of the KS shift warning (default 0.05)",
    )
    _add_out(
        k,
        "conformal.md, intervals.csv (each test row's interval, for verdicts its prediction "
        "set, of the first split, per method), report.html",
    )
    add_format(k)
    k.set_defaults(func=_cmd_conformal)


def _source(args: argparse.Namespace, ids: Any) -> Any:
    """The :class:`~metajudge.data.source.DataSource` of the command's options (a ratings CSV,
    ``--ratings``, or a dataset with ``--scores``)."""
    from metajudge.cli.source import data_source
    from metajudge.errors import InputError

    if args.ratings and args.scores:
        raise InputError("--scores goes with --input or --dataset, not --ratings", field="--scores")
    if args.input and not args.scores:
        raise InputError(
            "a dataset file needs --scores (a ratings CSV is --ratings)", field="--input"
        )
    return data_source(args, ids, path=args.ratings or args.input)


def _emit(args: argparse.Namespace, run: Any) -> int:
    """The files a calibrate command wrote (to standard error; the run folder's through
    :func:`~metajudge.cli.options.notice`), then its result in ``--format``."""
    from metajudge.cli.options import notice
    from metajudge.cli.output import print_text

    for what, path in run.wrote:
        print(f"wrote {what} to {path}" if what else f"wrote {path}", file=sys.stderr)
    for path in run.folder:
        notice(args.format, str(path))
    print_text(run.result.to_json() + "\n" if args.format == "json" else run.markdown)
    return 0


def _cmd_fit(args: argparse.Namespace) -> int:
    from metajudge.runs.calibrate import run_fit

    ids = id_policy(args)
    run = run_fit(
        _source(args, ids),
        args.method,
        seed=args.seed,
        repeats=args.repeats,
        fraction=args.fraction,
        folds=args.folds,
        out=args.out,
    )
    warn_dropped(ids)
    for w in run.result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return _emit(args, run)


def _cmd_apply(args: argparse.Namespace) -> int:
    from metajudge.runs.calibrate import run_apply

    ids = id_policy(args)
    run = run_apply(_source(args, ids), args.calibrator, output=args.output)
    warn_dropped(ids)
    shift = run.result.shift
    if shift and shift["warning"]:
        print(f"warning: {shift['warning']}", file=sys.stderr)
    return _emit(args, run)


def _cmd_conformal(args: argparse.Namespace) -> int:
    from metajudge.runs.calibrate import ConformalOptions, run_conformal

    opts = ConformalOptions(
        methods=args.method,
        alpha=args.alpha,
        bins=args.bins,
        min_bin=args.min_bin,
        fit_fraction=args.fit_fraction,
        seed=args.seed,
        repeats=args.repeats,
        fraction=args.fraction,
        target=args.target,
        shift_alpha=args.shift_alpha,
    )
    ids = id_policy(args)
    run = run_conformal(_source(args, ids), opts, out=args.out)
    warn_dropped(ids)
    for w in getattr(run.result, "warnings", None) or []:
        print(f"warning: {w}", file=sys.stderr)
    target = getattr(run.result, "target", None)
    if target and target["warning"]:
        print(f"warning: {target['warning']}", file=sys.stderr)
    return _emit(args, run)
