"""ONE progress display: a bar with rate and ETA on stderr when it is a terminal, else nothing.

:func:`bar` is the bar of one step whose code counts for itself (scoring a metric's
responses). :class:`Steps` hands out callbacks ``fn(done, total)`` for code that must not
render (the compute layer, the loaders): each call moves the bar of its step, and a ``done``
smaller than the last one starts the next pass of that step (``bootstrap, pass 2``), so a
step that walks its resamples several times shows one bar per pass. Nothing is drawn when
the command runs with ``--quiet`` or ``--format json`` (``enabled=False``) or stderr is not a
terminal, so piped output and logs stay as they are.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

#: seconds between two redraws of a bar
MIN_INTERVAL = 0.5

Callback = Callable[[int, int], None]


def shown(enabled: bool = True) -> bool:
    """Are bars drawn: ``enabled`` and stderr a terminal?"""
    if not enabled:
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def bar(total: int, desc: str, *, enabled: bool = True, unit: str = "it") -> Any:
    """A tqdm bar of ``total`` units on stderr (``None`` when :func:`shown` is false)."""
    if not shown(enabled):
        return None
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        mininterval=MIN_INTERVAL,
        leave=False,
        dynamic_ncols=True,
    )


class Steps:
    """Progress callbacks of the steps of one command (see the module docstring)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = shown(enabled)
        self._open: list[_Step] = []

    def step(self, desc: str, unit: str = "it") -> Callback | None:
        """The callback of step ``desc`` (``None`` when bars are not drawn: callers skip it)."""
        if not self.enabled:
            return None
        s = _Step(desc, unit)
        self._open.append(s)
        return s

    def close(self) -> None:
        for s in self._open:
            s.close()
        self._open = []


class _Step:
    def __init__(self, desc: str, unit: str) -> None:
        self.desc, self.unit = desc, unit
        self.bar: Any = None
        self.last = 0
        self.passes = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None or done < self.last:
            self.close()
            self.passes += 1
            desc = self.desc if self.passes == 1 else f"{self.desc}, pass {self.passes}"
            self.bar = bar(total, desc, unit=self.unit)
            self.last = 0
        self.bar.update(done - self.last)
        self.last = done
        if done >= total:
            self.close()
            self.last = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
