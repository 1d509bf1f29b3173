"""Run ``python -m llama_cpp.server`` and exit when the metajudge process that started it dies.

Usage: ``python -m metajudge.backends._llama_child PARENT_PID [llama_cpp.server args...]``.
A watchdog thread polls the parent pid; when the parent is gone (even after ``kill -9``, which
runs no clean-up code) the server exits within half a second, so no server is ever orphaned.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time


def _watch(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def main() -> None:
    parent = int(sys.argv[1])
    if os.getppid() != parent:
        sys.exit(0)
    threading.Thread(target=_watch, args=(parent,), name="parent-watchdog", daemon=True).start()
    sys.argv = ["llama_cpp.server", *sys.argv[2:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
