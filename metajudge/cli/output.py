"""What the CLI prints: the one place where a command's result becomes text on standard output.

A command parses its options, calls one run function (``metajudge.runs``) and prints the result
through these functions: :func:`json_text` is the CLI's one JSON encoder (``--format json`` stays
one JSON document, for ``| jq``), :func:`print_json` prints it, :func:`print_text` prints a
rendered table or report as it is. Messages about written files go through
:func:`metajudge.cli.options.notice` (standard error under ``--format json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def json_text(
    obj: Any,
    *,
    indent: int | None = 1,
    ensure_ascii: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``obj`` as JSON text (no final newline), with the encoder options of the command."""
    return json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii, default=default)


def print_json(
    obj: Any,
    *,
    indent: int | None = 1,
    ensure_ascii: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> None:
    """Print ``obj`` as one JSON document (see :func:`json_text`) and a newline."""
    print(json_text(obj, indent=indent, ensure_ascii=ensure_ascii, default=default))


def print_text(text: str, end: str = "") -> None:
    """Print a rendered text (a table, a report) as it is; ``end`` after it (default nothing:
    the renderers end their text with a newline)."""
    print(text, end=end)
