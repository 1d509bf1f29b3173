"""``metajudge calibrate estimate`` and ``calibrate plan``: few labels, many judgments.

``estimate``: each system's mean quality on the label scale from a judge's scores on every
response and labels on some (cross-fitted isotonic calibration, residual-debiased, CIs with the
calibration's uncertainty, clustered by prompt), paired differences with Holm, the score-support
and transport gates (:mod:`metajudge.runs.calibrate_estimate`). ``plan``: how many labels a
target CI half-width needs, and which items to label next.

:func:`add_parsers` adds both to the ``calibrate`` group's subparsers. Only argparse is imported
here; the library loads inside each command.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from metajudge.cli.grammar import label_help
from metajudge.cli.options import (
    add_alpha,
    add_format,
    add_log_to_mlflow,
    add_out,
    add_scores,
    add_seed,
    id_policy,
    warn_dropped,
)
from metajudge.cli.types import positive_int

ESTIMATE_DESCRIPTION = (
    "Judge scores on every response, human labels on some: per system, the mean quality on the "
    "label scale. A cross-fitted isotonic map from judge score to label (fitted on every "
    "labelled row, by prompt cluster), debiased with the labelled residuals (AIPW/PPI style); "
    "CIs add the calibration's jackknife variance to the prompt-clustered sampling variance. A "
    "system without labels of its own borrows the calibration (said in the output). Gates: the "
    "share of a system's judge scores outside the labelled range (at or above "
    "--support-threshold the level claim is refused, the ranking kept) and, with --probes, a "
    "transport audit of the calibration on held-out labelled probes (PASS / FAIL / "
    "INCONCLUSIVE at --transport-margin; fewer than 20 clusters never PASS). Input: a CJE fresh-draw "
    "folder (--input DIR of <system>_responses.jsonl with prompt_id, judge_score, optional "
    "oracle_label), a Parquet judge-score table with those columns and system (--input FILE or "
    "DIR of partitions; above 2,000,000 rows summed in a streaming scan, without paired "
    "differences), or a dataset whose labels may cover only some records (--input FILE or "
    "--dataset, with --scores naming one judge column). --method ppi / rogan-gladen: PPI++ or the "
    "Rogan-Gladen correction with --n-labelled human labels drawn at random from a fully "
    "labelled dataset and the judge on the rest."
)


def _add_source(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument(
        "--input",
        metavar="PATH",
        help="a CJE fresh-draw folder (<system>_responses.jsonl), a Parquet judge-score table "
        "(a file or a folder of partitions: system, prompt_id, judge_score, oracle_label), or a "
        "canonical dataset file (with --scores; records without labels are the unlabelled ones)",
    )
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (with --scores)")
    add_scores(
        p, help="with a dataset: the judge column (one), e.g. FILE:COLUMN or shipped:BACKBONE"
    )
    p.add_argument("--dimension", help="the human dimension (default: the dataset's only one)")
    p.add_argument(
        "--cluster-field",
        metavar="FIELD",
        help="the field whose equal values form one cluster (default: prompt_id in a CJE "
        "folder, the record id in a dataset; a dotted record field such as meta.item_id)",
    )


def add_parsers(sub: Any) -> None:
    """Add ``estimate`` (and ``plan``) to the ``calibrate`` group's subparsers."""
    e = sub.add_parser(
        "estimate",
        help="each system's calibrated mean quality from judge scores on all items and labels "
        "on some, with CIs, paired differences and the support / transport gates",
        description=ESTIMATE_DESCRIPTION,
    )
    _add_source(e)
    e.add_argument(
        "--method",
        choices=("aipw", "ppi", "rogan-gladen"),
        default="aipw",
        help="aipw (default): the calibrated, residual-debiased estimate above, on the labels "
        "the data has; ppi: PPI++ (power-tuned λ, Angelopoulos et al. 2023) and rogan-gladen: "
        "the judge's pass rate corrected by its TPR/TNR (0/1 labels and verdicts), each on "
        "--n-labelled units drawn from a fully labelled dataset, beside the human-only and "
        "judge-only estimates and the full-data human mean",
    )
    e.add_argument(
        "--probes",
        metavar="DIR",
        help="a CJE probe folder (<system>_probe.jsonl, every row labelled, held out from the "
        "calibration): one transport audit per system",
    )
    e.add_argument(
        "--plan",
        metavar="PATH",
        help="the label plan the new labels were collected by: a `calibrate plan --out DIR` "
        "run folder (its selection.csv) or that CSV: its "
        "selected candidates are weighted by 1/probability, so that an active (unequal) "
        "selection keeps the estimate unbiased",
    )
    e.add_argument(
        "--transport-margin",
        dest="margin",
        type=float,
        default=0.05,
        metavar="M",
        help="transport audit: the largest tolerated mean residual, on the label scale "
        "(default 0.05)",
    )
    e.add_argument(
        "--support-threshold",
        type=float,
        default=0.05,
        metavar="S",
        help="score-support gate: the share of a system's judge scores outside the labelled "
        "range at or above which its level claim is refused (default 0.05)",
    )
    e.add_argument(
        "--folds",
        type=positive_int,
        default=40,
        help="cross-fitting folds, also the jackknife's groups (default 40; at most half the "
        "labelled clusters)",
    )
    add_out(
        e,
        "also write a run folder: result.json, estimate.md and report.html (the forest "
        "plot of the systems, the gates, the differences, the audits); --method ppi / "
        "rogan-gladen: ppi.md and ppi.json",
    )
    add_alpha(e, "the two-sided (1 - A) confidence intervals and the tests")
    add_seed(e, "the folds, the bootstrap and the label draw")
    add_format(e)
    _add_draw(e)
    e.set_defaults(func=_cmd_estimate)
    _add_plan(sub)


