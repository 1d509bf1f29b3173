"""``metajudge judge export-batch`` / ``import-batch``: judge runs on a distributed engine.

- ``judge export-batch --dataset NAME|--input FILE --metrics geval -o requests.jsonl`` runs the
  judges in export mode (:class:`~metajudge.backends.recording.RecordingBackend`: nothing is
  sent) and writes the requests the cache lacks as an OpenAI-format batch file.
- ``judge import-batch -i results.jsonl --requests requests.jsonl`` stores a batch results
  file (OpenAI Batch API or ``vllm.entrypoints.openai.run_batch`` output) in the cache; the
  same ``metajudge metrics run`` is then answered from the cache.

The file formats are :mod:`metajudge.backends.batch_file`'s.
"""

from __future__ import annotations

import argparse
from typing import Any

from metajudge.cli.options import (
    add_backbone,
    add_cache_file,
    add_prompt_variant,
    add_source_field,
)


def add_export_batch(jsub: Any) -> None:
    """``judge export-batch`` (added to the ``judge`` group by :mod:`metajudge.cli.judge`)."""
    e = jsub.add_parser(
        "export-batch",
        help="write a judge run's requests as an OpenAI-format batch file (no model call)",
    )
    src = e.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", metavar="NAME", help="dataset name (see `metajudge data list`)")
    src.add_argument(
        "--input", metavar="FILE", help="a canonical JSONL file instead of a named dataset"
    )
    e.add_argument("--metrics", required=True, help="comma-separated LLM-judge metrics")
    e.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="batch file to write or extend (JSONL)",
    )
    _llm_cache(e)
    add_backbone(e)
    add_prompt_variant(e)
    add_source_field(e)
    e.set_defaults(func=cmd_export)


def add_import_batch(jsub: Any) -> None:
    """``judge import-batch`` (added to the ``judge`` group by :mod:`metajudge.cli.judge`)."""
    i = jsub.add_parser(
        "import-batch", help="store a batch results file (OpenAI / vLLM run_batch) in the cache"
    )
    i.add_argument(
        "--results", required=True, metavar="FILE", help="results file (batch-output JSONL)"
    )
    i.add_argument(
        "--requests", required=True, metavar="FILE", help="the batch file export-batch wrote"
    )
    _llm_cache(i)
    i.set_defaults(func=cmd_import)


def _llm_cache(p: argparse.ArgumentParser) -> None:
    add_cache_file(p, "llm_cache")


def cmd_export(args: argparse.Namespace) -> int:
    from metajudge.cli.backends import cli_backbone
    from metajudge.cli.output import print_json
    from metajudge.runs.judge_batch import run_export_batch

    summary = run_export_batch(
        [m.strip() for m in args.metrics.split(",") if m.strip()],
        args.output,
        dataset=args.dataset,
        input_file=args.input,
        data_dir=args.data_dir,
        backbone=cli_backbone(args.backbone),  # as `metrics run`, which the cache then answers
        cache_file=args.llm_cache,
        prompt_variant=args.prompt_variant,
        progress=not args.quiet,
        source_field=args.source_field,
    )
    print_json(summary, indent=1)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from metajudge.cli.output import print_json
    from metajudge.runs.judge_batch import run_import_batch

    summary = run_import_batch(args.results, args.requests, cache_file=args.llm_cache)
    print_json(summary.to_dict(), indent=1)
    return 0 if summary.n_failed == 0 else 1
