"""The upstream datasets' own score files among ``--scores`` files, recognised by content and
read by the loaders of :mod:`metajudge.scores.readers.upstream`: RAGChecker's
``baseline_ragchecker.json``, an LFTQA-Eval ``metric_scores/<metric>.json`` and HANNA's
``hanna_metric_scores_llm.csv``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from metajudge.scores.readers import upstream
from metajudge.scores.readers.alignment import Collector, KeyMap
from metajudge.scores.readers.base import Head, Reader, ReadOptions, csv_records, json_records
from metajudge.scores.readers.rows import ScoreRow


def _first(head: Head) -> Mapping[str, Any] | None:
    data = head.json
    ok = isinstance(data, list) and data and isinstance(data[0], Mapping)
    return data[0] if ok else None


def _is_ragchecker(head: Head) -> bool:
    o = _first(head)
    return (
        o is not None
        and "instance_id" in o
        and isinstance(o.get("model1"), Mapping)
        and "ragchecker" in o["model1"]
    )


def _is_lftqa(head: Head) -> bool:
    o = _first(head)
    return o is not None and {"example_id", "model", "score"} <= set(o)


def _ragchecker(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    return upstream.ragchecker_baseline(path, records, opts.ids)


def _lftqa(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    col = Collector()
    upstream.lftqa_file(path, path.stem, KeyMap(records, opts.ids) if records else None, col)
    return col.rows


def _hanna(path: Path, records: Sequence[Any] | None, opts: ReadOptions) -> list[ScoreRow]:
    return upstream.hanna_metric_scores(path, records=records, ids=opts.ids)


RAGCHECKER = Reader(
    "ragchecker",
    "RAGChecker's baseline_ragchecker.json",
    (".json",),
    _is_ragchecker,
    _ragchecker,
    records=json_records,
)
LFTQA = Reader(
    "lftqa",
    "an LFTQA-Eval metric_scores/<metric>.json",
    (".json",),
    _is_lftqa,
    _lftqa,
    records=json_records,
)
HANNA = Reader(
    "hanna",
    "HANNA's hanna_metric_scores_llm.csv",
    (".csv", ".tsv"),
    lambda head: head.first_line.startswith("Model,"),
    _hanna,
    records=csv_records,
)
