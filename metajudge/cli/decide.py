"""CLI: ``metajudge decide frontier|drift|alt-test|alt-test-plan`` — the cost frontier, the
drift gate, and whether an LLM may replace the human annotators (the Alternative Annotator
Test, and its simulation for choosing ε and the number of items). The backbone decision and the
choice among released judges are views of ``judge swap --x X --y Y`` and ``judge verdicts
--choose`` (:mod:`metajudge.cli.swap`, :mod:`metajudge.cli.verdicts`), which call
:func:`cmd_swap_decision` and :func:`cmd_choose_verdicts` here; ``decide swap`` and ``decide
verdicts`` are their old names.

Only argparse is imported here; the library loads inside each command.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from metajudge.cli import options as opt
from metajudge.cli.grammar import label_help
from metajudge.cli.types import nonneg_float, positive_int, probability

if TYPE_CHECKING:
    from metajudge.runs.alt_test import DecisionRun


def _common(p: argparse.ArgumentParser, alpha: str = "the one-sided test") -> None:
    opt.add_alpha(p, alpha)
    opt.add_n_boot(p)
    opt.add_seed(p)
    opt.add_out(p, "write the decision report (.md, .json, plots) into this folder")
    opt.add_format(p)


def _scores(p: argparse.ArgumentParser) -> None:
    opt.add_judge_scores(p)
    opt.add_tie_band(p, "pairwise decisions")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    top = sub.add_parser(
        "decide",
        help="cost frontier of a judge table, drift gate, and the Alt-Test: may an LLM "
        "replace the human annotators?",
    )
    dsub = top.add_subparsers(dest="decide_command", metavar="SUBCOMMAND", required=True)
    f = dsub.add_parser("frontier", help="cost-agreement frontier of a published judge table")
    f.add_argument(
        "--frontier",
        metavar="FILE",
        help="the judge table: cost and agreement per judge (default: AlpacaEval's, in the data "
        "folder)",
    )
    _common(f)
    f.set_defaults(func=_cmd_frontier)
    d = dsub.add_parser(
        "drift",
        help="two runs of a judge on the same anchor items; exit 1 on drift (rule any-evidence)",
    )
    _scores(d)
    d.add_argument(
        "--max-flip-rate",
        type=probability,
        default=0.10,
        help="fail above this flip rate (default 0.10)",
    )
    d.add_argument(
        "--max-change-rate",
        type=probability,
        default=0.10,
        help="fail above this share of responses whose score changed (default 0.10)",
    )
    d.add_argument(
        "--tolerance",
        type=nonneg_float,
        default=0.0,
        help="a response's score 'changed' when |after - before| exceeds this (default 0)",
    )
    d.add_argument(
        "--max-shift",
        type=nonneg_float,
        help="fail when |mean score shift| exceeds this and Wilcoxon p < --alpha (default 0: "
        "any significant shift)",
    )
    d.add_argument(
        "--backbone",
        metavar="NAME",
        help="run the judge itself twice on the anchor items under this judge backbone (instead "
        "of --scores/--backbones); the rerun of an unchanged judge comes from the cache",
    )
    d.add_argument(
        "--backbone-after",
        metavar="NAME",
        help="the second run's judge backbone (default: --backbone)",
    )
    d.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="RUN.KEY=VALUE",
        help="metric option of one judge run, RUN = before|after, e.g. after.temperature=1.0 "
        "(with --backbone)",
    )
    _common(d)
    d.set_defaults(func=_cmd_drift)
    _register_alt_test(dsub)
    _register_alt_test_plan(dsub)


def cmd_swap_decision(args: argparse.Namespace) -> int:
    """``judge swap --x X --y Y`` (old ``decide swap``): can backbone Y replace X?"""
    return _cmd_swap(args)


def cmd_choose_verdicts(args: argparse.Namespace) -> int:
    """``judge verdicts --choose`` (old ``decide verdicts``): which released judge to keep."""
    return _cmd_verdicts(args)


def _wrote(fmt: str, path: object) -> None:
    """Say where a file was written (to standard error under ``--format json``)."""
    from metajudge.io import final_path

    opt.notice(fmt, f"wrote {final_path(str(path))}")


def _load_kw(args: argparse.Namespace) -> dict:
    return {
        "input_file": args.input,
        "subset": args.subset,
        **opt.limit_kw(args),
        "data_dir": args.data_dir,
    }


def _print(args: argparse.Namespace, payload: dict, md: str) -> None:
    """The result in ``--format``: its JSON, or its Markdown."""
    from metajudge.cli.output import print_json, print_text

    if args.format == "json":
        print_json(payload, indent=1, default=str)
    else:
        print_text(md, end="\n")


def _show(args: argparse.Namespace, run: DecisionRun) -> None:
    """A run's result, then the files it wrote."""
    _print(args, run.payload, run.markdown)
    for path in run.written:
        _wrote(args.format, path)


