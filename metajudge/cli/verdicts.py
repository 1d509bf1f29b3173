"""``metajudge judge verdicts``: accuracy of external judges' pairwise verdicts (JudgeBench's released
outputs or any JSONL/CSV verdict table) under a named protocol, with CIs, position consistency,
P(first wins) and McNemar between the judges.

Only argparse is imported here; the library loads inside the command.
"""

from __future__ import annotations

import argparse

from metajudge.cli.options import add_n_boot, add_seed


def add_verdicts(jsub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``judge verdicts`` (added to the ``judge`` group by :mod:`metajudge.cli.judge`). To choose
    between the judges (rank, non-inferiority against the best, cost): ``decide verdicts``."""
    q = jsub.add_parser(
        "verdicts",
        help="accuracy of external pairwise verdicts (JudgeBench outputs, JSONL/CSV tables) "
        "under a named protocol, with CIs, position consistency and McNemar between judges "
        "(to choose one of them: `decide verdicts`)",
        description="Read one or more files of pairwise verdicts (one judge each) and report "
        "accuracy per category and overall with bootstrap CIs, position consistency, P(first "
        "wins) and McNemar's test between every two judges on the same pairs. JudgeBench's "
        "published accuracies are shown beside ours for its released judges.",
    )
    q.add_argument(
        "--input",
        metavar="FILE",
        action="append",
        required=True,
        help="a verdict file (repeat for several judges): JudgeBench outputs/*.jsonl, or a "
        "JSONL/CSV table with columns pair_id, decision (A>B|B>A|A=B|empty), order (1|2), "
        "label, category, judge",
    )
    q.add_argument(
        "--protocol",
        choices=("double_game", "single", "both_agree"),
        default="double_game",
        help="double_game (JudgeBench: +1/-1 per order, correct if the sum > 0; default), "
        "single (the original order only), both_agree (both orders must equal the label)",
    )
    add_seed(q)
    add_n_boot(q)
    q.add_argument(
        "--format",
        choices=("md", "csv", "json"),
        help="output format (default md; with -o, from the suffix)",
    )
    q.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE (atomically)")
    q.set_defaults(func=_cmd_verdicts)


def _cmd_verdicts(args: argparse.Namespace) -> int:
    from pathlib import Path

    from metajudge.analyses.verdict_accuracy import evaluate_verdicts
    from metajudge.io import atomic_write, check_output_file
    from metajudge.reports.verdict_tables import published_judgebench, render_verdicts
    from metajudge.scores.released_verdicts import read_verdicts

    if args.output:
        check_output_file(args.output, inputs=args.input)
    judges = [read_verdicts(p) for p in args.input]
    res = evaluate_verdicts(judges, args.protocol, seed=args.seed, n_boot=args.n_boot)
    pub = published_judgebench() if args.protocol == "double_game" else {}
    fmt = args.format
    if args.output and fmt is None:
        fmt = {".csv": "csv", ".json": "json"}.get(Path(args.output).suffix, "md")
    text = render_verdicts(res, fmt or "md", pub)
    if args.output:
        with atomic_write(args.output) as fh:
            fh.write(text)
        print(render_verdicts(res, "md", pub), end="")
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    return 0
