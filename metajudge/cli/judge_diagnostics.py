"""``metajudge judge diagnostics``: registered after the ``judge`` group of the metrics CLI."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from metajudge.cli.swap import register_judge_diagnostics

    register_judge_diagnostics(sub)
