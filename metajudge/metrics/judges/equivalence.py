"""Answer equivalence: the MuDABench final-answer judge (T_i ∈ {0, 1}).

MuDABench (Li et al. 2026) scores a final answer 1 when an LLM judges it semantically
equivalent to the gold answer (numeric answers: integer digits and first decimal). A numeric
fast path (:func:`metajudge.metrics.numeric.fast_path`: same wording, numbers written alike,
compared digit-wise under MuDABench's ``first_decimal`` rule) decides clear cases without an LLM
call; anything ambiguous goes to the LLM. The share each path decides is reported
(``summary["fast_path_share"]``, ``fast_path_decided``, ``llm_judged``). Every result keeps a short rationale and says what
decided it (``details["decided_by"]``: ``fast_path`` or ``llm``).

Judge confidence as data (``confidence="logprobs"``): an LLM verdict keeps the binary verdict's
probabilities ``details["probs"] = {"1": p, "0": 1 - p}`` read at the verdict token (``true`` /
``false``, ``yes`` / ``no``; :func:`~.parsers.labels.verdict_distribution`), with
``details["confidence"] = "logprobs"``; a verdict without them is counted
(``summary["confidence_missing"]``). Fast-path verdicts carry none (no model was asked).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metajudge.backends.base import Backend, BackendError
from metajudge.errors import InputError
from metajudge.metrics.base import MetricResult, ScoreItem
from metajudge.metrics.judges.common import JudgeMetric
from metajudge.metrics.judges.parsers.labels import verdict_distribution
from metajudge.metrics.judges.parsers.ratings import parse_equivalence
from metajudge.metrics.numeric import RULES, Rule
from metajudge.metrics.numeric import fast_path as numeric_fast_path

EQUIVALENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "equivalent": {"type": "boolean"},
        "rationale": {"type": "string", "maxLength": 160},
    },
    "required": ["equivalent", "rationale"],
}
#: the verdict tokens (normalised) of an equivalence reply
VERDICT_TOKENS = {"true": "1", "false": "0", "yes": "1", "no": "0"}


class AnswerEquivalence(JudgeMetric):
    """1 if the prediction is equivalent to the gold answer, else 0 (score ``None``: unparseable)."""

    name = "answer_equivalence"
    direction = "higher"
    range = (0.0, 1.0)
    needs_reference = True
    tasks = ("equivalence",)

    def __init__(
        self,
        *,
        fast_path: bool = True,
        numeric_rule: Rule = "first_decimal",
        structured: bool = True,
        max_tokens: int = 80,
        backbone: str | None = None,
        variant: str | None = None,
        backend: Backend | None = None,
        confidence: str = "none",
        **kw: Any,
    ) -> None:
        super().__init__(backbone=backbone, variant=variant, backend=backend, **kw)
        if confidence not in ("none", "logprobs"):
            raise InputError(
                f"confidence must be none or logprobs, got {confidence!r}", field="confidence"
            )
        self.confidence = confidence
        self.confidence_missing = 0
        self.fast_path = bool(fast_path)
        if numeric_rule not in RULES:
            raise InputError(
                f"unknown numeric_rule {numeric_rule!r} ({', '.join(RULES)})", field="numeric_rule"
            )
        self.numeric_rule: Rule = numeric_rule
        self.structured = bool(structured)
        self.max_tokens = int(max_tokens)
        self.fast_decided = 0
        self.llm_decided = 0

    @property
    def signature(self) -> str:
        return self._signature(
            "answer_equivalence",
            fast_path=self.fast_path,
            rule=self.numeric_rule,
            structured=self.structured,
            max_tokens=self.max_tokens,
            # absent when off: the signatures of earlier runs hold
            **({"conf": "logprobs"} if self.confidence == "logprobs" else {}),
        )

    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        results: list[MetricResult | None] = [None] * len(items)
        pending: list[int] = []
        for i, it in enumerate(items):
            if it.response is None or not it.response.strip():
                self.items_scored += 1
                results[i] = MetricResult(
                    it.key, 0.0, {"decided_by": "empty", "rationale": "empty prediction"}
                )
                continue
            if not it.reference:
                self.items_failed += 1
                results[i] = MetricResult(it.key, None, {}, "no gold answer")
                continue
            if self.fast_path:
                fp = numeric_fast_path(it.response, it.reference, rule=self.numeric_rule)
                if fp is not None:
                    self.fast_decided += 1
                    self.items_scored += 1
                    results[i] = MetricResult(
                        it.key, float(fp[0]), {"decided_by": "fast_path", "rationale": fp[1]}
                    )
                    continue
            pending.append(i)
        tpl = self.prompt("equivalence")
        reqs = []
        for i in pending:
            it = items[i]
            dec: dict[str, Any] = {
                "max_tokens": self.max_tokens,
                "temperature": 0.0,
                "seed": self.seed,
            }
            if self.structured:
                dec["json_schema"] = EQUIVALENCE_SCHEMA
            if self.confidence == "logprobs":
                dec.update(logprobs=True, top_logprobs=10)
            text = tpl.render(
                question=it.input.question if it.input else "",
                gold=it.reference or "",
                prediction=it.response or "",
            )
            reqs.append(self.client.request(text, **dec))
        for i, c in zip(pending, self.client.run(reqs), strict=True):
            key = items[i].key
            if isinstance(c, BackendError):
                self.items_failed += 1
                results[i] = MetricResult(key, None, {"decided_by": "llm"}, f"backend error: {c}")
                continue
            verdict, why = parse_equivalence(c.text)
            self.count(1, int(verdict is None))
            self.llm_decided += 1
            det = {
                "decided_by": "llm",
                "rationale": why,
                "raw": c.text,
                "parse_failures": int(verdict is None),
            }
            if self.confidence == "logprobs":
                det |= self._probs(c)
            if verdict is None:
                self.items_failed += 1
                results[i] = MetricResult(key, None, det, "unparseable judge output")
            else:
                self.items_scored += 1
                results[i] = MetricResult(key, float(verdict), det)
        return [r for r in results if r is not None]

    def _probs(self, c: Any) -> dict[str, Any]:
        """The verdict's class probabilities for details (none: counted, ``confidence`` None)."""
        ch = c.choices[0] if c.choices else None
        dist = verdict_distribution(ch.logprobs if ch else None, VERDICT_TOKENS)
        if dist is None:
            self.confidence_missing += 1
            return {"confidence": None}
        return dist.details()

    @property
    def summary(self) -> dict[str, Any]:
        out = super().summary
        if self.confidence != "none":
            out["confidence_missing"] = self.confidence_missing
        total = self.fast_decided + self.llm_decided
        out.update(
            fast_path_decided=self.fast_decided,
            llm_judged=self.llm_decided,
            fast_path_share=round(self.fast_decided / total, 4) if total else 0.0,
        )
        return out
