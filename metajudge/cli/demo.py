"""``metajudge demo``: the judge section of ``make demo`` (see :mod:`metajudge.runs.demo`).

Only argparse is imported here; the library loads inside the command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from metajudge.cli.options import add_limit, add_n_boot, add_seed
from metajudge.cli.types import positive_int


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "demo",
        help="the judge part of `make demo`: G-Eval, answer equivalence, MT-RAIG Eval and a "
        "backbone swap against humans on a small seeded subset (embedded backbones)",
        description="Draws a seeded subset of RAGChecker pairs and of the table-QA pairs of "
        "lftqa_mitigation_pradhumant, runs the LLM judges on the embedded backbones (through the "
        "response cache), meta-evaluates them against the humans and runs a backbone swap. "
        "Prints each judge's correlation with CI, parse failures, tokens and wall time, the "
        "ledger, and the report's path last (with --cards, the judge cards' page after it).",
    )
    p.add_argument("--out", metavar="DIR", required=True, help="run folder of the judge section")
    p.add_argument(
        "--lexical-run",
        metavar="DIR",
        help="a meta-eval run folder (the lexical + BERTScore table) to show first in the report",
    )
    p.add_argument(
        "--cards",
        metavar="DIR",
        help="a folder of `judge card` run folders: their comparison page, DIR/cards.html, is "
        "written and printed last",
    )
    p.add_argument("--n-rag", type=positive_int, default=6, help="RAGChecker pairs (default 6)")
    p.add_argument("--n-table", type=positive_int, default=4, help="table-QA pairs (default 4)")
    add_limit(p, "pairs of each subset (sets --n-rag and --n-table)", first=False)
    add_seed(p, "the draw and the judges")
    add_n_boot(p)
    p.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    from metajudge.reports.demo_report import judge_text
    from metajudge.runs.demo import DemoOptions, run_demo

    n_rag, n_table = (args.limit, args.limit) if args.limit else (args.n_rag, args.n_table)
    opts = DemoOptions(n_rag=n_rag, n_table=n_table, seed=args.seed, n_boot=args.n_boot)
    res = run_demo(args.out, opts, data_dir=args.data_dir, lexical_run=args.lexical_run)
    print()
    for line in judge_text(res):
        print(line)
    print(f"Judge section wall time: {res.wall_s:.1f} s")
    print(f"Markdown report: {res.paths['report']}")
    print(Path(res.paths["html"]).resolve())
    if args.cards:
        from metajudge.runs.judge_cards import cards_page

        print("Judge cards of released judges, side by side (each card linked):")
        print(cards_page(args.cards).resolve())
    return 0
