"""``metajudge data ...``: list, show, validate, export and fetch the human-judgment datasets.

Only argparse is imported here; the library loads inside each command.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("data", help="datasets: list, show, validate, export, fetch")
    sub = p.add_subparsers(dest="data_command", metavar="DATA_COMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    def data_dir_arg(q: argparse.ArgumentParser) -> None:
        q.add_argument(
            "--data-dir",
            help="local folder with one sub-folder per dataset (default: $METAJUDGE_DATA_DIR)",
        )

    q = sub.add_parser(
        "list", help="every dataset with its counts (items, pairs, annotators, dimensions, license)"
    )
    data_dir_arg(q)
    q.add_argument("--format", choices=("table", "json"), default="table")
    q.set_defaults(func=_cmd_list)

    q = sub.add_parser("show", help="a dataset's card and its first records")
    q.add_argument("name")
    q.add_argument(
        "-n", "--records", type=int, default=3, help="how many records to print (default 3)"
    )
    q.add_argument("--pairs", action="store_true", help="show the pairwise view (Likert expanded)")
    data_dir_arg(q)
    q.set_defaults(func=_cmd_show)

    q = sub.add_parser("validate", help="check a JSONL file in the canonical format")
    q.add_argument("path")
    q.add_argument(
        "--card",
        help="validate against this dataset's card (scale, dimensions) when the file has no header",
    )
    q.set_defaults(func=_cmd_validate)

    q = sub.add_parser("export", help="write a dataset as canonical JSONL (card header + records)")
    q.add_argument("name")
    q.add_argument("-o", "--output", required=True, help="output .jsonl file (written atomically)")
    q.add_argument(
        "--pairs", action="store_true", help="export the pairwise view (Likert expanded to pairs)"
    )
    q.add_argument("--subset", help="only this subset")
    data_dir_arg(q)
    q.set_defaults(func=_cmd_export)

    q = sub.add_parser(
        "fetch", help="resolve (download if needed) and verify every file of a dataset"
    )
    q.add_argument("names", nargs="*", help="datasets (default: all)")
    data_dir_arg(q)
    q.set_defaults(func=_cmd_fetch)


def _short_license(text: str) -> str:
    return text.split(" (", 1)[0]


def _cmd_list(args: argparse.Namespace) -> int:
    import json

    from metajudge.data.registry import describe_counts, list_datasets, load_dataset

    rows = [describe_counts(load_dataset(n, data_dir=args.data_dir)) for n in list_datasets()]
    if args.format == "json":
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    table = [["name", "kind", "records", "items", "pairs", "annotators", "dimensions", "license"]]
    for r in rows:
        ann = str(r["annotators"]) if r["kind"] != "benchmark" else "-"
        if (
            r["kind"] != "benchmark"
            and r["annotators_upstream"]
            and r["annotators_upstream"] != r["annotators"]
        ):
            ann += f" (mean of {r['annotators_upstream']})"
        table.append(
            [
                r["name"],
                r["kind"],
                f"{r['records']:,}",
                f"{r['items']:,}",
                f"{r['pairs']:,}" if r["kind"] != "benchmark" else "-",
                ann,
                ",".join(r["dimensions"]) or "-",
                _short_license(r["license"]),
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    right = {2, 3, 4}
    for k, row in enumerate(table):
        cells = [
            c.rjust(w) if i in right and k else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths))
        ]
        print("  ".join(cells).rstrip())
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    import json

    from metajudge.data.registry import describe_counts, load_dataset

    ds = load_dataset(args.name, data_dir=args.data_dir)
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
    from collections import Counter

    from metajudge.data.formats import PairwiseRecord, read_jsonl
    from metajudge.data.registry import load_card

    card = load_card(args.card) if args.card else None
    found, records = read_jsonl(args.path, card=card)
    kinds = Counter("pairwise" if isinstance(r, PairwiseRecord) else "likert" for r in records)
    dims: Counter[str] = Counter()
    for r in records:
        dims.update((r.labels if isinstance(r, PairwiseRecord) else r.scores).keys())
    used = found or card
    print(
        f"OK {args.path}: {len(records)} {next(iter(kinds))} records; dimensions "
        + ", ".join(f"{d} ({c})" for d, c in dims.items())
        + (
            f"; card {used.name}, scale {used.scale.describe()}"
            if used
            else "; no card (scale not checked)"
        )
    )
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from metajudge.data.formats import write_jsonl
    from metajudge.data.registry import load_dataset
    from metajudge.errors import InputError

    ds = load_dataset(args.name, data_dir=args.data_dir)
    if ds.card.kind == "benchmark":
        raise InputError(
            f"{args.name} holds benchmark inputs (no human labels), not canonical records; "
            "use metajudge.data.load_mudabench / load_mtraig_items",
            field="name",
        )
    if args.subset:
        ds = ds.subset(args.subset)
    records = ds.pairs() if args.pairs else ds.records
    card = ds.pairwise_card() if args.pairs else ds.card
    if not records:
        raise InputError(
            f"{args.name}: nothing to export (0 records{' after pairwise expansion' if args.pairs else ''})",
            field="records",
        )
    n = write_jsonl(args.output, records, card=card)
    print(
        f"wrote {n} {'pairwise' if args.pairs else ds.card.kind} records of {args.name} to {args.output}"
    )
    return 0


def _cmd_fetch(args: argparse.Namespace) -> int:
    from metajudge.data.fetch import local_relpath
    from metajudge.data.registry import list_datasets, load_card, resolve_file

    for name in args.names or list_datasets():
        card = load_card(name)
        for sf in card.files:
            p = resolve_file(name, local_relpath(sf), args.data_dir)
            print(f"ok {name}/{local_relpath(sf)} -> {p}")
    return 0
