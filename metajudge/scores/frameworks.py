"""Judge outputs read as the frameworks write them: inspect_ai eval logs, promptfoo results,
ragas and deepeval tables (issue 39).

One registry (:data:`READERS`): each reader has a ``name`` (the ``FORMAT`` of ``--scores
FORMAT:FILE``), a ``sniff(path, head)`` that recognises a file by its content, and a
``read(path, reading)`` that gives the file's :class:`~metajudge.scores.framework_types.Judged`
scores (one per item, system, judge column and epoch) and a
:class:`~metajudge.scores.framework_types.FileInfo`. :func:`detect` asks each in turn;
:func:`metajudge.scores.framework_rows.framework_rows` joins the scores to a dataset's items
(:class:`~metajudge.scores.framework_types.Reading`: ``--id-field``, ``--system``, ``--epochs``).
inspect_ai's log reader is an optional extra (``metajudge[inspect]``) imported only when a log is
read (:mod:`~metajudge.scores.fw_inspect`); promptfoo, deepeval and ragas files are plain JSON /
CSV, read without their frameworks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metajudge.scores import fw_deepeval, fw_inspect, fw_promptfoo, fw_ragas
from metajudge.scores.framework_types import Reader

#: every framework reader, by format name, in the order :func:`detect` asks them
READERS: dict[str, Reader] = {
    r.name: r for r in (fw_inspect.READER, fw_promptfoo.READER, fw_deepeval.READER, fw_ragas.READER)
}

#: the format names ``--scores FORMAT:FILE`` takes for a framework's file
NAMES: tuple[str, ...] = tuple(READERS)


def reader(name: str) -> Reader:
    """The reader of format ``name`` (one of :data:`NAMES`)."""
    return READERS[name]


def detect(path: Path, head: Any) -> str | None:
    """The framework format of ``path`` recognised by content (``head``: the parsed JSON, the
    CSV header as a tuple, or None for a ``.eval`` file), else None."""
    for r in READERS.values():
        if r.sniff(path, head):
            return r.name
    return None
