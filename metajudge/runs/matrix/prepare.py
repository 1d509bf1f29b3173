"""One ``matrix run`` cell before it is scored: its options (:class:`CellOptions`), its dataset and
items (:func:`prepare_cell`) and the cached backend it calls (:func:`open_backend`); used by the
run (:mod:`metajudge.runs.matrix.run`), the pairwise cell (:mod:`.pairwise`) and the cost
estimate (:mod:`.cost`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from metajudge.errors import InputError


@dataclass(frozen=True)
class CellOptions:
    """One cell run: what, on which data, under which backbone, how many items, which seed."""

    metric: str
    dataset: str | None = None
    input: str | None = None
    backbone: str | None = None
    limit: int | None = None
    first: int | None = None
    seed: int = 0
    n_boot: int = 1000
    prompt_variant: str | None = None
    data_dir: str | None = None
    baselines: str | None = None
    progress: bool = True
    out: str | None = None

    def command(self) -> str:
        """The ``metajudge matrix run`` command line of these options."""
        parts = ["metajudge matrix run", f"--metric {self.metric}"]
        parts.append(f"--dataset {self.dataset}" if self.dataset else f"--input {self.input}")
        for flag, v in (
            ("--backbone", self.backbone),
            ("--limit", self.limit),
            ("--first", self.first),
            ("--prompt-variant", self.prompt_variant),
        ):
            if v is not None:
                parts.append(f"{flag} {v}")
        parts += [f"--seed {self.seed}", f"--n-boot {self.n_boot}"]
        return " ".join(parts)


@dataclass
class Prepared:
    """A cell ready to run: the (subset) dataset, its facts, the draw, the protocol."""

    dataset: Any  # the subset as a Dataset
    facts: Any
    draw: Any
    protocol: dict[str, str]
    source: str


def prepare_cell(opts: CellOptions) -> Prepared:
    """Steps 1–2 of the module docstring (no model call)."""
    import numpy as np

    from metajudge.data.loading import open_dataset
    from metajudge.data.registry import Dataset
    from metajudge.data.subsample import draw_items, select
    from metajudge.metrics.registry import DEFINED_PREFIX
    from metajudge.runs.matrix.table import (
        applicability,
        dataset_facts,
        matrix_rows,
        natural_protocol,
    )

    if opts.metric not in matrix_rows() and not opts.metric.startswith(DEFINED_PREFIX):
        raise InputError(
            f"unknown matrix row {opts.metric!r}; rows: {', '.join(matrix_rows())}", field="metric"
        )
    ds = open_dataset(dataset=opts.dataset, input=opts.input, data_dir=opts.data_dir)
    source = "built-in" if opts.dataset else str(opts.input)
    facts = dataset_facts(ds, source=source)
    reason = applicability(opts.metric, facts)
    if reason is not None:
        raise InputError(f"{opts.metric} does not apply to {facts.name}: {reason}", field="metric")
    if opts.limit is None and opts.first is None:  # every labelled item
        draw = draw_items(ds.records, None, np.random.default_rng(opts.seed))
    else:
        draw = select(ds.records, limit=opts.limit, first=opts.first, seed=opts.seed, strict=True)
    sub = Dataset(card=ds.card, records=list(draw.records))
    return Prepared(sub, facts, draw, natural_protocol(opts.metric, facts), source)


class PromptChars:
    """A backend wrapper placed under the cache (it sees cache misses only): counts the
    characters of the prompts the model is sent and times the model apart from the embedded
    server's start (``start_s``), so throughputs measured on small cells are not the start's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.chars = 0
        self.start_s = 0.0
        self.model_s = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, requests: Sequence[Any], on_result: Any = None) -> Any:
        start = getattr(self.inner, "_ensure_started", None)  # embedded llama.cpp servers
        t0 = time.perf_counter()
        if start is not None:
            start()
        t1 = time.perf_counter()
        self.start_s += t1 - t0
        self.chars += sum(request_chars(r) for r in requests)
        try:
            if on_result is None:
                return self.inner.complete(requests)
            return self.inner.complete(requests, on_result=on_result)
        finally:
            self.model_s += time.perf_counter() - t1


def request_chars(r: Any) -> int:
    """Characters of a request's text (its prompt, or its messages' contents)."""
    if r.prompt is not None:
        return len(r.prompt)
    return sum(len(str(m.get("content", ""))) for m in r.messages or ())


def open_backend(backbone: str | None, parser_version: str, seed: int) -> tuple[Any, PromptChars]:
    """The cached backend of ``backbone`` with a :class:`PromptChars` under its cache."""
    from metajudge.backends.registry import get_backend
    from metajudge.metrics.judges.engine import resolve_backbone

    be = get_backend(resolve_backbone(backbone), parser_version=parser_version, seed=seed)
    counter = PromptChars(be.inner)
    be.inner = counter
    return be, counter
