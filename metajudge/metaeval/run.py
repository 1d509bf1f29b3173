"""One meta-evaluation run: load a dataset, gather scores, meta-evaluate, write the reports.

``run_meta_eval`` is what ``metajudge meta-eval`` calls. Scores come from, in order:

1. ``score_files`` (``--scores FILE``): any format :func:`metajudge.metaeval.external.read_score_file`
   reads; a name that is not an existing path is looked up among the dataset's upstream files
   (e.g. ``baseline_ragchecker.json``);
2. ``external=True`` (``--external``): the scores the dataset ships (RAGChecker's own scores,
   LFTQA-Eval's metric files, HANNA's metric and judge columns);
3. registry metrics named in ``metrics`` that no file provides: computed with
   :func:`metajudge.metrics.scoring.score_dataset` and cached in ``<out>/scores.jsonl`` — a
   rerun with the same metric signatures is served from that cache.

The run folder then holds ``result.json`` (the full result), the tables and the plots
(:func:`metajudge.reports.render.render_all`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.metaeval.external import (
    hanna_metric_scores,
    lftqa_metric_scores,
    metric_for_dimension,
    ragchecker_baseline,
    read_score_file,
)
from metajudge.metaeval.protocol import MetaEvalResult, meta_evaluate

log = logging.getLogger(__name__)

SCORES_CACHE = "scores.jsonl"


def external_scores(dataset: Any, data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The per-response scores that ship with ``dataset`` (by its card name)."""
    from metajudge.data.registry import resolve_file

    name = dataset.card.name
    recs = dataset.records
    if name == "ragchecker_meta_eval":
        return ragchecker_baseline(resolve_file(name, "baseline_ragchecker.json", data_dir), recs)
    if name == "lftqa_eval":
        subsets = dataset.subsets if len(dataset.subsets) == 1 else (None,)
        rows: list[dict[str, Any]] = []
        for s in subsets:
            rows += lftqa_metric_scores(s, data_dir=data_dir, records=recs)
        return rows
    if name == "hanna":
        return hanna_metric_scores(
            resolve_file(name, "hanna_metric_scores_llm.csv", data_dir), records=recs
        )
    raise InputError(
        f"dataset {name!r} ships no per-response scores (those that do: ragchecker_meta_eval, lftqa_eval, hanna)",
        field="external",
    )


def _resolve_score_path(dataset_name: str, spec: str, data_dir: str | Path | None) -> Path:
    p = Path(spec)
    if p.is_file():
        return p
    from metajudge.data.registry import resolve_file

    try:
        return resolve_file(dataset_name, spec, data_dir)
    except Exception as e:  # noqa: BLE001 - say clearly what was tried
        raise InputError(
            f"score file not found (not a path, nor an upstream file of {dataset_name!r}: {e})",
            path=spec,
            field="scores",
        ) from None


def _directions(metrics: Sequence[str]) -> dict[str, str]:
    """Each registry metric's direction, read from its class without instantiating it."""
    from metajudge.metrics import registry

    out = {}
    for m in metrics:
        try:
            target = registry._entry(m).target
            out[m] = str(getattr(registry._resolve(target), "direction", "higher"))
        except Exception:  # noqa: BLE001 - not a registry metric (external column): "higher"
            log.debug("%s: not a registry metric, direction 'higher'", m)
    return out


