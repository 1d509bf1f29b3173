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
import json
import sys
from typing import Any

from metajudge.cli.options import (
    add_backbone,
    add_cache_file,
    add_data_dir,
    add_prompt_variant,
    add_quiet,
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
    add_data_dir(e)
    add_quiet(e, old=False)
    e.set_defaults(func=cmd_export)


def add_import_batch(jsub: Any) -> None:
    """``judge import-batch`` (added to the ``judge`` group by :mod:`metajudge.cli.judge`)."""
    i = jsub.add_parser(
        "import-batch", help="store a batch results file (OpenAI / vLLM run_batch) in the cache"
    )
    i.add_argument(
        "-i", "--input", required=True, metavar="FILE", help="results file (batch-output JSONL)"
    )
    i.add_argument(
        "--requests", required=True, metavar="FILE", help="the batch file export-batch wrote"
    )
    _llm_cache(i)
    i.set_defaults(func=cmd_import)


def _llm_cache(p: argparse.ArgumentParser) -> None:
    add_cache_file(p, "llm_cache", "--llm-cache")


def cmd_export(args: argparse.Namespace) -> int:
    from metajudge.backends.recording import RecordingBackend
    from metajudge.backends.registry import get_backend
    from metajudge.cli.backends import cli_backbone
    from metajudge.data.loading import open_dataset
    from metajudge.errors import InputError
    from metajudge.metrics.registry import expand_metrics, is_judge
    from metajudge.scores.scoring import score_dataset

    names = expand_metrics([m.strip() for m in args.metrics.split(",") if m.strip()])
    not_judges = [m for m in names if not is_judge(m)]
    if not_judges:
        raise InputError(
            f"not LLM judges (nothing to export): {', '.join(not_judges)}", field="metrics"
        )
    ds = open_dataset(dataset=args.dataset, input=args.input, data_dir=args.data_dir)
    backbone = cli_backbone(args.backbone)  # as `metajudge score`, which the cache then answers
    cached = get_backend(backbone, cache=args.llm_cache or True)
    with cached:
        rec = RecordingBackend.around(cached)
        opts: dict[str, dict[str, Any]] = {m: {"backend": rec} for m in names}
        if args.prompt_variant:
            for o in opts.values():
                o["variant"] = args.prompt_variant
        score_dataset(
            ds,
            names,
            options=opts,
            progress=not args.quiet,
            backbone=backbone,
            source_field=args.source_field,
        )
        summary = export_file(cached, rec, args.output)
    json.dump(summary, sys.stdout, indent=1)
    print()
    return 0


def export_file(cached: Any, rec: Any, output: str) -> dict[str, Any]:
    from metajudge.backends.batch_file import export_requests

    s = export_requests(cached.inner, rec.records.values(), output).to_dict()
    s["n_cached"] = int(rec.ledger.cached)  # requests the cache answered already
    return s


def cmd_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from metajudge.backends.batch_file import import_results
    from metajudge.backends.cache import ResponseCache

    cache = ResponseCache(Path(args.llm_cache) if args.llm_cache else None)
    try:
        summary = import_results(cache, args.input, args.requests)
    finally:
        cache.close()
    json.dump(summary.to_dict(), sys.stdout, indent=1)
    print()
    return 0 if summary.n_failed == 0 else 1
