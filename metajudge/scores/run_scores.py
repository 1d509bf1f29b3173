"""The score rows of a meta-evaluation run: the score specs (:mod:`metajudge.scores.spec`) and
the registry metrics no spec provides, computed with :func:`metajudge.scores.scoring.score_dataset`
and cached in ``<out>/scores.jsonl`` (a rerun with the same metric signatures is served from it).

Used by :func:`metajudge.runs.meta_eval.run_meta_eval` and by the report of a run folder
(:mod:`metajudge.reports.html_views`), so both read the same rows."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.scores.readers.rows import INPUTS_FIELD, metric_for_dimension, row_metrics
from metajudge.scores.spec import SHIPPED, ScoreSpec, as_specs, file_spec

log = logging.getLogger(__name__)

SCORES_CACHE = "scores.jsonl"


def score_specs(
    scores: Sequence[ScoreSpec | str] = (),
    score_files: Sequence[str] = (),
    external: bool = False,
) -> list[ScoreSpec]:
    """The run's score specs: ``scores``, then the old keywords mapped onto the grammar
    (``score_files``: each a ``PATH`` spec; ``external=True``: ``shipped``)."""
    files = [file_spec(f) for f in score_files]
    return [*as_specs(scores), *files, *([SHIPPED] if external else [])]


def _complete_from_cache(
    cache: Path, ds: Any, metrics: Sequence[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of ``metrics`` that the cache holds for *every* response of ``ds``; the rest to score.

    A metric counts as cached when each response key has a row (scored, or with its error) of
    the response's current inputs (:func:`~metajudge.scores.scoring.inputs_digest`: a changed
    text is scored again). The metric is not instantiated (that can load a model), so its
    current signature is not re-checked: the cached rows' signatures are printed in the report;
    ``rescore=True`` (``--rescore``) recomputes through
    :func:`~metajudge.scores.scoring.score_dataset`, which reuses only rows whose signature
    matches.
    """
    if not cache.is_file():
        return [], list(metrics)
    from metajudge.metrics.base import iter_responses
    from metajudge.scores.files import read_scores

    refs = list(iter_responses(ds.records))
    digests = {m: _digests(refs, m) for m in metrics}
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for r in read_scores(cache, allow_empty=True):
        m = r["metric"]
        if m in digests and digests[m].get(r["key"]) == r.get(INPUTS_FIELD):
            by.setdefault(m, {})[r["key"]] = r
    reused: list[dict[str, Any]] = []
    missing: list[str] = []
    for m in metrics:
        got = by.get(m, {})
        if len(got) == len(digests[m]):
            reused += list(got.values())
        else:
            missing.append(m)
    return reused, missing


def _digests(refs: Sequence[Any], metric: str) -> dict[str, str]:
    """``{response key: inputs digest}`` of registry ``metric`` (whether it reads the input is
    its class's ``uses_input``; not instantiated)."""
    from metajudge.metrics.registry import metric_class
    from metajudge.scores.scoring import inputs_digest

    uses_input = bool(getattr(metric_class(metric), "uses_input", True))
    return {r.key: inputs_digest(r, uses_input) for r in refs}


def registry_names(names: Sequence[str]) -> list[str]:
    """Registry metrics to score, families expanded once (``geval`` → ``geval_faithfulness``,
    ``geval_completeness``), so the cache lookup, the scoring and the cache merge all see the
    same member names and a rerun neither rescores nor duplicates a family's rows.

    >>> registry_names(["bleu", "geval", "geval_faithfulness"])
    ['bleu', 'geval_faithfulness', 'geval_completeness']
    """
    from metajudge.metrics.registry import expand_metrics, is_metric, list_metrics

    unknown = [m for m in names if not is_metric(m)]
    if unknown:
        raise InputError(
            f"no scores for {unknown}: not in the score files and not registry metrics "
            f"(known: {', '.join(list_metrics())})",
            field="metrics",
        )
    return expand_metrics(names)


