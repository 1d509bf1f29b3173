"""``metajudge baselines check [--write]``: our reference results (``baselines/ours_*.json``).

Only argparse is imported here; the library loads inside each command
(:mod:`metajudge.runs.baselines`).
"""

from __future__ import annotations

import argparse

from metajudge.cli import options as opt


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    b = sub.add_parser(
        "baselines",
        help="our reference results (baselines/ours_*.json): check that the code still "
        "reproduces them, or (--write) regenerate them",
    )
    bsub = b.add_subparsers(dest="baselines_command", metavar="SUBCOMMAND")
    c = bsub.add_parser(
        "check",
        help="recompute every dataset × deterministic metric under the default protocol and "
        "compare with the stored files (exit 1 on a moved correlation); --write: store them",
    )
    opt.add_baselines(c, "the folder of the stored JSON files (default baselines/)", "baselines")
    c.add_argument(
        "--write",
        action="store_true",
        help="write the recomputed files into --baselines instead of comparing (`make baselines`)",
    )
    c.add_argument(
        "--datasets",
        type=opt.csv_list,
        default=[],
        metavar="NAMES",
        help="only these datasets, comma-separated (default: all)",
    )
    c.set_defaults(func=_cmd_baselines_check)
    b.set_defaults(func=lambda a: (b.print_help(), 2)[1])


def _cmd_baselines_regen(args: argparse.Namespace) -> int:
    from metajudge.runs.baselines import regenerate_baselines

    written = regenerate_baselines(
        args.baselines, datasets=args.datasets or None, data_dir=args.data_dir
    )
    for p in written:
        print(f"wrote {p}")
    return 0


def _cmd_baselines_check(args: argparse.Namespace) -> int:
    from metajudge.runs.baselines import check_baselines

    if args.write:
        return _cmd_baselines_regen(args)
    problems = check_baselines(
        args.baselines, datasets=args.datasets or None, data_dir=args.data_dir
    )
    for line in problems:
        print(line)
    print("baselines: OK" if not problems else f"baselines: {len(problems)} moved value(s)")
    return 0 if not problems else 1
