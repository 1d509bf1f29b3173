"""``metajudge meta-eval`` (a named job) and ``metajudge report render`` (old spelling:
``metajudge report DIR``).

Only argparse is imported here; the library loads inside each command.
"""

from __future__ import annotations

import argparse
from typing import Any

from metajudge.cli.options import (
    add_browser_cap,
    add_dataset_args,
    add_engine,
    add_format,
    add_level,
    add_n_boot,
    add_out,
    add_paths_only,
    add_report_display,
    add_score_reading,
    add_scores,
    add_seed,
    add_tie_band,
    id_policy,
    notice,
    score_reading,
)

__all__ = ["add_dataset_args", "add_format", "protocol_options", "register"]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    q = subparsers.add_parser(
        "meta-eval",
        help="correlate metric scores with human labels: tables, CIs, significance, plots",
        description="Meta-evaluate metrics against a dataset's human labels and write "
        "result.json, table.md/.csv/.json/.tex and PNG plots into --out.",
    )
    add_dataset_args(q)
    q.add_argument("--subset", help="only this subset of the dataset (e.g. qtsumm)")
    q.add_argument(
        "--subsets",
        metavar="A,B,all",
        help="one run per subset ('all': the whole dataset) into OUT/<subset>/, then the paper "
        "table of them (OUT/paper_table.tex: one column group each, CIs, a mark against "
        "--compare-to)",
    )
    q.add_argument(
        "--levels",
        metavar="L1,L2",
        help="one run per level (e.g. item,system) into OUT/<level>/ (with --subsets: "
        "OUT/<subset>/<level>/), then one paper table of every dimension (OUT/paper_table.tex: "
        "a column group per dimension, a sub-group per level)",
    )
    _score_args(q)
    _protocol_args(q)
    _run_args(q)
    q.set_defaults(func=_cmd_meta_eval)
    _register_report(subparsers)


def _score_args(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--metrics",
        help="comma-separated metric rows; registry metrics not found in the score files are "
        "computed and cached in OUT/scores.jsonl (default: every metric in the score files)",
    )
    add_scores(q)
    add_score_reading(q)


def _protocol_args(q: argparse.ArgumentParser) -> None:
    from metajudge.cli.types import positive_int

    q.add_argument(
        "--protocol",
        choices=("pairwise-difference", "pointwise"),
        default=None,
        help="what is correlated: metric differences of two responses vs the human preference "
        "(RAGChecker, MT-RAIG) or each response's score vs its human score (G-Eval); default: "
        "chosen from the data, pairwise-difference for pairwise records, pointwise for "
        "per-response (Likert) labels (printed on stderr)",
    )
    add_level(q, None, " (default global; the last two need the pointwise protocol)")
    q.add_argument(
        "--normalize",
        choices=("minmax", "sign", "raw"),
        default=None,
        help="difference normalisation (default minmax = RAGChecker's)",
    )
    q.add_argument(
        "--aggregation",
        choices=("per_annotator", "mean", "median", "majority", "mode-else-mean"),
        default="per_annotator",
        help="how the annotators' labels of a response (or pair) are correlated: one row per "
        "annotator label (per_annotator, the default), or one label per response: their mean, "
        "median, majority (a tie between the most frequent labels: their median) or "
        "mode-else-mean (the label most annotators agree on, else the mean). Stated in every "
        "header, signature and caption",
    )
    add_tie_band(q)
    q.add_argument(
        "--learn-tie-band",
        dest="learn_epsilon",
        action="store_true",
        help="learn the tie band by k-fold CV (needs --normalize sign)",
    )
    q.add_argument(
        "--cv-folds", type=positive_int, default=5, help="folds of --learn-tie-band (default 5)"
    )
    q.add_argument(
        "--missing",
        choices=("drop", "median", "error"),
        help="a missing metric score: drop the pair (or response), impute the median, or stop "
        "(default: median for pairwise differences under minmax, as RAGChecker; drop "
        "otherwise, pointwise included, as metric papers do). The count is printed",
    )
    add_n_boot(q)
    q.add_argument(
        "--small-n",
        type=positive_int,
        metavar="N",
        help="on at most this many independent units a CI is Fisher z, Student t or Wilson, not "
        "the percentile bootstrap; none below 5 (default 20, Protocol.small_n; the method is "
        "named per value)",
    )
    add_seed(q)
    add_engine(q)
    _control_args(q)
    _compare_args(q)
    q.add_argument(
        "--no-baselines",
        action="store_true",
        help="leave out the trivial baseline rows (response length in words, a seeded random "
        "score) that every table carries by default",
    )


