"""Which replica takes a request: the least in flight, or the one that already holds its prefix.

llama.cpp's server keeps the KV cache of the prompt it evaluated last and evaluates only the
tokens after the longest prefix the next prompt shares with it (vLLM's prefix cache does the same
across requests). The G-Eval requests for the responses of one item share the instructions *and*
the item's context (its table or passage); sent to different replicas, every replica evaluates
that context again. :func:`pick_endpoint` sends a request to the replica whose last request
shares the longest prompt prefix with it when that prefix is at least :data:`AFFINITY_MIN_CHARS`
characters longer than on every other replica and that replica has at most
:data:`AFFINITY_SLACK` request more in flight than the least loaded one; otherwise to the least
loaded replica (the first on ties). Until every replica has taken a request, and for a retry
(no prompt given), the least loaded one takes it. Prompts that share only the instructions
therefore still spread over the replicas. Replicas in ``avoid`` (marked down after a failed
connection, or the one a retry just failed on) take a request only when every replica is in it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

AFFINITY_MIN_CHARS = 200
AFFINITY_SLACK = 1


def prompt_text(kw: dict[str, Any]) -> str | None:
    """The prompt of a chat or completion request's keywords as one string (``None``: neither)."""
    msgs = kw.get("messages")
    if msgs is not None:
        return "\x1e".join(f"{m.get('role', '')}\x1f{m.get('content', '')}" for m in msgs)
    prompt = kw.get("prompt")
    return prompt if isinstance(prompt, str) else None


def shared_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (binary search on slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def pick_endpoint(
    endpoints: list[str],
    inflight: dict[str, int],
    last_prompt: dict[str, str],
    text: str | None,
    avoid: Collection[str] = (),
) -> str:
    """The replica for a request with prompt ``text`` (module docstring), outside ``avoid``
    unless every replica is in it; updates ``inflight`` and ``last_prompt`` for it.

    >>> pick_endpoint(["a", "b"], {}, {}, None, avoid={"a"})
    'b'
    >>> pick_endpoint(["a", "b"], {}, {}, None, avoid={"a", "b"})
    'a'
    """
    endpoints = [e for e in endpoints if e not in avoid] or list(endpoints)
    load = {e: inflight.get(e, 0) for e in endpoints}
    best = min(endpoints, key=lambda e: load[e])
    if text is not None and len(endpoints) > 1 and all(e in last_prompt for e in endpoints):
        shared = {e: shared_prefix(last_prompt.get(e, ""), text) for e in endpoints}
        top = max(endpoints, key=lambda e: shared[e])
        others = max(shared[e] for e in endpoints if e != top)
        if shared[top] - others >= AFFINITY_MIN_CHARS and load[top] <= load[best] + AFFINITY_SLACK:
            best = top
    if text is not None:
        last_prompt[best] = text
    inflight[best] = load[best] + 1
    return best
