"""metajudge.data — canonical records, dataset cards, loaders for the human-judgment datasets.

Light to import: the names below load their modules on first use (PEP 562), and no module of
this package imports pandas or other heavy libraries at import time.

>>> from metajudge.data import list_datasets, load            # doctest: +SKIP
>>> ds = load("ragchecker_meta_eval")                          # doctest: +SKIP
>>> len(ds.pairs())                                            # doctest: +SKIP
280

:func:`load` (:mod:`metajudge.data.loading`) is the one loader: a dataset name, or a canonical
JSONL, JUDGE-BENCH or recognised upstream file. ``load_dataset``, ``load_file`` and
``load_jsonl_dataset`` are its old names.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    # loading: the one loader and its old names
    "load": "metajudge.data.loading",
    "open_dataset": "metajudge.data.loading",
    "file_kind": "metajudge.data.loading",
    # registry
    "list_datasets": "metajudge.data.registry",
    "load_card": "metajudge.data.registry",
    "list_local": "metajudge.data.loading",
    "check_file": "metajudge.data.validation",
    "record_from_dict": "metajudge.data.validation",
    "resolve_file": "metajudge.data.registry",
    "describe_counts": "metajudge.data.registry",
    "cards_dir": "metajudge.data.registry",
    "Dataset": "metajudge.data.registry",
    # benchmark inputs
    "load_mudabench": "metajudge.data.benchmarks",
    "load_mtraig_items": "metajudge.data.benchmarks",
    "load_mtraig_tables": "metajudge.data.benchmarks",
    "MudaQuestion": "metajudge.data.benchmarks",
    "MTRaigItem": "metajudge.data.benchmarks",
    # external (non-human) scores shipped with some datasets
    "load_external_verdicts": "metajudge.scores.dataset_verdicts",
    # formats
    "PairwiseRecord": "metajudge.data.formats",
    "LikertRecord": "metajudge.data.formats",
    "Input": "metajudge.data.formats",
    "Table": "metajudge.data.formats",
    "Response": "metajudge.data.formats",
    "DatasetCard": "metajudge.data.formats",
    "Scale": "metajudge.data.formats",
    "SourceFile": "metajudge.data.formats",
    "read_jsonl": "metajudge.data.validation",
    "write_jsonl": "metajudge.data.formats",
    "likert_to_pairwise": "metajudge.data.formats",
}

__all__ = [
    "Dataset",
    "DatasetCard",
    "Input",
    "LikertRecord",
    "MTRaigItem",
    "MudaQuestion",
    "PairwiseRecord",
    "Response",
    "Scale",
    "SourceFile",
    "Table",
    "cards_dir",
    "check_file",
    "describe_counts",
    "file_kind",
    "likert_to_pairwise",
    "list_datasets",
    "list_local",
    "load",
    "load_card",
    "load_external_verdicts",
    "load_mtraig_items",
    "load_mtraig_tables",
    "load_mudabench",
    "open_dataset",
    "read_jsonl",
    "record_from_dict",
    "resolve_file",
    "write_jsonl",
]


_OLD = {"load_dataset": "load", "load_file": "load", "load_jsonl_dataset": "load"}


def __getattr__(name: str) -> Any:
    if name in _OLD:  # old spellings, kept for one release
        return getattr(importlib.import_module("metajudge.data.loading"), _OLD[name])
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'metajudge.data' has no attribute {name!r}")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_OLD))