def _compare_args(q: argparse.ArgumentParser) -> None:
    """The metric-vs-metric tests: which are made, Williams' sidedness, the paper table's marks."""
    from metajudge.cli.types import positive_int

    q.add_argument(
        "--no-compare", action="store_true", help="skip metric-vs-metric significance tests"
    )
    q.add_argument(
        "--compare-to",
        metavar="METRIC",
        help="test every metric against this one only (m - 1 tests per dimension and statistic, "
        "no cap) instead of every pair",
    )
    q.add_argument(
        "--williams",
        choices=("two-sided", "one-sided"),
        default="two-sided",
        help="Williams' test p-values: two-sided (default) or one-sided in the direction of the "
        "observed difference (as FRANK reports); stated with the comparisons",
    )
    add_paper_args(q)
    q.add_argument(
        "--max-compare",
        type=positive_int,
        metavar="N",
        help="test every pair of metrics up to N metrics (default 12, Protocol.max_compare); "
        "above it the run says so and tests none (or use --compare-to)",
    )


def _control_args(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--control",
        metavar="FIELD",
        help="partial correlation controlling for FIELD ('system', 'id' or a meta field; "
        "categorical one-hot, numeric linear), as FRANK: pointwise protocol, level global",
    )
    q.add_argument(
        "--control-spearman",
        choices=("residuals", "ranks"),
        default="residuals",
        help="Spearman under --control: of the residuals (FRANK's evaluate.py, default) or "
        "rank-based partial Spearman (residuals of the ranks, as pingouin)",
    )


def _run_args(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--backbone",
        help="backbone of the LLM-judge metrics (default: $METAJUDGE_BACKBONE or smollm2-135m)",
    )
    q.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    q.add_argument(
        "--rescore",
        action="store_true",
        help="recompute registry metrics even when OUT/scores.jsonl covers them "
        "(rows whose signature still matches are reused)",
    )
    add_out(q, "run folder for scores.jsonl, result.json, tables and plots", required=True)
    add_paths_only(q)
    add_report_display(q)
    add_browser_cap(q)
    add_format(q, ("md", "csv", "json", "tex"))


