"""``metajudge data ...``: list, show, validate, export and fetch datasets (built-in or a file).

Only argparse is imported here; the library loads inside each command.
"""

from __future__ import annotations

import argparse

from metajudge.cli import agreement
from metajudge.cli.options import add_tie_band


def _source_args(q: argparse.ArgumentParser) -> None:
    """``--dataset NAME`` | ``--input FILE`` (and the old positional NAME, hidden)."""
    g = q.add_mutually_exclusive_group()
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (see `data list`)")
    g.add_argument(
        "--input",
        metavar="FILE",
        help="a canonical JSONL file (docs/own-data.md) or a built-in dataset's upstream file",
    )


DATA_HELP = "datasets: list, show, validate, export, pairs, fetch, recount; annotator agreement"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from metajudge.cli.types import nonneg_int, positive_int

    p = subparsers.add_parser("data", help=DATA_HELP)
    sub = p.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    q = sub.add_parser(
        "list",
        help="every dataset with its counts; with --data-dir, what that folder holds "
        "(built-in datasets and canonical JSONL files), without downloading",
    )
    q.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="an aligned table (default) or JSON",
    )
    q.set_defaults(func=_cmd_list)

    q = sub.add_parser("show", help="a dataset's card and its first records")
    _source_args(q)
    q.add_argument(
        "-n", "--records", type=nonneg_int, default=3, help="how many records to print (default 3)"
    )
    q.add_argument("--pairs", action="store_true", help="show the pairwise view (Likert expanded)")
    q.set_defaults(func=_cmd_show)

    q = sub.add_parser(
        "validate",
        help="check a canonical JSONL file against the JSON Schemas in metajudge/data/schemas "
        "and its card; lists every error with file, line and field",
    )
    q.add_argument("path", help="the file to check (canonical JSONL or a JUDGE-BENCH .json)")
    q.add_argument(
        "--card",
        help="validate against this dataset's card (scale, dimensions) when the file has no header",
    )
    q.add_argument(
        "--no-card",
        action="store_true",
        help="accept a file without a card line (its records only are checked; the scale is not)",
    )
    q.add_argument(
        "--max-errors",
        type=positive_int,
        default=20,
        help="list at most this many errors (default 20)",
    )
    q.set_defaults(func=_cmd_validate)

    _add_export(sub)
    _add_doctor(sub)
    agreement.add_agreement(sub)

    q = sub.add_parser(
        "fetch",
        help="resolve (download if needed) and verify every file of a dataset; --recount "
        "(maintainers): also rewrite the counts its card carries",
    )
    q.add_argument("names", nargs="*", help="datasets (default: all)")
    q.add_argument(
        "--recount",
        action="store_true",
        help="maintainers: then load the datasets and rewrite the counts their cards carry "
        "(what `data list` and `matrix list` show without loading)",
    )
    q.set_defaults(func=_cmd_fetch)


