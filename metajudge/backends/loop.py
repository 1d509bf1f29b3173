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
#: how a wait for the loop's work may end besides a result (cancelled, timed out, loop closed)
_ENDED = (
    concurrent.futures.CancelledError,
    concurrent.futures.TimeoutError,
    asyncio.CancelledError,
    RuntimeError,
)


async def _drain() -> None:
    """Cancel the loop's other tasks and wait for them to end."""
    me = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not me]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


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
            with contextlib.suppress(*_ENDED):
                fut.result(timeout=5)
            self.cancel_pending()
            raise

    def cancel_pending(self, timeout: float = 5.0) -> None:
        """Cancel every task still pending on the loop and wait until they have ended, so that
        none is left to be destroyed pending at exit (asyncio's "Task was destroyed but it is
        pending!", once per call of an interrupted batch)."""
        if self.loop.is_closed() or not self._thread.is_alive():
            return
        with contextlib.suppress(*_ENDED):
            asyncio.run_coroutine_threadsafe(_drain(), self.loop).result(timeout=timeout)
        for t in asyncio.all_tasks(self.loop):  # the loop is stuck (a call blocks it): those
            t._log_destroy_pending = False  # type: ignore[attr-defined]  # are abandoned on purpose

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.cancel_pending()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()
