"""``judge:PATH``: a judge defined in a file, as a registry metric (:class:`DefinedJudge`).

The definition (:mod:`~metajudge.metrics.judges.definition`; AlpacaEval configs through
:mod:`~metajudge.metrics.judges.alpaca_eval`) gives the prompt, the parser and the sampling; this
class is a :class:`~metajudge.metrics.judges.common.JudgeMetric` like G-Eval: the same client,
request path, response cache, batching, parse-failure counts and signature form. Its signature
carries the definition's digest (template, parser, sampling, examples) and the backbone.

Scores (direction: higher):

- ``rating``: the parsed number (log-probabilities: the expected score; ``n`` samples: the mean
  of the parsed ones), range the scale;
- ``label``: the position of the label in the definition's list (0-based; with
  log-probabilities the probability-weighted position);
- ``binary``: 1 pass / 0 fail (log-probabilities: p(pass), the first label);
- ``pairwise``: per response of a pair, p(this side better) renormalised over the two sides
  (log-probabilities), else 1 / 0 / 0.5 for a win / loss / tie. The pair is shown a first
  (``judge`` shows both orders for ``judge diagnostics``).

A reply without a verdict is unscored with the reason, counted in :attr:`summary`; items used
as few-shot examples are unscored (``used as a few-shot example``), counted and named.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from metajudge.backends.base import Backend, BackendError, Completion, Request
from metajudge.data.formats import PairwiseRecord
from metajudge.errors import InputError
from metajudge.metrics.base import MetricResult, ScoreItem
from metajudge.metrics.judges.alpaca_eval import from_alpaca_eval, is_alpaca_eval
from metajudge.metrics.judges.common import JudgeMetric
from metajudge.metrics.judges.definition import (
    PREFIX,
    JudgeDefinition,
    definition_from_doc,
    read_yaml,
    record_context,
)
from metajudge.metrics.judges.parsers.defined import (
    DEFINED_PARSER_VERSION,
    ParsedVerdict,
    label_classes,
    read_choice,
)
from metajudge.metrics.judges.sandbox import MAX_CHARS_PER_TOKEN, MAX_PROMPT_CHARS, TemplateLimit
from metajudge.stats.decisions import Pref, spell, unswap


def _cut(ctx: dict[str, Any], limit: int) -> bool:
    """Cut every long text of ``ctx`` (in place) to ``limit`` characters; whether any was cut."""
    cut = False
    for k, v in list(ctx.items()):
        if isinstance(v, str) and len(v) > limit:
            ctx[k], cut = v[:limit].rstrip() + " …[truncated]", True
        elif isinstance(v, dict) and k in ("a", "b"):
            ctx[k] = dict(v)
            cut = _cut(ctx[k], limit) or cut
    return cut


#: why a record used as a few-shot example is not judged
AN_EXAMPLE = "used as a few-shot example"
#: why an item is not judged when its prompt goes over a bound (:attr:`DefinedJudge.prompt_limit`)
PROMPT_REFUSED = "prompt refused, not sent"


class DefinedJudge(JudgeMetric):
    """The judge defined in ``path`` on a backbone (see the module docstring)."""

    direction = "higher"
    needs_reference = False
    uses_record = True  # reads the record (system names, meta, the pair): no de-duplication
    parser_version = DEFINED_PARSER_VERSION

    def __init__(
        self,
        path: str,
        *,
        backbone: str | None = None,
        seed: int = 0,
        max_chars: int | None = None,
        backend: Backend | None = None,
    ) -> None:
        self.definition: JudgeDefinition = load_definition(path)
        d = self.definition
        super().__init__(backbone=backbone or d.backbone, seed=seed, backend=backend)
        self.name = PREFIX + path
        self.kind = d.kind
        self.range = {
            "rating": (float(d.scale[0]), float(d.scale[1])) if d.scale else (0.0, 1.0),
            "label": (0.0, float(len(d.labels) - 1)),
        }.get(d.kind, (0.0, 1.0))
        spec = d.parse
        self.constrained = bool(spec.get("constrained", False)) and self.can_constrain
        #: characters kept of each text field (~2.5 characters a token, ~700 tokens kept free)
        self.max_chars = (
            int(max_chars) if max_chars is not None else max(400, int((self.n_ctx - 700) * 2.5 / 3))
        )
        self.calls = 0
        self.examples_excluded: list[str] = []
        self.confidence = "logprobs" if _gives_probs(d) else "none"
        self.confidence_missing = 0

    # -- signature, requests ------------------------------------------------------------------

    @property
    def signature(self) -> str:
        d = self.definition
        return self._signature_parts(
            f"{PREFIX}{d.name}",
            f"def:{d.digest}",
            kind=d.kind,
            origin=d.origin,
            constrained=int(self.constrained),
            chars=self.max_chars,
        )

    @property
    def _base_constrained(self) -> bool:
        """A grammar over a base (completion) model: ``" "?`` then the answer (two tokens)."""
        return self.constrained and not self.client_is_chat

    def _grammar(self) -> str | None:
        if not self.constrained:
            return None
        d = self.definition
        if d.kind == "rating":
            assert d.scale is not None
            body = f"[{d.scale[0]}-{d.scale[1]}]"
        else:
            body = "(" + " | ".join(f'"{lab}"' for lab in d.labels) + ")"
        return f"root ::= {body}" if self.client_is_chat else f'root ::= " "? {body}'

    def _decoding(self, index: int) -> dict[str, Any]:
        s = self.definition.sampling
        temp = float(s["temperature"])
        dec: dict[str, Any] = {
            "temperature": temp,
            # a base model's constrained answer may open with " " (G-Eval's rule): room for both
            "max_tokens": max(int(s["max_tokens"]), 2 if self._base_constrained else 1),
            "n": int(s["n"]),
            # sampling: each request its own seed (run seed and position), as the pairwise judge
            "seed": (self.seed * 1_000_003 + index) % 2**31 if temp > 0 else self.seed,
        }
        if _wants_logprobs(self.definition):
            dec.update(logprobs=True, top_logprobs=int(s["top_logprobs"]))
        grammar = self._grammar()
        if grammar is not None:
            dec["grammar"] = grammar
        return dec

    @property
    def prompt_limit(self) -> int:
        """The most characters a rendered prompt may have: what can fit the backbone's
        context at :data:`~.sandbox.MAX_CHARS_PER_TOKEN` characters a token, at most
        :data:`~.sandbox.MAX_PROMPT_CHARS`."""
        return min(MAX_PROMPT_CHARS, self.n_ctx * MAX_CHARS_PER_TOKEN)

    def build(
        self, ctx: dict[str, Any], record_id: str, index: int, system: str | None = None
    ) -> Request:
        """The request of one record's context (a missing variable: a RecordError, no call; a
        prompt over a bound, :attr:`prompt_limit` or :mod:`.sandbox`'s: a TemplateLimit)."""
        if _cut(ctx, self.max_chars):
            self.note("text cut to fit the context")
        messages = self.definition.render(ctx, record_id, system)
        chars = sum(len(m["content"]) for m in messages)
        if chars > self.prompt_limit:
            raise TemplateLimit(
                f"a prompt of {chars:,} characters, over the {self.prompt_limit:,} that can fit "
                f"the backbone's {self.n_ctx:,}-token context ({MAX_CHARS_PER_TOKEN} a token)"
            )
        dec = self._decoding(index)
        if self.client_is_chat:
            return Request(messages=messages, **dec)
        text = "\n\n".join(m["content"] for m in messages)
        return Request(prompt=text, **dec)

    # -- scoring -----------------------------------------------------------------------------

    def _item_context(self, item: ScoreItem) -> tuple[dict[str, Any], str, str | None] | str:
        """The template context of one item with its record id and system, or why it is not
        judged (a few-shot example, no response text, not a pair)."""
        rec = item.record
        if rec is not None and rec.id in self.definition.example_ids:
            return AN_EXAMPLE
        if self.kind == "pairwise":
            if not isinstance(rec, PairwiseRecord):
                return "a pairwise judge needs pairwise records (two responses to one input)"
            if rec.a.response is None or rec.b.response is None:
                return "no response text"
            return record_context(rec), rec.id, None
        if item.response is None or not item.response.strip():
            return "empty response"
        if rec is None:
            return _bare_context(item), item.key, None
        return record_context(rec, item), rec.id, getattr(rec, "system", None)

    def _item_request(self, item: ScoreItem, index: int) -> Request | str:
        got = self._item_context(item)
        if isinstance(got, str):
            if got == AN_EXAMPLE and item.record is not None:
                self.examples_excluded.append(item.record.id)
            return got
        return self._try_build(*got, index=index)

    def _try_build(
        self, ctx: dict[str, Any], rid: str, system: str | None = None, *, index: int
    ) -> Request | str:
        """:meth:`build`, or why the prompt is refused (over a bound: counted, never sent)."""
        try:
            return self.build(ctx, rid, index, system)
        except TemplateLimit as ex:
            self.note(PROMPT_REFUSED)
            return f"{PROMPT_REFUSED}: {ex}"

    def check_items(self, items: Sequence[ScoreItem]) -> None:
        """Render every item's prompt, no call: a variable a record lacks is raised before the
        first call of a run scored in several batches (``score_dataset``)."""
        for it in items:
            got = self._item_context(it)
            if not isinstance(got, str):
                try:
                    self.definition.render(*got)
                except TemplateLimit:
                    continue  # refused and counted when the item is scored

    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        built = [self._item_request(it, i) for i, it in enumerate(items)]  # all before a call
        reqs = [b for b in built if isinstance(b, Request)]
        outs = iter(self.client.run(reqs, accept=self._no_verdict))
        results = []
        for it, b in zip(items, built, strict=True):
            if isinstance(b, str):
                self.items_failed += 1
                results.append(MetricResult(it.key, None, {}, b))
                continue
            c = next(outs)
            self.calls += 1
            if isinstance(c, BackendError):
                self.items_failed += 1
                results.append(MetricResult(it.key, None, {}, f"backend error: {c}"))
                continue
            results.append(self._result(it, c))
        return results

    def _read(self, c: Completion) -> list[ParsedVerdict]:
        d = self.definition
        return [
            read_choice(ch.text, ch.logprobs, d.parse, kind=d.kind, labels=d.labels, scale=d.scale)
            for ch in c.choices
        ]

    def _no_verdict(self, request: Request, c: Completion) -> str | None:
        """Why ``c`` holds no verdict under the definition's parser (``None`` when one choice
        does): such a reply is never stored in the response cache nor served from it, so the
        next run asks again (docs/judges.md; the cache applies it,
        :class:`~metajudge.backends.cached.CachedBackend`)."""
        if any(r.verdict is not None for r in self._read(c)):
            return None
        return f"no verdict in the reply under parse method {self.definition.parse['method']!r}"

    def _readings(self, c: Completion) -> list[ParsedVerdict]:
        out = self._read(c)
        fails = sum(r.verdict is None for r in out)
        self.count(len(out), fails)
        return out

    def _result(self, item: ScoreItem, c: Completion) -> MetricResult:
        readings = self._readings(c)
        ok = [r for r in readings if r.verdict is not None]
        det: dict[str, Any] = {
            "raw": c.choices[0].text if c.choices else "",
            "verdicts": [r.verdict for r in readings],
            "parse_attempts": len(readings),
            "parse_failures": len(readings) - len(ok),
        }
        if ok and ok[0].probs is not None:
            det["probs"] = {k: round(v, 6) for k, v in ok[0].probs.items()}
        score = self._score(ok, item) if ok else None
        if score is None:
            self.items_failed += 1
            return MetricResult(item.key, None, det, "unparseable judge output")
        self.items_scored += 1
        return MetricResult(item.key, float(score), det)

    def _score(self, ok: list[ParsedVerdict], item: ScoreItem) -> float | None:
        d = self.definition
        if d.kind == "rating":
            return sum(float(r.verdict) for r in ok) / len(ok)  # type: ignore[arg-type]
        if d.kind == "pairwise":
            side = item.key.rsplit("::", 1)[-1]
            return _side_score(ok[0], d.labels, side)
        if ok[0].probs is not None:  # one distribution (logprobs: n = 1)
            p = ok[0].probs
            if d.kind == "binary":
                return p.get(d.labels[0], 0.0)
            return sum(i * p.get(lab, 0.0) for i, lab in enumerate(d.labels))
        vals = [
            (1.0 if r.verdict == d.labels[0] else 0.0)
            if d.kind == "binary"
            else float(d.labels.index(str(r.verdict)))
            for r in ok
        ]
        return sum(vals) / len(vals)

    @property
    def summary(self) -> dict[str, Any]:
        """The judge-metric summary plus calls, the definition and the examples left out."""
        from metajudge.metrics.judges.definition import summary_of

        out = super().summary
        out["calls"] = self.calls
        out["definition"] = summary_of(self.definition)
        out["examples_excluded"] = sorted(set(self.examples_excluded))
        if self.confidence != "none":
            out["confidence"] = self.confidence
            out["confidence_missing"] = self.confidence_missing
        return out

    # -- the pairwise judge's surface (judge diagnostics) -------------------------------------

    def judge(
        self,
        records: Sequence[PairwiseRecord],
        *,
        order: str = "ab",
        seed: int | None = None,
        temperature: float | None = None,
    ) -> list[Any]:
        """One verdict per pair shown in ``order`` (``ba``: b first), as
        :meth:`PairwiseJudge.judge <metajudge.metrics.judges.pairwise.PairwiseJudge.judge>`
        gives them (``judge diagnostics`` reads these); ``seed`` / ``temperature`` are the
        definition's own and are not overridden."""
        from metajudge.metrics.judges.pairwise import PairwiseVerdict

        if self.kind != "pairwise":
            raise InputError(f"{self.name} is a {self.kind} judge, not pairwise", field="metric")
        built = []
        for i, r in enumerate(records):
            ctx = record_context(r)
            if order == "ba":
                ctx["a"], ctx["b"] = ctx["b"], ctx["a"]
            built.append(self._try_build(ctx, r.id, index=i))
        reqs = [b for b in built if isinstance(b, Request)]
        outs = iter(self.client.run(reqs, accept=self._no_verdict))
        out = []
        for r, b in zip(records, built, strict=True):
            if isinstance(b, str):
                out.append(PairwiseVerdict(r.id, order, None, None, "", b))  # type: ignore[arg-type]
                continue
            c = next(outs)
            self.calls += 1
            if isinstance(c, BackendError):
                out.append(PairwiseVerdict(r.id, order, None, None, "", f"backend error: {c}"))  # type: ignore[arg-type]
                continue
            rd = self._readings(c)[0]
            pos = _positional(rd.verdict, self.definition.labels)
            det = self._side_details(rd, order)
            err = None if pos is not None else "unparsed"
            out.append(PairwiseVerdict(r.id, order, pos, unswap(pos, order), c.text, err, det))  # type: ignore[arg-type]
        return out

    def _side_details(self, rd: ParsedVerdict, order: str) -> dict[str, Any]:
        """The verdict's class probabilities by record side (``probs``: a / b / tie)."""
        if self.confidence == "none":
            return {}
        if rd.probs is None:
            self.confidence_missing += 1
            return {"confidence": None}
        labels = self.definition.labels
        probs: dict[str, float] = {}
        for i, lab in enumerate(labels):
            side = spell(unswap((Pref.A, Pref.B, Pref.TIE)[i], order), "side")
            probs[str(side)] = probs.get(str(side), 0.0) + rd.probs.get(lab, 0.0)
        return {"probs": probs, "confidence": "logprobs", "probability_mass": rd.mass}