def _cmd_swap(args: argparse.Namespace) -> int:
    from metajudge.runs.decide import run_swap_decision

    run = run_swap_decision(
        args.dataset,
        args.metric,
        args.x,
        args.y,
        scores=args.scores,
        backbones=args.backbones,
        margin=args.margin,
        alpha=args.alpha,
        n_boot=args.n_boot,
        seed=args.seed,
        eps=args.epsilon,
        ppi_labelled=args.ppi_labelled,
        out=args.out,
        **_load_kw(args),
    )
    _show(args, run)
    return 0


def _cmd_verdicts(args: argparse.Namespace) -> int:
    from metajudge.runs.decide import run_choose_verdicts

    run = run_choose_verdicts(
        list(args.files),
        margin=args.margin,
        alpha=args.alpha,
        n_boot=args.n_boot,
        seed=args.seed,
        out=args.out,
    )
    _show(args, run)
    return 0


def _cmd_frontier(args: argparse.Namespace) -> int:
    from metajudge.runs.decide import run_frontier

    _show(args, run_frontier(args.frontier, data_dir=args.data_dir, alpha=args.alpha, out=args.out))
    return 0


def _cmd_drift(args: argparse.Namespace) -> int:
    from metajudge.runs.decide import DriftGate, run_drift_gate

    gate = DriftGate(
        max_flip_rate=args.max_flip_rate,
        alpha=args.alpha,
        max_shift=args.max_shift,
        max_change_rate=args.max_change_rate,
        tolerance=args.tolerance,
    )
    run = run_drift_gate(
        args.dataset,
        args.metric,
        scores=args.scores,
        backbones=args.backbones,
        gate=gate,
        judge_runs=_judge_runs(args),
        n_boot=args.n_boot,
        seed=args.seed,
        eps=args.epsilon,
        out=args.out,
        **_load_kw(args),
    )
    _show(args, run)
    return 0 if run.passed else 1


def _judge_runs(args: argparse.Namespace) -> dict | None:
    """``--backbone``/``--backbone-after``/``--option RUN.KEY=VALUE`` → :func:`drift_judge_data`
    keywords."""
    from metajudge.errors import InputError

    if args.backbone is None:
        if args.backbone_after or args.option:
            raise InputError("--backbone-after and --option need --backbone", field="backbone")
        return None
    if args.scores or args.backbones:
        raise InputError("give --backbone or --scores/--backbones, not both", field="backbone")
    from metajudge.cli.metrics import parse_options
    from metajudge.cli.types import check_kwargs
    from metajudge.metrics.registry import metric_class

    options = parse_options(args.option)
    for run, opts in options.items():
        if run not in ("before", "after"):
            raise InputError(f"--option {run}.…: RUN must be before or after", field="--option")
        check_kwargs(metric_class(args.metric), opts, field=f"--option {run}")
    return {"before": args.backbone, "after": args.backbone_after, "options": options}


