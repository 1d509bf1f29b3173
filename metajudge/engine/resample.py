"""Bootstrap resamples drawn in chunks: memory O(rows), not O(resamples × rows).

:class:`Resamples` stands for the ``(B, n_items)`` count matrix of
:func:`~metajudge.stats.bootstrap.bootstrap_weights` without holding it as floats: it
keeps the generator's state and hands out the matrix a block of resamples at a time
(:meth:`Resamples.chunks`). The block of resamples ``b0..b1`` is drawn from the same stream
positions as in the one-call draw, so every value is bit-identical whatever the chunk size:
``rng.integers(0, n, size=(B, n))`` draws row after row, and a row's counts depend only on
that row's indices. Columns are selected lazily (``R[:, rows_items]`` maps rows to their item
and all rows of an item move together, Efron 1979), so the per-row weight matrix of a cell is
never built whole either. When the counts fit ``cache_bytes`` they are kept once as small
unsigned integers (half a byte per count while every count is at most 15, 16× less than the
float matrix) so each statistic does not redraw them.
"""

from __future__ import annotations

import hashlib
import os
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

#: float elements per chunk handed to a statistic (32 MB of float64)
CHUNK_ELEMENTS = 4_000_000
#: threads that share the blocks of a pass over the resamples (:func:`map_blocks`)
BLOCK_THREADS = min(2, os.cpu_count() or 1)
#: drawn items per block of the count cache's fill (int64 draws and counts: with a block on
#: each of two threads and the next one drawn, about what one :data:`CHUNK_ELEMENTS` chunk held)
FILL_ELEMENTS = CHUNK_ELEMENTS // 2
#: largest count matrix kept in memory as small integers (bytes)
CACHE_BYTES = 1 << 30
#: a count cache larger than this (bytes) is kept in an unnamed temporary file, a block of
#: resamples read at a time (:class:`SpilledRows`): at a million items 1,000 resamples are
#: 477 MB of nibbles, a quarter of a 2 GB run's memory; a pass reads them from the page cache
#: as fast as from memory (measured: ``benchmarks/bench_count_cache.py``)
SPILL_BYTES = 64 << 20

#: a block of resamples' counts, made when called (:meth:`_Store.blocks`; packed rows only
#: where asked for)
Block = Callable[[], "np.ndarray | PackedRows"]


def draw_indices(gen: np.random.Generator, n_items: int, n_rows: int) -> np.ndarray:
    """``(n_rows, n_items)``: the drawn items of the next ``n_rows`` resamples of ``gen`` (the
    one draw of the bootstrap: each resample ``n_items`` items with replacement, Efron 1979).
    Drawn row after row, so ``n_rows`` at once or one at a time give the same items."""
    return gen.integers(0, n_items, size=(n_rows, n_items))


def draw_counts(gen: np.random.Generator, n_items: int, n_rows: int) -> np.ndarray:
    """``(n_rows, n_items)`` counts of the next ``n_rows`` resamples of ``gen``."""
    return count_draws(draw_indices(gen, n_items, n_rows))


def count_draws(idx: np.ndarray) -> np.ndarray:
    """The int64 counts of the resamples whose drawn items are the rows of ``idx``
    (:func:`~metajudge.engine.count_pass.count_rows`)."""
    from metajudge.engine.count_pass import count_rows

    out = np.empty(idx.shape, dtype=np.int64)
    count_rows(idx, out, np.iinfo(np.int64).max)  # (a count is at most n_items: never stops)
    return out