def _complete_from_cache(
    cache: Path, ds: Any, metrics: Sequence[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of ``metrics`` that the cache holds for *every* response of ``ds``; the rest to score.

    A metric counts as cached when each response key has a row (scored, or with its error).
    The metric is not instantiated (that can load a model), so its current signature is not
    re-checked: the cached rows' signatures are printed in the report; ``rescore=True``
    (``--rescore``) recomputes through :func:`~metajudge.metrics.scoring.score_dataset`, which
    reuses only rows whose signature matches.
    """
    if not cache.is_file():
        return [], list(metrics)
    from metajudge.metrics.base import iter_responses
    from metajudge.metrics.scoring import read_scores

    keys = {r.key for r in iter_responses(ds.records)}
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for r in read_scores(cache, allow_empty=True):
        if r["metric"] in metrics and r["key"] in keys:
            by.setdefault(r["metric"], {})[r["key"]] = r
    reused: list[dict[str, Any]] = []
    missing: list[str] = []
    for m in metrics:
        got = by.get(m, {})
        if len(got) == len(keys):
            reused += list(got.values())
        else:
            missing.append(m)
    return reused, missing


def run_meta_eval(
    dataset_name: str,
    *,
    out_dir: str | Path,
    metrics: Sequence[str] | None = None,
    score_files: Sequence[str] = (),
    external: bool = False,
    data_dir: str | Path | None = None,
    subset: str | None = None,
    normalize: str = "minmax",
    aggregation: str = "per_annotator",
    grouped: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
    epsilon: float = 0.0,
    learn_epsilon: bool = False,
    cv_folds: int = 5,
    compare: bool = True,
    plots: bool = True,
    progress: bool = True,
    rescore: bool = False,
) -> tuple[MetaEvalResult, dict[str, Path]]:
    """Run the whole meta-evaluation into ``out_dir``; returns the result and the written files."""
    from metajudge.data.registry import load_dataset

    t0 = time.perf_counter()
    out = Path(out_dir)
    ds = load_dataset(dataset_name, data_dir)
    if subset:
        ds = ds.subset(subset)
    dims = list(ds.card.dimensions)
    rows: list[dict[str, Any]] = []
    for spec in score_files:
        rows += read_score_file(_resolve_score_path(dataset_name, spec, data_dir), ds.records)
    if external:
        rows += external_scores(ds, data_dir)
    have = {r["metric"] for r in rows}
    to_score = [
        m for m in (metrics or []) if all(metric_for_dimension(m, d, have) is None for d in dims)
    ]
    if to_score:
        from metajudge.metrics.registry import list_metrics

        unknown = [m for m in to_score if m not in list_metrics()]
        if unknown:
            raise InputError(
                f"no scores for {unknown}: not in the score files and not registry metrics (known: {', '.join(list_metrics())})",
                field="metrics",
            )
        cache = out / SCORES_CACHE
        reused, missing = (
            _complete_from_cache(cache, ds, to_score) if not rescore else ([], list(to_score))
        )
        rows += reused
        if missing:
            from metajudge.metrics.scoring import score_dataset

            computed = score_dataset(
                ds, missing, cache_path=cache, progress=progress, data_dir=data_dir
            )
            _merge_cache(cache, computed, missing)
            rows += computed
    if not rows:
        raise InputError("no scores: give --metrics, --scores FILE or --external", field="metrics")
    res = meta_evaluate(
        ds,
        rows,
        metrics=list(metrics) if metrics else None,
        normalize=normalize,
        aggregation=aggregation,
        grouped=grouped,
        n_boot=n_boot,
        seed=seed,
        epsilon=epsilon,
        learn_epsilon=learn_epsilon,
        cv_folds=cv_folds,
        compare=compare,
        directions=_directions(metrics or sorted(have)),
    )
    res.data["run"] = {
        "dataset": dataset_name,
        "subset": subset,
        "score_files": [str(s) for s in score_files],
        "external": external,
        "registry_metrics": to_score,
        "rescore": rescore,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    from metajudge.reports.render import RESULT_FILE, render_all

    res.save(out / RESULT_FILE)
    written = {RESULT_FILE: out / RESULT_FILE}
    written.update(render_all(out, plots=plots, result=res))
    return res, written


def _merge_cache(cache: Path, computed: list[dict[str, Any]], metrics: Sequence[str]) -> None:
    """Keep the cached rows of other metrics, replace those of ``metrics`` with ``computed``."""
    from metajudge.metrics.scoring import read_scores, write_scores

    keep: list[dict[str, Any]] = []
    if cache.is_file():
        keep = [r for r in read_scores(cache, allow_empty=True) if r["metric"] not in set(metrics)]
    write_scores(cache, keep + computed)
