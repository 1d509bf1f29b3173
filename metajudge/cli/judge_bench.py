"""``metajudge judge run-bench``: our judge on a
JUDGE-BENCH set with its annotation prompts.

Added to the ``judge`` group by :mod:`metajudge.cli.judge`; the work is
:func:`metajudge.runs.judge_bench.run_judge_bench`.
"""

from __future__ import annotations

import argparse

from metajudge.cli.options import (
    add_backbone,
    add_dataset_args,
    add_format,
    add_limit,
    add_seed,
    limit_kw,
    notice,
)
from metajudge.cli.types import positive_int


def add_run_bench(jsub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = jsub.add_parser(
        "run-bench",
        help="run a judge on a JUDGE-BENCH set with its annotation prompts; meta-evaluate it "
        "beside the paper's 11 LLM judges",
        description="Render each annotation spec's prompt for --limit instances (a seeded draw; "
        "--first N: the first ones), ask "
        "the backbone, write the raw replies into a copy of the file (model name -> reply, "
        "JUDGE-BENCH's format), parse them (invalid replies counted, never guessed) and compare "
        "with the majority / mean human label and with the published results.",
    )
    add_dataset_args(p)
    p.add_argument("--subset", help="the set of --dataset dmg_judge_bench (e.g. cola, dices-990)")
    add_backbone(p)
    add_limit(p, "instances")
    add_seed(p, "the --limit draw")
    p.add_argument(
        "--max-tokens", type=positive_int, default=32, help="reply length cap (default 32)"
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the replies file (a JUDGE-BENCH-format copy)",
    )
    add_format(p, ("md", "json"))
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    from metajudge.cli.backends import cli_backbone
    from metajudge.cli.output import print_json, print_text
    from metajudge.runs.judge_bench import judge_bench_markdown, run_judge_bench

    run = run_judge_bench(
        output=args.output,
        backbone=cli_backbone(args.backbone),
        dataset=args.dataset,
        input_file=args.input,
        subset=args.subset,
        **limit_kw(args),
        seed=args.seed,
        max_tokens=args.max_tokens,
        data_dir=args.data_dir,
    )
    data = run.to_dict()
    if args.format == "json":
        print_json(data, indent=1, ensure_ascii=False, default=str)
    else:
        print_text(judge_bench_markdown(data), end="\n")
    notice(args.format, args.output)
    return 0
