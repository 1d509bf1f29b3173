"""CLI: ``judge swap`` — one judge metric under two or more backbones, and with ``--x/--y`` the
decision whether backbone Y may replace X —
and the options of ``judge diagnostics`` (:func:`add_diagnostics`). :mod:`metajudge.cli.judge`
registers both into its group.

Only argparse is imported here; the library loads inside each command.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from metajudge.cli import options as opt
from metajudge.cli.options import csv_list as _csv
from metajudge.cli.types import nonneg_float, positive_int

#: Options of the all-pairs report only, and of the X-against-Y decision only.
_REPORT_ONLY = ("dimension", "human_protocol", "no_plots")
_DECISION_ONLY = ("margin", "alpha", "ppi_labelled")


def add_swap(jsub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``metajudge judge swap`` (added to the ``judge`` group by :mod:`metajudge.cli.judge`)."""
    p = jsub.add_parser(
        "swap",
        help="one judge metric under two or more backbones: agreement, κ, α, human "
        "correlations, significance; with --x/--y, can backbone Y replace X (non-inferiority)",
        description="Backbone-swap agreement (MT-RAIG Appendix C.1 / Table 8): Pearson/Spearman "
        "between backbones with bootstrap CIs, Cohen's κ and flip rate on pairwise decisions, "
        "Krippendorff's α, each backbone's human correlation with CIs and paired tests of the "
        "differences, and a verdict per backbone pair. With --x and --y the command answers "
        "the decision instead: can Y replace X on agreement with the humans, non-inferiority "
        "at --margin, with Cochran's Q, the equivalence test and Kendall τ_b between X and Y "
        "(decision.md, decision.json, decision.png).",
    )
    opt.add_judge_scores(p)
    p.add_argument(
        "--dimension", help="human dimension to correlate with (default: from the metric name)"
    )
    p.add_argument(
        "--human-protocol",
        choices=["grouped", "pooled", "pairs"],
        help="grouped (per-input Pearson averaged; LFTQA-Eval), pooled, or pairs (pairwise "
        "data); default by data kind",
    )
    opt.add_tie_band(p, "pairwise decisions, in score units")
    p.add_argument("--x", help="the incumbent backbone (with --y: the decision)")
    p.add_argument("--y", help="the candidate backbone (with --x: the decision)")
    opt.add_margin(p, " (with --x/--y)")
    opt.add_alpha(p, "the one-sided non-inferiority test (with --x/--y)", default=None)
    p.add_argument(
        "--ppi-labelled",
        type=positive_int,
        metavar="N",
        help="with --x/--y, add the PPI section: PPI++ estimate with Y as the judge and N random "
        "human labels",
    )
    opt.add_n_boot(p)
    opt.add_seed(p, "the --limit draw, the bootstrap and the judges")
    opt.add_out(
        p,
        "write swap.md, swap.json, plots and report.html into this folder (with --x/--y: "
        "decision.md, decision.json, decision.png and report.html)",
    )
    opt.add_format(p)
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.set_defaults(func=_cmd_swap)


def _decision(args: argparse.Namespace) -> bool:
    """Whether ``judge swap`` answers the X-against-Y decision; refuses an option that does not
    apply to what it answers (nothing is ignored silently)."""
    from metajudge.errors import InputError

    if (args.x is None) != (args.y is None):
        raise InputError("give both --x and --y (the decision), or neither", field="--x")
    decision = args.x is not None
    unused = _REPORT_ONLY if decision else _DECISION_ONLY
    given = [k for k in unused if getattr(args, k) not in (None, False)]
    if given:
        names = ", ".join("--" + k.replace("_", "-") for k in given)
        when = "with --x/--y (the decision)" if decision else "without --x/--y"
        raise InputError(f"{names} does not apply {when}", field="--" + given[0].replace("_", "-"))
    return decision


