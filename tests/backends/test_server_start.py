"""The embedded replicas start side by side (backends/server.start_all)."""

from __future__ import annotations

import threading
import time

import pytest

from metajudge.backends.base import BackendError
from metajudge.backends.server import start_all


class _Slow:
    """A server whose start takes ``s`` seconds (and fails when ``fail``)."""

    def __init__(self, s: float, fail: bool = False) -> None:
        self.s = s
        self.fail = fail
        self.threads: list[str] = []
        self.started = False

    def start(self) -> None:
        self.threads.append(threading.current_thread().name)
        time.sleep(self.s)
        if self.fail:
            raise BackendError("did not start")
        self.started = True


def test_replicas_start_side_by_side() -> None:
    servers = [_Slow(0.4), _Slow(0.4), _Slow(0.4)]
    t0 = time.perf_counter()
    start_all(servers)  # type: ignore[arg-type]
    assert time.perf_counter() - t0 < 1.0  # not 1.2 s one after another
    assert all(s.started for s in servers)
    assert len({s.threads[0] for s in servers}) == 3


def test_a_failed_start_is_raised_after_every_start_ended() -> None:
    servers = [_Slow(0.05, fail=True), _Slow(0.3)]
    with pytest.raises(BackendError, match="did not start"):
        start_all(servers)  # type: ignore[arg-type]
    assert servers[1].started
