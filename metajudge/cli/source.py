"""The one place a command's parsed options become what it reads: :func:`data_source`."""

from __future__ import annotations

import argparse
from typing import Any

from metajudge.data.source import DataSource

#: the DataSource fields read from options of the same name (``path`` is ``--input``)
_FIELDS = (
    "dataset",
    "subset",
    "judge",
    "dimension",
    "distribution",
    "cluster_field",
    "data_dir",
    "tracking_uri",
)


def data_source(args: argparse.Namespace, ids: Any = None, **given: Any) -> DataSource:
    """The :class:`~metajudge.data.source.DataSource` of ``args`` (``--dataset``, ``--input``,
    ``--subset``, ``--scores``, ``--judge``, ``--dimension``, ``--distribution``,
    ``--cluster-field``, ``--data-dir``; an option a command lacks is None), with the id policy
    ``ids``; ``given``: fields a command sets itself (its option means something else there)."""
    kw: dict[str, Any] = {f: getattr(args, f, None) for f in _FIELDS}
    specs = getattr(args, "scores", None) or ()
    kw["scores"] = tuple(s.text if hasattr(s, "text") else str(s) for s in specs)
    kw["path"] = getattr(args, "input", None)
    return DataSource(**(kw | given), ids=ids)
