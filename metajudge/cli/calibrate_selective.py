"""``metajudge calibrate selective``: Trust-or-Escalate selective judging for one judge or a
cascade (:mod:`metajudge.analyses.selective`).

:func:`add_parser` adds the subcommand to a ``calibrate`` group's subparsers; until that group is
wired, :func:`register` adds it as the top-level ``calibrate-selective``.
"""

from __future__ import annotations

import argparse
import sys

from metajudge.cli.options import (
    add_dataset_args,
    add_format,
    add_repeats,
    add_risk,
    add_scores,
    add_seed,
    id_policy,
    warn_dropped,
)
from metajudge.cli.types import positive_int

HELP = (
    "selective judging with a human-agreement guarantee (Trust or Escalate): one judge or a cascade"
)
SELECTIVE_DESCRIPTION = (
    "Trust or Escalate (Jung, Brahman & Choi, ICLR 2025): each judge keeps the verdicts whose "
    "confidence (its largest class probability) clears a threshold chosen on a calibration split "
    "by fixed-sequence testing with an exact binomial bound, so that agreement with humans on "
    "kept items is >= 1 - alpha with probability >= 1 - delta (at least 30 calibration items "
    "above a threshold). With several --judge (cheapest first) the cascade escalates what a judge "
    "leaves to the next; what no judge keeps goes to humans. Prints the threshold(s), coverage, "
    "agreement on kept test items and the cost per 1,000 items against sending every item to "
    "the strongest judge; --repeats K runs K seeded calibration/test splits. Judge columns: "
    "pairwise data, side a / side b = p(a better) / p(b better) (summing to 1); categorical "
    "data, details.probs = {label: probability}. trust_or_escalate_jung2025 ships its three "
    "judges (--scores shipped, the default); a file in its released format (instruction, "
    "outputs, preferences, probs) is read by --input and --scores as it is."
)


def _cost(text: str) -> tuple[str, float]:
    import math

    name, sep, value = text.rpartition("=")
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not sep or not name or not math.isfinite(x) or x < 0:
        raise argparse.ArgumentTypeError(f"expected JUDGE=COST with a cost >= 0, got {text!r}")
    return name, x


def add_parser(subparsers: argparse._SubParsersAction, name: str = "selective") -> None:  # type: ignore[type-arg]
    """Add the command to ``subparsers`` under ``name``."""
    p = subparsers.add_parser(name, help=HELP, description=SELECTIVE_DESCRIPTION)
    add_dataset_args(p)
    add_scores(p, help="where the judge columns come from (the --scores grammar; default shipped)")
    p.add_argument(
        "--judge",
        action="append",
        required=True,
        metavar="COL",
        help="a judge's column, repeatable; several = a cascade, cheapest first (each judge is "
        "also reported alone)",
    )
    p.add_argument(
        "--cost",
        action="append",
        type=_cost,
        default=[],
        metavar="JUDGE=COST",
        help="cost of one call of a judge, repeatable (default 1 each: costs count calls)",
    )
    add_risk(p)
    p.add_argument(
        "--delta",
        type=float,
        default=0.1,
        help="probability that the guarantee fails, Trust or Escalate's delta (0.1)",
    )
    add_repeats(p, 1, " calibration/test")
    p.add_argument(
        "--calibration",
        type=positive_int,
        metavar="N",
        help="calibration items per split (default: half; the rest are test items)",
    )
    p.add_argument(
        "--thresholds",
        choices=("grid", "distinct"),
        default="grid",
        help="candidate thresholds: the paper's code's grid linspace(0, 1, 5000) (default) or "
        "every distinct calibration confidence",
    )
    p.add_argument("--dimension", help="the human dimension (default: the card's first)")
    add_seed(p, "the calibration/test splits")
    add_format(p)
    p.add_argument(
        "--out",
        metavar="DIR",
        help="also write a run folder: result.json, selective.md, coverage_agreement.png "
        "(coverage vs agreement) and report.html",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from metajudge.cli.options import notice
    from metajudge.cli.output import print_text
    from metajudge.cli.source import data_source
    from metajudge.runs.calibrate import run_selective

    ids = id_policy(args)
    res = run_selective(
        data_source(args, ids, judge=None),
        args.judge,
        costs=dict(args.cost),
        alpha=args.alpha,
        delta=args.delta,
        repeats=args.repeats,
        calibration=args.calibration,
        seed=args.seed,
        thresholds=args.thresholds,
        out=args.out,
    )
    warn_dropped(ids)
    for w in res.result.warnings:
        print(f"warning: {w}", file=sys.stderr)
    for path in res.folder:
        notice(args.format, str(path))
    if args.format == "json":
        print_text(res.result.to_json(), end="\n")
    else:
        print_text(res.markdown)
    return 0
