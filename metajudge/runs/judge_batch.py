"""``metajudge judge export-batch`` / ``import-batch``: judge runs on a distributed engine.

:func:`run_export_batch` runs the judges in export mode
(:class:`~metajudge.backends.recording.RecordingBackend`: nothing is sent) and writes the
requests the cache lacks as an OpenAI-format batch file; :func:`run_import_batch` stores a batch
results file in the cache, so that the same ``metrics run`` is then answered from it. The file
formats are :mod:`metajudge.backends.batch_file`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def export_file(cached: Any, rec: Any, output: str | Path) -> dict[str, Any]:
    """Write the requests ``rec`` recorded (those the cache lacks) to ``output``; the summary."""
    from metajudge.backends.batch_file import export_requests

    s = export_requests(cached.inner, rec.records.values(), output).to_dict()
    s["n_cached"] = int(rec.ledger.cached)  # requests the cache answered already
    return s


def run_export_batch(
    metrics: list[str],
    output: str | Path,
    *,
    dataset: str | None = None,
    input_file: str | None = None,
    data_dir: str | Path | None = None,
    backbone: Any = None,
    cache_file: str | Path | None = None,
    prompt_variant: str | None = None,
    progress: bool = True,
    source_field: str | None = None,
) -> dict[str, Any]:
    """The batch file of the LLM-judge ``metrics`` on the dataset (module docstring); refused
    when a metric is not an LLM judge. ``cache_file``: the response cache (default: the user's)."""
    from metajudge.backends.recording import RecordingBackend
    from metajudge.backends.registry import get_backend
    from metajudge.data.loading import open_dataset
    from metajudge.errors import InputError
    from metajudge.metrics.registry import expand_metrics, is_judge
    from metajudge.scores.scoring import score_dataset

    names = expand_metrics(metrics)
    not_judges = [m for m in names if not is_judge(m)]
    if not_judges:
        raise InputError(
            f"not LLM judges (nothing to export): {', '.join(not_judges)}", field="metrics"
        )
    ds = open_dataset(dataset=dataset, input=input_file, data_dir=data_dir)
    cached = get_backend(backbone, cache=cache_file or True)
    with cached:
        rec = RecordingBackend.around(cached)
        opts: dict[str, dict[str, Any]] = {m: {"backend": rec} for m in names}
        if prompt_variant:
            for o in opts.values():
                o["variant"] = prompt_variant
        score_dataset(
            ds,
            names,
            options=opts,
            progress=progress,
            backbone=backbone,
            source_field=source_field,
        )
        return export_file(cached, rec, output)


def run_import_batch(
    results: str | Path, requests: str | Path, *, cache_file: str | Path | None = None
) -> Any:
    """Store the batch ``results`` of the ``requests`` file in the response cache; the import
    summary (``n_failed``: results that could not be stored)."""
    from metajudge.backends.batch_file import import_results
    from metajudge.backends.cache import ResponseCache

    cache = ResponseCache(Path(cache_file) if cache_file else None)
    try:
        return import_results(cache, results, requests)
    finally:
        cache.close()