def _add_export(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``data export``: a dataset as canonical JSONL; ``--pairs``: the pairwise file of graded
    data (:func:`_cmd_export`)."""
    q = sub.add_parser(
        "export",
        help="write a dataset as canonical JSONL (card header + records); --pairs: a canonical "
        "pairwise file from graded data (every two systems on one input, label = difference of "
        "the human means, ties within --tie-band)",
        description="Write the dataset's card and records as canonical JSONL. With --pairs "
        "(graded data: a score per response), every pair of systems that answered the same "
        "input becomes one pairwise record (systems ordered by name: a < b); its label per "
        "dimension is mean(b) - mean(a) of the annotators' scores, 0 (a tie) when its absolute "
        "value is at most --tie-band. The card states the rule and the tie band. The file "
        "validates with `data validate` and runs through `judge diagnostics`, `meta-eval` and "
        "the pairwise judges.",
    )
    _source_args(q)
    q.add_argument("-o", "--output", required=True, help="output .jsonl file (written atomically)")
    q.add_argument(
        "--pairs", action="store_true", help="the pairwise file of graded data (see above)"
    )
    add_tie_band(
        q, "--pairs: the difference of the human means (a tie is label 0)", dest="tie_band"
    )
    q.add_argument("--subset", help="only this subset")
    q.set_defaults(func=_cmd_export)


def _add_doctor(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``data doctor FILE``: what a score file is and the command that reads it."""
    from metajudge.cli.options import add_score_reading

    q = sub.add_parser(
        "doctor",
        help="say what a score file is (a judge framework's output: inspect_ai, promptfoo, "
        "deepeval, ragas; or a score table): format and version, rows, id-like fields, "
        "score-like and label-like columns, missing values, and the meta-eval command that reads it",
    )
    q.add_argument(
        "file",
        help="the score file (FORMAT:FILE forces a format, as --scores), or mlflow:EXPERIMENT "
        "(what its traces and assessments are read as)",
    )
    q.add_argument(
        "--input",
        metavar="FILE",
        help="the labelled dataset (canonical JSONL): also count the responses the file scores",
    )
    add_score_reading(q)
    q.add_argument("--format", choices=("text", "json"), default="text", help="text or JSON")
    q.set_defaults(func=_cmd_doctor)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from metajudge.cli.options import score_reading
    from metajudge.cli.output import print_json, print_text
    from metajudge.runs.data_commands import run_doctor
    from metajudge.scores.doctor import lines

    d = run_doctor(
        args.file,
        input_file=args.input,
        reading=score_reading(args),
        tracking_uri=args.tracking_uri,
    )
    if args.format == "json":
        print_json(d, indent=2, ensure_ascii=False)
    else:
        print_text("\n".join(lines(d)), end="\n")
    return 0


def _source(args: argparse.Namespace) -> dict:  # type: ignore[type-arg]
    """The dataset a ``data`` command names (:func:`metajudge.runs.data_commands.open_named`)."""
    return {
        "dataset": args.dataset,
        "input_file": args.input,
        "subset": getattr(args, "subset", None),
        "data_dir": args.data_dir,
    }


def _short_license(text: str) -> str:
    return text.split(" (", 1)[0]


def _cmd_list(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_json
    from metajudge.runs.data_commands import run_list

    rows = run_list(args.data_dir)
    if args.format == "json":
        print_json(rows, indent=2, ensure_ascii=False)
        return 0
    head = ["name", "kind", "records", "items", "pairs", "annotators", "dimensions", "license"]
    table = [head + (["status"] if args.data_dir else [])]
    for r in rows:
        table.append(_list_row(r) + ([r["status"]] if args.data_dir else []))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    right = {2, 3, 4}
    for k, row in enumerate(table):
        cells = [
            c.rjust(w) if i in right and k else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths))
        ]
        print("  ".join(cells).rstrip())
    return 0


def _list_row(r: dict) -> list[str]:  # type: ignore[type-arg]
    if "records" not in r:  # a data-folder entry that could not be loaded
        return [r["name"], r["kind"], "-", "-", "-", "-", "-", "-"]
    bench = r["kind"] == "benchmark"
    ann = str(r["annotators"]) if not bench else "-"
    if not bench and r["annotators_upstream"] and r["annotators_upstream"] != r["annotators"]:
        ann += f" (mean of {r['annotators_upstream']})"
    return [
        r["name"],
        r["kind"],
        f"{r['records']:,}",
        f"{r['items']:,}",
        f"{r['pairs']:,}" if r["kind"] in ("likert", "pairwise") else "-",
        ann,
        _dims_cell(r["dimensions"]),
        _short_license(r["license"]) or "-",
    ]


def _dims_cell(dims: list[str]) -> str:
    if len(dims) <= 8:
        return ",".join(dims) or "-"
    return ",".join(dims[:3]) + f",... ({len(dims)} dimensions)"


def _cmd_show(args: argparse.Namespace) -> int:
    from metajudge.cli.output import json_text, print_json, print_text
    from metajudge.runs.data_commands import run_show

    head, rows, bench = run_show(**_source(args), pairs=args.pairs, records=args.records)
    print_json(head, indent=2, ensure_ascii=False)
    for row in rows:
        if bench:
            text = json_text(row, indent=None, ensure_ascii=False, default=str)[:4000]
            print_text(text, end="\n")
        else:
            print_json(row, indent=None, ensure_ascii=False)
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    import sys

    from metajudge.runs.data_commands import run_validate

    v = run_validate(args.path, card=args.card, no_card=args.no_card, max_errors=args.max_errors)
    for w in v.warnings:
        print(f"metajudge: warning: {w}", file=sys.stderr)
    for e in v.errors:
        print(f"metajudge: error: {e}", file=sys.stderr)
    print(v.summary, file=sys.stdout if v.ok else sys.stderr)
    return 0 if v.ok else 2


def _cmd_export(args: argparse.Namespace) -> int:
    from metajudge.errors import InputError
    from metajudge.runs.data_commands import run_export, run_pairs

    if args.pairs:
        print(run_pairs(args.output, tie_band=args.tie_band, **_source(args)))
        return 0
    if args.tie_band:
        raise InputError("--tie-band goes with --pairs", field="--tie-band")
    print(run_export(args.output, **_source(args)))
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    from metajudge.runs.data_commands import run_fetch

    for what, path in run_fetch(args.names, args.data_dir):
        print(f"ok {what} -> {path}")
    if args.recount:
        from metajudge.runs.matrix.table import run_recount

        changed = run_recount(args.names, args.data_dir)
        print(f"counts rewritten: {', '.join(changed) or 'none (every card is current)'}")
    return 0
