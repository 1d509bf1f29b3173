"""``metajudge baselines regenerate|check``: our reference results (``baselines/ours_*.json``).

Only argparse is imported here; the library loads inside each command
(:mod:`metajudge.runs.baselines`).
"""

from __future__ import annotations

import argparse

from metajudge.cli import options as opt


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    b = sub.add_parser(
        "baselines",
        help="our reference results (baselines/ours_*.json): regenerate them, or check that "
        "the code still reproduces them",
    )
    bsub = b.add_subparsers(dest="baselines_command", metavar="SUBCOMMAND")
    r = bsub.add_parser(
        "regenerate",
        help="recompute every dataset × deterministic metric under the default protocol",
    )
    _args(r, "folder the JSON files are written to (default baselines/)")
    r.set_defaults(func=_cmd_baselines_regen)
    c = bsub.add_parser(
        "check", help="recompute and compare with the stored files (exit 1 on a moved correlation)"
    )
    _args(c, "folder of the stored JSON files (default baselines/)")
    c.set_defaults(func=_cmd_baselines_check)
    b.set_defaults(func=lambda a: (b.print_help(), 2)[1])


def _args(p: argparse.ArgumentParser, out_help: str) -> None:
    opt.add_baselines(p, out_help, default="baselines")
    p.add_argument(
        "--datasets",
        type=opt.csv_list,
        default=[],
        metavar="NAMES",
        help="only these datasets, comma-separated (default: all)",
    )
    opt.add_data_dir(p)


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

    problems = check_baselines(
        args.baselines, datasets=args.datasets or None, data_dir=args.data_dir
    )
    for line in problems:
        print(line)
    print("baselines: OK" if not problems else f"baselines: {len(problems)} moved value(s)")
    return 0 if not problems else 1
