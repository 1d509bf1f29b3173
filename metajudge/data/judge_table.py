"""A judge-score table in Parquet for ``calibrate estimate``: a file, or a folder of partitions
(any depth; ``key=value`` folders are hive partitions, ``system=NAME/`` gives the column), read
through pyarrow's datasets (the ``parquet`` extra).

Columns (CJE's names, :mod:`.cje_folder`): ``system`` (string), ``prompt_id`` (string or
integer: the cluster and the item), ``judge_score`` (a finite number), ``oracle_label`` (the
human label; null or NaN = unlabelled). One row per (system, prompt_id). The label scale is CJE's
[0, 1] unless the schema's ``metajudge.scale`` metadata says otherwise (JSON ``[min, max]``).

:func:`judge_table_rows` reads every row into memory (the rows of
:func:`~metajudge.data.estimate_rows.read_rows`); :func:`labelled_rows` reads the labelled rows
only and :func:`scan` sums every judge score into
:class:`~metajudge.analyses.calibration.sums.ScoreSums` batch by batch (two columns, one batch of
:data:`BATCH_ROWS` rows and the sums in memory), for a table above :data:`STREAM_ROWS` rows.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from metajudge.data.cje_folder import RESPONSES, SCALE, Row
from metajudge.errors import InputError

#: the columns of a judge-score table
TABLE_COLUMNS = ("system", "prompt_id", "judge_score", "oracle_label")
#: the schema metadata key of the label scale
SCALE_KEY = b"metajudge.scale"
#: rows above which ``calibrate estimate`` sums the table in a streaming scan (below, it reads
#: the rows into memory, paired differences included)
STREAM_ROWS = 2_000_000
#: rows per batch of the streaming scan
BATCH_ROWS = 1 << 20


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if path.suffix.lower() == ".parquet" else []
    if path.is_dir() and not any(path.glob(f"*{RESPONSES}")):
        return sorted(path.rglob("*.parquet"))
    return []


def dataset(path: str | Path) -> Any:
    """The pyarrow dataset of a Parquet file or folder (hive partitions read as columns)."""
    from metajudge.data.columnar import pyarrow

    pa = pyarrow()
    import pyarrow.dataset as ds

    fmt = ds.ParquetFileFormat(read_options={"dictionary_columns": ["system"]})
    try:
        return ds.dataset(str(path), format=fmt, partitioning="hive")
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"not a readable Parquet dataset: {e}", path=path) from e


def is_judge_table(path: str | Path | None) -> bool:
    """Is ``path`` a Parquet file, or a folder of Parquet files, with the judge-score columns?"""
    if not path or str(path).startswith("mlflow:"):
        return False
    files = _files(Path(path))
    if not files:
        return False
    names = set(dataset(path).schema.names)
    return {"system", "prompt_id", "judge_score"} <= names


def label_scale(data: Any) -> tuple[float, float]:
    """The label scale: the schema's ``metajudge.scale`` metadata, else CJE's."""
    raw = (data.schema.metadata or {}).get(SCALE_KEY)
    if raw is None:
        return SCALE
    lo, hi = json.loads(raw)
    return float(lo), float(hi)


def _check(data: Any, path: str | Path, cluster_field: str | None) -> None:
    missing = [c for c in TABLE_COLUMNS if c not in data.schema.names]
    if missing:
        raise InputError(f"a judge-score table needs the column(s) {', '.join(missing)}", path=path)
    if cluster_field not in (None, "prompt_id"):
        raise InputError(
            "a judge-score table is clustered by prompt_id", field="--cluster-field", path=path
        )
    if "draw_idx" in data.schema.names:
        raise InputError(
            "several draws of a prompt (draw_idx) need per-(system, prompt) sums "
            "(docs/scale.md): give one row per system and prompt_id",
            path=path,
            field="draw_idx",
        )


def _rows(table: Any, path: str | Path) -> list[Row]:
    import numpy as np

    judge = table.column("judge_score").to_numpy(zero_copy_only=False).astype(float)
    label = table.column("oracle_label").to_numpy(zero_copy_only=False).astype(float)
    if not np.isfinite(judge).all():
        raise InputError("a missing or non-finite judge score", path=path, field="judge_score")
    systems = [str(s) for s in table.column("system").to_pylist()]
    prompts = [str(p) for p in table.column("prompt_id").to_pylist()]
    return [
        (s, p, p, float(j), None if math.isnan(y) else float(y))
        for s, p, j, y in zip(systems, prompts, judge.tolist(), label.tolist(), strict=True)
    ]


def judge_table_rows(
    path: str | Path, cluster_field: str | None = None
) -> tuple[list[Row], tuple[float, float]]:
    """Every row of the table (``(system, prompt_id, prompt_id, judge, label or None)``) and
    its label scale; a (system, prompt_id) seen twice is refused."""
    data = dataset(path)
    _check(data, path, cluster_field)
    rows = _rows(data.to_table(columns=list(TABLE_COLUMNS)), path)
    keys = {(r[0], r[1]) for r in rows}
    if len(keys) != len(rows):
        raise InputError(
            f"{len(rows) - len(keys)} (system, prompt_id) pair(s) seen twice: give one row per "
            "system and prompt_id",
            path=path,
            field="prompt_id",
        )
    return rows, label_scale(data)


def row_count(path: str | Path) -> int:
    """The table's rows (from the files' metadata)."""
    return int(dataset(path).count_rows())


def labelled_rows(
    path: str | Path, cluster_field: str | None = None
) -> tuple[list[Row], tuple[float, float]]:
    """The labelled rows of the table (a filtered scan) and its label scale."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    data = dataset(path)
    _check(data, path, cluster_field)
    labelled = ds.field("oracle_label").is_valid()
    schema = pa.schema([data.schema.field(c) for c in TABLE_COLUMNS])
    table = pa.Table.from_batches(
        _batches(data, list(TABLE_COLUMNS), filter=labelled), schema=schema
    )
    return [r for r in _rows(table, path) if r[4] is not None], label_scale(data)


def _batches(data: Any, columns: list[str], **kw: Any) -> Any:
    """The batches of ``columns`` (:data:`BATCH_ROWS` rows), pyarrow's scan of one file at a
    time, one batch ahead: a scan of the whole dataset reads ahead of a slow consumer (16
    batches in 4 files by default, 1.6 GB of a 100M-row table's labelled pass; with one batch
    ahead still +600 MB over 60M rows summed on a loaded machine), one file's does not."""
    for fragment in data.get_fragments():
        yield from fragment.to_batches(
            schema=data.schema, columns=columns, batch_size=BATCH_ROWS, batch_readahead=1, **kw
        )


def scan(path: str | Path, sums: Any) -> Any:
    """Add every row's system and judge score to ``sums`` (a
    :class:`~metajudge.analyses.calibration.sums.ScoreSums`), one batch at a time."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in _batches(dataset(path), ["system", "judge_score"]):
        if not batch.num_rows:
            continue
        sys_col, judge_col = batch.column(0), batch.column(1)
        if judge_col.null_count:
            raise InputError("a missing judge score", path=path, field="judge_score")
        if not pa.types.is_dictionary(sys_col.type):
            sys_col = pc.dictionary_encode(sys_col)
        judge = judge_col.to_numpy(zero_copy_only=False).astype(float, copy=False)
        if not np.isfinite(judge).all():
            raise InputError("a non-finite judge score", path=path, field="judge_score")
        names = [str(s) for s in sys_col.dictionary.to_pylist()]
        sums.add(names, sys_col.indices.to_numpy(zero_copy_only=False), judge)
    return sums
