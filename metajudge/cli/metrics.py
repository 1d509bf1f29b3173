"""CLI: ``metajudge metrics list|show|run``,
``metajudge setup wordnet``.

Only argparse is imported here; the library is imported inside each command.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    msub = _register_metrics(subparsers)
    _register_run(msub)
    _register_setup(subparsers)


def _register_run(msub: Any) -> None:
    from metajudge.cli.options import add_backbone, add_source_field

    p = msub.add_parser(
        "run",
        help="score every response of a dataset with metrics (writes one JSONL row per response and metric)",
        description="Score every response of a dataset against its reference (pairwise: both a and b; "
        "each distinct response is computed once). Resumable: if -o exists, rows with the same "
        "signature are kept and only missing ones computed. Exits 1 when no row could be scored.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", metavar="NAME", help="dataset name (see `metajudge data list`)")
    src.add_argument(
        "--input", metavar="FILE", help="a canonical JSONL file instead of a named dataset"
    )
    p.add_argument(
        "--metrics",
        required=True,
        help="comma-separated metric names, e.g. bleu,rouge_l,meteor,bertscore",
    )
    p.add_argument("-o", "--output", required=True, help="score file to write (JSONL)")
    p.add_argument(
        "--reference-field",
        metavar="FIELD",
        help="compare against this dotted record field instead of input.reference, e.g. "
        "input.source, input.question, input.documents, meta.summary (reference-free data)",
    )
    add_source_field(p)
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="METRIC.KEY=VALUE",
        help="metric option, repeatable, e.g. bertscore.model=roberta-large, rouge_l.use_stemmer=false",
    )
    p.add_argument(
        "--fresh", action="store_true", help="ignore an existing output file (recompute everything)"
    )
    add_backbone(p, "LLM-judge metrics: ")
    p.add_argument(
        "--calibrator",
        metavar="FILE",
        help="a `calibrate fit` file: adds <metric>.calibrated (another signature: exit 2)",
    )
    p.set_defaults(func=_cmd_score)


def _register_metrics(subparsers: Any) -> Any:
    from metajudge.cli.options import add_backbone, add_format

    m = subparsers.add_parser(
        "metrics",
        help="the metric registry (names, ranges, directions, signatures); run metrics on a "
        "dataset's responses",
    )
    msub = m.add_subparsers(dest="metrics_command", metavar="SUBCOMMAND")
    q = msub.add_parser(
        "list", help="every registered metric with its range, direction and signature"
    )
    add_format(q, ("md", "csv", "json"))
    add_backbone(q, "for the LLM judges' signatures: ")
    q.set_defaults(func=_cmd_metrics_list)
    q = msub.add_parser(
        "show",
        help="one metric: its signature, what it needs, and every option with type, default, "
        "choices and what it changes in the signature (set with --option METRIC.KEY=VALUE)",
    )
    q.add_argument("name", help="a metric name (see `metajudge metrics list`)")
    add_format(q, ("md", "json"))
    add_backbone(q, "for an LLM judge's signature: ")
    q.set_defaults(func=_cmd_metrics_show)
    m.set_defaults(func=lambda args: (m.print_help(), 2)[1])
    return msub


def _register_setup(subparsers: Any) -> None:
    s = subparsers.add_parser("setup", help="install resources metrics need (WordNet for METEOR)")
    ssub = s.add_subparsers(dest="setup_command", metavar="RESOURCE")
    w = ssub.add_parser(
        "wordnet",
        help="make WordNet available to NLTK (nltk.download, else build from Debian's wordnet-base)",
    )
    w.add_argument(
        "--nltk-dir",
        dest="target",
        metavar="DIR",
        help="NLTK data folder (default: $METAJUDGE_NLTK_DATA or ~/.local/share/metajudge/nltk_data)",
    )
    w.add_argument(
        "--source",
        choices=("auto", "nltk", "debian"),
        default="auto",
        help="where WordNet comes from: nltk.download, Debian's wordnet-base, or auto (nltk, "
        "else Debian; default)",
    )
    w.add_argument("--force", action="store_true", help="rebuild even if a usable WordNet is found")
    w.set_defaults(func=_cmd_setup_wordnet)
    s.set_defaults(func=lambda args: (s.print_help(), 2)[1])


def parse_options(specs: list[str]) -> dict[str, dict[str, Any]]:
    """``["bertscore.model=roberta-large", "rouge_l.use_stemmer=false"]`` → nested dict (the key
    follows the last dot: ``judge:my.yaml.max_chars=900`` sets ``max_chars`` of ``judge:my.yaml``).

    Values are read as JSON when they parse (``false``, ``0.01``, ``null``), else as strings.
    """
    import json

    from metajudge.errors import InputError

    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        lhs, sep, val = spec.partition("=")
        metric, dot, key = lhs.rpartition(".")  # a judge:PATH metric name has dots, keys none
        if not sep or not dot or not metric or not key:
            raise InputError(f"bad --option {spec!r}: expected METRIC.KEY=VALUE", field="--option")
        try:
            v: Any = json.loads(val)
        except json.JSONDecodeError:
            v = val
        out.setdefault(metric, {})[key] = v
    return out


def check_cli_options(options: dict[str, dict[str, Any]]) -> None:
    """Refuse ``--option`` values a metric does not take or that do not fit the parameter's type
    (``rouge_l.use_stemmer=maybe``; ``geval_faithfulness.backend=evil``: an object, not text)."""
    from metajudge.cli.types import check_kwargs
    from metajudge.metrics.registry import metric_class

    for metric, opts in options.items():
        check_kwargs(metric_class(metric), opts, field=f"--option {metric}")


def _cmd_score(args: argparse.Namespace) -> int:
    import sys

    from metajudge.cli.backends import cli_backbone
    from metajudge.runs.score import run_score
    from metajudge.scores.scoring import summarize

    options = parse_options(args.option)
    check_cli_options(options)
    run = run_score(
        [m.strip() for m in args.metrics.split(",") if m.strip()],
        args.output,
        dataset=args.dataset,
        input_file=args.input,
        options=options,
        calibrator=args.calibrator,
        fresh=args.fresh,
        progress=not args.quiet,
        data_dir=args.data_dir,
        backbone=cli_backbone(args.backbone),
        reference_field=args.reference_field,
        source_field=args.source_field,
    )
    print(
        f"wrote {run.n} rows to {run.path}"
        + (f" ({run.kept} rows of other metrics kept)" if run.kept else "")
    )
    summary = summarize(run.rows)
    for s in summary:
        mean = "n/a" if s["mean"] is None else f"{s['mean']:.4f}"
        print(
            f"  {s['metric']:<14} n={s['n']} scored={s['scored']} errors={s['errors']} mean={mean}"
        )
        for sig in s["signatures"]:
            print(f"    {sig}")
        for what, k in s["affected"].items():  # nothing silent: cuts and caps with their share
            print(f"    note: {what.replace('_', ' ')} in {k} of {s['n']} responses")
    return _report_errors(run.rows, sys.stderr)


def _report_errors(rows: list[dict[str, Any]], err: Any, first: int = 5) -> int:
    """Print how many rows failed and the first distinct reasons; 1 when every row failed."""
    failed = [r for r in rows if r["score"] is None]
    if not failed:
        return 0
    print(
        f"note: {len(failed)} of {len(rows)} responses could not be scored "
        "(score null, see 'error' in the file); first errors:",
        file=err,
    )
    seen: list[str] = []
    for r in failed:
        if r["error"] not in seen:
            seen.append(r["error"])
            print(f"  {r['key']} ({r['metric']}): {r['error']}", file=err)
        if len(seen) >= first:
            break
    if len(failed) == len(rows):
        print(
            "error: no response could be scored"
            + (
                " (records without input.reference? try --reference-field input.source)"
                if any("no reference text" in (r["error"] or "") for r in failed)
                else ""
            ),
            file=err,
        )
        return 1
    return 0


def _cmd_metrics_list(args: argparse.Namespace) -> int:
    import sys

    from metajudge.cli.backends import cli_backbone
    from metajudge.cli.output import print_json
    from metajudge.runs.metrics_info import metric_listing

    # --format json: what `metrics show NAME` lists, for every metric
    infos = metric_listing(cli_backbone(args.backbone), with_options=args.format == "json")
    if args.format == "json":
        print_json(infos, indent=2, ensure_ascii=False)
        return 0
    if args.format == "csv":
        from metajudge.io import CsvWriter

        w = CsvWriter(sys.stdout)
        w.writerow(["name", "direction", "lo", "hi", "signature", "unavailable"])
        for i in infos:
            lo, hi = i["range"] or (None, None)
            w.writerow(
                [i["name"], i["direction"], lo, hi, i["signature"], i.get("unavailable", "")]
            )
        return 0
    for i in infos:
        if i.get("unavailable"):
            print(f"{i['name']:<22} unavailable: {i['unavailable']}")
            continue
        lo, hi = i["range"]
        print(f"{i['name']:<22} {i['direction']:<6} [{lo:g}, {hi:g}]  {i['signature']}")
    return 0


def _cmd_metrics_show(args: argparse.Namespace) -> int:
    from metajudge.cli.backends import cli_backbone
    from metajudge.cli.output import print_json
    from metajudge.runs.metrics_info import metric_details

    info = metric_details(args.name, cli_backbone(args.backbone))
    if args.format == "json":
        print_json(info, indent=2, ensure_ascii=False, default=str)
        return 0
    lo, hi = info["range"]
    print(f"# {info['name']}  ({info['direction']} is better, range [{lo:g}, {hi:g}])\n")
    print(f"signature: `{info['signature']}`  ")
    print(f"needs: {', '.join(info['needs']) or '-'}  ")
    print(f"set an option with `--option {args.name}.KEY=VALUE`\n")
    print("| option | type | default | range | changes in the signature |")
    print("|---|---|---|---|---|")
    for o in info["options"]:
        cells = [o["name"], o["type"], repr(o["default"]), o["range"] or "-", o["signature"]]
        print("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return 0


def _cmd_setup_wordnet(args: argparse.Namespace) -> int:
    from metajudge.runs.metrics_info import run_setup_wordnet

    for line in run_setup_wordnet(args.target, source=args.source, force=args.force):
        print(line)
    return 0
