"""The one small backend protocol every LLM judge calls through.

A batch of :class:`Request` goes in; one :class:`Completion` (or a :class:`BackendError` for a
request that failed after retries) comes out per request, in order. A completion carries its own
costs: prompt tokens sent, prompt tokens the server actually processed (prefix-cache hits
excluded, where the backend can tell) and completion tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from metajudge.errors import MetajudgeError

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}


@dataclass(frozen=True)
class Request:
    """A chat request (``messages``) or a completion request (``prompt``) and its decoding settings."""

    messages: tuple[Message, ...] | None = None
    prompt: str | None = None
    temperature: float = 0.0
    max_tokens: int = 256
    n: int = 1
    stop: tuple[str, ...] = ()
    seed: int | None = None
    logprobs: bool = False
    top_logprobs: int = 0
    json_schema: dict[str, Any] | None = None  # JSON mode constrained by this schema
    grammar: str | None = None  # GBNF grammar (llama.cpp)

    def __post_init__(self) -> None:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("a Request needs exactly one of messages= or prompt=")

    def to_dict(self) -> dict[str, Any]:
        """Canonical form used in cache keys (every field, tuples as lists)."""
        return {
            "messages": [dict(m) for m in self.messages] if self.messages is not None else None,
            "prompt": self.prompt,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "n": self.n,
            "stop": list(self.stop),
            "seed": self.seed,
            "logprobs": self.logprobs,
            "top_logprobs": self.top_logprobs,
            "json_schema": self.json_schema,
            "grammar": self.grammar,
        }


@dataclass(frozen=True)
class TokenLogprob:
    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()  # alternatives (token, logprob), most likely first


@dataclass(frozen=True)
class Choice:
    text: str  # with any <think>…</think> removed
    raw_text: str  # as the model produced it
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    reasoning_tokens: int = 0  # tokens spent inside <think>…</think>


@dataclass(frozen=True)
class Completion:
    """One request's answer(s) and what they cost.

    ``processed_prompt_tokens``: prompt tokens the server evaluated (sent minus the prefix it
    reused); ``None`` when the backend does not report it (then callers count it as sent).
    """

    choices: tuple[Choice, ...]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    model: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    processed_prompt_tokens: int | None = None

    @property
    def text(self) -> str:
        return self.choices[0].text if self.choices else ""


class BackendError(MetajudgeError):
    """A request that failed for good (after retries); carries the reason."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


@runtime_checkable
class Backend(Protocol):
    """What callers use of a backend: its name, config and ledger, ``complete`` and ``close``.

    ``config`` is the :class:`~metajudge.backends.config.BackendConfig` (judges read ``chat``,
    ``n_ctx``, ``kind`` and ``grammar_param``); ``ledger`` the
    :class:`~metajudge.backends.ledger.Ledger` of the calls it made. ``complete`` takes an
    optional ``on_result(index, result)`` callback called as each result is final (the cache
    persists through it); backends without it are still accepted by the cache.
    """

    name: str  # config name, e.g. "smollm2-135m"
    config: Any
    ledger: Any

    @property
    def model_id(self) -> str:
        """Model identity for cache keys: model name plus GGUF sha256 where local."""

    def complete(self, requests: Sequence[Request]) -> list[Completion | BackendError]: ...

    def close(self) -> None: ...


_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)


def strip_think(text: str) -> tuple[str, str]:
    """Split ``<think>…</think>`` reasoning from the answer.

    >>> strip_think("<think>hmm, 3 or 4</think> Score: 4")
    ('Score: 4', 'hmm, 3 or 4')
    >>> strip_think("Score: 2")
    ('Score: 2', '')
    """
    thoughts = []
    for m in _THINK.finditer(text):
        inner = m.group(0)[len("<think>") :]
        inner = inner.removesuffix("</think>")
        thoughts.append(inner.strip())
    return _THINK.sub("", text).strip(), "\n".join(thoughts)
