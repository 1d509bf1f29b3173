"""A data source's score rows, gathered once: :func:`scored_once` reads the score files of a
:class:`~metajudge.data.source.DataSource` on its dataset with one id policy and the source
carries them (its ``scores_read``), so that a command running several analyses (the judge card:
meta-eval, selective, conformal) reads each score file once and counts the rows it drops once;
:func:`source_rows` gives every analysis its rows, those carried where they are the same."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from metajudge.data.source import DataSource
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.scores.spec import SHIPPED, gather_scores, reads_labels


@dataclass(frozen=True)
class ScoresRead:
    """Score rows gathered once (:func:`scored_once`): the dataset and the score specs they
    were read for, whether label cells were kept as labels, the rows, and the id policy that
    counted the rows it dropped."""

    dataset: Any
    specs: tuple[Any, ...]
    labels: bool
    rows: Any
    ids: IdPolicy


def dataset_id_policy(src: DataSource, ds: Any) -> IdPolicy:
    """The id policy of a run of ``src`` on ``ds`` (its dataset): strict with ``src.ids.strict``
    (``--strict-ids``), else drop-and-count; the rows of the dataset's other subsets set aside."""
    strict = bool(getattr(src.ids, "strict", False))
    return IdPolicy(strict=strict, elsewhere=ds.other_subset_ids, subset=src.subset or "")


def scored_once(src: DataSource) -> DataSource:
    """``src`` carrying the score rows of its ``scores`` gathered once, on its dataset as
    ``src.load()`` gives it, with the labels the dataset's kind reads and one
    :func:`dataset_id_policy` (the one count of the rows it dropped): :func:`read_for` and
    :func:`source_rows` then give them unread."""
    ds = src.load()
    ids, labels = dataset_id_policy(src, ds), reads_labels(ds.card)
    rows = gather_scores(ds, src.scores, data_dir=src.data_dir, labels=labels, ids=ids)
    return src.but(scores_read=ScoresRead(ds, tuple(src.scores), labels, rows, ids))


def read_for(src: DataSource, ds: Any, labels: bool | None = None) -> ScoresRead | None:
    """The rows :func:`scored_once` gathered when they are those of ``ds``, ``src.scores`` and
    ``labels`` (None: the dataset's kind's, :func:`~metajudge.scores.spec.reads_labels`), else
    None."""
    r = src.scores_read
    want = reads_labels(ds.card) if labels is None else labels
    if r is None or r.dataset is not ds or r.specs != tuple(src.scores) or r.labels != want:
        return None
    return r


def source_rows(src: DataSource, labels: bool | None = None) -> Any:
    """The score rows of ``src.scores`` (``shipped`` when none) on its dataset, as
    :func:`~metajudge.scores.spec.gather_scores` reads them with ``labels`` and ``src.ids``;
    those :func:`scored_once` gathered where they are the same (:func:`read_for`)."""
    ds = src.load()
    read = read_for(src, ds, labels)
    if read is not None:
        return read.rows
    specs = src.scores or [SHIPPED]
    return gather_scores(ds, specs, data_dir=src.data_dir, labels=labels, ids=src.ids)
