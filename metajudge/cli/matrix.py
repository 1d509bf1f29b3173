"""``metajudge matrix list`` (every metric × dataset cell with its status) and ``metajudge matrix run``
(fill one cell: score a seeded subset, meta-evaluate it, store it; ``--dry-run``: the cost
estimate only). The library is :mod:`metajudge.runs.matrix.table` and
:mod:`metajudge.runs.matrix.run`."""

from __future__ import annotations

import argparse
from typing import Any

from metajudge.cli.options import (
    add_baselines,
    add_format,
    add_limit,
    add_n_boot,
    add_out,
    add_seed,
    limit_kw,
)


def register(sub: Any) -> None:
    top = sub.add_parser(
        "matrix",
        help="every metric × dataset cell: list (applies or not and why, the stored result, its "
        "cost), run (fill one cell)",
    )
    msub = top.add_subparsers(dest="matrix_command", metavar="SUBCOMMAND", required=True)
    p = msub.add_parser(
        "list",
        help="every metric × dataset cell: applies or not (and why), the stored result, its cost",
        description="List every registered metric (and the pairwise judge) × every built-in "
        "dataset and --add-dataset file: stored | stored (subset) | n/a: reason | not run: "
        "reason. `metajudge matrix run` fills one cell.",
    )
    p.add_argument(
        "--add-dataset",
        dest="input",
        action="append",
        default=[],
        metavar="FILE",
        help="a canonical JSONL dataset file shown as one more column, repeatable",
    )
    add_format(p, ("md", "csv", "json"))
    add_baselines(p, "the baselines folder (default: the source tree's baselines/)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the table here instead of stdout")
    p.set_defaults(func=cmd_matrix)
    r = msub.add_parser(
        "run",
        help="fill one cell: score a seeded subset, meta-evaluate, store the cell JSON",
        description="Score --metric on --dataset/--input (a seeded random subset with --limit), "
        "meta-evaluate it with the dataset's natural protocol and write the cell (cell.json) and "
        "its report (table.md) into the run folder --out (default: "
        "<user cache>/runs/matrix/<metric>__<dataset>, outside the source tree); --baselines DIR "
        "also stores it as DIR/judges/<metric>__<dataset>.json, on purpose. "
        "--dry-run: no model call, the cost estimate.",
    )
    r.add_argument("--metric", required=True, help="a registry metric or pairwise_judge")
    g = r.add_mutually_exclusive_group(required=True)
    g.add_argument("--dataset", help="registry dataset name (see `metajudge data list`)")
    g.add_argument(
        "--input", dest="run_input", metavar="FILE", help="a canonical JSONL dataset file"
    )
    r.add_argument("--backbone", help="judge backbone config (default: the embedded default)")
    add_limit(r, "items (pairs, or inputs with all their responses)")
    add_seed(r, "the --limit draw and the bootstrap")
    add_n_boot(r)
    r.add_argument("--prompt-variant", help="judge prompt variant (default: the backbone's)")
    r.add_argument("--dry-run", action="store_true", help="estimate the cost; call no model")
    add_out(r, "the run folder: cell.json and table.md (default: under the user cache)")
    add_format(r, ("md", "json"))
    add_baselines(
        r,
        "also store the cell as DIR/judges/<metric>__<dataset>.json (the stored baselines "
        "`metajudge matrix list` reads; default: none)",
    )
    r.set_defaults(func=cmd_run)


def cmd_matrix(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_text
    from metajudge.runs.matrix.table import run_matrix

    text = run_matrix(
        inputs=args.input,
        data_dir=args.data_dir,
        baselines=args.baselines,
        fmt=args.format,
        output=args.output,
    )
    if args.output:
        print(args.output)
    else:
        print_text(text)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    import sys

    from metajudge.cli.output import print_json
    from metajudge.runs.matrix.prepare import CellOptions
    from metajudge.runs.matrix.run import cell_summary, run_cell_command

    opts = CellOptions(
        metric=args.metric,
        dataset=args.dataset,
        input=args.run_input,
        backbone=args.backbone,
        **limit_kw(args),
        seed=args.seed,
        n_boot=args.n_boot,
        prompt_variant=args.prompt_variant,
        data_dir=args.data_dir,
        baselines=args.baselines,
        progress=not args.quiet,
        out=args.out,
    )
    if args.out and not args.dry_run:
        from metajudge.io import check_out_dir

        check_out_dir(args.out, inputs=[args.run_input])
    run = run_cell_command(opts, dry_run=args.dry_run)
    if run.estimate is not None:
        if args.format == "json":
            print_json(run.estimate.to_dict(), indent=1)
        else:
            print(run.estimate.to_text())
        return 0
    report = f"report: {run.table}"
    if args.format == "json":  # standard output: one JSON document; where it was stored on stderr
        print_json(run.cell, indent=1, ensure_ascii=False)
        print(report, file=sys.stderr)
        print(run.path, file=sys.stderr)
    else:
        print(cell_summary(run.cell))  # type: ignore[arg-type]
        print(report)
        print(run.path)
    return 0