@dataclass
class _Store:
    """Shared by a :class:`Resamples` and its column views: the generator state, the cache."""

    n_items: int
    n_boot: int
    bit_generator: type
    state: dict[str, Any]
    cache_bytes: int
    counts: np.ndarray | SpilledRows | None = None
    #: the cache holds two counts a byte (see :func:`pack_counts`)
    packed: bool = False
    #: statistics already evaluated on these resamples, by statistic and data digest
    memo: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict)
    #: the digest of the items' own indices (the rows of the item view, :meth:`Resamples.memo_key`)
    items_digest: str | None = None
    #: called ``progress(resamples done, n_boot)`` after each block of a pass (a display's)
    progress: Callable[[int, int], None] | None = None
    #: the count cache's fill under way in a thread of its own (:meth:`Resamples.prefill`)
    filling: Future[None] | None = None
    #: the engine that measures these resamples (:func:`metajudge.engine.statistics` without an
    #: ``engine``): every statistic of a run's resamples, wherever it is asked for, by one engine
    engine: str = "fast"
    #: the memo keys' digests kept from one evaluation to the next (:meth:`Resamples.same_arrays`)
    digests: Digests | None = None
    #: a cache of more bytes than this is kept in a temporary file (:data:`SPILL_BYTES`)
    spill_bytes: int = SPILL_BYTES

    def blocks(self, rows: int, packed: bool = False) -> Iterator[tuple[int, Block]]:
        """Integer counts, ``rows`` resamples at a time, from the cache or redrawn, each as a
        :data:`Block` (a cached block is unpacked by the thread that uses it: in a pass of
        :func:`map_blocks`, beside the other blocks, not before them); each reported to
        :attr:`progress`. ``packed``: a caller that reads its blocks with :func:`columns`
        takes the packed cache's rows as they are (:class:`PackedRows`: no unpacked copy)."""
        for b0, make in self._blocks(rows, packed):
            yield b0, make
            if self.progress is not None:
                self.progress(min(b0 + rows, self.n_boot), self.n_boot)

    def generator(self) -> np.random.Generator:
        bg = self.bit_generator()
        bg.state = self.state
        return np.random.Generator(bg)

    def cacheable(self) -> bool:
        """The counts fit :attr:`cache_bytes` (one byte a count at most): they are cached."""
        return self.n_boot * self.n_items <= self.cache_bytes

    def _blocks(self, rows: int, packed: bool = False) -> Iterator[tuple[int, Block]]:
        if self.filling is not None:
            filling, self.filling = self.filling, None
            filling.result()  # (its error raises here)
        if self.counts is None and self.cacheable():
            self._fill()
        if self.counts is not None:
            for b0 in range(0, self.n_boot, rows):
                yield b0, partial(self._cached, b0, rows, packed)
            return
        gen = self.generator()
        sub = max(1, CHUNK_ELEMENTS // self.n_items)  # the draw's int64 temporaries stay small
        small = np.uint16 if self.n_items < 1 << 16 else np.uint32  # a count is <= n_items
        for b0 in range(0, self.n_boot, rows):
            r = min(rows, self.n_boot - b0)
            if r <= sub:
                yield b0, ready(draw_counts(gen, self.n_items, r))
                continue
            parts = [
                draw_counts(gen, self.n_items, min(sub, r - s0)).astype(small)
                for s0 in range(0, r, sub)
            ]
            yield b0, ready(np.concatenate(parts))

    def _fill(self) -> None:
        """The count cache: two counts a byte (:func:`pack_counts`) where every count is at
        most 15, else one a byte where every count is at most 255, else none."""
        self.counts = self._packed(True)
        self.packed = self.counts is not None
        if self.counts is None:
            self.counts = self._packed(False)

    def _packed(self, nibbles: bool) -> np.ndarray | None:
        """The cache, or None when a count does not fit. The items are drawn in this thread,
        in stream order; counting and packing them share the threads (:func:`map_blocks`)."""
        gen = self.generator()
        width = (self.n_items + 1) // 2 if nibbles else self.n_items
        out = cache_rows(self.n_boot, width, self.spill_bytes)
        rows = max(1, FILL_ELEMENTS // self.n_items)
        too_large: list[int] = []

        def draws() -> Iterator[tuple[int, Block]]:
            for b0 in range(0, self.n_boot, rows):
                if too_large:
                    return
                r = min(rows, self.n_boot - b0)
                yield b0, ready(draw_indices(gen, self.n_items, r))

        def one(b0: int, idx: np.ndarray) -> None:
            from metajudge.engine.count_pass import count_rows

            c = np.empty(idx.shape, dtype=np.uint8)
            if not count_rows(idx, c, 15 if nibbles else 255):  # (tiny n_items)
                too_large.append(b0)
            elif nibbles:
                out[b0 : b0 + c.shape[0]] = pack_counts(c)
            else:
                out[b0 : b0 + c.shape[0]] = c

        map_blocks(one, draws())
        return None if too_large else out

    def _cached(self, b0: int, rows: int, packed: bool = False) -> Any:
        """Rows ``b0..b0+rows`` of the cache as one count a byte (``packed``: packed ones as
        :class:`PackedRows`)."""
        assert self.counts is not None
        block = self.counts[b0 : b0 + rows]
        if not self.packed:
            return block
        return PackedRows(block, self.n_items) if packed else unpack_counts(block, self.n_items)


def pack_counts(c: np.ndarray) -> np.ndarray:
    """Counts ``c`` (rows, n) of at most 15 packed (rows, ceil(n/2)) uint8: column ``j`` in
    the low four bits of byte ``j``, column ``h + j`` (``h = ceil(n/2)``) in its high bits."""
    h = (c.shape[1] + 1) // 2
    out = c[:, :h].copy()
    out[:, : c.shape[1] - h] |= (c[:, h:] << 4).astype(np.uint8)
    return out


def cache_rows(rows: int, width: int, spill_bytes: int) -> np.ndarray | SpilledRows:
    """An empty ``(rows, width)`` uint8 count cache: in memory, or in a temporary file where
    it is larger than ``spill_bytes`` (in memory where no such file can be made, or where the
    system has no positioned reads and writes of several buffers)."""
    if rows * width > spill_bytes and hasattr(os, "preadv") and hasattr(os, "pwritev"):
        try:
            return SpilledRows(rows, width)
        except OSError:
            pass
    return np.empty((rows, width), dtype=np.uint8)


class SpilledRows:
    """A ``(rows, width)`` uint8 matrix in an unnamed temporary file (removed when closed or
    dropped), written and read whole rows at a time by positioned writes and reads, safe from
    several threads at once. A read is a fresh array: the rows are in the page cache, not in
    the process's memory, between reads."""

    def __init__(self, rows: int, width: int) -> None:
        import tempfile

        self.shape = (rows, width)
        # (open while the cache lives: closed, so removed, when it is dropped)
        self.file = tempfile.TemporaryFile(prefix="metajudge-counts-")  # noqa: SIM115
        try:  # (its blocks reserved now, where the system can: a full disk found here)
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(self.file.fileno(), 0, rows * width)
            else:
                self.file.truncate(rows * width)
        except OSError:
            self.file.close()
            raise

    def _span(self, key: slice) -> tuple[int, int]:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("spilled rows are read and written as a slice of whole rows")
        b0, b1, _ = key.indices(self.shape[0])
        return b0, max(b0, b1)

    def __getitem__(self, key: slice) -> np.ndarray:
        b0, b1 = self._span(key)
        out = np.empty((b1 - b0, self.shape[1]), dtype=np.uint8)
        got = os.preadv(self.file.fileno(), [out], b0 * self.shape[1])
        if got != out.nbytes:
            raise OSError(f"the count cache's file gave {got} of {out.nbytes} bytes")
        return out

    def __setitem__(self, key: slice, value: np.ndarray) -> None:
        b0, b1 = self._span(key)
        v = np.ascontiguousarray(value, dtype=np.uint8)
        if v.shape != (b1 - b0, self.shape[1]):
            raise ValueError(f"rows of shape {v.shape} for a slice of {(b1 - b0, self.shape[1])}")
        put = os.pwritev(self.file.fileno(), [v], b0 * self.shape[1])
        if put != v.nbytes:
            raise OSError(f"the count cache's file took {put} of {v.nbytes} bytes")


def unpack_counts(p: np.ndarray, n: int, j0: int = 0, j1: int | None = None) -> np.ndarray:
    """Columns ``j0..j1`` (default: all) of the ``(rows, n)`` uint8 counts packed by
    :func:`pack_counts` into ``p``: those below ``h = ceil(n/2)`` from the low bits of bytes
    ``j0..``, the others from the high bits of bytes ``j - h``."""
    j1 = n if j1 is None else min(j1, n)
    h = p.shape[1]
    out = np.empty((p.shape[0], j1 - j0), dtype=np.uint8)
    lo = min(j1, h)
    if j0 < lo:
        np.bitwise_and(p[:, j0:lo], 15, out=out[:, : lo - j0])
    hi = max(j0, h)
    if hi < j1:
        np.right_shift(p[:, hi - h : j1 - h], 4, out=out[:, hi - j0 :])
    return out


@dataclass(frozen=True)
class PackedRows:
    """Rows of the packed count cache as they are stored (:func:`pack_counts`), for a reader
    of a range of columns at a time (:func:`columns`): a block of 64 resamples at a million
    items is then 32 MB of the cache read in place, not a 64 MB unpacked copy per thread."""

    packed: np.ndarray
    n: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.packed.shape[0], self.n)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.uint8)

    def turned_at(self, idx: np.ndarray) -> np.ndarray:
        """``(len(idx), rows)``: the counts of the columns ``idx``, one row of resamples each
        (the block turned, then gathered row by row: :func:`gather` turned). A turned row is
        read as 64-bit words (its resamples padded to a multiple of 8), each shifted by its
        column's nibble and masked a word at a time (faster than a byte at a time; measured:
        ``docs/benchmarks.md``)."""
        rows = self.packed.shape[0]
        wide = -(-rows // 8) * 8
        byte, shift = _nibbles(idx, self.packed.shape[1])
        turned = np.zeros((self.packed.shape[1], wide), dtype=np.uint8)
        turned[:, :rows] = self.packed.T
        out = np.take(turned.view(np.uint64), byte, axis=0)
        del turned
        np.right_shift(out, shift.astype(np.uint64)[:, None], out=out)
        np.bitwise_and(out, np.uint64(0x0F0F0F0F0F0F0F0F), out=out)
        counts = out.view(np.uint8)
        return counts if wide == rows else np.ascontiguousarray(counts[:, :rows])


@dataclass(frozen=True)
class BitRows:
    """Rows of one bit an item, eight items a byte in little-endian bit order (the swaps of a
    shared permutation test), for a reader of a range of columns at a time (:func:`columns`,
    ranges starting on a byte): a tile of 64 permutations at a million items is then 8 MB read
    in place, not a 64 MB copy of a byte an item per thread."""

    bits: np.ndarray  # (rows, bytes), uint8
    n: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.bits.shape[0], self.n)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.uint8)


