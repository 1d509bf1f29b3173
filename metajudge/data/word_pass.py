"""Counting the words of many texts at once, compiled: one pass over their UTF-8 bytes.

:func:`count_words` counts, for each text of a buffer of UTF-8 bytes cut by offsets (an Arrow
string array's buffers), the words ``str.split()`` finds: the starts of runs of bytes that are
not ASCII whitespace. A text holding any byte above 0x7F (Unicode spaces split too) is counted
-1, for the caller to count by ``str.split``. One branch-free step a byte (about 1 ns) where the
numpy form needed a table lookup, two shifted masks, ``flatnonzero`` and ``searchsorted`` over
every byte. Compiled by numba on first use (cached beside this file, or in numba's user cache,
when writable); imported only when a columnar file's texts are counted, so ``import metajudge``
does not load numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def count_words(raw, starts, space):  # type: ignore[no-untyped-def]
    """Words of each text ``raw[starts[j]:starts[j + 1]]`` (int64), -1 for a text with a byte
    above 0x7F; ``space``: per byte value, 1 where ``str.split()`` splits (ASCII), else 0."""
    n = starts.size - 1
    out = np.zeros(n, dtype=np.int64)
    one = np.uint8(1)
    for j in range(n):
        words = 0
        gap = one  # the byte before the text counts as a space
        high = np.uint8(0)
        for i in range(starts[j], starts[j + 1]):
            b = raw[i]
            s = space[b]
            words += gap & (s ^ one)  # a word starts: a non-space after a space
            gap = s
            high |= b
        out[j] = words if high < 0x80 else -1
    return out
