"""Resource bounds checked before allocating: a request that would need more memory than the
limit is refused with the size it would need, not left to end in ``MemoryError`` or the OOM killer
(issue 18: ``--n-boot 1000000000`` asked for 2 TiB)."""

from __future__ import annotations

from typing import Any

from metajudge.errors import InputError

#: Default ceiling for one resampling array (8 GiB); callers may pass their own.
DEFAULT_LIMIT_BYTES = 8 * 2**30

#: The most one member of a zip archive read as input (an inspect_ai ``.eval`` log) may inflate
#: to, and the most all its members may: a 1.9 MB log whose ``header.json`` inflated to 2 GB
#: took 4 GB of memory (issue 66). Python's ``zipfile`` inflates a member to no more than the size
#: its directory declares, so the declared sizes are checked before any member is read.
MAX_ARCHIVE_MEMBER_BYTES = 256 * 2**20
MAX_ARCHIVE_BYTES = 2 * 2**30


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    raise AssertionError  # pragma: no cover


def check_archive(archive: Any, path: Any) -> None:
    """Refuse (:class:`InputError` naming ``path`` and the member) a zip ``archive`` (an open
    ``zipfile.ZipFile``) with a member that would inflate past :data:`MAX_ARCHIVE_MEMBER_BYTES`
    or members that together would inflate past :data:`MAX_ARCHIVE_BYTES`."""
    total = 0
    for info in archive.infolist():
        total += info.file_size
        if info.file_size > MAX_ARCHIVE_MEMBER_BYTES:
            raise InputError(
                f"member {info.filename} inflates to {_human(info.file_size)}, above the limit "
                f"of {_human(MAX_ARCHIVE_MEMBER_BYTES)} for one member of an archive",
                path=path,
                field=info.filename,
            )
        if total > MAX_ARCHIVE_BYTES:
            raise InputError(
                f"the members up to {info.filename} inflate to {_human(total)}, above the limit "
                f"of {_human(MAX_ARCHIVE_BYTES)} for a whole archive",
                path=path,
                field=info.filename,
            )


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