def _nibbles(idx: np.ndarray, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Where the packed columns ``idx`` lie (:func:`pack_counts`, ``h`` bytes a row): each
    one's byte and the shift of its four bits in it."""
    high = idx >= h
    return np.where(high, idx - h, idx), (high * 4).astype(np.uint8)


def gather(block: np.ndarray | PackedRows, idx: np.ndarray) -> np.ndarray:
    """The columns ``idx`` of a block of counts, one count a byte (from :class:`PackedRows`:
    each column's byte, then its four bits)."""
    if not isinstance(block, PackedRows):
        return np.take(block, idx, axis=1)
    byte, shift = _nibbles(idx, block.packed.shape[1])
    out = np.take(block.packed, byte, axis=1)
    np.right_shift(out, shift, out=out)
    np.bitwise_and(out, 15, out=out)
    return out


def columns(block: np.ndarray | PackedRows | BitRows, j0: int, j1: int) -> np.ndarray:
    """Columns ``j0..j1`` of a block of counts (unpacked there from :class:`PackedRows` or
    :class:`BitRows`)."""
    if isinstance(block, PackedRows):
        return unpack_counts(block.packed, block.n, j0, j1)
    if isinstance(block, BitRows):
        if j0 % 8:
            raise ValueError(f"bit rows are read from a byte's first bit, not column {j0}")
        j1 = min(j1, block.n)
        part = block.bits[:, j0 // 8 : -(-j1 // 8)]
        return np.unpackbits(part, axis=1, count=j1 - j0, bitorder="little")
    return block[:, j0:j1]


@dataclass
class Resamples:
    """A lazy ``(n_boot, n_cols)`` bootstrap count matrix (see the module docstring).

    Supports what the statistics use of a weight matrix: ``shape``, column selection
    ``R[:, idx]``, iteration over resamples (rows) and :meth:`chunks` of float rows.
    """

    store: _Store
    cols: np.ndarray | None = None  # column -> item; None: the items themselves
    chunk_elements: int = CHUNK_ELEMENTS
    _shape: tuple[int, int] = field(init=False)

    def __post_init__(self) -> None:
        n = self.store.n_items if self.cols is None else int(self.cols.size)
        self._shape = (self.store.n_boot, n)

    @classmethod
    def draw(
        cls,
        n_items: int,
        n_boot: int,
        rng: np.random.Generator,
        *,
        consume: bool = True,
        cache_bytes: int = CACHE_BYTES,
        chunk_elements: int = CHUNK_ELEMENTS,
        progress: Callable[[int, int], None] | None = None,
        engine: str = "fast",
    ) -> Resamples:
        """The resamples ``bootstrap_weights(n_items, n_boot, rng)`` would return.

        ``consume``: leave ``rng`` where the one-call draw leaves it (the draws are made and
        dropped chunk by chunk); ``False`` when the caller draws nothing else from ``rng``.
        ``progress``: called ``(resamples done, n_boot)`` as each pass over them goes.
        ``engine``: the engine that measures them and their column views (``--engine``).
        """
        if n_items < 1 or n_boot < 1:
            raise ValueError("n_items and n_boot must be positive")
        bg = rng.bit_generator
        store = _Store(
            n_items, n_boot, type(bg), bg.state, cache_bytes, progress=progress, engine=engine
        )
        if consume:
            rows = max(1, chunk_elements // n_items)
            for b0 in range(0, n_boot, rows):
                draw_indices(rng, n_items, min(rows, n_boot - b0))
        return cls(store, None, chunk_elements)

    @contextmanager
    def same_arrays(self) -> Iterator[None]:
        """While open, the memo keys' digests of every evaluation on these resamples are kept
        from one evaluation to the next (:class:`Digests`, weak): a caller that asks for many
        statistics one at a time, on arrays that do not change meanwhile (the inter-human
        reference and the metrics matched to it, each read from the memo), hashes each array
        once, not once a statistic (SHA-256 of 8 MB a million rows)."""
        kept, self.store.digests = self.store.digests, self.store.digests or Digests(weak=True)
        try:
            yield
        finally:
            self.store.digests = kept

    def prefill(self) -> None:
        """Start filling the count cache (when the counts fit it) in a thread of its own, so
        that it is drawn while the caller computes what needs no resample (a meta-evaluation's
        point values); the first pass over the resamples waits for it. The same draws in the
        same order, so the same counts. At a million pairs the fill (its draws in one thread)
        overlaps the cells' point values (measured: ``docs/benchmarks.md``)."""
        store = self.store
        if store.counts is not None or store.filling is not None or not store.cacheable():
            return
        pool = ThreadPoolExecutor(1, thread_name_prefix="count-cache")
        store.filling = pool.submit(store._fill)
        pool.shutdown(wait=False)

    @property
    def shape(self) -> tuple[int, int]:
        return self._shape

    @property
    def engine(self) -> str:
        """The engine that measures these resamples (:attr:`_Store.engine`)."""
        return self.store.engine

    def __getitem__(self, key: Any) -> Resamples:
        if not (isinstance(key, tuple) and len(key) == 2 and key[0] == slice(None)):
            raise TypeError("Resamples supports column selection R[:, idx] only")
        idx = np.arange(self._shape[1])[key[1]]
        cols = idx if self.cols is None else self.cols[idx]
        return Resamples(self.store, np.asarray(cols, dtype=np.intp), self.chunk_elements)

    def chunks(self, chunk_elements: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """``(b0, W[b0:b1])`` float blocks of whole resamples, about ``chunk_elements`` each."""
        for b0, block in self.count_chunks(chunk_elements):
            yield b0, block.astype(float)

    def count_chunks(self, chunk_elements: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """:meth:`chunks` as the stored integer counts (row-major; no float copy). Columns are
        gathered with ``np.take`` (several times faster than fancy indexing of a 2-D block)."""
        per = chunk_elements or self.chunk_elements
        rows = max(1, per // max(self._shape[1], 1))
        for b0, make in self.store.blocks(rows):
            counts = make()
            block = counts if self.cols is None else np.take(counts, self.cols, axis=1)
            yield b0, np.ascontiguousarray(block)

    def indices(self) -> Iterator[np.ndarray]:
        """Each resample's drawn items (:func:`draw_indices`), one resample at a time, from the
        stream its counts come from (the reference engine's draw)."""
        gen = self.store.generator()
        for _ in range(self.store.n_boot):
            yield draw_indices(gen, self.store.n_items, 1)[0]

    def row_items(self) -> np.ndarray:
        """The item of each column (the column itself for the item matrix)."""
        return np.arange(self.store.n_items) if self.cols is None else self.cols

    def memo_key(
        self, name: str, *arrays: np.ndarray, digest: Callable[[np.ndarray], str] | None = None
    ) -> tuple[str, ...]:
        """A key of statistic ``name`` on ``arrays`` over these columns (content digests;
        ``digest``: a :class:`Digests` that hashes each array once)."""
        digest = digest or array_digest
        if self.cols is not None:
            rows = digest(self.cols)
        else:  # the items themselves: their digest kept with the resamples
            if self.store.items_digest is None:
                self.store.items_digest = array_digest(self.row_items())
            rows = self.store.items_digest
        return (name, *map(digest, arrays), rows)

    def content_key(
        self, name: str, *arrays: np.ndarray, digest: Callable[[np.ndarray], str] | None = None
    ) -> tuple[str, ...]:
        """A memo key of ``name`` on ``arrays`` alone (they already say which items: e.g. a
        per-item matrix), for values shared by every column view of these resamples."""
        return (name, *map(digest or array_digest, arrays))

    def __iter__(self) -> Iterator[np.ndarray]:
        for _, block in self.chunks():
            yield from block

    def dense(self) -> np.ndarray:
        """The whole float matrix (tests and small data only)."""
        return np.concatenate([b for _, b in self.chunks()], axis=0)


class Digests:
    """The content digest of each array, hashed once while this lives (arrays known by
    identity: they must not change meanwhile; each is kept alive so its id is not reused, or,
    ``weak``, known by a weak reference: an array no longer alive is forgotten, and one made
    since at its address hashed anew)."""

    def __init__(self, weak: bool = False) -> None:
        self._by_id: dict[int, tuple[Any, str]] = {}
        self.weak = weak

    def __call__(self, a: np.ndarray) -> str:
        got = self._by_id.get(id(a))
        if got is None or (self.weak and got[0]() is not a):
            held = weakref.ref(a) if self.weak else a
            got = self._by_id[id(a)] = (held, array_digest(a))
        return got[1]


def array_digest(a: np.ndarray) -> str:
    """A memo key's digest of ``a``'s dtype, shape and bytes (SHA-256, 128 bits kept: with the
    processors' SHA instructions faster than blake2b; measured: ``docs/benchmarks.md``)."""
    a = np.ascontiguousarray(a)
    return f"{a.dtype.str}{a.shape}" + hashlib.sha256(a.view(np.uint8)).hexdigest()[:32]


def ready(block: np.ndarray) -> Block:
    """A :data:`Block` already made (drawn in stream order by the thread that reads them)."""
    return lambda: block


def map_blocks(
    fn: Callable[[int, np.ndarray], None],
    blocks: Iterable[tuple[int, Block]],
    threads: int = BLOCK_THREADS,
) -> None:
    """``fn(b0, make())`` for every block of resamples, on ``threads`` threads (numpy releases
    the GIL in its loops; 1: in this thread). ``fn`` must compute a block's values from that
    block alone, so that they do not depend on the threads. ``blocks`` is read in this thread
    and each block made in the thread that computes it, the next only while fewer than
    ``threads`` are under way: at most ``threads`` blocks are held at a time (a pass of
    per-item sums at a million items: 64 MB each). The first error raises here once the
    blocks under way are done."""
    if threads <= 1:
        for b0, make in blocks:
            fn(b0, make())
        return

    def run(b0: int, make: Block) -> None:
        fn(b0, make())

    with ThreadPoolExecutor(threads) as pool:
        under_way: deque[Future[None]] = deque()
        for b0, make in blocks:
            under_way.append(pool.submit(run, b0, make))
            del make
            if len(under_way) >= threads:
                under_way.popleft().result()
        while under_way:
            under_way.popleft().result()


def map_chunks(fn: Any, W: Any) -> np.ndarray:
    """``fn(W_block)`` over the resample blocks of ``W`` (dense arrays pass straight through)."""
    if isinstance(W, Resamples):
        return np.concatenate([fn(block) for _, block in W.chunks()])
    return fn(W)
