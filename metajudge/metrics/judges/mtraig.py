"""MT-RAIG Eval (Seo et al. 2025, Section 3, Eq. 2–3; prompts Tables 15–16).

Faithfulness: a table-aware decomposer D turns the insight i into atomic claims C = D(T̂, i),
given the table *schemas*; a verifier V checks each claim against the serialised tables,
V(c, T̂) ∈ {0, 1}; S_faith = (1/|C|) Σ V(c_k, T̂). Verification modes:

- ``per_claim`` (the default) — the paper: one call per claim with the paper's claim-verification
  prompt (Table 15, "MT-RAIG Eval - Faithfulness : Claim verification") for every backbone
  (``verify_prompt="paper"``; ``verify_prompt="variant"`` takes the backbone's prompt variant,
  e.g. the few-shot ``small`` one). ``n`` samples are optional and our choice: a
  claim's V is then the mean of its parsed samples. The paper does not say how samples are
  combined; its Table 26 example is no evidence either way (it reports 47.37 = 9/19 while its
  listed verdicts give 13/20);
- ``batched`` — an option, named in the signature: all claims of an insight in one call with a
  structured answer ``{"verdicts": ["yes"|"no", …]}`` (ours; the prompt is Table 15's verifier,
  pluralised).

Unparseable verdicts never leave |C|: with ``unparsed="unscored"`` (the default) a response with
any claim whose verdict cannot be parsed is unscored (``None``; the verdict counted in the parse
failures); ``unparsed="unsupported"`` counts such a claim as V = 0 (it stays in |C|).

No claims: the paper does not say how a response with no claims is scored (Eq. 2 is undefined
for |C| = 0); ``no_claims="zero"`` (default, our choice) scores 0 and flags it,
``no_claims="none"`` leaves the item unscored. Claims are de-duplicated (exact repeats) and, on
embedded small backbones only, capped at :data:`~metajudge.metrics.judges.decompose.SMALL_MODEL_MAX_CLAIMS`; both are recorded in
``details`` and counted in :attr:`~metajudge.metrics.judges.common.JudgeMetric.summary`. A
"partially supported" verdict counts ``partial`` (0 by default: Eq. 2's V is binary).

Completeness: a question-aware decomposer turns the reference insight i and the prediction î
into atomic topics A = D(q, i), Â = D(q, î); an LLM M matches them bidirectionally;
P = |matched Â| / |Â|, R = |matched A| / |A|, F1 = 2PR / (P + R). The score is F1; P and R are
in the details.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from metajudge.backends.base import Backend, BackendError, Completion, Request
from metajudge.errors import InputError
from metajudge.metrics.base import MetricResult, ScoreItem
from metajudge.metrics.judges.common import JudgeMetric
from metajudge.metrics.judges.decompose import (
    decompose_tokens,
    match_schema,
    resolve_max_claims,
    split_items,
)
from metajudge.metrics.judges.parsers.claims import parse_verdict, parse_verdict_list
from metajudge.metrics.judges.parsers.ratings import parse_matching
from metajudge.metrics.judges.prompts import PromptTemplate, load_prompt, numbered

VerifyMode = Literal["per_claim", "batched"]
Unparsed = Literal["unscored", "unsupported"]
#: the verification defaults: the paper's procedure (one call per claim, its prompt)
DEFAULT_MODE: VerifyMode = "per_claim"
DEFAULT_VERIFY_PROMPT = "paper"

#: GBNF: a per-claim verdict is " Yes" or " No".
VERDICT_GRAMMAR = 'root ::= " "? ("Yes" | "No")'


def verdicts_schema(n: int) -> dict[str, Any]:
    """JSON schema of a batched verification answer: exactly ``n`` yes/no verdicts."""
    return {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "items": {"type": "string", "enum": ["yes", "no"]},
                "minItems": n,
                "maxItems": n,
            }
        },
        "required": ["verdicts"],
    }


@dataclass
class _Item:
    key: str
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    claims: list[str] | None = None


def _diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {
        k: round(b[k] - a[k], 3)
        for k in b
        if isinstance(b[k], (int, float)) and not isinstance(b[k], bool)
    }


class MTRAIGFaithfulness(JudgeMetric):
    """S_faith of MT-RAIG Eval (Eq. 2): mean verified share of the insight's atomic claims."""

    name = "mtraig_faithfulness"
    direction = "higher"
    range = (0.0, 1.0)
    needs_reference = False
    tasks = ("mtraig_claims", "mtraig_verify")
    #: signature fields whose default is the paper's procedure (a stored result computed
    #: otherwise is marked by ``metajudge matrix``: :func:`~metajudge.runs.matrix.table.non_default_options`)
    signature_defaults: ClassVar[dict[str, str]] = {"mode": DEFAULT_MODE, "unparsed": "unscored"}

    def __init__(
        self,
        *,
        mode: VerifyMode = DEFAULT_MODE,
        unparsed: Unparsed = "unscored",
        verify_prompt: Literal["paper", "variant"] = DEFAULT_VERIFY_PROMPT,
        n: int = 1,
        temperature: float = 0.0,
        no_claims: Literal["zero", "none"] = "zero",
        decompose_max_tokens: int | None = None,
        verify_max_tokens: int | None = None,
        constrained: bool | None = None,
        max_claims: int | Literal["auto"] | None = "auto",
        partial: float = 0.0,
        backbone: str | None = None,
        variant: str | None = None,
        backend: Backend | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(backbone=backbone, variant=variant, backend=backend, **kw)
        if partial not in (0, 0.5):
            raise InputError(f"partial must be 0 or 0.5, got {partial!r}", field="partial")
        #: V of a "partially supported" verdict (Eq. 2's V is binary: 0 by default)
        self.partial = float(partial)
        self.max_claims = resolve_max_claims(max_claims, self._config)
        if mode not in ("per_claim", "batched"):
            raise InputError(f"mode must be per_claim or batched, got {mode!r}", field="mode")
        if no_claims not in ("zero", "none"):
            raise InputError(
                f"no_claims must be zero or none, got {no_claims!r}", field="no_claims"
            )
        if unparsed not in ("unscored", "unsupported"):
            raise InputError(
                f"unparsed must be unscored or unsupported, got {unparsed!r}", field="unparsed"
            )
        if verify_prompt not in ("paper", "variant"):
            raise InputError(
                f"verify_prompt must be paper or variant, got {verify_prompt!r}",
                field="verify_prompt",
            )
        #: what an unparseable claim verdict does: the response unscored, or V = 0
        self.unparsed = unparsed
        #: the per-claim verifier's prompt: the paper's for every backbone, or the variant's
        self.verify_prompt = verify_prompt
        self.mode = mode
        self.n = int(n) if mode == "per_claim" else 1
        self.temperature = float(temperature)
        self.no_claims = no_claims
        self.decompose_max_tokens = decompose_tokens(decompose_max_tokens, self._config)
        self.verify_max_tokens = verify_max_tokens
        # per_claim: a GBNF grammar admits only "Yes"/"No" (llama.cpp backends); batched answers
        # are always constrained by their JSON schema
        self.constrained = self.can_constrain if constrained is None else bool(constrained)
        self.tasks = (
            "mtraig_claims",
            "mtraig_verify" if mode == "per_claim" else "mtraig_verify_batched",
        )

    def prompt(self, task: str) -> PromptTemplate:
        if task == "mtraig_verify" and self.verify_prompt == "paper":
            return load_prompt(task, "paper")
        return super().prompt(task)

    @property
    def signature(self) -> str:
        return self._signature(
            "mtraig_faithfulness",
            mode=self.mode,
            ver_prompt=self.verify_prompt if self.mode == "per_claim" else "batched",
            unparsed=self.unparsed,
            n=self.n,
            temp=self.temperature,
            no_claims=self.no_claims,
            partial=self.partial,
            constrained=self.constrained if self.mode == "per_claim" else "json",
            dec_tokens=self.decompose_max_tokens,
            ver_tokens=self.verify_max_tokens or "auto",
        )

    # -- step 1: decomposition ----------------------------------------------------------------
    def decompose(self, items: Sequence[ScoreItem]) -> list[_Item]:
        """Claims of every insight (table-aware decomposition, Table 15)."""
        states = [_Item(it.key) for it in items]
        reqs: list[tuple[int, Request]] = []
        tpl = self.prompt("mtraig_claims")
        for i, it in enumerate(items):
            if it.response is None or not it.response.strip():
                states[i].error = "empty response"
                continue
            schemas = self.schemas_text(it.input)
            if schemas is None:
                states[i].error = "input has no tables"
                continue
            dec: dict[str, Any] = {
                "max_tokens": self.decompose_max_tokens,
                "temperature": 0.0,
                "seed": self.seed,
            }
            if self.variant == "small":
                dec["stop"] = ("\n\n", "\nTables:", "\nInsight:")
            reqs.append(
                (
                    i,
                    self.client.request(
                        tpl.render(serialized_table_schemas=schemas, insight=it.response.strip()),
                        **dec,
                    ),
                )
            )
        outs = self.client.run([r for _, r in reqs])
        for (i, _), c in zip(reqs, outs, strict=True):
            st = states[i]
            if isinstance(c, BackendError):
                st.error = f"backend error: {c}"
                continue
            raw = c.text
            claims = split_items(self, raw, "claims", st.details)
            self.count(1, int(claims is None))
            st.details["decomposition_raw"] = raw
            cut = bool(c.choices and c.choices[0].finish_reason == "length")
            st.details["decomposition_output_cut"] = cut  # the reply hit max_tokens
            st.details["decomposition_truncated"] = cut or st.details.get("claims_capped", 0) > 0
            if claims is None:
                st.error = "unparseable decomposition"
                st.details["parse_failures"] = st.details.get("parse_failures", 0) + 1
            st.claims = claims
        return states

    # -- step 2: verification -----------------------------------------------------------------
    def _verify_requests(self, it: ScoreItem, st: _Item) -> list[Request]:
        assert st.claims is not None
        tab = self.tables_text(it.input)
        assert tab is not None  # the schema step already checked there are tables
        text, trunc = tab
        st.details["tables"] = trunc
        if self.mode == "per_claim":
            tpl = self.prompt("mtraig_verify")
            dec: dict[str, Any] = {
                "max_tokens": self.verify_max_tokens or 16,
                "temperature": self.temperature,
                "n": self.n,
                "seed": self.seed,
            }
            if self.constrained:
                dec["grammar"] = VERDICT_GRAMMAR
                dec["max_tokens"] = self.verify_max_tokens or 2
            elif self.variant == "small":
                dec["stop"] = ("\n",)
            return [
                self.client.request(tpl.render(serialized_tables=text, decomposed_claim=cl), **dec)
                for cl in st.claims
            ]
        tpl = self.prompt("mtraig_verify_batched")
        k = len(st.claims)
        dec = {
            "max_tokens": self.verify_max_tokens or 12 + 5 * k,
            "temperature": self.temperature,
            "seed": self.seed,
            "json_schema": verdicts_schema(k),
        }
        return [
            self.client.request(
                tpl.render(serialized_tables=text, decomposed_claims=numbered(st.claims)), **dec
            )
        ]

    def _no_verdict(self, k: int, c: Completion) -> str | None:
        """Why a verification reply (of ``k`` claims) holds no verdict at all, ``None`` when it
        holds one: such a reply is never cached, so the next run asks again."""
        if self.mode == "per_claim":
            if any(parse_verdict(ch.text, partial=self.partial) is not None for ch in c.choices):
                return None
        elif parse_verdict_list(c.text, k, partial=self.partial) is not None:
            return None
        return "no claim verdict in the reply"

    def _verdicts(
        self, st: _Item, outs: list[Completion | BackendError]
    ) -> list[float | None] | str:
        assert st.claims is not None
        k = len(st.claims)
        raws: list[Any] = []
        if self.mode == "per_claim":
            vals: list[float | None] = []
            for c in outs:
                if isinstance(c, BackendError):
                    return f"backend error: {c}"
                parsed = [parse_verdict(ch.text, partial=self.partial) for ch in c.choices]
                raws.append([ch.text for ch in c.choices] if self.n > 1 else c.text)
                ok = [p for p in parsed if p is not None]
                self.count(len(parsed), len(parsed) - len(ok))
                st.details["parse_failures"] = (
                    st.details.get("parse_failures", 0) + len(parsed) - len(ok)
                )
                vals.append(sum(ok) / len(ok) if ok else None)
            st.details["verification_raw"] = raws
            return vals
        (c,) = outs
        if isinstance(c, BackendError):
            return f"backend error: {c}"
        st.details["verification_raw"] = c.text
        got = parse_verdict_list(c.text, k, partial=self.partial)
        if got is None:
            self.count(k, k)
            st.details["parse_failures"] = st.details.get("parse_failures", 0) + k
            return [None] * k
        fails = sum(v is None for v in got)
        self.count(k, fails)
        st.details["parse_failures"] = st.details.get("parse_failures", 0) + fails
        return [None if v is None else float(v) for v in got]

    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        t0 = self.client.stats.to_dict()
        states = self.decompose(items)
        t1 = self.client.stats.to_dict()
        plan: list[tuple[int, int]] = []  # (item index, number of requests)
        reqs: list[Request] = []
        claims: dict[int, int] = {}  # id(request) -> claims it verifies
        for i, (it, st) in enumerate(zip(items, states, strict=True)):
            if st.error is None and st.claims:
                rs = self._verify_requests(it, st)
                plan.append((i, len(rs)))
                reqs.extend(rs)
                claims.update((id(r), len(st.claims) if len(rs) == 1 else 1) for r in rs)
        outs = self.client.run(reqs, accept=lambda r, c: self._no_verdict(claims[id(r)], c))
        t2 = self.client.stats.to_dict()
        #: cost of the last batch per stage (decomposition, verification): Ledger deltas
        self.stage_stats = {"decompose": _diff(t0, t1), "verify": _diff(t1, t2)}
        pos = 0
        verdicts: dict[int, list[float | None] | str] = {}
        for i, n in plan:
            verdicts[i] = self._verdicts(states[i], outs[pos : pos + n])
            pos += n
        return [self._result(st, verdicts.get(i)) for i, st in enumerate(states)]

    def _result(self, st: _Item, v: list[float | None] | str | None) -> MetricResult:
        d = st.details
        d.setdefault("parse_failures", 0)
        if st.error is not None:
            self.items_failed += 1
            return MetricResult(st.key, None, d, st.error)
        assert st.claims is not None
        d["claims"] = st.claims
        if not st.claims:
            d["no_claims"] = True
            if self.no_claims == "zero":
                self.items_scored += 1
                return MetricResult(st.key, 0.0, d)
            self.items_failed += 1
            return MetricResult(st.key, None, d, "decomposition produced no claims")
        if isinstance(v, str):
            self.items_failed += 1
            return MetricResult(st.key, None, d, v)
        assert v is not None
        d["verdicts"] = v
        ok = [x for x in v if x is not None]
        d["claims_verified"] = len(ok)
        d["claims_unparsed"] = len(v) - len(ok)
        if not ok:
            self.items_failed += 1
            return MetricResult(st.key, None, d, "no claim verdict could be parsed")
        if len(ok) < len(v) and self.unparsed == "unscored":
            self.items_failed += 1
            why = f"{len(v) - len(ok)} of {len(v)} claim verdicts unparseable (unparsed=unscored)"
            return MetricResult(st.key, None, d, why)
        self.items_scored += 1
        return MetricResult(st.key, sum(ok) / len(v), d)  # an unparsed claim: V = 0, in |C|


class MTRAIGCompleteness(JudgeMetric):
    """S_comp of MT-RAIG Eval (Eq. 3): F1 of bidirectionally matched atomic topics."""

    name = "mtraig_completeness"
    direction = "higher"
    range = (0.0, 1.0)
    needs_reference = True
    tasks = ("mtraig_topics", "mtraig_match")

    def __init__(
        self,
        *,
        structured: bool | None = None,
        decompose_max_tokens: int | None = None,
        match_max_tokens: int = 96,
        max_claims: int | Literal["auto"] | None = "auto",
        backbone: str | None = None,
        variant: str | None = None,
        backend: Backend | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(backbone=backbone, variant=variant, backend=backend, **kw)
        #: topics kept per insight (same rule as the claims of faithfulness)
        self.max_claims = resolve_max_claims(max_claims, self._config)
        self.structured = (self.variant == "small") if structured is None else bool(structured)
        self.decompose_max_tokens = decompose_tokens(decompose_max_tokens, self._config)
        self.match_max_tokens = int(match_max_tokens)

    @property
    def signature(self) -> str:
        return self._signature(
            "mtraig_completeness",
            structured=self.structured,
            dec_tokens=self.decompose_max_tokens,
            match_tokens=self.match_max_tokens,
        )

    def _topics_request(self, question: str, insight: str) -> Request:
        dec: dict[str, Any] = {
            "max_tokens": self.decompose_max_tokens,
            "temperature": 0.0,
            "seed": self.seed,
        }
        if self.variant == "small":
            dec["stop"] = ("\n\n", "\nQuestion:", "\nInsight:")
        return self.client.request(
            self.prompt("mtraig_topics").render(question=question, insight=insight.strip()), **dec
        )

    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        states = [_Item(it.key) for it in items]
        topics = self._decompose_both(items, states)
        results = self._match(states, topics)
        out = []
        for i, st in enumerate(states):
            st.details.setdefault("parse_failures", 0)
            if i in results:
                out.append(results[i])
            elif st.error is not None:
                out.append(self._fail(st, st.error))
            else:  # an empty topic set: nothing can match
                a, b = topics[i]
                st.details.update(
                    precision=0.0 if b else None,
                    recall=0.0 if a else None,
                    f1=0.0,
                    empty_topic_set="reference" if not a else "prediction",
                )
                self.items_scored += 1
                out.append(MetricResult(st.key, 0.0, st.details))
        return out

    def _decompose_both(
        self, items: Sequence[ScoreItem], states: list[_Item]
    ) -> dict[int, tuple[list[str], list[str]]]:
        """Step 1: topic sets of reference and prediction (the reference request is shared by
        every response to the same input; the backend cache answers the repeats)."""
        reqs: list[Request] = []
        for it, st in zip(items, states, strict=True):
            if it.response is None or not it.response.strip():
                st.error = "empty response"
            elif not it.reference:
                st.error = "no reference insight (completeness needs one)"
            else:
                q = it.input.question if it.input else ""
                reqs += [
                    self._topics_request(q, it.reference),
                    self._topics_request(q, it.response),
                ]
        outs = iter(self.client.run(reqs))
        topics: dict[int, tuple[list[str], list[str]]] = {}
        for i, st in enumerate(states):
            if st.error is not None:
                continue
            sets = []
            for label, c in (("reference", next(outs)), ("prediction", next(outs))):
                if st.error is not None:
                    continue
                if isinstance(c, BackendError):
                    st.error = f"backend error: {c}"
                    continue
                parsed = split_items(self, c.text, f"{label}_topics", st.details)
                self.count(1, int(parsed is None))
                st.details[f"{label}_topics_raw"] = c.text
                if parsed is None:
                    st.details["parse_failures"] = st.details.get("parse_failures", 0) + 1
                    st.error = f"unparseable {label} decomposition"
                    continue
                sets.append(parsed)
            if st.error is None:
                topics[i] = (sets[0], sets[1])
                st.details["reference_topics"], st.details["predicted_topics"] = sets
        return topics

    def _match(
        self, states: list[_Item], topics: dict[int, tuple[list[str], list[str]]]
    ) -> dict[int, MetricResult]:
        """Step 2: bidirectional matching of the two topic sets; precision, recall, F1."""
        match_reqs: list[tuple[int, Request]] = []
        for i, (a, b) in topics.items():
            if not a or not b:
                continue
            dec: dict[str, Any] = {
                "max_tokens": self.match_max_tokens,
                "temperature": 0.0,
                "seed": self.seed,
            }
            if self.structured:
                dec["json_schema"] = match_schema(len(a), len(b))
            text = self.prompt("mtraig_match").render(
                decomposed_ground_truth_topic_set=numbered(a),
                decomposed_predicted_topic_set=numbered(b),
            )
            match_reqs.append((i, self.client.request(text, **dec)))
        mouts = self.client.run([r for _, r in match_reqs])
        results: dict[int, MetricResult] = {}
        for (i, _), c in zip(match_reqs, mouts, strict=True):
            st = states[i]
            a, b = topics[i]
            if isinstance(c, BackendError):
                results[i] = self._fail(st, f"backend error: {c}")
                continue
            st.details["matching_raw"] = c.text
            m = parse_matching(c.text, len(a), len(b))
            self.count(1, int(m is None))
            if m is None:
                st.details["parse_failures"] = st.details.get("parse_failures", 0) + 1
                results[i] = self._fail(st, "unparseable topic matching")
                continue
            p, r = len(m.matched_b) / len(b), len(m.matched_a) / len(a)
            f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
            st.details.update(
                matched_reference=list(m.matched_a),
                matched_predicted=list(m.matched_b),
                invalid_indices=m.invalid,
            )
            st.details.update(precision=p, recall=r, f1=f1)
            self.items_scored += 1
            results[i] = MetricResult(st.key, f1, st.details)
        return results

    def _fail(self, st: _Item, err: str) -> MetricResult:
        self.items_failed += 1
        st.details.setdefault("parse_failures", 0)
        return MetricResult(st.key, None, st.details, err)
