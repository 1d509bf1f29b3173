"""What a command reads: :class:`DataSource`, built once by the CLI from ``--dataset`` /
``--input`` / ``--subset`` / ``--scores`` / ``--dimension`` / ``--data-dir``, loaded by
:meth:`DataSource.load`.

The source is a built-in dataset (``dataset``, a card name) or a path (``path``: a canonical
JSONL or upstream file, a rating-distribution CSV, a CJE fresh-draw folder, an annotation
folder); ``scores`` names the score columns (``--scores`` specs, as text or parsed),
``judge`` the judge's column where one is meant, ``distribution`` a rating CSV's distribution
column and ``cluster_field`` the field rows are clustered by. A source carries its loaded dataset once
:meth:`DataSource.loaded_once` has read it, and its score rows once
:func:`metajudge.scores.source_rows.scored_once` has gathered them, so that a command running
several analyses (the judge card) reads the data and the score files once and hands the same
records and rows to each.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class DataSource:
    """What a command reads (module docstring); ``ids``: the id policy of score rows
    (``--strict-ids``); ``dataset_obj``: the dataset already read (:meth:`loaded_once`);
    ``scores_read``: score rows already gathered
    (:class:`~metajudge.scores.source_rows.ScoresRead`)."""

    dataset: str | None = None
    path: str | None = None
    subset: str | None = None
    scores: Sequence[Any] = ()
    judge: str | None = None
    dimension: str | None = None
    distribution: str | None = None
    cluster_field: str | None = None
    data_dir: str | Path | None = None
    ids: Any = None
    tracking_uri: str | None = None
    dataset_obj: Any = field(default=None, compare=False, repr=False)
    scores_read: Any = field(default=None, compare=False, repr=False)

    def load(self, progress: Any = None, texts: bool = True) -> Any:
        """The :class:`~metajudge.data.structure.Dataset` named by ``dataset`` or read from
        ``path`` (:func:`~metajudge.data.loading.open_dataset`; ``progress``: its callback of
        the lines read; ``texts`` False: without the texts, only their word counts), with
        ``subset``; the one already read where :meth:`loaded_once` gave it."""
        if self.dataset_obj is not None:
            return self.dataset_obj
        from metajudge.data.loading import open_dataset

        opts = {"dimension": self.dimension} if self.is_mlflow and self.dimension else {}
        return open_dataset(
            self.dataset,
            self.path,
            subset=self.subset,
            data_dir=self.data_dir,
            tracking_uri=self.tracking_uri,
            progress=progress,
            texts=texts,
            **opts,
        )

    def loaded_once(self, texts: bool = True) -> DataSource:
        """This source carrying its loaded dataset (``texts`` as :meth:`load` takes it):
        :meth:`load` then returns it unread."""
        if self.dataset_obj is not None:
            return self
        return self.but(dataset_obj=self.load(texts=texts))

    def but(self, **changes: Any) -> DataSource:
        """This source with ``changes`` (:func:`dataclasses.replace`)."""
        return dataclasses.replace(self, **changes)

    @property
    def name(self) -> str:
        """What a result names as its source: the dataset's name, else the path."""
        return str(self.dataset or self.path)

    @property
    def is_mlflow(self) -> bool:
        """Is the source an MLflow experiment (``mlflow:EXPERIMENT``)?"""
        from metajudge.data.mlflow_traces import is_mlflow

        return is_mlflow(self.path)

    @property
    def is_folder(self) -> bool:
        """Is the source a folder (a CJE fresh-draw or annotation folder)?"""
        return bool(self.path) and Path(str(self.path)).is_dir()

    def args(self) -> list[str]:
        """The data options of a command line that reads this source."""
        a = ["--dataset", self.dataset] if self.dataset else ["--input", str(self.path)]
        return a + (["--subset", self.subset] if self.subset else [])
