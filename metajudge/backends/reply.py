"""What makes a reply usable for the request that asked for it, and how large it may be.

A reply is usable when it has at least one choice and, when the request asked for
log-probabilities, every choice carries them; every log-probability it carries is a number <= 0
(a small positive rounding error is tolerated), finite for a generated token (an alternative may
be ``-inf``, probability 0) and never NaN.
A reply that is not usable is a counted failure: it is never stored in the response cache, never
served from it, and the next run asks again (issue 30: a G-Eval reply without log-probabilities,
with a NaN or with a log-probability of 1000 was cached and broke every rerun).

The size of a reply body is bounded from the request (:func:`reply_byte_cap`): ``max_tokens``
tokens per sample can only take so many bytes of JSON, so a 50 MB body for ``max_tokens = 64`` is
refused before it is read whole, let alone stored.
"""

from __future__ import annotations

import math

from metajudge.backends.base import Completion, Request

#: Largest log-probability accepted (servers round a certain token to a tiny positive value).
LOGPROB_MAX = 1e-3
#: Bytes of reply JSON allowed per generated token: the text, its JSON escaping and, with
#: log-probabilities, the token's entry (token, logprob, UTF-8 bytes) …
BYTES_PER_TOKEN = 256
#: … plus this much per top alternative asked for (each is an entry of the same shape).
BYTES_PER_ALTERNATIVE = 192
#: Fixed allowance: envelope, usage, ids, a ``reasoning_content`` the server does not count.
BASE_BYTES = 256 * 1024


class UnusableReply(Exception):
    """A reply refused before it is parsed (a body over :func:`reply_byte_cap`)."""


def reply_byte_cap(request: Request) -> int:
    """The most bytes a reply body to ``request`` may have: a fixed 256 KiB allowance plus, per
    generated token of every sample, 256 bytes and 192 per top alternative asked for.

    >>> reply_byte_cap(Request(prompt="x", max_tokens=64))
    278528
    >>> reply_byte_cap(Request(prompt="x", max_tokens=8, logprobs=True, top_logprobs=5))
    271872
    """
    per_token = BYTES_PER_TOKEN
    if request.logprobs:
        per_token += BYTES_PER_ALTERNATIVE * max(1, int(request.top_logprobs))
    return BASE_BYTES + max(1, int(request.max_tokens)) * max(1, int(request.n)) * per_token


def _bad_logprob(value: float, *, chosen: bool) -> bool:
    """Not a log-probability: NaN, above :data:`LOGPROB_MAX`, or ``-inf`` for a generated token
    (an alternative may be ``-inf``: a token a grammar ruled out has probability 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return True
    return value > LOGPROB_MAX or (chosen and math.isinf(value))


def reply_problem(request: Request, completion: Completion) -> str | None:
    """Why ``completion`` is no usable answer to ``request`` (``None`` when it is).

    >>> from metajudge.backends.base import Choice, TokenLogprob
    >>> req = Request(prompt="x", logprobs=True, top_logprobs=2)
    >>> reply_problem(req, Completion(choices=(Choice("4", "4"),)))
    'choice 0 has no log-probabilities (the request asked for them)'
    >>> reply_problem(req, Completion(choices=(Choice("4", "4", logprobs=(TokenLogprob("4", 1000.0),)),)))
    "choice 0, token 0 ('4'): log-probability 1000.0 is not a number <= 0"
    >>> reply_problem(req, Completion(choices=(Choice("4", "4", logprobs=(TokenLogprob("4", -0.1),)),))) is None
    True
    """
    if not completion.choices:
        return "the reply has no choices"
    for c, choice in enumerate(completion.choices):
        if choice.logprobs is None:
            if request.logprobs:
                return f"choice {c} has no log-probabilities (the request asked for them)"
            continue
        if request.logprobs and not choice.logprobs and choice.raw_text:
            return f"choice {c} has an empty list of log-probabilities for a non-empty text"
        for t, tl in enumerate(choice.logprobs):
            values = [("", tl.logprob)] + [(f", alternative {a[:20]!r}", v) for a, v in tl.top]
            for where, value in values:
                if _bad_logprob(value, chosen=not where):
                    return (
                        f"choice {c}, token {t} ({tl.token[:20]!r}{where}): log-probability "
                        f"{value!r} is not a number <= 0"
                    )
    return None
