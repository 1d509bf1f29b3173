"""Per-run token and cost accounting (thread-safe)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Ledger:
    """What a run spent: backend calls, cache hits, tokens, money and time.

    ``calls`` counts requests the backend actually answered (one per sample when a server
    without native ``n`` is fanned out), ``cached_hits`` requests answered from the cache,
    ``errors`` requests that failed for good, ``retries`` extra attempts. ``cost_usd`` uses the
    config's prices (USD per million tokens), discounted for Batch API calls.
    """

    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    batch_discount: float = 0.5
    calls: int = 0
    batch_calls: int = 0
    cached_hits: int = 0
    errors: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    wall_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add_call(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        latency_s: float,
        *,
        reasoning_tokens: int = 0,
        batch: bool = False,
    ) -> None:
        cost = (
            prompt_tokens * self.price_input_per_mtok
            + completion_tokens * self.price_output_per_mtok
        ) / 1e6
        if batch:
            cost *= self.batch_discount
        with self._lock:
            self.calls += 1
            self.batch_calls += int(batch)
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.reasoning_tokens += reasoning_tokens
            self.cost_usd += cost
            self.latency_s += latency_s

    def add_hits(self, n: int) -> None:
        with self._lock:
            self.cached_hits += n

    def add_error(self) -> None:
        with self._lock:
            self.errors += 1

    def add_retry(self) -> None:
        with self._lock:
            self.retries += 1

    def add_wall(self, seconds: float) -> None:
        with self._lock:
            self.wall_s += seconds

    def summary(self) -> dict[str, Any]:
        """A plain dict (JSON-ready) of every counter."""
        with self._lock:
            return {
                "calls": self.calls,
                "batch_calls": self.batch_calls,
                "cached_hits": self.cached_hits,
                "errors": self.errors,
                "retries": self.retries,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "reasoning_tokens": self.reasoning_tokens,
                "cost_usd": round(self.cost_usd, 6),
                "latency_s": round(self.latency_s, 4),
                "wall_s": round(self.wall_s, 4),
            }
