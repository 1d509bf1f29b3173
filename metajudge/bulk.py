"""Building many small objects in one go (a file's records, a report's item rows).

:func:`paused_gc` pauses Python's cyclic garbage collector meanwhile: these objects hold no
reference cycles, and each collector pass walks the whole growing heap, so at 50,000 pairs
the passes alone cost as much as the work (``report.html`` of the CLI scale set: a third of
its CPU time). Reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """The block runs with the cyclic garbage collector off (restored as it was after)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
