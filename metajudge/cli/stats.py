"""``metajudge stats power|rank-clusters|kendall``: study sizing, WMT-style rank clusters,
the "Ties Matter" table.

Only argparse (and the argument validators) are imported here; the library loads inside the
commands.
"""

from __future__ import annotations

import argparse

from metajudge.cli.grammar import label_help
from metajudge.cli.options import (
    add_alpha,
    add_level,
    add_n_boot,
    add_n_perm,
    add_scores,
    add_seed,
    id_policy,
    notice,
    warn_dropped,
)
from metajudge.cli.types import positive_int, probability

METHODS = ("perm-both", "perm-sys", "perm-inp", "boot-both", "boot-sys", "boot-inp")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    g = subparsers.add_parser(
        "stats",
        help="statistics of a study: how many labels (power), rank clusters of metrics, "
        "Kendall variants with ties",
    )
    ssub = g.add_subparsers(dest="stats_command", metavar="SUBCOMMAND")
    g.set_defaults(func=lambda args: (g.print_help(), 2)[1])
    _register_power(ssub)
    _register_clusters(ssub)
    _register_kendall(ssub)


def _register_power(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    q = subparsers.add_parser(
        "power",
        help=label_help(
            "stats power",
            "items to detect a correlation, or that two metrics' correlations differ (Fisher z)",
        ),
        description="Sample size of a human study (Fisher z). With --r: items to detect a "
        "correlation r (two-sided). With --r1 and --r2: items to detect that two metrics' "
        "correlations with the same humans differ (Steiger 1980); this needs the metrics' "
        "correlation with each other: --r12, or two metrics' scores (--dataset/--input, "
        "--scores, --metrics A,B) to estimate it from. r12 = 0 is not 'two independent samples' "
        "and overstates n when the metrics correlate (0.5 vs 0.3: 296 items at r12 = 0, 127 at "
        "0.6).",
    )
    q.add_argument("--r", type=float, help="the correlation to detect")
    q.add_argument("--r1", type=float, help="metric 1's correlation with the humans")
    q.add_argument("--r2", type=float, help="metric 2's correlation with the humans")
    q.add_argument(
        "--r12",
        type=float,
        help="the metrics' correlation with each other (no default: give it, or their scores)",
    )
    g = q.add_mutually_exclusive_group()
    g.add_argument("--dataset", metavar="NAME", help="estimate r12 on this dataset's responses")
    g.add_argument("--input", metavar="FILE", help="estimate r12 on this canonical JSONL file")
    q.add_argument("--subset", help="only this subset of the dataset")
    add_scores(q)
    q.add_argument("--metrics", help="the two metrics whose scores give r12: A,B")
    add_alpha(q, "the two-sided test")
    q.add_argument("--power", type=probability, default=0.8, help="power (default 0.8)")
    q.set_defaults(func=_cmd_power)


def _source(args: argparse.Namespace, ids: object) -> object:
    """The :class:`~metajudge.runs.stats_commands.ScoreSource` of the command's options."""
    from metajudge.runs.stats_commands import ScoreSource

    metrics = args.metrics.split(",") if args.metrics else None
    return ScoreSource(
        dataset=args.dataset,
        input_file=args.input,
        subset=args.subset,
        data_dir=args.data_dir,
        scores=args.scores,
        metrics=metrics,
        dimension=getattr(args, "dimension", None),
        ids=ids,
    )


def _cmd_power(args: argparse.Namespace) -> int:
    from metajudge.runs.stats_commands import run_power

    ids = id_policy(args)
    res = run_power(
        r=args.r,
        r1=args.r1,
        r2=args.r2,
        r12=args.r12,
        alpha=args.alpha,
        power=args.power,
        src=_source(args, ids),  # type: ignore[arg-type]
        given_data=bool(args.dataset or args.input or args.scores or args.metrics),
    )
    warn_dropped(ids)
    print(res.sentence())
    if res.how:
        print(res.how)
    return 0


def _register_clusters(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    q = subparsers.add_parser(
        "rank-clusters",
        help="WMT-style rank clusters of metrics at a level, from pairwise Perm/Boot tests",
        description="Orders metrics by their correlation with the humans at --level and groups "
        "them into clusters not significantly different (greedy, as mt-metrics-eval), with "
        "Perm-Both (default) or another resampling test of Deutsch, Dror & Roth (2021) for every "
        "pair and Holm over all pairs. Scores: the dataset's shipped columns (--scores shipped) "
        "and/or score files (--scores FILE, e.g. a meta-eval run folder's scores.jsonl).",
    )
    _add_score_source(q)
    add_level(q, "system")
    q.add_argument(
        "--statistic",
        choices=("pearson", "spearman", "kendall"),
        default="pearson",
        help="correlation with the humans (default pearson)",
    )
    q.add_argument(
        "--method",
        choices=METHODS,
        default="perm-both",
        help="pairwise test: permutation (perm-*) or bootstrap (boot-*), resampling systems and "
        "inputs together (both), systems (sys) or inputs (inp); default perm-both",
    )
    add_n_perm(q, None, " of a perm-* --method")
    add_n_boot(q, None, " of a boot-* --method")
    add_seed(q, "the resampling")
    add_alpha(q, "the pairwise tests after Holm")
    q.add_argument(
        "--format",
        choices=("md", "csv", "json", "tex"),
        default="md",
        help="what to print or write (default md)",
    )
    q.add_argument("-o", "--output", metavar="FILE", help="write the table here instead of stdout")
    q.add_argument("--plot", metavar="PNG", help="also write a bar plot coloured by cluster")
    q.set_defaults(func=_cmd_clusters)


def _cmd_clusters(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_text
    from metajudge.runs.stats_commands import run_rank_clusters

    n_resamples = _n_resamples(args)  # before any work
    ids = id_policy(args)
    text, plot = run_rank_clusters(
        _source(args, ids),  # type: ignore[arg-type]
        level=args.level,
        statistic=args.statistic,
        method=args.method,
        n_resamples=n_resamples,
        seed=args.seed,
        alpha=args.alpha,
        fmt=args.format,
        output=args.output,
        plot=args.plot,
    )
    warn_dropped(ids)
    if args.output:
        print(f"wrote {args.output}")
    else:
        print_text(text)
    if plot is not None:
        notice(args.format if not args.output else None, f"wrote {plot}")
    return 0


def _n_resamples(args: argparse.Namespace) -> int:
    """The resample count of ``--method``: ``--n-perm`` for perm-*, ``--n-boot`` for boot-*
    ; the other one is refused, not ignored."""
    from metajudge.errors import InputError

    perm = args.method.startswith("perm")
    own, other = ("--n-perm", "--n-boot") if perm else ("--n-boot", "--n-perm")
    given, wrong = (args.n_perm, args.n_boot) if perm else (args.n_boot, args.n_perm)
    if wrong is not None:
        raise InputError(
            f"{other} does not apply to --method {args.method}; give {own}", field=other
        )
    return 1000 if given is None else int(given)


def _register_kendall(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    q = subparsers.add_parser(
        "kendall",
        help="Kendall tau_a/b/c, acc23 with a calibrated tie band (and its CV value), SPA",
        description="The 'Ties Matter' table (Deutsch, Foster & Freitag 2023) per metric at a "
        "level, with soft pairwise accuracy (Thompson et al. 2024). eps* is fitted on the same "
        "pairs it is scored on (optimistic); acc23_cv fits it on the other folds of inputs.",
    )
    _add_score_source(q)
    add_level(q, "item")
    add_seed(q, "the CV folds and the SPA test")
    q.add_argument(
        "--cv-folds",
        type=positive_int,
        default=5,
        help="folds over inputs of acc23_cv's tie band (default 5)",
    )
    add_n_perm(q, 1000, " of the SPA test")
    q.add_argument(
        "--format",
        choices=("md", "csv", "json"),
        default="md",
        help="what to print or write (default md)",
    )
    q.add_argument("-o", "--output", metavar="FILE", help="write the table here instead of stdout")
    q.set_defaults(func=_cmd_kendall)


def _cmd_kendall(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_text
    from metajudge.runs.stats_commands import run_kendall

    ids = id_policy(args)
    text = run_kendall(
        _source(args, ids),  # type: ignore[arg-type]
        level=args.level,
        seed=args.seed,
        cv_folds=args.cv_folds,
        n_perm=args.n_perm,
        fmt=args.format,
        output=args.output,
    )
    warn_dropped(ids)
    if args.output:
        print(f"wrote {args.output}")
    else:
        print_text(text)
    return 0


def _add_score_source(q: argparse.ArgumentParser) -> None:
    """The dataset (name or file), dimension and score sources of ``rank-clusters``/``kendall``."""
    g = q.add_mutually_exclusive_group(required=True)
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (see `data list`)")
    g.add_argument("--input", metavar="FILE", help="a canonical JSONL dataset file")
    q.add_argument("--subset", help="only this subset of the dataset")
    q.add_argument("--dimension", required=True, help="the human dimension to correlate with")
    q.add_argument("--metrics", help="comma-separated metric names (default: all given)")
    add_scores(q)