def _register_alt_test(dsub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    a = dsub.add_parser(
        "alt-test",
        help="may an LLM replace the human annotators? the Alternative Annotator Test (Calderon "
        "et al., ACL 2025): leave-one-annotator-out, one-sided t per annotator, "
        "Benjamini-Yekutieli; winning rate and advantage probability",
    )
    a.add_argument(
        "--input",
        metavar="DIR",
        help="a folder with human_annotations.json {annotator: {item: label}} and "
        "llm_annotations.json {llm: {item: label}} (docs/own-data.md); with --metric, a "
        "labelled dataset file",
    )
    a.add_argument(
        "--dataset",
        help="a built-in dataset in that format (alt_test_calderon2025) with --subset; with "
        "--metric, any built-in labelled dataset",
    )
    a.add_argument(
        "--subset",
        help="the annotation set of --dataset (e.g. framing); with --metric, the dataset's subset",
    )
    a.add_argument(
        "--llm", action="append", default=[], help="test only this LLM (repeatable; default all)"
    )
    opt.add_alt_epsilon(
        a,
        "the Alt-Test's cost-benefit margin ε: how far the LLM may trail each annotator "
        "(default: the paper's for a built-in subset, else 0.2)",
    )
    a.add_argument("--q", type=probability, help="FDR level of Benjamini-Yekutieli (default 0.05)")
    a.add_argument(
        "--scoring",
        choices=("accuracy", "neg_rmse", "neg_mae"),
        help="alignment with the other annotators (default: accuracy for categories, neg_rmse "
        "for numbers; a built-in subset: the paper's)",
    )
    a.add_argument(
        "--min-annotators",
        type=positive_int,
        help="keep items with at least this many annotators (default 2)",
    )
    a.add_argument(
        "--min-items",
        type=positive_int,
        help="keep annotators with at least this many kept items (default 30)",
    )
    a.add_argument(
        "--metric",
        metavar="NAME",
        help="the LLM annotator is this judge metric (judge:PATH: a judge defined in a file) run "
        "on a labelled dataset (--dataset NAME or --input FILE, each annotator's labels one "
        "human; a pair's label: +1 b better); with --backbone, --limit, --dimension",
    )
    opt.add_backbone(a, "with --metric: ")
    opt.add_limit(a)
    a.add_argument(
        "--dimension", help="with --metric: the human dimension (default: the card's first)"
    )
    opt.add_seed(a, "the --limit draw")
    opt.add_out(a, "write alt_test.md, alt_test.json and report.html into this folder")
    opt.add_format(a)
    a.set_defaults(func=_cmd_alt_test)


def _cmd_alt_test(args: argparse.Namespace) -> int:
    from metajudge.cli.source import data_source
    from metajudge.runs.alt_test import run_alt_test

    judge = _alt_judge(args)
    run = run_alt_test(
        data_source(args),
        epsilon=args.epsilon,
        q=args.q,
        scoring=args.scoring,
        min_annotators=args.min_annotators,
        min_items=args.min_items,
        llms=args.llm,
        out=args.out,
        judge=judge,
    )
    _show(args, run)
    return 0


def _alt_judge(args: argparse.Namespace) -> dict | None:
    """``decide alt-test --metric``: the judge run that gives the LLM's labels (None: the
    annotations are given; ``--subset`` then names the built-in set, else the labelled
    dataset's subset); its options refused without it."""
    from metajudge.errors import InputError

    given = [
        o for o in ("backbone", "limit", "first", "dimension") if getattr(args, o, None) is not None
    ]
    if args.metric is None:
        if given:
            raise InputError(f"--{given[0]} goes with --metric", field=f"--{given[0]}")
        return None
    return {
        "metric": args.metric,
        "backbone": args.backbone,
        **opt.limit_kw(args),
        "seed": args.seed,
    }


def _register_alt_test_plan(dsub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from metajudge.cli.types import bounded_int

    a = dsub.add_parser(
        "alt-test-plan",
        help=label_help(
            "decide alt-test-plan",
            "the paper's simulation (categories, annotator and LLM noise) run through the "
            "Alt-Test, winning rate and pass rate by number of items and ε",
        ),
        description="Seeded synthetic annotation sets run through `decide alt-test`'s "
        "procedure: per ε and number of items n, the mean winning rate, the pass rate (share of "
        "replicates with winning rate >= 0.5) and the advantage probability. The paper's model "
        "(--simulation dirichlet, the default; Calderon et al. 2025, Appendix C): category "
        "priors drawn from Dirichlet(1) per replicate, true labels from the priors, each label "
        "the truth with probability 1 - noise, else a draw from the priors; every annotator "
        "labels every item. --simulation uniform: labels and noise uniform over the categories.",
    )
    a.add_argument(
        "--simulation",
        choices=("dirichlet", "uniform"),
        default="dirichlet",
        help="the simulation model: the paper's Dirichlet(1) priors (default) or uniform labels",
    )
    a.add_argument("--categories", type=bounded_int(2, 1000), default=3, help="labels (default 3)")
    a.add_argument(
        "--annotators", type=bounded_int(3, 1000), default=5, help="human annotators (default 5)"
    )
    a.add_argument(
        "--annotator-noise",
        type=probability,
        default=0.3,
        help="chance a human's label is a random draw, not the truth (default 0.3)",
    )
    a.add_argument(
        "--llm-noise",
        type=probability,
        default=0.3,
        help="chance the LLM's label is a random draw, not the truth (default 0.3)",
    )
    a.add_argument(
        "--n",
        type=positive_int,
        action="append",
        metavar="N",
        help="number of items, repeatable (default 30 50 100 200 400)",
    )
    opt.add_alt_epsilon(
        a,
        "the Alt-Test's cost-benefit margin ε, repeatable (default 0.1 0.15 0.2, the paper's "
        "range)",
        action="append",
    )
    a.add_argument("--reps", type=positive_int, default=100, help="replicates per n (default 100)")
    a.add_argument("--q", type=probability, default=0.05, help="FDR level (default 0.05)")
    a.add_argument(
        "--min-items",
        type=positive_int,
        default=30,
        help="keep annotators with at least this many items (default 30)",
    )
    opt.add_seed(a, "the simulated sets")
    opt.add_out(a, "write alt_test_plan.md and alt_test_plan.json into this folder")
    opt.add_format(a)
    a.set_defaults(func=_cmd_alt_test_plan)


def _cmd_alt_test_plan(args: argparse.Namespace) -> int:
    from metajudge.runs.alt_test import run_alt_test_plan

    run = run_alt_test_plan(
        categories=args.categories,
        annotators=args.annotators,
        annotator_noise=args.annotator_noise,
        llm_noise=args.llm_noise,
        n_items=args.n,
        epsilons=args.epsilon,
        reps=args.reps,
        seed=args.seed,
        q=args.q,
        min_items=args.min_items,
        model=args.simulation,
        out=args.out,
    )
    _show(args, run)
    return 0