def _bare_context(item: ScoreItem) -> dict[str, Any]:
    """A template context from a response alone (an item built without its record)."""
    inp = item.input
    return {
        "id": item.key,
        "question": inp.question if inp else None,
        "context": inp.context if inp else None,
        "reference": item.reference,
        "response": item.response,
    }


def _positional(verdict: Any, labels: Sequence[str]) -> Pref | None:
    if verdict is None or verdict not in labels:
        return None
    return (Pref.A, Pref.B, Pref.TIE)[list(labels).index(verdict)]


def _side_score(rd: ParsedVerdict, labels: Sequence[str], side: str) -> float | None:
    """p(``side`` better): from the probabilities renormalised over a and b, else 1 / 0 / 0.5."""
    if rd.probs is not None:
        pa, pb = rd.probs.get(labels[0], 0.0), rd.probs.get(labels[1], 0.0)
        if pa + pb <= 0:
            return None
        return (pa if side == "a" else pb) / (pa + pb)
    pos = _positional(rd.verdict, labels)
    if pos is None:
        return None
    if pos == Pref.TIE:
        return 0.5
    return 1.0 if (pos == Pref.A) == (side == "a") else 0.0


def _wants_logprobs(d: JudgeDefinition) -> bool:
    return d.parse["method"] == "logprobs" or bool(d.parse.get("logprobs"))


def _gives_probs(d: JudgeDefinition) -> bool:
    """Whether the verdicts carry class probabilities (a confidence for calibrate)."""
    if d.parse["method"] == "alpaca_eval":
        return d.parse["parser"] == "logprob_parser" and not d.parse["kwargs"].get(
            "is_binarize", True
        )
    return d.parse["method"] == "logprobs" and d.kind != "rating"


def load_definition(path: str | Path) -> JudgeDefinition:
    """The judge defined in ``path``: a YAML definition in metajudge's format
    (:func:`~metajudge.metrics.judges.definition.definition_from_doc`) or an AlpacaEval evaluator
    ``configs.yaml`` (:func:`~metajudge.metrics.judges.alpaca_eval.from_alpaca_eval`); anything it
    cannot use is an InputError naming the file and the key."""
    doc = read_yaml(path)
    if is_alpaca_eval(doc):
        return from_alpaca_eval(doc, str(path))
    return definition_from_doc(doc, str(path))


def defined_judge(path: str, **options: Any) -> DefinedJudge:
    """The registry's factory of ``judge:PATH``."""
    return DefinedJudge(path, **options)


__all__ = ["DefinedJudge", "defined_judge", "label_classes", "load_definition", "record_context"]
