"""The one cost ledger (thread-safe): what a run spent on a backend or through a judge.

The same class counts at two places: a backend's ledger sees every HTTP call it makes (retries,
fanned-out samples, Batch API discounts), and a judge client's ledger sees the requests one
judge metric issued (:class:`metajudge.metrics.judges.engine.JudgeClient`), cached or not.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

#: what cache hits cost when the model computed them (read from the cache rows)
CACHED_COST = (
    "cached_prompt_tokens",
    "cached_processed_prompt_tokens",
    "cached_completion_tokens",
    "cached_latency_s",
)

_SUMMED = (
    "requests",
    "calls",
    "batch_calls",
    "cached",
    "errors",
    "retries",
    "prompt_tokens",
    "processed_prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "cost_usd",
    "latency_s",
    "wall_s",
    *CACHED_COST,
)


@dataclass
class Ledger:
    """What a run spent: requests, model calls, cache hits, tokens, money and time.

    ``requests`` counts requests issued (cached or not); ``calls`` requests the model actually
    ran (one per sample when a server without native ``n`` is fanned out); ``cached`` requests
    answered from the cache or by an identical request of the same batch; ``errors`` requests
    that failed for good; ``retries`` extra attempts. ``processed_prompt_tokens`` are the prompt
    tokens the server evaluated (prefix-cache hits excluded) as reported in
    :attr:`metajudge.backends.base.Completion.processed_prompt_tokens`; where a backend did not
    report them they count as sent and ``processed_known`` turns False. ``cost_usd`` uses the
    config's prices (USD per million tokens), discounted for Batch API calls.
    """

    price_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    batch_discount: float = 0.5
    requests: int = 0
    calls: int = 0
    batch_calls: int = 0
    cached: int = 0
    errors: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    processed_prompt_tokens: int = 0
    processed_known: bool = True
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    wall_s: float = 0.0
    #: what the cache hits cost when they were computed (their stored tokens and latencies)
    cached_prompt_tokens: int = 0
    cached_processed_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    cached_latency_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add_call(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        latency_s: float,
        *,
        reasoning_tokens: int = 0,
        processed_prompt_tokens: int | None = None,
        batch: bool = False,
    ) -> None:
        """One call the model ran (``processed_prompt_tokens=None``: not reported, = sent)."""
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
            if processed_prompt_tokens is None:
                self.processed_known = False
                processed_prompt_tokens = prompt_tokens
            self.processed_prompt_tokens += processed_prompt_tokens
            self.completion_tokens += completion_tokens
            self.reasoning_tokens += reasoning_tokens
            self.cost_usd += cost
            self.latency_s += latency_s

    def add_requests(self, n: int) -> None:
        with self._lock:
            self.requests += n

    def add_hits(
        self,
        n: int,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_s: float = 0.0,
        processed_prompt_tokens: int | None = None,
    ) -> None:
        """``n`` requests answered from the cache; the tokens and latency those answers cost
        when the model computed them (read from the cache rows) are counted apart."""
        with self._lock:
            self.cached += n
            self.cached_prompt_tokens += prompt_tokens
            self.cached_processed_prompt_tokens += (
                prompt_tokens if processed_prompt_tokens is None else processed_prompt_tokens
            )
            self.cached_completion_tokens += completion_tokens
            self.cached_latency_s += latency_s

    def add_error(self) -> None:
        with self._lock:
            self.errors += 1

    def add_retry(self) -> None:
        with self._lock:
            self.retries += 1

    def add_wall(self, seconds: float) -> None:
        with self._lock:
            self.wall_s += seconds

    def add(self, other: Ledger) -> None:
        """Add another ledger's counters to this one (e.g. per-stage ledgers into a total)."""
        snap = other.summary()
        with self._lock:
            for k in _SUMMED:
                setattr(self, k, getattr(self, k) + snap[k])
            self.processed_known = self.processed_known and other.processed_known

    def summary(self) -> dict[str, Any]:
        """A plain dict (JSON-ready) of every counter."""
        with self._lock:
            out: dict[str, Any] = {k: getattr(self, k) for k in _SUMMED}
            out["processed_known"] = self.processed_known
        out["cost_usd"] = round(out["cost_usd"], 6)
        out["latency_s"] = round(out["latency_s"], 4)
        out["wall_s"] = round(out["wall_s"], 4)
        out["cached_latency_s"] = round(out["cached_latency_s"], 4)
        return out

    to_dict = summary