#: ``calibrate estimate``'s options of ``--method ppi|rogan-gladen`` only (the label draw)
DRAW_OPTIONS = ("metric", "backbones", "subset", "limit", "first", "n_labelled")
DRAW_OPTIONS += ("labelled_fraction", "estimate_system", "critical", "epsilon")


def _add_draw(e: argparse.ArgumentParser) -> None:
    """``--method`` and the options of ``ppi`` / ``rogan-gladen`` (labels drawn at random from a
    fully labelled dataset, :mod:`metajudge.runs.estimate_draw`)."""
    from metajudge.cli.options import add_limit, add_n_boot, add_tie_band, csv_list
    from metajudge.cli.types import probability

    g = e.add_argument_group("--method ppi | rogan-gladen")
    g.add_argument(
        "--metric",
        help="the judge metric (its dimension is the default; with --backbones, the judge run)",
    )
    g.add_argument(
        "--backbones",
        type=csv_list,
        default=[],
        metavar="NAMES",
        help="run the judge --metric under this backbone instead of --scores",
    )
    g.add_argument("--subset", help="only this subset of the dataset (e.g. qtsumm)")
    add_limit(g)
    d = g.add_mutually_exclusive_group()
    d.add_argument(
        "--n-labelled", type=positive_int, metavar="N", help="draw N human-labelled units (--seed)"
    )
    d.add_argument(
        "--labelled-fraction",
        type=probability,
        metavar="F",
        help="draw this share of the labelled units (--seed)",
    )
    g.add_argument(
        "--estimate-system",
        metavar="SYSTEM",
        help="Likert data: estimate this system's mean score only",
    )
    g.add_argument(
        "--critical",
        choices=("t", "z"),
        help="critical value of the PPI++/human-only CI: Student t, n-1 df (default), or normal "
        "(ppi_py)",
    )
    add_tie_band(g, "pairwise decisions")
    add_n_boot(e, None, " of the Rogan-Gladen interval (aipw: 2000 unless given)")


def _add_plan(sub: Any) -> None:
    p = sub.add_parser(
        "plan",
        help=label_help(
            "calibrate plan",
            "the labels a target CI half-width needs, and which items to label next (active "
            "selection)",
        ),
        description="From a pilot (judge scores on every response, labels on some): per "
        "system, the labels a --half-width needs (calibrated, and with labels only); with "
        "--budget, sampling probabilities for the unlabelled rows (each system topped up to its "
        "share of the labels; within a system by the judge's uncertainty where that pays: Zrnic "
        "& Candès 2024, active statistical inference; a draw spread along the judge score, or "
        "uniform selection where the pilot predicts no 3% gain), written into the run folder "
        "--out as selection.csv (item ids, probabilities and a seeded selection; `calibrate "
        "estimate --plan DIR` reads it); weight each new label by 1/probability.",
    )
    _add_source(p)
    p.add_argument(
        "--half-width", type=float, metavar="H", help="target CI half-width on the label scale"
    )
    p.add_argument("--budget", type=float, metavar="N", help="labels to collect next")
    p.add_argument(
        "--mix",
        type=float,
        default=None,
        help="share of the uniform rule mixed into the active probabilities; given, the active "
        "rule is used as it says (default 0.2 where the judge's uncertainty pays within systems, "
        "else alike, and uniform selection where the pilot predicts that the plan narrows the CI "
        "by less than 3%% against uniform labelling)",
    )
    p.add_argument(
        "--folds",
        type=positive_int,
        default=40,
        help="cross-fitting folds, also the jackknife's groups (default 40)",
    )
    add_out(
        p, "write a run folder: result.json, plan.md, report.html and (with --budget) selection.csv"
    )
    add_alpha(p, "the intervals")
    add_seed(p, "the folds and the selection draw")
    add_format(p)
    add_log_to_mlflow(
        p, "tag the traces the plan selects (metajudge.label_plan = selected, with --budget)"
    )
    p.set_defaults(func=_cmd_plan)


