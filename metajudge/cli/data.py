"""``metajudge data ...``: list, show, validate, export and fetch datasets (built-in or a file).

Only argparse is imported here; the library loads inside each command.
"""

from __future__ import annotations

import argparse


def _data_dir_arg(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--data-dir",
        metavar="DIR",
        help="local folder with one sub-folder per dataset (default: $METAJUDGE_DATA_DIR)",
    )


def _source_args(q: argparse.ArgumentParser) -> None:
    """``--dataset NAME`` | ``--input FILE`` (and the old positional NAME, hidden)."""
    g = q.add_mutually_exclusive_group()
    g.add_argument("--dataset", metavar="NAME", help="a built-in dataset (see `data list`)")
    g.add_argument(
        "--input",
        metavar="FILE",
        help="a canonical JSONL file (docs/own-data.md) or a built-in dataset's upstream file",
    )
    q.add_argument("name", nargs="?", help=argparse.SUPPRESS)
    _data_dir_arg(q)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from metajudge.cli.types import nonneg_int, positive_int

    p = subparsers.add_parser("data", help="datasets: list, show, validate, export, pairs, fetch")
    sub = p.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    q = sub.add_parser(
        "list",
        help="every dataset with its counts; with --data-dir, what that folder holds "
        "(built-in datasets and canonical JSONL files), without downloading",
    )
    _data_dir_arg(q)
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

    q = sub.add_parser("export", help="write a dataset as canonical JSONL (card header + records)")
    _source_args(q)
    q.add_argument("-o", "--output", required=True, help="output .jsonl file (written atomically)")
    q.add_argument(
        "--pairs", action="store_true", help="export the pairwise view (Likert expanded to pairs)"
    )
    q.add_argument("--subset", help="only this subset")
    q.set_defaults(func=_cmd_export)

    _add_pairs(sub)

    q = sub.add_parser(
        "fetch", help="resolve (download if needed) and verify every file of a dataset"
    )
    q.add_argument("names", nargs="*", help="datasets (default: all)")
    _data_dir_arg(q)
    q.set_defaults(func=_cmd_fetch)

    q = sub.add_parser(
        "recount",
        help="maintainers: load built-in datasets and rewrite the counts their cards carry "
        "(what `data list` and `matrix` show without loading)",
    )
    q.add_argument("names", nargs="*", help="datasets (default: all)")
    _data_dir_arg(q)
    q.set_defaults(func=_cmd_recount)