def add_diagnostics(jsub: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    """``metajudge judge diagnostics`` (added to the ``judge`` group by :mod:`metajudge.cli.judge`)."""
    d = jsub.add_parser(
        "diagnostics",
        help="pairwise judge per backbone: position bias, length bias, run-to-run variance, parse failures, cost",
        description="Judges every pair in both orders (A/B and B/A) with the pairwise judge prompt under each "
        "backbone and reports the consistency rate, P(first wins), P(prefers longer) vs the humans' rate, "
        "accuracy vs humans under a named tie policy, parse failures, tokens, wall time and cost; optional "
        "repeated sampled runs for run-to-run variance.",
    )
    _register_diagnostics(d)
    return d


def _register_diagnostics(d: argparse.ArgumentParser) -> None:
    opt.add_dataset_args(d)
    d.add_argument(
        "--backbones",
        type=_csv,
        required=True,
        metavar="NAMES",
        help="backbone configs, e.g. smollm2-135m",
    )
    d.add_argument(
        "--metric",
        default="pairwise_judge",
        metavar="NAME",
        help="the pairwise judge: pairwise_judge (default) or judge:PATH, a pairwise judge "
        "defined in a file (an AlpacaEval configs.yaml too)",
    )
    opt.add_limit(d, "pairs", default=100)
    d.add_argument("--dimension", help="label dimension (default: the card's first)")
    d.add_argument(
        "--tie-policy",
        default="exclude_human_ties",
        choices=["exclude_human_ties", "three_way", "half_credit"],
        help="how ties count in accuracy (default exclude_human_ties)",
    )
    d.add_argument(
        "--runs",
        type=positive_int,
        default=1,
        help="extra sampled runs with different seeds for run-to-run variance (default 1 = none)",
    )
    d.add_argument(
        "--temperature",
        type=nonneg_float,
        default=0.7,
        help="temperature of the repeated runs (default 0.7)",
    )
    d.add_argument(
        "--confidence",
        default="none",
        choices=["none", "logprobs", "samples"],
        help="keep the judge's confidence as data: p(A / B / tie) from the verdict token's "
        "log-probabilities (logprobs), or the shares of 5 verdicts sampled at --temperature "
        "(samples); with --out written as score rows to confidence.jsonl, a confidence column "
        "for calibrate selective / conformal --scores (default none)",
    )
    opt.add_seed(d, "the --limit draw and the repeated runs")
    opt.add_out(d, "write diagnostics.md, diagnostics.json (and confidence.jsonl) into this folder")
    opt.add_format(d)
    d.set_defaults(func=_cmd_diag)


def _emit(
    args: argparse.Namespace,
    res: Any,
    markdown: Callable[[Any], str],
    write: Callable[[Any, str], dict[str, Any]],
    **html: Any,
) -> int:
    """Print the result (``--format``); with ``--out``, write its report files and report.html."""
    print(res.to_json() if args.format == "json" else markdown(res))
    if args.out:
        from metajudge.reports.html_run import write_html_report
        from metajudge.run_folder import run_folder

        with run_folder(args.out) as rf:  # written as a set (old files kept until the swap)
            paths = write(res, rf.stage)
            paths["html"] = write_html_report(
                rf.stage, input_file=args.input, data_dir=args.data_dir, **html
            )
        opt.notice(args.format, "wrote " + ", ".join(str(rf.final(p)) for p in paths.values()))
    return 0


def _cmd_swap(args: argparse.Namespace) -> int:
    from metajudge.io import check_out_dir

    if _decision(args):
        from metajudge.cli.decide import cmd_swap_decision

        args.margin = 0.05 if args.margin is None else args.margin
        args.alpha = 0.05 if args.alpha is None else args.alpha
        return cmd_swap_decision(args)
    from metajudge.run_folder import maybe_locked
    from metajudge.scores.spec import spec_paths

    if args.out:
        check_out_dir(args.out, inputs=[args.input, *spec_paths(args.scores)])
    with maybe_locked(args.out):  # one run at a time per --out
        return _swap_locked(args)


def _swap_locked(args: argparse.Namespace) -> int:
    from metajudge.reports.swap_report import swap_markdown, write_swap_report
    from metajudge.runs.backbone_swap import run_backbone_swap

    res = run_backbone_swap(
        args.dataset,
        args.metric,
        input_file=args.input,
        scores=args.scores,
        backbones=args.backbones,
        subset=args.subset,
        **opt.limit_kw(args),
        dimension=args.dimension,
        n_boot=args.n_boot,
        seed=args.seed,
        eps=args.epsilon,
        human_protocol=args.human_protocol,
        data_dir=args.data_dir,
        out_dir=args.out,
    )
    return _emit(
        args,
        res,
        swap_markdown,
        lambda r, out: write_swap_report(r, out, plots=not args.no_plots),
        external=args.scores,
    )


def _cmd_diag(args: argparse.Namespace) -> int:
    from metajudge.io import check_out_dir
    from metajudge.run_folder import maybe_locked

    if args.out:
        check_out_dir(args.out, inputs=[args.input])
    with maybe_locked(args.out):  # one run at a time per --out
        return _diag_locked(args)


def _diag_locked(args: argparse.Namespace) -> int:
    from metajudge.reports.swap_report import diagnostics_markdown, write_diagnostics_report
    from metajudge.runs.judge_diagnostics import run_judge_diagnostics

    diag = run_judge_diagnostics(
        args.dataset,
        args.backbones,
        input_file=args.input,
        **opt.limit_kw(args),
        dimension=args.dimension,
        tie_policy=args.tie_policy,
        runs=args.runs,
        temperature=args.temperature,
        seed=args.seed,
        data_dir=args.data_dir,
        judge_options=_confidence_options(args.confidence, args.temperature),
        metric=args.metric,
    )
    return _emit(args, diag, diagnostics_markdown, write_diagnostics_report)


def _confidence_options(confidence: str, temperature: float) -> dict[str, Any]:
    """The pairwise judge's options for ``--confidence`` (none: its defaults, signature unchanged;
    samples: 5 verdicts at ``temperature``)."""
    if confidence == "none":
        return {}
    if confidence == "samples":
        return {"confidence": "samples", "n_samples": 5, "temperature": temperature}
    return {"confidence": "logprobs"}
