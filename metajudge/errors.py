"""Errors that name where bad input is: file, line and field."""

from __future__ import annotations

from pathlib import Path


class MetajudgeError(Exception):
    """Base class for every error metajudge raises on purpose (the CLI prints it, exit 2)."""


class InputError(MetajudgeError, ValueError):
    """Bad input data, located as precisely as we can: ``file:line: field: message``.

    >>> str(InputError("not a number", path="x.jsonl", line=3, field="labels.overall"))
    'x.jsonl:3: field labels.overall: not a number'

    A message quoting a hostile value (a 200,000-character cell) is shortened to
    :attr:`MAX_MESSAGE` characters, its middle left out and counted.
    """

    MAX_MESSAGE = 2000

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        if len(message) > self.MAX_MESSAGE:
            cut = len(message) - self.MAX_MESSAGE
            message = f"{message[:1500]}… ({cut:,} characters left out) …{message[-500:]}"
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        where = ""
        if self.path is not None:
            where = self.path + (f":{line}" if line is not None else "") + ": "
        elif line is not None:
            where = f"line {line}: "
        if field is not None:
            where += f"field {field}: "
        super().__init__(where + message)


class RecordError(InputError):
    """Bad input in one record, found where the record's file is not known (a judge's template
    reads a field the record lacks): ``record_id`` and ``system`` say which record, and
    :meth:`at` places the error at the file and line the CLI finds it on
    (:func:`metajudge.data.formats.record_line`)."""

    def __init__(
        self,
        message: str,
        *,
        record_id: str,
        system: str | None = None,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message, path=path, line=line, field=field)
        self.record_id = record_id
        self.system = system

    def at(self, path: str | Path, line: int | None) -> RecordError:
        """The same error placed at ``path:line``."""
        return RecordError(
            self.message,
            record_id=self.record_id,
            system=self.system,
            path=path,
            line=line,
            field=self.field,
        )


class ChecksumError(MetajudgeError):
    """A downloaded or local file does not have the pinned sha256."""


class MissingResourceError(MetajudgeError):
    """A model, corpus or data file that is needed is not installed; the message says how to fix it."""


class CacheError(MetajudgeError):
    """The response cache cannot be read or written; the message names the file and the fix."""
