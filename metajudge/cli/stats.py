"""``metajudge stats power|rank-clusters|kendall`` (old names: ``metajudge power``,
``rank-clusters``, ``kendall``): study sizing, WMT-style rank clusters,
the "Ties Matter" table.

Only argparse (and the argument validators) are imported here; the library loads inside the
commands.
"""

from __future__ import annotations

import argparse

from metajudge.cli.options import (
    add_alpha,
    add_data_dir,
    add_level,
    add_n_boot,
    add_n_perm,
    add_old,
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
        help="how many human labels: items to detect a correlation, or a difference between "
        "two metrics' correlations (Fisher z)",
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
    add_data_dir(q)
    q.add_argument("--subset", help="only this subset of the dataset")
    add_scores(q)
    q.add_argument("--metrics", help="the two metrics whose scores give r12: A,B")
    add_alpha(q, "the two-sided test")
    q.add_argument("--power", type=probability, default=0.8, help="power (default 0.8)")
    q.set_defaults(func=_cmd_power)


def _estimated_r12(args: argparse.Namespace) -> tuple[float, str]:
    """r12 from two metrics' scores (``--metrics A,B`` of ``--scores``): Pearson over the
    responses (pairwise records: the pairs' differences b − a) both metrics score."""
    import math

    from metajudge.data.loading import open_dataset
    from metajudge.errors import InputError
    from metajudge.scores.spec import gather_scores
    from metajudge.stats.power import r12_from_scores

    names = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    if len(names) != 2 or not args.scores:
        raise InputError("to estimate r12 give --scores and --metrics A,B", field="metrics")
    ds = open_dataset(args.dataset, args.input, subset=args.subset, data_dir=args.data_dir)
    ids = id_policy(args)
    rows = gather_scores(ds, args.scores, data_dir=args.data_dir, labels=False, ids=ids)
    warn_dropped(ids)
    by = {m: {r["key"]: r["score"] for r in rows if r["metric"] == m} for m in names}
    for m in names:
        if not by[m]:
            raise InputError(f"no scores of metric {m!r} in --scores", field="metrics")
    unit = "responses"
    if ds.card.kind == "pairwise":
        by = {m: _differences(v) for m, v in by.items()}
        unit = "pairs (score of b minus a)"
    r12, n = r12_from_scores(by[names[0]], by[names[1]])
    if not math.isfinite(r12):
        raise InputError(f"r12 is undefined on {n} {unit} scored by both metrics", field="metrics")
    return r12, f"r12 = {r12:.4f} estimated: Pearson of {names[0]} and {names[1]} over {n} {unit}"


def _differences(scores: dict[str, float | None]) -> dict[str, float | None]:
    """Per pair ``item``: the score of ``item::b`` minus that of ``item::a`` (None if either lacks one)."""
    from metajudge.data.formats import split_response_key

    sides: dict[str, dict[str, float | None]] = {}
    for key, v in scores.items():
        item, side = split_response_key(key)
        sides.setdefault(item, {})[side] = v
    out: dict[str, float | None] = {}
    for item, s in sides.items():
        a, b = s.get("a"), s.get("b")
        out[item] = None if a is None or b is None else b - a
    return out


def _power_r12(args: argparse.Namespace) -> tuple[float, str]:
    """--r12 as given, or estimated from two metrics' scores; one of them, never a default."""
    from metajudge.errors import InputError

    data = args.dataset or args.input or args.scores or args.metrics
    if args.r12 is not None and data:
        raise InputError("give --r12 or the scores to estimate it from, not both", field="r12")
    if args.r12 is not None:
        return args.r12, f"r12 = {args.r12} given"
    if not data:
        raise InputError(
            "--r1/--r2 need the metrics' correlation with each other: give --r12, or two "
            "metrics' scores (--dataset NAME --scores SPEC --metrics A,B) to estimate it",
            field="r12",
        )
    return _estimated_r12(args)


def _cmd_power(args: argparse.Namespace) -> int:
    import math

    from metajudge.errors import InputError
    from metajudge.stats import power as pw

    if args.r is not None and args.r1 is None and args.r2 is None:
        if args.r12 is not None:
            raise InputError("--r12 goes with --r1 and --r2, not --r", field="r12")
        n = pw.n_for_correlation(args.r, alpha=args.alpha, power=args.power)
        what, how = f"a correlation of {args.r}", ""
    elif args.r is None and args.r1 is not None and args.r2 is not None:
        r12, how = _power_r12(args)
        n = pw.n_for_correlation_difference(
            args.r1, args.r2, r12, alpha=args.alpha, power=args.power
        )
        what = f"correlations {args.r1} vs {args.r2} (metrics correlated {r12:.4g})"
    else:
        raise InputError("give either --r, or --r1 and --r2", field="r")
    items = "infinite" if math.isinf(n) else str(math.ceil(n))
    print(
        f"items needed to detect {what} at alpha={args.alpha} (two-sided) with power "
        f"{args.power}: {items} (Fisher z; exact n = {n:.2f})"
    )
    if how:
        print(how)
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
    add_old(q, "--n-resamples", "--n-perm or --n-boot", type=positive_int)
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
    from metajudge.analyses.system_ranking import ClusterOptions, rank_table
    from metajudge.errors import InputError
    from metajudge.io import atomic_write
    from metajudge.reports import system_ranking as rc

    n_resamples = _n_resamples(args)  # before any work
    ds, sm = _matrices(args)
    if len(sm.metrics) < 2:  # type: ignore[attr-defined]
        raise InputError("rank clusters need at least two metrics' scores", field="metrics")
    opts = ClusterOptions(
        args.level, args.statistic, args.method, n_resamples, args.seed, args.alpha
    )
    table = rank_table(sm, ds.card.name, opts)  # type: ignore[arg-type,attr-defined]
    text = rc.render_ranking(table, args.format)
    if args.output:
        with atomic_write(args.output) as fh:
            fh.write(text)
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    if args.plot:
        notice(
            args.format if not args.output else None, f"wrote {rc.plot_ranking(table, args.plot)}"
        )
    return 0


def _n_resamples(args: argparse.Namespace) -> int:
    """The resample count of ``--method``: ``--n-perm`` for perm-*, ``--n-boot`` for boot-*
    (``--n-resamples``, the old spelling, for either); the other one is refused, not ignored."""
    from metajudge.errors import InputError

    perm = args.method.startswith("perm")
    own, other = ("--n-perm", "--n-boot") if perm else ("--n-boot", "--n-perm")
    given, wrong = (args.n_perm, args.n_boot) if perm else (args.n_boot, args.n_perm)
    if wrong is not None:
        raise InputError(
            f"{other} does not apply to --method {args.method}; give {own}", field=other
        )
    if given is not None and args.n_resamples is not None and given != args.n_resamples:
        raise InputError(f"give {own} once (--n-resamples is its old spelling)", field=own)
    for n in (given, args.n_resamples):
        if n is not None:
            return int(n)
    return 1000


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


def _matrices(args: argparse.Namespace) -> tuple[object, object]:
    from metajudge.analyses.metric_vs_human.matrices import score_matrices
    from metajudge.data.loading import open_dataset
    from metajudge.errors import InputError
    from metajudge.scores.spec import gather_scores

    ds = open_dataset(args.dataset, args.input, subset=args.subset, data_dir=args.data_dir)
    ids = id_policy(args)
    rows = gather_scores(ds, args.scores, data_dir=args.data_dir, labels=False, ids=ids)
    warn_dropped(ids)
    metrics = args.metrics.split(",") if args.metrics else None
    sm = score_matrices(ds.records, rows, args.dimension, metrics)
    if not sm.metrics:
        raise InputError(
            "no metric scores: give --scores shipped or --scores FILE", field="metrics"
        )
    return ds, sm


#: the columns of the ``kendall`` table, in order
_KENDALL_COLUMNS = (
    "metric",
    "tau_a",
    "tau_b",
    "tau_c",
    "acc23",
    "epsilon",
    "acc23_calibrated",
    "acc23_cv",
    "spa",
)


def _kendall_text(args: argparse.Namespace, rows: list[dict]) -> str:
    """The ``kendall`` rows as JSON, CSV or a Markdown table (``args.format``)."""
    import io
    import json

    from metajudge.analyses.metric_vs_human.kendall_table import NOTE

    cols = list(_KENDALL_COLUMNS)
    if args.format == "json":
        head = {"level": args.level, "seed": args.seed, "spa_permutations": args.n_perm}
        return json.dumps({**head, "note": NOTE, "rows": rows}, indent=1) + "\n"
    if args.format == "csv":
        buf = io.StringIO()
        from metajudge.io import CsvDictWriter

        w = CsvDictWriter(buf, cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()
    lines = ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    for r in rows:
        lines.append("| " + " | ".join([r["metric"]] + [f"{r[c]:.4g}" for c in cols[1:]]) + " |")
    note = f"level {args.level}; seed {args.seed}; SPA with {args.n_perm} permutations; {NOTE}"
    return "\n".join(lines) + f"\n\n{note}\n"


def _cmd_kendall(args: argparse.Namespace) -> int:
    from metajudge.analyses.metric_vs_human.kendall_table import kendall_rows
    from metajudge.io import atomic_write

    _, sm = _matrices(args)
    rows = kendall_rows(
        sm,
        args.level,
        seed=args.seed,
        cv_folds=args.cv_folds,  # type: ignore[arg-type]
        n_perm=args.n_perm,
    )
    text = _kendall_text(args, rows)
    if args.output:
        with atomic_write(args.output) as fh:
            fh.write(text)
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    return 0


def _add_score_source(q: argparse.ArgumentParser) -> None:
    """The dataset (name or file), dimension and score sources of ``rank-clusters``/``kendall``."""
    g = q.add_mutually_exclusive_group(required=True)
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (see `data list`)")
    g.add_argument("--input", metavar="FILE", help="a canonical JSONL dataset file")
    add_data_dir(q)
    q.add_argument("--subset", help="only this subset of the dataset")
    q.add_argument("--dimension", required=True, help="the human dimension to correlate with")
    q.add_argument("--metrics", help="comma-separated metric names (default: all given)")
    add_scores(q)
