"""The pairwise judge: instruction + Response A + Response B → ``A`` / ``B`` / ``tie``.

For pairwise preference sets (PandaLM, Auto-J, LLMBar, JudgeBench; positive label = b better,
as in :class:`metajudge.data.formats.PairwiseRecord`). The prompt files are ``prompts/pairwise_judge.{paper,small}.txt``: ``paper`` is an
instruction prompt in the layout of the MT-RAIG judge prompts (chat models), ``small`` a few-shot
completion prompt for the embedded small / base models. A judge call shows the record's two
responses in one of two orders — ``"ab"`` (a first) or ``"ba"`` (b first) — and the verdict is
mapped back to the record's sides, so position bias can be measured by judging both orders
(alpaca_eval, MT-Bench; see :mod:`metajudge.analyses.judge_biases`).

With ``constrained=True`` (the default where the backend takes a GBNF grammar, i.e. the
embedded llama.cpp server) the answer is restricted to ``A``, ``B`` or ``tie``; otherwise free
text is parsed by :func:`parse_pairwise`, whose failures are counted ``None`` verdicts, never a
guess.

Judge confidence as data (``confidence``): ``logprobs`` asks for the verdict token's
log-probabilities and keeps p(a better) / p(b better) / p(tie) in the verdict's
``details["probs"]`` (sides of the record; :func:`~.parsers.labels.verdict_distribution`);
``samples`` (a backbone without log-probabilities) judges each record ``n_samples`` times at
``temperature`` (> 0) and keeps the shares of the sampled verdicts, named
``details["confidence"] = "samples"`` (:func:`~.parsers.labels.sample_distribution`). A verdict
without a distribution (no class token, no verdict in any sample) is counted
(``summary["confidence_missing"]``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from metajudge.backends.base import Backend, BackendError
from metajudge.data.formats import PairwiseRecord
from metajudge.errors import InputError
from metajudge.metrics.judges.common import JudgeBase
from metajudge.metrics.judges.parsers.labels import (
    VerdictDistribution,
    sample_distribution,
    verdict_distribution,
)
from metajudge.stats.decisions import SPELLINGS, Pref, spell, to_pref, unswap

Order = Literal["ab", "ba"]

PAIRWISE_PARSER_VERSION = "pairwise-1"
#: GBNF grammar of a constrained answer (llama.cpp ``grammar``).
PAIRWISE_GRAMMAR = 'root ::= " "? ("A" | "B" | "tie")'

#: the verdict tokens (normalised, lower case) of a positional answer, by their decision
_TOKENS = {t.lower(): t for t in SPELLINGS["positional"].values()}
CONFIDENCE = ("none", "logprobs", "samples")
_TIE = re.compile(r"\b(tie|equal(ly)?|same|both|neither|draw)\b", re.IGNORECASE)
_UPPER = re.compile(r"(?<![A-Za-z'])([AB])(?![A-Za-z'])")
_NAMED = re.compile(
    r"\b(?:response|output|answer|assistant|option)\s*[\(\[]?\s*([ab])\b", re.IGNORECASE
)


def parse_pairwise(text: str) -> Pref | None:
    """The verdict in a judge's answer (positional: ``Pref.A`` = the response shown first), or
    ``None`` when it names no (or both) responses.

    Reads the first line that says something: a bare ``A``/``B``, else the one letter that line
    names (a capital A/B standing alone, or a/b after "Response"/"Output"; naming both is
    ambiguous), else a tie word. Markdown is ignored.

    >>> parse_pairwise(" A")
    <Pref.A: -1>
    >>> parse_pairwise("**Response B** is better because it is correct.")
    <Pref.B: 1>
    >>> parse_pairwise("Output (a)")
    <Pref.A: -1>
    >>> parse_pairwise("tie")
    <Pref.TIE: 0>
    >>> parse_pairwise("Both responses are equally good.")
    <Pref.TIE: 0>
    >>> parse_pairwise("A and B are both wrong, but B is closer") is None
    True
    >>> parse_pairwise("I cannot decide.") is None
    True
    >>> parse_pairwise("") is None
    True
    """
    t = re.sub(r"[*_`#>]+", "", text or "").strip()
    if not t:
        return None
    first = next((ln.strip() for ln in t.splitlines() if ln.strip()), "")
    bare = first.rstrip(".:!").strip()
    if bare.upper() in ("A", "B"):
        return to_pref(bare, "positional")
    if bare.lower() in ("tie", "equal", "draw"):
        return Pref.TIE
    letters = {m.group(1) for m in _UPPER.finditer(first)} | {
        m.group(1).upper() for m in _NAMED.finditer(first)
    }
    if len(letters) == 1:
        return to_pref(letters.pop(), "positional")
    if not letters and _TIE.search(first):
        return Pref.TIE
    return None


@dataclass(frozen=True)
class PairwiseVerdict:
    """One judge call on one record in one order."""

    id: str
    order: Order
    decision: Pref | None  # positional: Pref.A = the response shown first
    preferred: Pref | None  # mapped back to the record's sides (Pref.A = a better)
    raw: str = ""
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def value(self) -> float | None:
        """The verdict on the label scale: +1 b better, −1 a better, 0 tie, None unparsed."""
        return None if self.preferred is None else float(self.preferred)


def _truncate(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit].rstrip() + " …[truncated]", True


class PairwiseJudge(JudgeBase):
    """Pairwise A/B/tie judge on one backbone (see the module docstring).

    ``max_chars`` bounds each response (and the instruction) so the prompt fits the backbone's
    context; truncations are recorded per verdict. Decoding: ``temperature`` (0 = greedy) and
    ``seed``; when sampling, each request's seed is derived from the run seed and the item's
    position (independent noise across items), and repeated runs use different run seeds.
    Backbone, prompt variant (the one default rule of :func:`~.common.default_variant`), client
    and signature come from :class:`~metajudge.metrics.judges.common.JudgeBase`.
    """

    name = "pairwise_judge"
    task = "pairwise_judge"
    parser_version = PAIRWISE_PARSER_VERSION

    def __init__(
        self,
        *,
        backbone: str | None = None,
        variant: str | None = None,
        constrained: bool | None = None,
        max_chars: int | None = None,
        temperature: float = 0.0,
        seed: int = 0,
        backend: Backend | None = None,
        confidence: str = "none",
        n_samples: int = 5,
        top_logprobs: int = 10,
    ) -> None:
        super().__init__(backbone=backbone, variant=variant, seed=seed, backend=backend)
        if confidence not in CONFIDENCE:
            raise InputError(
                f"confidence must be one of {', '.join(CONFIDENCE)}, got {confidence!r}",
                field="confidence",
            )
        if confidence == "samples" and (n_samples < 2 or temperature <= 0):
            raise InputError(
                "sample-based confidence needs n_samples >= 2 and temperature > 0",
                field="n_samples",
            )
        self.confidence = confidence
        self.n_samples = int(n_samples)
        self.top_logprobs = int(top_logprobs)
        self.confidence_missing = 0
        self.constrained = self.can_constrain if constrained is None else bool(constrained)
        # ~2.5 characters per token; keep ~700 tokens for the instructions and few-shot examples
        self.max_chars = (
            int(max_chars) if max_chars is not None else max(400, int((self.n_ctx - 700) * 2.5 / 3))
        )
        self.temperature = float(temperature)
        self.calls = 0
        self.parse_failures = 0
        self.backend_errors = 0

    @property
    def signature(self) -> str:
        conf: dict[str, Any] = {}  # absent when off: the signatures of earlier runs hold
        if self.confidence == "logprobs":
            conf = {"conf": "logprobs", "top": self.top_logprobs}
        elif self.confidence == "samples":
            conf = {"conf": "samples", "n": self.n_samples}
        return self._signature_parts(
            self.name,
            f"prompt:{self.prompt(self.task).short_hash}",
            constrained=int(self.constrained),
            temp=f"{self.temperature:g}",
            chars=self.max_chars,
            **conf,
        )

    def render(self, record: PairwiseRecord, order: Order) -> tuple[str, dict[str, Any]]:
        """The prompt text for ``record`` shown in ``order`` and what was truncated."""
        first, second = (record.a, record.b) if order == "ab" else (record.b, record.a)
        if first.response is None or second.response is None:
            raise InputError(
                f"record {record.id!r} has no response text (a scores-only dataset cannot be judged)",
                field="response",
            )
        q, tq = _truncate(record.input.question, self.max_chars)
        ra, ta = _truncate(first.response, self.max_chars)
        rb, tb = _truncate(second.response, self.max_chars)
        ref = record.input.reference
        block = ""
        if ref:
            ref_t, _ = _truncate(ref, self.max_chars // 2)
            block = (
                f"Reference answer: {ref_t}\n"
                if self.variant == "small"
                else f"\nReference answer: {ref_t}\n"
            )
        text = self.prompt(self.task).render(
            question=q, reference_block=block, response_a=ra, response_b=rb
        )
        return text, {"truncated": {"instruction": tq, "first": ta, "second": tb}}

    def judge(
        self,
        records: Sequence[PairwiseRecord],
        *,
        order: Order = "ab",
        seed: int | None = None,
        temperature: float | None = None,
    ) -> list[PairwiseVerdict]:
        """Judge every record in one order; one verdict per record, in order (with
        ``confidence="samples"``: the first sample's verdict, the samples' shares in details)."""
        if self.confidence != "samples":
            return self._judge_once(records, order=order, seed=seed, temperature=temperature)
        sd = self.seed if seed is None else int(seed)
        runs = [
            self._judge_once(records, order=order, seed=sd + k, temperature=temperature)
            for k in range(self.n_samples)
        ]
        out = []
        for j, first in enumerate(runs[0]):
            sides = [spell(r[j].preferred, "side") for r in runs]
            dist = sample_distribution(sides, tuple(SPELLINGS["side"].values()))
            out.append(self._with_distribution(first, dist))
        return out

    def _with_distribution(
        self, v: PairwiseVerdict, dist: VerdictDistribution | None
    ) -> PairwiseVerdict:
        """``v`` with its class probabilities (record sides) in details, or counted missing."""
        from dataclasses import replace

        if dist is None:
            self.confidence_missing += 1
            return replace(v, details={**v.details, "confidence": None})
        return replace(v, details={**v.details, **dist.details()})

    def _judge_once(
        self,
        records: Sequence[PairwiseRecord],
        *,
        order: Order,
        seed: int | None,
        temperature: float | None,
    ) -> list[PairwiseVerdict]:
        if order not in ("ab", "ba"):
            raise InputError(f"order must be 'ab' or 'ba', got {order!r}", field="order")
        temp = self.temperature if temperature is None else float(temperature)
        sd = self.seed if seed is None else int(seed)
        reqs, infos = [], []
        for i, r in enumerate(records):
            text, info = self.render(r, order)
            # sampling: every request its own seed (derived from the run seed and the position), so the
            # sampling noise is independent across items; greedy decoding ignores the seed
            req_seed = (sd * 1_000_003 + i) % 2**31 if temp > 0 else sd
            decoding: dict[str, Any] = {
                "temperature": temp,
                "max_tokens": 3 if self.constrained else 24,
                "seed": req_seed,
            }
            if self.confidence == "logprobs":
                decoding.update(logprobs=True, top_logprobs=self.top_logprobs)
            if self.constrained:
                decoding["grammar"] = PAIRWISE_GRAMMAR
            else:
                decoding["stop"] = ("\n\n", "\nInstruction:")
            reqs.append(self.client.request(text, **decoding))
            infos.append(info)
        outs = self.client.run(reqs)
        verdicts: list[PairwiseVerdict] = []
        for r, c, info in zip(records, outs, infos, strict=True):
            self.calls += 1
            if isinstance(c, BackendError):
                self.backend_errors += 1
                verdicts.append(
                    PairwiseVerdict(r.id, order, None, None, "", f"backend error: {c}", info)
                )
                continue
            dec = parse_pairwise(c.text)
            if dec is None:
                self.parse_failures += 1
            v = PairwiseVerdict(
                r.id,
                order,
                dec,
                unswap(dec, order),
                c.text,
                None if dec is not None else "unparsed",
                info,
            )
            if self.confidence == "logprobs":
                v = self._with_distribution(v, self._side_probs(c, order))
            verdicts.append(v)
        return verdicts

    @staticmethod
    def _side_probs(c: Any, order: Order) -> VerdictDistribution | None:
        """p(a better) / p(b better) / p(tie) from the verdict token (positional → sides)."""
        ch = c.choices[0] if c.choices else None
        dist = verdict_distribution(ch.logprobs if ch else None, _TOKENS)
        if dist is None:
            return None
        probs = {
            str(spell(unswap(to_pref(k, "positional"), order), "side")): p
            for k, p in dist.probs.items()
        }
        return VerdictDistribution(probs, dist.confidence, dist.mass, dist.position)

    @property
    def summary(self) -> dict[str, Any]:
        """Calls, parse failures and their rate, backend errors, tokens and wall time."""
        out: dict[str, Any] = {
            "calls": self.calls,
            "parse_failures": self.parse_failures,
            "parse_failure_rate": round(self.parse_failures / self.calls, 4)
            if self.calls
            else None,
            "backend_errors": self.backend_errors,
        }
        if self.confidence != "none":
            out["confidence"] = self.confidence
            out["confidence_missing"] = self.confidence_missing
        cost = self.cost()
        if cost is not None:
            out["cost"] = cost
            ledger = self._client.backend_ledger if self._client is not None else None
            if ledger is not None:
                out["ledger"] = ledger.summary()
        return out
