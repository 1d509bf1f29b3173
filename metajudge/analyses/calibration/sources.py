"""Where a :class:`~metajudge.analyses.calibration.table.RatingTable` comes from: a file in the
published rating-distribution format (``--input FILE``), or one judge column of ``--scores``
read against a dataset (``--dataset NAME`` / ``--input DATASET_FILE`` with ``--scores``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.analyses.calibration.table import RatingTable, from_distributions, from_rows
from metajudge.errors import InputError
from metajudge.scores.readers.rows import file_signature


def _shipped_signature(path: Path, data_dir: Any) -> tuple[str, str] | None:
    """(column, signature) of the built-in judge column this file is (by its sha256), if any."""
    from metajudge.data.loading import upstream_match
    from metajudge.data.registry import load_card

    found = upstream_match(path)
    if found is None:
        return None
    card = load_card(found[0])
    for spec in card.shipped_scores:
        if spec.get("loader") != "rating_distribution_csv":
            continue
        for model in spec.get("backbones", []):
            for dim in card.dimensions:
                if str(spec["file"]).format(model=model, dimension=dim) == found[1]:
                    name = str(spec["backbone_column"]).format(backbone=model, dimension=dim)
                    return name, file_signature(name, f"{card.name}/{found[1]}")
    return None


def table_from_csv(
    path: str | Path,
    *,
    distribution: str = "logprobs",
    judge: str | None = None,
    data_dir: Any = None,
) -> RatingTable:
    """A rating-distribution CSV as it is. The judge is the built-in column the file is (e.g.
    ``sheng.4omini_coherence``), else ``judge`` or the file's stem, with the signature
    ``<judge>|source:<file name>|external``."""
    from metajudge.data.rating_csv import read_rating_csv

    p = Path(path)
    dist = read_rating_csv(p, distribution=distribution)  # type: ignore[arg-type]
    known = _shipped_signature(p, data_dir)
    if known is not None and judge in (None, known[0]):
        name, sig = known
    else:
        name = judge or p.stem
        sig = file_signature(name, p.name)
    return from_distributions(dist, judge=name, signature=sig)


def table_from_scores(
    dataset: Any,
    specs: Sequence[Any],
    *,
    dimension: str | None,
    data_dir: Any = None,
    ids: Any = None,
) -> tuple[RatingTable, dict[str, int]]:
    """One judge column of ``specs`` against ``dataset``'s mean human score on ``dimension``
    (default: the dataset's only dimension). ``ids``: the rule for score-file rows whose ids the
    dataset lacks (:class:`~metajudge.scores.readers.alignment.IdPolicy`; ``None`` refuses them)."""
    from metajudge.scores.spec import gather_scores

    dims = tuple(dataset.card.dimensions)
    if dimension is None:
        if len(dims) != 1:
            raise InputError(f"give --dimension (one of {', '.join(dims)})", field="--dimension")
        dimension = dims[0]
    if dimension not in dims:
        raise InputError(
            f"unknown dimension {dimension!r} (known: {', '.join(dims)})", field="--dimension"
        )
    rows = gather_scores(
        dataset, specs, data_dir=data_dir, dimension=dimension, labels=False, ids=ids
    )
    sc = dataset.card.scale_of(dimension)
    return from_rows(
        rows,
        dataset.records,
        dimension=dimension,
        scale=(float(sc.min), float(sc.max)),
        source=str(dataset.source or dataset.name),
    )
