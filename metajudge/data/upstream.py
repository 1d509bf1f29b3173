"""Access to a dataset's upstream files for the converters, and small readers they share.

:class:`_Source` resolves the files named in the dataset's card (through
:func:`~metajudge.data.registry.resolve_file`, which verifies their sha256) and validates each
canonical dict with :func:`~metajudge.data.validation.record_from_dict` against the card, so an
upstream value outside the declared scale fails loudly with the file, the line (or item index)
and the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from metajudge.data.formats import DatasetCard, Record
from metajudge.data.validation import record_from_dict
from metajudge.errors import InputError
from metajudge.io import csv_reader, parse_json, read_json

Converter = Callable[["_Source"], list[Record]]

SUMMARISE_QUESTION = "Summarize the news article."
DIALOGUE_QUESTION = "Write the next turn of the dialogue, grounded in the knowledge fact."
D2T_QUESTION = "Verbalise the dialogue act as a natural-language utterance."


class _Source:
    """Access to one dataset's upstream files and record validation against its card."""

    def __init__(
        self,
        card: DatasetCard,
        data_dir: str | Path | None,
        options: Mapping[str, Any],
        files: Mapping[str, Path] | None = None,
    ) -> None:
        self.card = card
        self.data_dir = data_dir
        self.options = dict(options)
        self.files = dict(files or {})

    def path(self, relpath: str) -> Path:
        """The verified upstream file: ``files[relpath]`` if given, else :func:`resolve_file`."""
        from metajudge.data.fetch import find_source, verify_file
        from metajudge.data.registry import resolve_file

        if relpath in self.files:
            p = Path(self.files[relpath])
            verify_file(p, find_source(self.card, relpath), dataset=self.card.name)
            return p
        return resolve_file(self.card.name, relpath, self.data_dir)

    def json(self, relpath: str) -> Any:
        return read_json(self.path(relpath))

    def jsonl(self, relpath: str) -> Iterator[tuple[Path, int, Any]]:
        p = self.path(relpath)
        with open(p, encoding="utf-8") as fh:
            for i, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                yield p, i, parse_json(raw, path=p, line=i)

    def csv_rows(self, relpath: str) -> tuple[Path, list[tuple[int, dict[str, str]]]]:
        """Rows of a CSV file with the (last physical) line number of each row."""
        p = self.path(relpath)
        with open(p, encoding="utf-8", newline="") as fh:
            reader = csv_reader(fh, p, dicts=True)
            rows = [(reader.line_num, row) for row in reader]
        return p, rows

    def record(
        self, d: Mapping[str, Any], path: Path, *, line: int | None = None, where: str | None = None
    ) -> Record:
        """Validate one canonical dict; errors name the upstream file, line or item index, and field."""
        try:
            return record_from_dict(
                d,
                kind=self.card.kind if self.card.kind != "benchmark" else None,
                scale=self.card.scale,
                dimensions=self.card.dimensions,
                path=path,
                line=line,
            )
        except InputError as e:
            fld = f"{where}: {e.field}" if where else e.field
            raise InputError(e.message, path=path, line=line, field=fld) from None


def _num(v: Any, path: Path, field: str, *, line: int | None = None) -> float | None:
    """A finite float, None for missing/NaN/blank; anything else is an error naming the field."""
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, bool):
        raise InputError(f"expected a number, got {v!r}", path=path, line=line, field=field)
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError(
            f"expected a number, got {v!r}", path=path, line=line, field=field
        ) from None
    return None if math.isnan(x) else x


def _req(obj: Any, key: str, path: Path, where: str, *, line: int | None = None) -> Any:
    if not isinstance(obj, Mapping):
        raise InputError(
            f"expected an object, got {type(obj).__name__}", path=path, line=line, field=where
        )
    if key not in obj:
        raise InputError(
            "missing required field", path=path, line=line, field=f"{where}.{key}" if where else key
        )
    return obj[key]


def _mapped(
    v: Any, mapping: Mapping[Any, float | None], path: Path, field: str, *, line: int | None = None
) -> float | None:
    if v in mapping:
        return mapping[v]
    allowed = ", ".join(repr(k) for k in mapping)
    raise InputError(
        f"unexpected label {v!r} (expected one of {allowed})", path=path, line=line, field=field
    )
