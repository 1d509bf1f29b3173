"""Export mode of the cached backend: record what a judge run would send, send nothing.

:class:`RecordingBackend` is a :class:`~metajudge.backends.cached.CachedBackend` whose misses
are not called: each is recorded (its cache key, parser version and request) and answered with
a :class:`PendingError`, the "not yet available" marker — judges record it per row as an error
like any failed call, never as a score. Cache hits are answered as usual, so exporting again
after a partial import records only what is still missing (resumable). The recorded requests
are written as an OpenAI batch file by :mod:`metajudge.backends.batch_file`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from metajudge.backends.base import BackendError, Completion, Request
from metajudge.backends.cached import Accept, CachedBackend


class PendingError(BackendError):
    """The answer is not available yet: the request was recorded for a batch run."""


@dataclass(frozen=True)
class Recorded:
    """One request a judge run needs, with everything its cache entry is keyed by."""

    key: str
    kind: str
    model_id: str
    parser_version: str
    endpoint: str
    request: Request


class RecordingBackend(CachedBackend):
    """A cached backend that records its misses instead of calling the model (module docstring).

    ``records`` (key -> :class:`Recorded`, first-seen order) is shared with the views made by
    :meth:`with_parser_version`, so one judge run's requests end up in one place.
    """

    def __init__(
        self,
        inner: Any,
        cache: Any,
        *,
        parser_version: str = "",
        records: dict[str, Recorded] | None = None,
        close_cache: bool = True,
        _owns: bool = True,
    ) -> None:
        super().__init__(
            inner, cache, parser_version=parser_version, close_cache=close_cache, _owns=_owns
        )
        self.records: dict[str, Recorded] = records if records is not None else {}

    @classmethod
    def around(cls, cached: CachedBackend) -> RecordingBackend:
        """The export mode of an existing cached backend (same inner backend and cache)."""
        return cls(cached.inner, cached.cache, parser_version=cached.parser_version, _owns=False)

    def with_parser_version(self, parser_version: str) -> RecordingBackend:
        return RecordingBackend(
            self.inner,
            self.cache,
            parser_version=parser_version,
            records=self.records,
            close_cache=False,
            _owns=False,
        )

    def _complete(
        self,
        requests: Sequence[Request],
        parser_version: str | None,
        batch_kw: dict[str, Any] | None,
        accept: Accept | None = None,
    ) -> list[Completion | BackendError]:
        pv = self.parser_version if parser_version is None else parser_version
        kind, model_id, endpoint = self.kind, self.model_id, self.endpoint
        keys = [self.key(r, pv) for r in requests]
        hits = self.usable_hits(keys, requests, accept)
        self.ledger.add_hits(sum(1 for k in keys if k in hits))
        out: list[Completion | BackendError] = []
        for k, r in zip(keys, requests, strict=True):
            if k in hits:
                out.append(hits[k])
                continue
            self.records.setdefault(k, Recorded(k, kind, model_id, pv, endpoint, r))
            out.append(PendingError(f"{self.name}: not yet available (exported for a batch run)"))
        return out
