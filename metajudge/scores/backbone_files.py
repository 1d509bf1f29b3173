"""The per-backbone score files of a backbone-swap run folder (``scores_<backbone>.jsonl``):
written by :func:`metajudge.runs.backbone_swap.run_backbone_swap` for the backbones judged live,
read back by the run folder's report (:mod:`metajudge.reports.html_views`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def score_file(out_dir: str | Path, backbone: str) -> Path:
    """``<out_dir>/scores_<backbone>.jsonl`` (characters other than ``A-Za-z0-9._-`` as ``_``).

    >>> score_file("run", "openai:gpt-4o").name
    'scores_openai_gpt-4o.jsonl'
    """
    import re

    return Path(out_dir) / f"scores_{re.sub(r'[^A-Za-z0-9._-]', '_', backbone)}.jsonl"


def write_backbone_scores(
    out_dir: str | Path, data: Any, records: Sequence[Any], backbones: Sequence[str]
) -> list[Path]:
    """Each live backbone's per-response scores (``data``: the aligned
    :class:`~metajudge.analyses.backbone_swap.SwapData`) as score rows (:mod:`metajudge.scores.readers.rows`)
    in :func:`score_file`.

    A response the backbone did not score has a null score and an ``error`` naming it (the
    error counts per kind are in ``swap.json``'s ``runs``)."""
    from metajudge.metrics.base import iter_responses
    from metajudge.scores.readers.rows import make_row
    from metajudge.scores.scoring import write_scores

    col = {k: i for i, k in enumerate(data.view.keys)}
    refs = list(iter_responses(records))
    paths = []
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for bb in backbones:
        k = data.backbones.index(bb)
        rows = []
        for ref in refs:
            i = col.get(ref.key)
            v = None if i is None else float(data.scores[k, i])
            score = v if v is not None and np.isfinite(v) else None
            rows.append(
                make_row(
                    item=ref.item,
                    system=ref.system,
                    side=ref.side,
                    metric=data.metric,
                    score=score,
                    signature=data.signatures.get(bb, ""),
                    details={"backbone": bb},
                    error=None if score is not None else f"not scored by {bb} (see swap.json runs)",
                )
            )
        path = score_file(out_dir, bb)
        write_scores(path, rows)
        paths.append(path)
    return paths


def read_backbone_scores(
    out_dir: str | Path, backbones: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """The saved per-response scores (key -> score) of the backbones that have a score file."""
    from metajudge.scores.files import read_scores

    out: dict[str, dict[str, float | None]] = {}
    for bb in backbones:
        path = score_file(out_dir, bb)
        if path.is_file():
            out[bb] = {r["key"]: r["score"] for r in read_scores(path, allow_empty=True)}
    return out
