"""The label in a judge's free-text reply on a dataset's scale (JUDGE-BENCH's annotation prompts).

Rules of the upstream ``extract_answer`` (JUDGE-BENCH, Bavaresco et al. 2025,
``eval_responses.py``, non-CoT prompts), except that an unparseable reply is ``None`` — counted
by the caller — where upstream substitutes a random label. Re-exported by
:mod:`metajudge.metrics.judges.parsers.ratings`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from metajudge.data.formats import Scale

if TYPE_CHECKING:
    from metajudge.backends.base import TokenLogprob


def parse_reply(reply: str | None, scale: Scale) -> str | float | None:
    """The label in a judge's reply on ``scale``, or None.

    Categorical: the first label *of the list* found as a whole word (case-insensitive);
    graded (listed integer values): the first integer in range not touching another digit;
    continuous: the first number.

    >>> parse_reply("Answer: Yes.", Scale.from_dict({"labels": ["No", "Yes"]}))
    'Yes'
    >>> parse_reply("I'd say 4/7", Scale(1, 7, (1, 2, 3, 4, 5, 6, 7)))
    4.0
    >>> parse_reply("score 12", Scale(1, 7, (1, 2, 3, 4, 5, 6, 7))) is None
    True
    """
    if not reply:
        return None
    text = reply.strip().lower()
    if scale.labels is not None:
        for lab in scale.labels:
            if re.search(rf"\b{re.escape(lab.strip().lower())}\b", text):
                return lab
        return None
    if scale.values is not None:
        for m in re.finditer(r"(?<![\d.])\d+(?![\d.])", text):
            if scale.contains(float(m.group())):
                return float(m.group())
        return None
    m = re.search(r"[-+]?[0-9]*\.?[0-9]+", text)
    return float(m.group()) if m else None


# ---------------------------------------------------------------------------------------------
# Judge confidence as data: a verdict's class probabilities


@dataclass(frozen=True)
class VerdictDistribution:
    """A judge's probability per class, how it was obtained and what it rests on.

    ``confidence``: ``logprobs`` (the verdict token's log-probabilities; ``mass``: the
    probability the model put on the class tokens there, before renormalising; ``position``:
    the generated token read) or ``samples`` (the shares of n sampled verdicts; ``mass``: the
    share of samples that gave a verdict, ``n``: the samples)."""

    probs: dict[str, float]
    confidence: str
    mass: float
    position: int | None = None
    n: int | None = None

    def details(self) -> dict[str, Any]:
        """What a score row's ``details`` keeps: ``probs``, ``confidence`` and its basis."""
        out: dict[str, Any] = {
            "probs": {k: round(v, 12) for k, v in self.probs.items()},
            "confidence": self.confidence,
            "probability_mass": round(self.mass, 6),
        }
        if self.n is not None:
            out["n_samples"] = self.n
        return out


def _norm_token(tok: str) -> str:
    return tok.strip().strip("\"'*.:,;!()[]{}").lower()


def verdict_distribution(
    logprobs: Sequence[TokenLogprob] | None, classes: Mapping[str, str]
) -> VerdictDistribution | None:
    """The class probabilities at the first generated token that names a class.

    ``classes`` maps a token's text (lower case, without spaces, quotes or punctuation) to its
    class. At that position the token and its top alternatives are read; tokens of the same
    class are summed (``"A"``, ``" A"``), then normalised over the classes. No class token
    generated, or a log-probability that is NaN or above 0 → ``None``.

    >>> from metajudge.backends.base import TokenLogprob
    >>> lp = [TokenLogprob(" A", math.log(0.6), ((" A", math.log(0.6)), ("B", math.log(0.2)), (" tie", math.log(0.1))))]
    >>> d = verdict_distribution(lp, {"a": "A", "b": "B", "tie": "tie"})
    >>> {k: round(v, 3) for k, v in d.probs.items()}, round(d.mass, 2)
    ({'A': 0.667, 'B': 0.222, 'tie': 0.111}, 0.9)
    >>> verdict_distribution([TokenLogprob("Well", -0.1)], {"a": "A"}) is None
    True
    """
    if not logprobs:
        return None
    labels = list(dict.fromkeys(classes.values()))
    for i, tl in enumerate(logprobs):
        if _norm_token(tl.token) not in classes:
            continue
        alts = tl.top or ((tl.token, tl.logprob),)
        if tl.token not in {a for a, _ in alts}:
            alts = ((tl.token, tl.logprob), *alts)
        acc = dict.fromkeys(labels, 0.0)
        for tok, lp in alts:
            cls = classes.get(_norm_token(tok))
            if cls is None:
                continue
            if math.isnan(lp) or lp > 1e-3:
                return None
            acc[cls] += math.exp(min(lp, 0.0))
        mass = sum(acc.values())
        if mass <= 0:
            return None
        return VerdictDistribution({k: v / mass for k, v in acc.items()}, "logprobs", mass, i)
    return None


def sample_distribution(
    verdicts: Sequence[str | None], classes: Sequence[str]
) -> VerdictDistribution | None:
    """Sample-based confidence where a backbone gives no log-probabilities: the share of the
    ``n`` sampled verdicts per class (unparsed samples, ``None``, are left out and lower
    ``mass``); ``None`` when no sample gave a verdict.

    >>> d = sample_distribution(["A", "A", "B", None], ["A", "B", "tie"])
    >>> d.probs, d.mass, d.n, d.confidence
    ({'A': 0.6666666666666666, 'B': 0.3333333333333333, 'tie': 0.0}, 0.75, 4, 'samples')
    """
    got = [v for v in verdicts if v is not None]
    if not got:
        return None
    probs = {c: sum(v == c for v in got) / len(got) for c in classes}
    return VerdictDistribution(probs, "samples", len(got) / len(verdicts), None, len(verdicts))
