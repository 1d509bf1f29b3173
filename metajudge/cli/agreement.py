"""``metajudge data agreement``: agreement between a dataset's human annotators, per dimension.

Only argparse is imported here; the library loads inside the command.
"""

from __future__ import annotations

import argparse

from metajudge.cli.options import add_scores, add_seed
from metajudge.cli.types import positive_int


def add_agreement(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``data agreement`` (added to the ``data`` group by :mod:`metajudge.cli.data`)."""
    q = subparsers.add_parser(
        "agreement",
        help="inter-annotator agreement per dimension: Krippendorff's alpha, Fleiss' kappa, "
        "Cohen's kappa, split-half reliability, ratings per item",
        description="Agreement between the human annotators of a dataset or a canonical JSONL "
        "file, per dimension. Units are responses (per-response data) or pairs (pairwise "
        "data); coders are the annotator positions of the label lists (null = missing).",
    )
    g = q.add_mutually_exclusive_group(required=True)
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (see `data list`)")
    g.add_argument("--input", metavar="FILE", help="a canonical JSONL file (or an upstream file)")
    q.add_argument("--subset", help="only this subset of the dataset")
    q.add_argument(
        "--level-of-measurement",
        choices=("nominal", "ordinal", "interval"),
        help="Krippendorff's alpha level (default: from the label kind: nominal for unordered "
        "categories and binary labels, ordinal for graded scales with listed values, interval "
        "for continuous numbers)",
    )
    add_scores(
        q,
        help="a judge's column beside the annotators, repeatable (the --scores grammar of "
        "meta-eval: shipped, shipped:COL[,COL], LABEL=PATH[:COL], PATH[:COL]); per judge: its "
        "agreement with each annotator beside that annotator's with the others, and the "
        "annotators' α without and with the judge as one more coder",
    )
    add_seed(q, "the split-half splits")
    q.add_argument(
        "--splits",
        type=positive_int,
        default=100,
        help="random splits for split-half (default 100)",
    )
    q.add_argument(
        "--format",
        choices=("md", "csv", "json"),
        help="output format (default: an aligned table on screen; with -o, from the suffix)",
    )
    q.add_argument("-o", "--output", metavar="FILE", help="write the table to FILE (atomically)")
    q.set_defaults(func=_cmd_agreement)


def _cmd_agreement(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_text
    from metajudge.reports.agreement import render_agreement
    from metajudge.runs.agreement import run_agreement

    res = run_agreement(
        args.dataset,
        args.input,
        subset=args.subset,
        scores=args.scores,
        level=args.level_of_measurement,
        seed=args.seed,
        splits=args.splits,
        data_dir=args.data_dir,
        output=args.output,
        fmt=args.format,
        tracking_uri=args.tracking_uri,
    )
    if args.output:
        print_text(render_agreement(res, "text"))
        print(f"wrote {args.output}")
    else:  # standard output: the asked format only (one JSON document for --format json)
        print_text(render_agreement(res, args.format or "text"))
    return 0
