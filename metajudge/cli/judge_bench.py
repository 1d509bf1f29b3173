"""``metajudge judge judge-bench``: our judge on a JUDGE-BENCH set with its annotation prompts.

Registered into the ``judge`` group of :mod:`metajudge.cli.judge`; the work is
:func:`metajudge.runs.judge_bench.run_judge_bench`.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from metajudge.cli.judge import _backbone, judge_group
    from metajudge.cli.meta_eval import add_dataset_args, add_format
    from metajudge.cli.types import positive_int

    p = judge_group(sub).add_parser(
        "judge-bench",
        help="run a judge on a JUDGE-BENCH set with its annotation prompts; meta-evaluate it "
        "beside the paper's 11 LLM judges",
        description="Render each annotation spec's prompt for the first --limit instances, ask "
        "the backbone, write the raw replies into a copy of the file (model name -> reply, "
        "JUDGE-BENCH's format), parse them (invalid replies counted, never guessed) and compare "
        "with the majority / mean human label and with the published results.",
    )
    add_dataset_args(p)
    p.add_argument("--subset", help="the set of --dataset dmg_judge_bench (e.g. cola, dices-990)")
    _backbone(p)
    p.add_argument("--limit", type=positive_int, help="only the first N instances (default all)")
    p.add_argument(
        "--max-tokens", type=positive_int, default=32, help="reply length cap (default 32)"
    )
    p.add_argument("--data-dir", help="local data folder (default: $METAJUDGE_DATA_DIR)")
    p.add_argument(
        "-o", "--output", required=True, help="the replies file (a JUDGE-BENCH-format copy)"
    )
    p.add_argument("--result", help="also write the evaluation as JSON to this file")
    add_format(p, ("md", "json"))
    p.set_defaults(func=_cmd)


def _cmd(args: argparse.Namespace) -> int:
    import json

    from metajudge.metrics.judges.engine import resolve_backbone
    from metajudge.runs.judge_bench import run_judge_bench, to_markdown

    run = run_judge_bench(
        output=args.output,
        backbone=resolve_backbone(args.backbone),
        dataset=args.dataset,
        input_file=args.input,
        subset=args.subset,
        limit=args.limit,
        max_tokens=args.max_tokens,
        data_dir=args.data_dir,
    )
    data = run.to_dict()
    text = json.dumps(data, indent=1, ensure_ascii=False, default=str)
    if args.result:
        from metajudge.io import atomic_write

        with atomic_write(args.result) as fh:
            fh.write(text + "\n")
    print(text if args.format == "json" else to_markdown(data))
    print(args.output)
    return 0
