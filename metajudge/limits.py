"""Resource bounds checked before allocating: a request that would need more memory than the
limit is refused with the size it would need, not left to end in ``MemoryError`` or the OOM killer
(issue 18: ``--n-boot 1000000000`` asked for 2 TiB)."""

from __future__ import annotations

from metajudge.errors import InputError

#: Default ceiling for one resampling array (8 GiB); callers may pass their own.
DEFAULT_LIMIT_BYTES = 8 * 2**30


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    raise AssertionError  # pragma: no cover


def check_allocation(
    n_resamples: int,
    n_rows: int,
    n_stats: int = 1,
    *,
    itemsize: int = 8,
    limit_bytes: int = DEFAULT_LIMIT_BYTES,
    field: str = "--n-boot",
) -> int:
    """Bytes needed for ``n_resamples x n_rows x n_stats`` values of ``itemsize`` bytes; raise
    :class:`InputError` (naming ``field``, the size needed and the limit) when above ``limit_bytes``
    or when a count is negative.

    >>> check_allocation(1000, 100, 2)
    1600000
    >>> check_allocation(10**9, 1000, 1)
    Traceback (most recent call last):
    ...
    metajudge.errors.InputError: field --n-boot: 1000000000 resamples x 1000 rows x 1 statistics need 7.3 TiB, above the limit of 8.0 GiB; use fewer resamples
    """
    for name, v in (("resamples", n_resamples), ("rows", n_rows), ("statistics", n_stats)):
        if v < 0:
            raise InputError(f"{name} must be >= 0, got {v}", field=field)
    need = int(n_resamples) * int(n_rows) * int(n_stats) * int(itemsize)
    if need > limit_bytes:
        raise InputError(
            f"{n_resamples} resamples x {n_rows} rows x {n_stats} statistics need {_human(need)}, "
            f"above the limit of {_human(limit_bytes)}; use fewer resamples",
            field=field,
        )
    return need
