"""``metajudge judge card``: one judge on one labelled dataset, the verdict first
(:mod:`metajudge.runs.judge_card` composes the commands that compute each part)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from metajudge.cli import options as opt


def add_card(jsub: Any) -> None:
    p = jsub.add_parser(
        "card",
        help="a judge's card: may it replace the annotators, its agreement beside the "
        "inter-human ceiling, where it may be trusted, how wide its errors are, what the systems "
        "are worth; then the evidence (card.json, card.html)",
        description="Runs, on one labelled dataset (complete or partial labels), each analysis "
        "the data allows: meta-eval, decide alt-test, calibrate selective, conformal, fit and "
        "estimate, judge self-preference; a part the data does not allow is named with the "
        "reason. Writes card.json (with a signature: the data's hash, the judge definition's "
        "hash, the backbone, the metajudge version) and card.html (the verdict first) into "
        "--out, the meta-eval run folder under meta_eval/. Each part's numbers are those its "
        "own command prints with the same data and seeds (card.json names the command).",
    )
    opt.add_dataset_args(p)
    p.add_argument("--subset", help="only this subset of the dataset (e.g. framing)")
    opt.add_scores(
        p,
        help="where the judge's column comes from (the --scores grammar: a score file, a "
        "framework's output file, shipped; default shipped)",
    )
    p.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar="COL",
        help="the judge's column in the --scores; repeatable: several judges, each its card "
        "under --out/<judge>/ and one comparison page, cards.html (side by side, with CIs and "
        "paired tests)",
    )
    p.add_argument(
        "--metric",
        metavar="NAME",
        help="instead of a column: a judge metric run under --backbone, or judge:PATH (a judge "
        "defined in a file)",
    )
    opt.add_backbone(p, "with --metric: ")
    p.add_argument("--dimension", help="the human dimension (default: the dataset's only one)")
    p.add_argument(
        "--family",
        type=opt.csv_list,
        default=[],
        metavar="A,B",
        help="systems of the judge's model family (the self-preference part)",
    )
    opt.add_alt_epsilon(
        p,
        help="the Alt-Test's cost-benefit margin ε (default: the paper's for a built-in "
        "subset, else 0.2)",
    )
    opt.add_risk(p, dest="risk")
    opt.add_miscoverage(p, dest="miscoverage")
    opt.add_n_boot(p)
    opt.add_repeats(p, 50, " calibration/test")
    opt.add_seed(p, "the bootstrap and the splits")
    p.add_argument(
        "--probes",
        metavar="DIR",
        help="with --input a CJE folder: its probe folder (held-out labelled probes), the "
        "transport audit of the system estimates",
    )
    p.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="EXPR",
        help="a requirement on the card, repeatable (e.g. agreement>=0.8, alt-test=pass, "
        "kappa.lower>=0.6, tpr.lower>=0.9, selective.kept>=0.5): exit 3 when one fails, 2 "
        "when one names an unknown measure or one this data cannot measure",
    )
    opt.add_out(p, "the card's run folder: card.json, card.html, meta_eval/", required=True)
    opt.add_format(p)
    opt.add_log_to_mlflow(
        p,
        "card.json and card.html as the artifacts of an MLflow run in that experiment, the "
        "headline figures as metrics, the signature as tags",
    )
    p.set_defaults(func=_cmd_card)


def _cmd_card(args: argparse.Namespace) -> int:
    from metajudge.cli.backends import cli_backbone
    from metajudge.cli.output import print_json, print_text
    from metajudge.cli.source import data_source
    from metajudge.runs.judge_card import CardOptions, run_card
    from metajudge.runs.judge_card_folder import folder_card, is_cje_folder
    from metajudge.runs.judge_cards import gate, parse_requirements, run_cards

    require = parse_requirements(args.require)  # before any work
    src = data_source(args, judge=args.judge[0] if len(args.judge) == 1 else None)
    if args.log_to_mlflow:
        from metajudge.runs.mlflow_log import check_source

        check_source(src.path)
    opts = CardOptions(
        metric=args.metric,
        backbone=cli_backbone(args.backbone) if args.metric else None,
        family=tuple(args.family),
        epsilon=args.epsilon,
        risk=args.risk,
        miscoverage=args.miscoverage,
        seed=args.seed,
        n_boot=args.n_boot,
        repeats=args.repeats,
        require=require,
        probes=args.probes,
    )
    if is_cje_folder(src):
        run = folder_card(src, opts, args.out)
    elif len(args.judge) > 1:
        run = run_cards(src, args.judge, opts, args.out)
    else:
        run = run_card(src, opts, args.out)
    if args.format == "json":
        print_json(run.card, indent=1)
    else:
        print_text(run.markdown)
    for path in run.written:  # card.html last
        opt.notice(args.format, str(path))
    if args.log_to_mlflow:
        from metajudge.runs.mlflow_log import log_cards

        for rid in log_cards(src.path, args.out, src.tracking_uri):
            opt.notice(args.format, f"logged to MLflow run {rid}")
    code, said = gate(run.card)
    for line in said:
        print(line, file=sys.stderr)
    return code
