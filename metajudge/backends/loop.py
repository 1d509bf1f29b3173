"""One asyncio event loop in a daemon thread, so that synchronous callers (also inside Jupyter,
where a loop is already running) can run a batch of coroutines and wait for them."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")


class LoopThread:
    """One asyncio loop in a daemon thread; ``run`` executes a coroutine there and waits."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._main, name=f"metajudge-{name}-loop", daemon=True
        )
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return fut.result()
        except (KeyboardInterrupt, SystemExit):
            fut.cancel()  # cancels the gather: in-flight HTTP calls are abandoned, finished ones are kept
            with contextlib.suppress(
                concurrent.futures.CancelledError, concurrent.futures.TimeoutError
            ):
                fut.result(timeout=5)
            raise

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()
