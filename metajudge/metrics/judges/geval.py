"""G-Eval (Liu et al. 2023): table insights (faithfulness, completeness on 1–5) and summaries
(SummEval's coherence, consistency, relevance on 1–5 and fluency on 1–3).

Prompts: for insights MT-RAIG (Seo et al. 2025) Table 18 (``paper``); for summaries ours in the
G-Eval form (task, the SummEval definitions of Fabbri et al. 2021 as criteria, evaluation
steps, form filling "Coherence (1-5):"); few-shot ``small`` variants of both. Modes:

- ``logprobs`` — G-Eval's probability-weighted score: Σ s·p(s) over the score tokens 1–5 at the
  position where the model writes its score, normalised over 1–5 (Liu et al. 2023, Eq. 1).
- ``samples`` — what the G-Eval code does: ``n`` samples (20) at ``temperature`` (2.0), the mean
  of the parsed scores; unparseable samples are counted and left out.
- ``greedy`` — one temperature-0 answer, parsed.

A response that yields no score is ``score=None`` with the reason in ``error``; failures are
counted per item (``details["parse_failures"]``) and in :attr:`summary`, never scored 0. Such a
reply (log-probabilities without a score digit, a digit off the scale) is never cached, so a
rerun asks the model again (:meth:`GEval._no_verdict`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from metajudge.backends.base import Backend, BackendError, Completion
from metajudge.errors import InputError
from metajudge.metrics.base import MetricResult, ScoreItem
from metajudge.metrics.judges.common import JudgeMetric
from metajudge.metrics.judges.parsers.ratings import parse_score, score_distribution

GEvalMode = Literal["logprobs", "samples", "greedy"]

#: GBNF: the answer is one score digit.
SCORE_GRAMMAR = "root ::= [1-5]"  # chat models: the answer turn starts with the digit
#: base models continue "Faithfulness:" with " " then the digit (two tokens in Gemma's
#: vocabulary); forcing the digit first would read the distribution at the wrong position
SCORE_GRAMMAR_BASE = 'root ::= " "? [1-5]'

Dimension = Literal[
    "faithfulness", "completeness", "coherence", "consistency", "fluency", "relevance"
]
#: The top of each dimension's scale: MT-RAIG's two and SummEval's four (fluency on 1–3 as in
#: G-Eval's prompt, Liu et al. 2023).
SCALE_TOP: dict[str, int] = {
    "faithfulness": 5,
    "completeness": 5,
    "coherence": 5,
    "consistency": 5,
    "fluency": 3,
    "relevance": 5,
}
#: SummEval dimensions: the input is a source document (``input.context``) and a summary.
SUMMARY_DIMENSIONS: tuple[str, ...] = ("coherence", "consistency", "fluency", "relevance")


class GEval(JudgeMetric):
    """G-Eval on one ``dimension``: an insight against its tables (faithfulness, completeness;
    MT-RAIG Table 18 prompts) or a summary against its source document (SummEval's four)."""

    direction = "higher"
    range = (1.0, 5.0)
    needs_reference = False

    def __init__(
        self,
        dimension: Dimension = "faithfulness",
        *,
        mode: GEvalMode = "logprobs",
        n: int = 20,
        temperature: float = 2.0,
        top_logprobs: int = 10,
        max_tokens: int | None = None,
        constrained: bool | None = None,
        backbone: str | None = None,
        variant: str | None = None,
        backend: Backend | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(backbone=backbone, variant=variant, backend=backend, **kw)
        if dimension not in SCALE_TOP:
            raise InputError(
                f"dimension must be one of {', '.join(SCALE_TOP)}, got {dimension!r}",
                field="dimension",
            )
        if mode not in ("logprobs", "samples", "greedy"):
            raise InputError(
                f"mode must be logprobs, samples or greedy, got {mode!r}", field="mode"
            )
        self.dimension = dimension
        self.top = SCALE_TOP[dimension]
        self.range = (1.0, float(self.top))
        self.mode = mode
        self.n = int(n) if mode == "samples" else 1
        self.temperature = float(temperature) if mode == "samples" else 0.0
        self.top_logprobs = int(top_logprobs)
        # a score needs a few tokens ("Score: 4"); samples may add a short explanation we ignore
        # constrained: a GBNF grammar admits only the digits 1–5 as the answer (llama.cpp
        # backends). The logprobs are the model's unconstrained ones at that position, so the
        # logprobs mode still reads G-Eval's distribution over the score tokens.
        self.constrained = self.can_constrain if constrained is None else bool(constrained)
        # unconstrained small chat models echo the label first ("Faithfulness (1–5): 4")
        grammar = SCORE_GRAMMAR if self.client_is_chat else SCORE_GRAMMAR_BASE
        self.grammar = grammar.replace("[1-5]", f"[1-{self.top}]")
        self.max_tokens = (
            int(max_tokens)
            if max_tokens is not None
            else ((1 if self.client_is_chat else 2) if self.constrained else 16)
        )
        self.name = f"geval_{dimension}"
        self.tasks = (f"geval_{dimension}",)

    @property
    def signature(self) -> str:
        opts: dict[str, Any] = {
            "dim": self.dimension,
            "mode": self.mode,
            "max_tokens": self.max_tokens,
            "constrained": self.constrained,
        }
        if self.mode == "samples":
            opts.update(n=self.n, temp=self.temperature)
        if self.mode == "logprobs":
            opts.update(top_logprobs=self.top_logprobs)
        return self._signature("geval", **opts)

    def _prompt(self, item: ScoreItem, response: str) -> tuple[str, dict[str, Any]] | str:
        """The filled prompt and its truncation record, or why the item cannot be judged."""
        template = self.prompt(self.tasks[0])
        if self.dimension == "fluency":  # G-Eval judges fluency on the summary alone
            return template.render(summary=response), {}
        tab = self.tables_text(item.input)  # tables, else the context text (cut to the budget)
        if tab is None:
            if self.on_summary:
                return (
                    "input has no source document (G-Eval judges a summary against it; "
                    "--source-field FIELD names the record field that holds it)"
                )
            return "input has no tables (G-Eval judges an insight against its tables)"
        text, trunc = tab
        if self.on_summary:
            return template.render(document=text, summary=response), {"document": trunc}
        question = item.input.question if item.input else ""
        return template.render(serialized_tables=text, question=question, insight=response), {
            "tables": trunc
        }

    @property
    def on_summary(self) -> bool:
        """Whether this dimension judges a summary (SummEval) rather than a table insight."""
        return self.dimension in SUMMARY_DIMENSIONS

    def _request(self, item: ScoreItem) -> tuple[Any, dict[str, Any]] | str:
        if item.response is None or not item.response.strip():
            return "empty response"
        built = self._prompt(item, item.response.strip())
        if isinstance(built, str):
            return built
        prompt, record = built
        dec: dict[str, Any] = {"max_tokens": self.max_tokens, "seed": self.seed}
        if self.variant == "small" and not self.constrained:
            dec["stop"] = ("\n",)
        if self.constrained:
            dec["grammar"] = self.grammar
        if self.mode == "logprobs":
            dec.update(temperature=0.0, logprobs=True, top_logprobs=self.top_logprobs)
        elif self.mode == "samples":
            dec.update(temperature=self.temperature, n=self.n)
        else:
            dec.update(temperature=0.0)
        return self.client.request(prompt, **dec), record

    def _parse(self, c: Completion) -> tuple[float | None, dict[str, Any], int, int]:
        """(score, details, attempts, failures) of one completion."""
        if self.mode == "logprobs":
            ch = c.choices[0] if c.choices else None
            dist = score_distribution(ch.logprobs if ch else None, 1, self.top)
            if dist is None:
                return None, {"raw": ch.text if ch else ""}, 1, 1
            return (
                dist.expected,
                {
                    "probs": {str(k): round(v, 4) for k, v in dist.probs.items()},
                    "score_mass": round(dist.mass, 4),
                    "raw": ch.text,
                },
                1,
                0,
            )
        label = self.dimension if self.on_summary else None
        scores = [parse_score(ch.text, 1, self.top, label=label) for ch in c.choices]
        ok = [s for s in scores if s is not None]
        fails = len(scores) - len(ok)
        det: dict[str, Any] = (
            {"samples": scores}
            if self.mode == "samples"
            else {"raw": c.choices[0].text if c.choices else ""}
        )
        if not ok:
            return None, det, len(scores), fails
        return sum(ok) / len(ok), det, len(scores), fails

    def _no_verdict(self, request: Any, c: Completion) -> str | None:
        """Why ``c`` yields no score (``None`` when it does): such a reply (log-probabilities
        without a score digit, a digit off the scale) is never cached, so a rerun asks again."""
        if self._parse(c)[0] is not None:
            return None
        return f"no {self.dimension} score on 1-{self.top} in the reply"

    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        built = [self._request(it) for it in items]
        reqs = [b[0] for b in built if not isinstance(b, str)]
        outs = iter(self.client.run(reqs, accept=self._no_verdict))
        results = []
        for it, b in zip(items, built, strict=True):
            if isinstance(b, str):
                self.items_failed += 1
                results.append(MetricResult(it.key, None, {}, b))
                continue
            c = next(outs)
            details = dict(b[1])
            if isinstance(c, BackendError):
                self.items_failed += 1
                results.append(MetricResult(it.key, None, details, f"backend error: {c}"))
                continue
            score, det, attempts, fails = self._parse(c)
            self.count(attempts, fails)
            details.update(det, parse_attempts=attempts, parse_failures=fails)
            if score is None:
                self.items_failed += 1
                results.append(MetricResult(it.key, None, details, "unparseable judge output"))
            else:
                self.items_scored += 1
                results.append(MetricResult(it.key, float(score), details))
        return results