def _source(args: argparse.Namespace, ids: Any) -> Any:
    """The :class:`~metajudge.data.source.DataSource` of the command's options (its
    ``--subset`` is a label draw's, :func:`_draw`)."""
    from metajudge.cli.source import data_source

    return data_source(args, ids, subset=None)


def _print(args: argparse.Namespace, run: Any) -> int:
    from metajudge.cli.output import print_text

    drawn = isinstance(run.result, dict)  # --method ppi|rogan-gladen: a JSON-ready dict
    for w in run.result.get("warnings") or () if drawn else ():
        print(f"warning: {w}", file=sys.stderr)
    left = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in run.dropped.items() if v)
    if left:
        print(f"metajudge: left out {left}", file=sys.stderr)
    for note in run.notes:
        print(f"note: {note}", file=sys.stderr)
    for what, path in run.wrote:
        print(f"wrote {what} to {path}", file=sys.stderr)
    if args.format != "json":
        print_text(run.markdown)
    elif drawn:
        from metajudge.cli.output import print_json

        print_json(run.result, indent=1, default=str)
    else:
        print_text(run.result.to_json() + "\n")
    return 0


def _draw(args: argparse.Namespace) -> Any:
    """The :class:`~metajudge.runs.estimate_draw.LabelDraw` of ``--method ppi|rogan-gladen``;
    None with ``aipw``, which refuses the draw's options."""
    from metajudge.errors import InputError
    from metajudge.runs.estimate_draw import LabelDraw

    if args.method == "aipw":
        for name in DRAW_OPTIONS:
            if getattr(args, name) not in (None, [], 0.0):
                flag = "--tie-band" if name == "epsilon" else "--" + name.replace("_", "-")
                raise InputError(f"{flag} goes with --method ppi or rogan-gladen", field=flag)
        return None
    return LabelDraw(
        metric=args.metric,
        backbones=args.backbones,
        subset=args.subset,
        limit=args.limit,
        first=args.first,
        n_labelled=args.n_labelled,
        labelled_fraction=args.labelled_fraction,
        system=args.estimate_system,
        critical=args.critical or "t",
        tie_band=args.epsilon,
    )


def _cmd_estimate(args: argparse.Namespace) -> int:
    from metajudge.runs.calibrate_estimate import run_estimate

    ids = id_policy(args)
    draw = _draw(args)
    n_boot = args.n_boot or (2000 if draw is None else 1000)
    run = run_estimate(
        _source(args, ids),
        method=args.method,
        probes=args.probes,
        plan=args.plan,
        draw=draw,
        n_boot=n_boot,
        alpha=args.alpha,
        margin=args.margin,
        support_threshold=args.support_threshold,
        seed=args.seed,
        folds=args.folds,
        out=args.out,
    )
    warn_dropped(ids)
    return _print(args, run)


def _cmd_plan(args: argparse.Namespace) -> int:
    from metajudge.runs.calibrate_estimate import run_plan
    from metajudge.runs.mlflow_log import check_source, tag_plan

    if args.log_to_mlflow:
        check_source(args.input)
    ids = id_policy(args)
    run = run_plan(
        _source(args, ids),
        half_width=args.half_width,
        budget=args.budget,
        mix=args.mix,
        alpha=args.alpha,
        seed=args.seed,
        folds=args.folds,
        out=args.out,
    )
    warn_dropped(ids)
    rc = _print(args, run)
    if args.log_to_mlflow:
        n = tag_plan(args.input, args.out, args.tracking_uri)
        print(f"tagged {n} traces for labelling in MLflow (metajudge.label_plan)", file=sys.stderr)
    return rc
