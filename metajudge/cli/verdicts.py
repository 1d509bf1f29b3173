"""``metajudge judge verdicts``: accuracy of external judges' pairwise verdicts (JudgeBench's released
outputs or any JSONL/CSV verdict table) under a named protocol, with CIs, position consistency,
P(first wins) and McNemar between the judges; with ``--choose``, the choice among the judges
(ranking, non-inferiority against the best, McNemar, cost frontier).

Only argparse is imported here; the library loads inside the command.
"""

from __future__ import annotations

import argparse

from metajudge.cli import options as opt

#: Options of the accuracy report only, and of ``--choose`` only.
_REPORT_ONLY = ("output",)
_CHOOSE_ONLY = ("margin", "alpha", "out")


def add_verdicts(jsub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``judge verdicts`` (added to the ``judge`` group by :mod:`metajudge.cli.judge`)."""
    q = jsub.add_parser(
        "verdicts",
        help="accuracy of external pairwise verdicts (JudgeBench outputs, JSONL/CSV tables) "
        "under a named protocol, with CIs, position consistency and McNemar between judges; "
        "--choose: which judge to keep (ranking, non-inferiority against the best, cost)",
        description="Read one or more files of pairwise verdicts (one judge each) and report "
        "accuracy per category and overall with bootstrap CIs, position consistency, P(first "
        "wins) and McNemar's test between every two judges on the same pairs. JudgeBench's "
        "published accuracies are shown beside ours for its released judges. With --choose "
        "(JudgeBench outputs/*.jsonl, two or more): the judges ranked by accuracy, "
        "non-inferiority of each against the best at --margin, McNemar, and the cost frontier.",
    )
    q.add_argument(
        "--verdicts",
        dest="input",  # a record's fault is placed in this file (cli._placed)
        metavar="FILE",
        action="append",
        default=[],
        help="a verdict file (repeat for several judges): JudgeBench outputs/*.jsonl, or a "
        "JSONL/CSV table with columns pair_id, decision (A>B|B>A|A=B|empty), order (1|2), "
        "label, category, judge",
    )
    q.add_argument(
        "--order-rule",
        dest="protocol",
        choices=("double_game", "single", "both_agree"),
        default="double_game",
        help="how a pair's two orders make one verdict: double_game (JudgeBench: +1/-1 per order, correct if the sum > 0; default), "
        "single (the original order only), both_agree (both orders must equal the label)",
    )
    q.add_argument(
        "--choose",
        action="store_true",
        help="choose among the judges instead: rank by accuracy, non-inferiority of each "
        "against the best, McNemar, cost frontier (JudgeBench outputs files, at least two)",
    )
    opt.add_margin(q, " (with --choose)")
    opt.add_alpha(q, "the one-sided non-inferiority test (with --choose)", default=None)
    opt.add_seed(q)
    opt.add_n_boot(q)
    q.add_argument(
        "--format",
        choices=("md", "csv", "json"),
        help="output format (default md; with -o, from the suffix; --choose: md or json)",
    )
    q.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE (atomically)")
    opt.add_out(q, "with --choose: write the decision report (.md, .json, plots) into this folder")
    q.set_defaults(func=_cmd_verdicts, choose=False)


def _check(args: argparse.Namespace) -> None:
    """Refuse an option that does not apply to what the command answers (``--choose`` or not),
    and a command line without verdict files."""
    from metajudge.errors import InputError

    if not args.input:
        raise InputError("give a verdict file (--verdicts FILE, repeated)", field="--verdicts")
    unused = _REPORT_ONLY if args.choose else _CHOOSE_ONLY
    given = [k for k in unused if getattr(args, k) is not None]
    if args.choose and args.format == "csv":
        given.append("format csv")
    if given:
        names = ", ".join("--" + k.replace("_", "-") for k in given)
        when = "with --choose" if args.choose else "without --choose"
        raise InputError(f"{names} does not apply {when}", field="--" + given[0].split()[0])


def _choose(args: argparse.Namespace) -> int:
    """``--choose``: the choice among the judges (:func:`metajudge.cli.decide.cmd_choose_verdicts`)."""
    from metajudge.cli.decide import cmd_choose_verdicts

    ns = argparse.Namespace(**vars(args))
    ns.files, ns.input = list(args.input), None
    ns.margin = 0.05 if args.margin is None else args.margin
    ns.alpha = 0.05 if args.alpha is None else args.alpha
    ns.format = args.format or "md"
    return cmd_choose_verdicts(ns)


def _cmd_verdicts(args: argparse.Namespace) -> int:
    from metajudge.runs.verdicts import run_verdicts

    _check(args)
    if args.choose:
        return _choose(args)
    run = run_verdicts(
        args.input,
        args.protocol,
        seed=args.seed,
        n_boot=args.n_boot,
        fmt=args.format,
        output=args.output,
    )
    print(run.text, end="")
    if run.written is not None:
        print(f"wrote {args.output}")
    return 0
