"""A stored matrix cell (``baselines/judges/<metric>__<dataset>.json``): check and write.

The format is ``metajudge/data/schemas/matrix_cell.schema.json`` (written by ``metajudge matrix
run``, read by ``metajudge matrix``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from metajudge.run_folder import write_json_file


def check_cell(obj: Any, path: str | Path | None = None) -> None:
    """Raise :class:`~metajudge.errors.InputError` (file and field named) unless ``obj`` is a
    valid cell."""
    from metajudge.data.validation import raise_first, schema_errors

    raise_first(schema_errors(obj, "matrix_cell", path=path, line=None))


def write_cell(path: str | Path, cell: Mapping[str, Any]) -> Path:
    """Check ``cell`` and write it atomically (all or nothing); returns the path."""
    check_cell(dict(cell), path)
    p = Path(path)
    opts = {"indent": 1, "ensure_ascii": False, "sort_keys": True, "allow_nan": False}
    return write_json_file(p.parent, p.name, dict(cell), **opts)