def _registry_rows(
    ds: Any,
    to_score: Sequence[str],
    out: Path,
    *,
    rescore: bool,
    progress: bool,
    data_dir: Any,
    backbone: str | None = None,
    pending: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    cache = out / SCORES_CACHE
    reused, missing = (
        _complete_from_cache(cache, ds, to_score) if not rescore else ([], list(to_score))
    )
    rows = list(reused)
    if missing:
        from metajudge.scores.scoring import score_dataset, write_scores

        computed = score_dataset(
            ds, missing, cache_path=cache, progress=progress, data_dir=data_dir, backbone=backbone
        )
        merged = _merged_cache(cache, computed, missing)
        if pending is None:
            write_scores(cache, merged)
        else:
            pending[:] = merged
        rows += computed
    return rows


def gather_run_scores(
    ds: Any,
    *,
    out_dir: str | Path,
    metrics: Sequence[str] | None = None,
    scores: Sequence[ScoreSpec | str] = (),
    score_files: Sequence[str] = (),
    external: bool = False,
    data_dir: str | Path | None = None,
    progress: bool = True,
    rescore: bool = False,
    backbone: str | None = None,
    ids: IdPolicy | None = None,
    pending: list[dict[str, Any]] | None = None,
    reading: Any = None,
    spec_rows: Any = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Score rows of the score specs (:func:`metajudge.scores.spec.gather_scores`) and of the
    registry ``metrics`` no spec provides (computed, cached in ``OUT/scores.jsonl``).

    ``pending``: when given, a new cache is not written into ``out_dir`` but put in this list
    (every row of it), for the caller to write into the run's stage
    (:meth:`metajudge.run_folder.RunFolder.write_cache`): the run folder then never holds the
    scores of one run beside the result of another; it stays empty when the cache is unchanged.

    ``score_files``/``external``: the old spellings of ``scores`` (:func:`score_specs`).
    ``backbone``: the LLM judges' backbone (``None``: the default embedded one).
    ``ids``: the rule for score-file rows whose ids the dataset lacks
    (:class:`~metajudge.scores.readers.alignment.IdPolicy`; ``None`` refuses them).
    ``reading``: how a judge framework's file is joined
    (:class:`~metajudge.scores.readers.base.Reading`; None: the defaults).
    ``spec_rows``: the specs' rows already gathered (by ``ids``), not read again.
    """
    from metajudge.scores.spec import gather_scores as gather_spec_rows

    specs = score_specs(scores, score_files, external)
    rows = spec_rows
    if rows is None:
        rows = gather_spec_rows(ds, specs, data_dir=data_dir, ids=ids, reading=reading)
    have = set(row_metrics(rows))
    dims = list(ds.card.dimensions)
    to_score = [
        m for m in (metrics or []) if all(metric_for_dimension(m, d, have) is None for d in dims)
    ]
    if to_score:
        to_score = registry_names(to_score)
        rows = rows + _registry_rows(  # a new list: given rows stay as they are
            ds,
            to_score,
            Path(out_dir),
            rescore=rescore,
            progress=progress,
            data_dir=data_dir,
            backbone=backbone,
            pending=pending,
        )
    if not rows:
        raise InputError(
            "no scores: give --metrics, --scores FILE or --scores shipped", field="metrics"
        )
    return rows, to_score


def _merged_cache(
    cache: Path, computed: list[dict[str, Any]], metrics: Sequence[str]
) -> list[dict[str, Any]]:
    """The cached rows of other metrics, and ``computed`` in place of those of ``metrics``."""
    from metajudge.scores.files import read_scores

    keep: list[dict[str, Any]] = []
    if cache.is_file():
        keep = [r for r in read_scores(cache, allow_empty=True) if r["metric"] not in set(metrics)]
    return keep + computed


def write_scores_cache(rf: Any, rows: Any) -> None:
    """The run's new ``scores.jsonl`` (``rows``; nothing when None or empty: the old one, if
    any, is carried) into run folder ``rf``'s stage: it comes in place with the result it
    belongs to, so a killed run never leaves its scores beside the old run's result."""
    if rows:
        from metajudge.scores.scoring import score_lines

        rf.write_cache(SCORES_CACHE, "".join(score_lines(rows)))
