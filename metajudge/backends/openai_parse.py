"""Reading OpenAI-compatible responses: choices, logprobs, ``<think>`` reasoning, token counts.

Shared by live calls (:mod:`.openai_backend`) and the Batch API (:mod:`.batch`); also where
secrets are scrubbed from error text, ``Retry-After`` headers are read (and capped) and an
endpoint's base URL is normalised into the identity the response cache keys on.
"""

from __future__ import annotations

import email.utils
import re
import time
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

from metajudge.backends.base import Choice, Completion, TokenLogprob, strip_think

_KEY_PATTERN = re.compile(r"(sk|key|token)-[A-Za-z0-9_\-*]{6,}", re.IGNORECASE)


def scrub(text: str, secret: str | None = None) -> str:
    """Remove a secret and anything that looks like an API key from ``text``.

    >>> scrub("Incorrect API key provided: sk-abcdef123456", None)
    'Incorrect API key provided: sk-***'
    """
    if secret:
        text = text.replace(secret, "***")
    return _KEY_PATTERN.sub(lambda m: m.group(1) + "-***", text)


_DEFAULT_PORTS = {"http": 80, "https": 443}
_SECRET_QUERY = re.compile(r"key|token|secret|sig|password|auth|credential", re.IGNORECASE)


def endpoint_id(base_url: str | None) -> str:
    """The normalised identity of a remote endpoint: scheme, host, non-default port, path and
    non-secret query; user, password and secret-looking query values are dropped.

    >>> endpoint_id("HTTPS://user:pw@API.Example.com:443/v1/?api-version=2&api-key=s3cr3t")
    'https://api.example.com/v1?api-version=2'
    >>> endpoint_id("http://127.0.0.1:8001/v1//")
    'http://127.0.0.1:8001/v1'
    """
    if not base_url:
        return ""
    parts = urllib.parse.urlsplit(base_url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and _DEFAULT_PORTS.get(scheme) != port:
        host += f":{port}"
    path = re.sub("/+", "/", parts.path).rstrip("/")
    query = urllib.parse.urlencode(
        sorted(
            (k, v)
            for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
            if not _SECRET_QUERY.search(k)
        )
    )
    return f"{scheme}://{host}{path}" + (f"?{query}" if query else "")


def redact_url(url: str | None) -> str | None:
    """``url`` for display: user and password, and the values of secret-looking query keys, as
    ``***`` (everything else as written).

    >>> redact_url("https://user:pw@host.example/v1?api-version=2&api-key=s3cr3t")
    'https://***@host.example/v1?api-version=2&api-key=***'
    >>> redact_url("http://127.0.0.1:8001/v1")
    'http://127.0.0.1:8001/v1'
    """
    if not url:
        return url
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "&".join(
        f"{k}=***" if _SECRET_QUERY.search(k) else (f"{k}={v}" if sep else k)
        for k, sep, v in (item.partition("=") for item in parts.query.split("&") if item)
    )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def retry_after_s(headers: Any) -> float | None:
    """Seconds a server asked us to wait (``retry-after-ms``, ``retry-after`` seconds or HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key access (typed SDK objects and plain dicts alike), including extra fields."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    val = getattr(obj, name, None)
    if val is None:
        extra = getattr(obj, "model_extra", None) or {}
        val = extra.get(name)
    return default if val is None else val


def _count_think_tokens(tokens: Sequence[str], raw: str) -> int:
    """Tokens (from logprobs) that fall inside the ``<think>…</think>`` part of ``raw``."""
    end = raw.find("</think>")
    end = len(raw) if end < 0 else end + len("</think>")
    pos, n = 0, 0
    for tok in tokens:
        if pos >= end:
            break
        n += 1
        pos += len(tok)
    return n


def _text(value: Any, what: str) -> str:
    """``value`` as text; a lone UTF-16 surrogate (``"\\ud800"`` in the reply JSON: no character,
    it cannot be stored or written) makes the reply an invalid body (``ValueError``).

    >>> _text("ok", "x")
    'ok'
    >>> _text("a\\ud800", "the reply text")
    Traceback (most recent call last):
    ...
    ValueError: the reply text holds a lone surrogate \\ud800 (not text)
    """
    s = str(value)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(s[e.start])
        raise ValueError(f"{what} holds a lone surrogate \\u{code:04x} (not text)") from None
    return s


def _finish_reason(value: Any, redact: Callable[[str], str]) -> str | None:
    return None if value is None else redact(_text(value, "the reply's finish_reason"))


def scrub_tokens(items: Sequence[TokenLogprob], redact: Callable[[str], str]) -> list[TokenLogprob]:
    """``items`` with every token through ``redact``, and a secret spread over several tokens
    removed too: where ``redact`` changes the joined text, every token overlapping the changed
    span is replaced by ``***`` (the log-probabilities stay).

    >>> toks = [TokenLogprob(t, -0.1) for t in ("Score", " 4", " sk-", "abc", "defgh")]
    >>> [t.token for t in scrub_tokens(toks, scrub)]
    ['Score', ' 4', ' sk-', '***', '***']
    """
    out = [TokenLogprob(redact(t.token), t.logprob, t.top) for t in items]
    joined = "".join(t.token for t in out)
    cleaned = redact(joined)
    if cleaned == joined:
        return out
    head = 0  # the changed span of ``joined``: [head, len(joined) - tail)
    while head < min(len(joined), len(cleaned)) and joined[head] == cleaned[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(joined), len(cleaned)) - head
        and joined[len(joined) - 1 - tail] == cleaned[len(cleaned) - 1 - tail]
    ):
        tail += 1
    end, pos = len(joined) - tail, 0
    for i, t in enumerate(out):
        start, pos = pos, pos + len(t.token)
        if start < end and pos > head:
            out[i] = TokenLogprob("***", t.logprob, t.top)
    return out


def _chat_logprobs(lp: Any, redact: Callable[[str], str]) -> list[TokenLogprob] | None:
    """A chat choice's ``logprobs.content`` as :class:`TokenLogprob` items (``None``: absent)."""
    if lp is None or _get(lp, "content") is None:
        return None
    items = []
    for item in _get(lp, "content"):
        top = [
            (redact(_text(_get(t, "token"), _ALT)), float(_get(t, "logprob")))
            for t in (_get(item, "top_logprobs") or [])
        ]
        top.sort(key=lambda x: -x[1])
        token = _text(_get(item, "token"), _TOKEN)
        items.append(TokenLogprob(token, float(_get(item, "logprob")), tuple(top)))
    return items


def _completion_logprobs(lp: Any, redact: Callable[[str], str]) -> list[TokenLogprob] | None:
    """A completion choice's ``logprobs`` (tokens, token_logprobs, top_logprobs) as items."""
    if lp is None or _get(lp, "tokens") is None:
        return None
    toks = _get(lp, "tokens")
    lps = _get(lp, "token_logprobs") or [None] * len(toks)
    tops = _get(lp, "top_logprobs") or [None] * len(toks)
    items = []
    for tok, val, top in zip(toks, lps, tops, strict=False):
        alts = sorted(
            ((redact(_text(k, _ALT)), float(v)) for k, v in (top or {}).items()),
            key=lambda x: -x[1],
        )
        value = float(val) if val is not None else float("nan")
        items.append(TokenLogprob(_text(tok, _TOKEN), value, tuple(alts)))
    return items


_TOKEN = "a log-probability token"
_ALT = "a top log-probability token"


def parse_choice(
    choice: Any,
    *,
    chat: bool,
    completion_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    redact: Callable[[str], str] = scrub,
) -> Choice:
    """One API choice (chat or completion, SDK object or dict) → :class:`Choice`.

    ``<think>…</think>`` is removed from ``text`` (kept in ``raw_text``); its token count comes from
    the server's ``reasoning_tokens`` when given, else from the logprob tokens, else a share of
    ``completion_tokens`` proportional to its characters. The text goes through ``redact``
    (:func:`scrub` by default; a backend passes its own, which also knows its API key): this is
    where every reply enters the program (live calls, the Batch API, imported batch results), so
    a key a server echoes never reaches the cache, score files or reports; so do the
    log-probability tokens (:func:`scrub_tokens`) and ``finish_reason``. A string that holds a
    lone surrogate raises ``ValueError`` (an invalid body: retried, then a counted failure).
    """
    lp = _get(choice, "logprobs")
    if chat:
        msg = _get(choice, "message")
        content = _get(msg, "content", "") or ""
        rc = _get(msg, "reasoning_content") or _get(msg, "reasoning")
        raw = f"<think>{rc}</think>{content}" if rc else content
        lp_items = _chat_logprobs(lp, redact)
    else:
        raw = _get(choice, "text", "") or ""
        lp_items = _completion_logprobs(lp, redact)
    raw = _text(raw, "the reply text")
    if lp_items is not None:
        lp_items = scrub_tokens(lp_items, redact)
    raw = redact(raw)
    text, _thought = strip_think(raw)
    n_think = 0
    if "<think>" in raw:
        if reasoning_tokens is not None:
            n_think = reasoning_tokens
        elif lp_items is not None:
            n_think = _count_think_tokens([t.token for t in lp_items], raw)
        elif completion_tokens and raw:
            span = len(raw) - len(raw.split("</think>", 1)[-1]) if "</think>" in raw else len(raw)
            n_think = round(completion_tokens * span / len(raw))
    elif reasoning_tokens:
        n_think = reasoning_tokens  # hidden reasoning (o-series models): billed, not shown
    return Choice(
        text=text,
        raw_text=raw,
        finish_reason=_finish_reason(_get(choice, "finish_reason"), redact),
        logprobs=tuple(lp_items) if lp_items is not None else None,
        reasoning_tokens=int(n_think),
    )


def parse_response(
    resp: Any,
    *,
    chat: bool,
    latency_s: float,
    model: str,
    redact: Callable[[str], str] = scrub,
) -> Completion:
    """A whole API response → :class:`Completion` (raises ``ValueError`` when it has no choices
    or a string holds a lone surrogate); every string kept, the ``model`` field included, goes
    through ``redact`` (:func:`parse_choice`)."""
    choices_raw = _get(resp, "choices")
    if not choices_raw:
        raise ValueError("response has no choices")
    usage = _get(resp, "usage")
    pt = int(_get(usage, "prompt_tokens", 0) or 0)
    ct = int(_get(usage, "completion_tokens", 0) or 0)
    details = _get(usage, "completion_tokens_details")
    rt = _get(details, "reasoning_tokens")
    processed = _processed_tokens(resp, usage, pt)
    single = len(choices_raw) == 1
    choices = tuple(
        parse_choice(
            c,
            chat=chat,
            completion_tokens=ct if single else None,
            reasoning_tokens=int(rt) if (rt is not None and single) else None,
            redact=redact,
        )
        for c in sorted(choices_raw, key=lambda c: int(_get(c, "index", 0) or 0))
    )
    return Completion(
        choices=choices,
        prompt_tokens=pt,
        completion_tokens=ct,
        latency_s=latency_s,
        model=redact(_text(_get(resp, "model", model) or model, "the reply's model field")),
        extra={"reasoning_tokens": sum(c.reasoning_tokens for c in choices)},
        processed_prompt_tokens=processed,
    )


def _processed_tokens(resp: Any, usage: Any, prompt_tokens: int) -> int | None:
    """Prompt tokens the server evaluated, where the response says: llama.cpp's C++ server
    (``timings.prompt_n``) or OpenAI/vLLM (sent minus ``prompt_tokens_details.cached_tokens``)."""
    n = _get(_get(resp, "timings"), "prompt_n")
    if isinstance(n, (int, float)) and not isinstance(n, bool):
        return int(n)
    cached = _get(_get(usage, "prompt_tokens_details"), "cached_tokens")
    if isinstance(cached, (int, float)) and not isinstance(cached, bool):
        return max(0, prompt_tokens - int(cached))
    return None


def merge_samples(parts: Sequence[Completion]) -> Completion:
    """Samples of one request made as separate calls (servers without ``n``) → one Completion."""
    return Completion(
        choices=tuple(ch for p in parts for ch in p.choices),
        prompt_tokens=parts[0].prompt_tokens,
        completion_tokens=sum(p.completion_tokens for p in parts),
        latency_s=max(p.latency_s for p in parts),
        model=parts[0].model,
        extra={
            "reasoning_tokens": sum(p.extra.get("reasoning_tokens", 0) for p in parts),
            "calls": len(parts),
        },
        processed_prompt_tokens=None
        if any(p.processed_prompt_tokens is None for p in parts)
        else sum(p.processed_prompt_tokens or 0 for p in parts),
    )
