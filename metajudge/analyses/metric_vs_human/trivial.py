"""Trivial baselines: rows every meta-evaluation table carries unless turned off.

A metric or judge is only informative when it beats what needs no model at all:

- ``trivial.length_words`` — the response's length in words (whitespace tokens). On summary
  informativeness, length alone can correlate as well as an LLM judge (issue 14's note: 0.704
  pointwise Pearson on an unseen summarisation set, above a published Llama-3.1-70B judge);
- ``trivial.random`` — a uniform random score per response from ``numpy.random.default_rng(seed)``
  (the protocol's seed), in the dataset's response order: the level of chance.

A response without text gets no length (``score`` None, ``error`` saying so: counted as missing
like any other metric's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

LENGTH = "trivial.length_words"
RANDOM = "trivial.random"
TRIVIAL: tuple[str, ...] = (LENGTH, RANDOM)


def is_trivial(metric: str) -> bool:
    return metric in TRIVIAL


def trivial_rows(records: Iterable[Any], seed: int) -> list[dict[str, Any]]:
    """Score rows of both trivial baselines for every response of ``records``."""
    from metajudge.metrics.base import iter_responses

    refs = list(iter_responses(records))
    rnd = np.random.default_rng(seed).random(len(refs))
    rows: list[dict[str, Any]] = []
    for ref, r in zip(refs, rnd, strict=True):
        base = {
            "key": ref.key,
            "item": ref.item,
            "system": ref.system,
            "side": ref.side,
            "details": {},
        }
        text = ref.response
        rows.append(
            {
                **base,
                "metric": LENGTH,
                "signature": f"{LENGTH}|split:whitespace",
                "score": None if text is None else float(len(text.split())),
                "error": "no response text" if text is None else None,
            }
        )
        rows.append(
            {
                **base,
                "metric": RANDOM,
                "signature": f"{RANDOM}|uniform|seed:{seed}",
                "score": float(r),
                "error": None,
            }
        )
    return rows


def with_trivial(metrics: Sequence[str] | None) -> list[str] | None:
    """The metric list with the trivial baselines appended (None stays None: every metric)."""
    return None if metrics is None else [*metrics, *(m for m in TRIVIAL if m not in metrics)]