def _register_report(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    g = subparsers.add_parser(
        "report", help="run folders: render a meta-eval, swap or decision folder again"
    )
    rsub = g.add_subparsers(dest="report_command", metavar="SUBCOMMAND")
    g.set_defaults(func=lambda args: (g.print_help(), 2)[1])
    r = rsub.add_parser(
        "render", help="re-render the tables and plots of a run folder (no recomputation)"
    )
    r.add_argument(
        "dir", nargs="+", help="run folder holding result.json (several only with --latex)"
    )
    r.add_argument(
        "--latex",
        action="store_true",
        help="print the paper table (LaTeX booktabs) of the run folders, one column group per "
        "folder (its subset): values with CIs, a mark where a metric differs from --compare-to",
    )
    r.add_argument(
        "--compare-to",
        metavar="METRIC",
        help="--latex: mark each metric significantly better (dagger) or worse (double "
        "dagger) than METRIC (the runs' paired-bootstrap comparisons, Holm-adjusted within each "
        "dimension and statistic, p < 0.05)",
    )
    add_paper_args(r)
    r.add_argument(
        "--dimension", help="--latex: the one human dimension shown (default: every dimension)"
    )
    r.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    add_report_display(r, recorded=True)
    add_browser_cap(r)
    add_format(r, ("md", "csv", "json", "tex", "html"))
    r.set_defaults(func=_cmd_report)


def add_paper_args(p: argparse.ArgumentParser) -> None:
    """The paper table's layout, one ``--table`` spec (``meta-eval --subsets/--levels``,
    ``report render --latex``)."""
    from metajudge.cli.types import table_spec_option

    p.add_argument(
        "--table",
        type=table_spec_option,
        default={},
        metavar="SPEC",
        help="the paper table (--subsets, --levels, --latex), comma-separated KEY=VALUE: "
        "ci=ci|pm|none (value [lo, hi], default; value ± half the CI; the value alone), "
        "decimals=N (of every value and CI, default 2), mark=best (bold for the best metric "
        "of each column and every metric not significantly worse than it: paired bootstrap, "
        "Holm within each dimension and statistic, p < 0.05), names=FILE (the rows, in order: "
        "a JSON object or one COLUMN<TAB>NAME per line; default every metric under its column)",
    )


def protocol_options(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`~metajudge.analyses.metric_vs_human.protocol.Protocol` fields of a ``meta-eval``
    command line; without ``--protocol`` no ``correlate``: the run chooses it from the data's
    kind (:func:`~metajudge.analyses.metric_vs_human.protocol.correlate_for`)."""
    return {
        **({} if args.protocol is None else {"correlate": args.protocol}),
        "level": args.level or "global",
        "normalize": args.normalize or "minmax",
        "aggregation": args.aggregation,
        "epsilon": args.epsilon,
        "learn_epsilon": args.learn_epsilon,
        "cv_folds": args.cv_folds,
        "n_boot": args.n_boot,
        "seed": args.seed,
        "engine": args.engine,
        "compare": not args.no_compare,
        "missing": args.missing,
        **({} if args.small_n is None else {"small_n": args.small_n}),
        "control": args.control,
        "control_spearman": args.control_spearman,
        "compare_to": args.compare_to,
        "williams": args.williams,
        **({} if args.max_compare is None else {"max_compare": args.max_compare}),
    }


def _cmd_meta_eval(args: argparse.Namespace) -> int:
    from metajudge.cli.backends import cli_backbone
    from metajudge.cli.source import data_source
    from metajudge.io import check_out_dir
    from metajudge.runs.meta_eval import MetaEvalResult, Protocol, run_meta_eval
    from metajudge.runs.report import render_table
    from metajudge.scores.spec import input_paths

    src = data_source(args, id_policy(args))
    check_out_dir(args.out, inputs=input_paths(src))  # before any work
    from metajudge.reports import tables
    from metajudge.reports.published import read_published_file
    from metajudge.reports.sections import aggregation_note

    if args.published:
        read_published_file(args.published)  # a bad file stops before any work (exit 2)

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    if args.subsets or args.levels:
        return _cmd_subsets(args, src, metrics)
    res, written = run_meta_eval(
        src,
        out_dir=args.out,
        metrics=metrics,
        plots=not args.no_plots,
        progress=not (args.quiet or args.paths_only) and args.format != "json",  # on a terminal
        rescore=args.rescore,
        backbone=cli_backbone(args.backbone),
        asked=_asked(args),
        baselines=not args.no_baselines,
        report={
            "published": args.published,
            "percent": args.percent,
            **({} if args.browser_cap is None else {"browser_cap": args.browser_cap}),
        },
        reading=score_reading(args),
        protocol=Protocol.from_options(protocol_options(args)),
    )
    if not isinstance(res, MetaEvalResult):  # a categorical run
        if args.published or args.percent:
            import sys

            print(
                "metajudge: warning: a categorical run ignores --published/--percent",
                file=sys.stderr,
            )
        return _print_categorical(args, res.to_dict(), written)
    note = aggregation_note(res.data)
    if note and not args.paths_only:
        import sys

        print(note, file=sys.stdout if args.format == "md" else sys.stderr)
    if not args.paths_only and args.format == "md":
        print(tables.protocol_line(res))
        print()
        print(tables.summary_table(res))
    elif not args.paths_only:
        print(render_table(res, args.format))
    for p in written.values():
        notice(args.format, str(p))
    return 0


def _run_kwargs(args: argparse.Namespace, metrics: list[str] | None) -> dict[str, Any]:
    """The :func:`~metajudge.runs.meta_eval.run_meta_eval` options of a ``meta-eval`` line,
    but its data source and folder."""
    from metajudge.cli.backends import cli_backbone
    from metajudge.runs.meta_eval import Protocol

    return {
        "metrics": metrics,
        "plots": not args.no_plots,
        "progress": not (args.quiet or args.paths_only) and args.format != "json",
        "rescore": args.rescore,
        "backbone": cli_backbone(args.backbone),
        "asked": _asked(args),
        "baselines": not args.no_baselines,
        "report": {"published": args.published, "percent": args.percent},
        "protocol": Protocol.from_options(protocol_options(args)),
    }


def _paper_options(args: argparse.Namespace) -> dict[str, Any]:
    """The paper table's options of a command line (:func:`metajudge.runs.report.paper_of`)."""
    return {"reference": args.compare_to, **args.table}


def _cmd_subsets(args: argparse.Namespace, src: Any, metrics: list[str] | None) -> int:
    """``--subsets A,B,all`` and / or ``--levels L1,L2``: one run of ``src`` each into
    OUT/<subset>/, OUT/<level>/ or OUT/<subset>/<level>/, then OUT/paper_table.tex."""
    import sys

    from metajudge.runs.meta_eval import run_subsets

    if args.subset and args.subsets:
        print("metajudge: error: --subset and --subsets exclude each other", file=sys.stderr)
        return 2
    names = [n.strip() for n in (args.subsets or "").split(",") if n.strip()] or None
    levels = [n.strip() for n in (args.levels or "").split(",") if n.strip()] or None
    kw = _run_kwargs(args, metrics) | {"levels": levels, "table": _paper_options(args)}
    tex, written = run_subsets(src, names, out_dir=args.out, **kw)
    if not args.paths_only:
        print(tex, end="")
    for p in written:
        notice(args.format, str(p))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    """Re-render a run folder in place (:func:`metajudge.runs.report.run_report`), or print the
    paper table of several (``--latex``)."""
    import sys

    from metajudge.runs.report import paper_latex, run_report

    if args.latex:
        print(
            paper_latex(args.dir, dimension=args.dimension, **_paper_options(args)),
            end="",
        )
        return 0
    if len(args.dir) > 1:
        print("metajudge: error: several run folders need --latex", file=sys.stderr)
        return 2
    run = run_report(
        args.dir[0],
        fmt=args.format,
        plots=not args.no_plots,
        browser_cap=args.browser_cap,
        published=getattr(args, "published", None),
        percent=getattr(args, "percent", None),
    )
    for line in run.notes:
        notice(args.format, line)
    for line in run.warnings:
        print(line, file=sys.stderr)
    print(run.text)
    for p in run.written.values():
        notice(args.format, str(p))
    return 0


def _asked(args: argparse.Namespace) -> list[str]:
    """Flags given explicitly that a categorical dataset refuses (even at their default)."""
    out = ["--protocol pairwise-difference"] if args.protocol == "pairwise-difference" else []
    return out + (["--normalize"] if args.normalize is not None else [])


def _print_categorical(args: argparse.Namespace, data: dict[str, Any], written: Any) -> int:
    from metajudge.reports.categorical_report import RENDER

    if not getattr(args, "paths_only", False):
        print(RENDER.get(args.format, RENDER["md"])(data))
    for p in written.values():
        notice(args.format, str(p))
    return 0