def _add_pairs(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``data pairs``: a canonical pairwise file from graded data (:func:`_cmd_pairs`)."""
    from metajudge.cli.types import nonneg_float

    q = sub.add_parser(
        "pairs",
        help="build a canonical pairwise file from graded data (per-response scores): every two "
        "systems on one input, label = difference of the human means, ties within --tie-band",
        description="Every pair of systems that answered the same input becomes one pairwise "
        "record (systems ordered by name: a < b); its label per dimension is mean(b) - mean(a) "
        "of the annotators' scores, 0 (a tie) when its absolute value is at most --tie-band. The "
        "card states the rule and the tie band. The file validates with `data validate` and runs "
        "through `judge diagnostics`, `meta-eval` and the pairwise judges.",
    )
    _source_args(q)
    q.add_argument("-o", "--output", required=True, help="output .jsonl file (written atomically)")
    q.add_argument(
        "--tie-band",
        type=nonneg_float,
        default=0.0,
        metavar="T",
        help="a difference of the means of at most T is a tie, label 0 (default 0: equal means)",
    )
    q.add_argument("--subset", help="only this subset")
    q.set_defaults(func=_cmd_pairs)


def _open(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from metajudge.data.loading import open_dataset
    from metajudge.errors import InputError

    if args.name and (args.dataset or args.input):
        raise InputError("give the dataset once (--dataset NAME or --input FILE)", field="dataset")
    name = args.dataset or args.name
    if name is None and args.input is None:
        raise InputError("give --dataset NAME or --input FILE", field="dataset")
    subset = getattr(args, "subset", None)
    return open_dataset(name, args.input, subset=subset, data_dir=args.data_dir)


def _short_license(text: str) -> str:
    return text.split(" (", 1)[0]


def _cmd_list(args: argparse.Namespace) -> int:
    import json

    from metajudge.data.card_counts import listing_row
    from metajudge.data.registry import list_datasets, list_local

    if args.data_dir:
        rows = list_local(args.data_dir)
    else:
        rows = [listing_row(n) for n in list_datasets()]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
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
    import json

    from metajudge.data.registry import describe_counts

    ds = _open(args)
    card = ds.pairwise_card() if args.pairs else ds.card
    print(
        json.dumps(
            {"card": card.to_dict(), "counts": describe_counts(ds)}, indent=2, ensure_ascii=False
        )
    )
    n = max(0, args.records)
    if ds.card.kind == "benchmark":
        from dataclasses import asdict

        for it in ds.items[:n]:
            print(json.dumps(asdict(it), ensure_ascii=False, default=str)[:4000])
        return 0
    recs = ds.pairs() if args.pairs else ds.records
    for r in recs[:n]:
        print(json.dumps(r.to_dict(), ensure_ascii=False))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    import sys
    from collections import Counter

    from metajudge.data.registry import load_card
    from metajudge.data.validation import check_file

    kind = _file_kind(args.path)
    if kind != "jsonl":
        return _validate_loaded(args.path, kind)
    rep = check_file(
        args.path, load_card(args.card) if args.card else None, max_errors=args.max_errors
    )
    for w in rep.warnings:
        print(f"metajudge: warning: {w}", file=sys.stderr)
    if rep.errors:
        for e in rep.errors:
            print(f"metajudge: error: {e}", file=sys.stderr)
        shown = (
            f" (first {len(rep.errors)} shown; --max-errors)"
            if rep.n_errors > len(rep.errors)
            else ""
        )
        print(f"{args.path}: {rep.n_errors} error(s){shown}", file=sys.stderr)
        return 2
    if rep.card is None and not args.no_card:
        print(
            f"metajudge: error: {args.path}:1: field card: no card line (line 1 of a canonical "
            'file is {"card": {...}}: kind, dimensions, scale; docs/own-data.md); '
            "give --card NAME to check it against a built-in card, or --no-card to check its "
            "records without one",
            file=sys.stderr,
        )
        return 2
    dims: Counter[str] = Counter()
    for r in rep.records:
        dims.update((getattr(r, "labels", None) or r.scores).keys())  # type: ignore[union-attr]
    used = rep.card
    kind = used.kind if used else ("pairwise" if hasattr(rep.records[0], "labels") else "likert")
    print(
        f"OK {args.path}: {len(rep.records)} {kind} records; dimensions "
        + ", ".join(f"{d} ({c})" for d, c in dims.items())
        + (
            f"; card {used.name}, scale {used.scale.describe()}"
            if used
            else "; no card (scale not checked)"
        )
    )
    return 0


def _file_kind(path: str) -> str:
    """:func:`metajudge.data.loading.file_kind` of an existing file (else ``jsonl``: the
    canonical check says what is wrong)."""
    from pathlib import Path

    from metajudge.data.loading import file_kind

    return file_kind(path)[0] if Path(path).is_file() else "jsonl"


def _validate_loaded(path: str, kind: str) -> int:
    """A JUDGE-BENCH-format file or a built-in dataset's upstream file: converted (errors name
    file, record and field), then each record checked against the JSON Schema of its kind and
    the (derived) card."""
    from pathlib import Path

    from metajudge.data.loading import load
    from metajudge.data.validation import Rules, raise_first, record_errors

    ds = load(Path(path))
    rules = Rules.of(ds.card)
    raise_first([e for r in ds.records for e in record_errors(r.to_dict(), rules, path=path)])
    what = {
        "judge_bench": "JUDGE-BENCH format",
        "released_probs": "Trust-or-Escalate released format (instruction, outputs, preferences, probs)",
    }.get(kind, f"upstream file of {ds.name}")
    print(
        f"OK {path}: {what}, {len(ds.records)} {ds.card.kind} records; dimensions "
        + ", ".join(f"{d} ({ds.card.scale_of(d).describe()})" for d in ds.card.dimensions)
    )
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from metajudge.data.formats import write_jsonl
    from metajudge.errors import InputError
    from metajudge.io import check_output_file

    check_output_file(args.output, inputs=[args.input], field="--output")
    ds = _open(args)
    if ds.card.kind == "benchmark":
        raise InputError(
            f"{ds.name} holds benchmark inputs (no human labels), not canonical records; "
            "use metajudge.data.load_mudabench / load_mtraig_items",
            field="name",
        )
    records = ds.pairs() if args.pairs else ds.records
    card = ds.pairwise_card() if args.pairs else ds.card
    if not records:
        after = " after pairwise expansion" if args.pairs else ""
        raise InputError(f"{ds.name}: nothing to export (0 records{after})", field="records")
    n = write_jsonl(args.output, records, card=card)
    kind = "pairwise" if args.pairs else ds.card.kind
    print(f"wrote {n} {kind} records of {ds.name} to {args.output}")
    return 0


def _cmd_pairs(args: argparse.Namespace) -> int:
    from metajudge.data.formats import write_jsonl
    from metajudge.errors import InputError
    from metajudge.io import check_output_file

    check_output_file(args.output, inputs=[args.input], field="--output")
    ds = _open(args)
    if ds.card.kind != "likert":
        raise InputError(
            f"{ds.name} is {ds.card.kind}: data pairs builds pairs from graded (likert) data, "
            "a score per response" + (" (it is pairwise already)" if ds.kind == "pairwise" else ""),
            path=args.input,
            field="kind",
        )
    pairs = ds.pairs(tie_band=args.tie_band)
    if not pairs:
        raise InputError(
            f"{ds.name}: no input has two systems with a common labelled dimension (0 pairs)",
            path=args.input,
            field="records",
        )
    n = write_jsonl(args.output, pairs, card=ds.pairwise_card(tie_band=args.tie_band))
    print(pairs_summary(ds, pairs, args.tie_band, n, args.output))
    return 0


def pairs_summary(ds, pairs, tie_band: float, n: int, output: str) -> str:  # type: ignore[no-untyped-def]
    """What ``data pairs`` wrote: pairs, inputs, ties per dimension, inputs with one system."""
    from collections import Counter

    systems: dict[str, set[str]] = {}
    for r in ds.records:
        systems.setdefault(r.id, set()).add(r.system)
    single = sum(1 for s in systems.values() if len(s) < 2)
    ties = Counter(d for p in pairs for d, v in p.labels.items() if v[0] == 0)
    tie_txt = ", ".join(f"{d} {ties.get(d, 0)}" for d in ds.card.dimensions)
    return (
        f"wrote {n} pairs from {len(systems) - single} inputs of {ds.name} to {output} "
        f"(label = mean(b) - mean(a); tie band {tie_band:g}; ties: {tie_txt}; "
        f"{single} inputs with a single system give no pair)"
    )


def _cmd_fetch(args: argparse.Namespace) -> int:
    from metajudge.data.fetch import local_relpath
    from metajudge.data.registry import list_datasets, load_card, resolve_file

    for name in args.names or list_datasets():
        card = load_card(name)
        for sf in card.files:
            p = resolve_file(name, local_relpath(sf), args.data_dir)
            print(f"ok {name}/{local_relpath(sf)} -> {p}")
    return 0


def _cmd_recount(args: argparse.Namespace) -> int:
    from metajudge.data.card_counts import counts_of, write_counts
    from metajudge.data.loading import load
    from metajudge.data.registry import describe_counts, list_datasets
    from metajudge.runs.matrix.table import dataset_facts, facts_record

    changed = []
    for name in args.names or list_datasets():
        ds = load(name, args.data_dir)
        counts = {**counts_of(describe_counts(ds)), "facts": facts_record(dataset_facts(ds))}
        if write_counts(name, counts):
            changed.append(name)
    print(f"counts rewritten: {', '.join(changed) or 'none (every card is current)'}")
    return 0
