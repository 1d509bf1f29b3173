"""What every LLM judge shares: backbone, prompt variant, client, signature (:class:`JudgeBase`);
what judge *metrics* add: table budget and parse counts (:class:`JudgeMetric`).

A judge's signature pins the backbone (config name and model identity with its GGUF sha256),
the sha256 of every prompt file it uses, the decoding settings, the mode and the parser version
(in the spirit of sacreBLEU's signatures, Post 2018). Parse failures are counted per item (``details``) and over the
run (:attr:`JudgeMetric.summary`), never turned into a score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metajudge import __version__
from metajudge.backends.base import Backend, BackendError, Completion
from metajudge.backends.context import ContextLength, context_length
from metajudge.data.formats import Input
from metajudge.errors import InputError
from metajudge.metrics.base import Metric
from metajudge.metrics.judges.engine import (
    JudgeClient,
    backbone_config,
    backbone_identity,
    resolve_backbone,
)
from metajudge.metrics.judges.parsers.ratings import PARSER_VERSION
from metajudge.metrics.judges.prompts import PROMPT_VARIANTS, PromptTemplate, load_prompt
from metajudge.metrics.judges.table_text import (
    SerializedTables,
    serialize_schemas,
    serialize_tables,
    tables_of,
)

#: Characters of prompt text per token assumed when sizing the table budget from ``n_ctx``
#: (tables of numbers tokenise densely; 2.5 is conservative for the SmolLM2/Gemma tokenizers).
CHARS_PER_TOKEN = 2.5
#: Tokens kept free for instructions, few-shot examples, the insight and the answer.
RESERVED_TOKENS = 1280


def table_budget_chars(n_ctx: int) -> int:
    """Characters of serialised tables that fit a context of ``n_ctx`` tokens (at least 1,000).

    No upper cap: a 128k backbone (GPT-4o-mini, MT-RAIG's judge) gets the whole paper-sized
    tables; they are cut only when the prompt would not fit.

    >>> table_budget_chars(4096), table_budget_chars(2048), table_budget_chars(128000)
    (7040, 1920, 316800)
    """
    return int(max(1000, (n_ctx - RESERVED_TOKENS) * CHARS_PER_TOKEN))


def default_variant(config: Any) -> str:
    """The one default prompt variant rule: ``small`` (few-shot) for embedded or base (non-chat)
    backbones, ``paper`` for the rest. The embedded small models do not follow the papers'
    zero-shot prompts (measured: 100% unparseable decompositions with smollm2-135m)."""
    embedded = getattr(config, "kind", "openai") == "embedded"
    return "small" if embedded or not getattr(config, "chat", True) else "paper"


class JudgeBase:
    """What every LLM judge shares: backbone, its config, prompt variant, seed, client, signature.

    ``backbone`` names the config (:data:`~metajudge.metrics.judges.engine.DEFAULT_BACKBONE` when
    ``None``); ``backend=`` injects a ready backend (tests, sharing), whose ``config`` is used.
    """

    parser_version: str = PARSER_VERSION

    def __init__(
        self,
        *,
        backbone: str | None = None,
        variant: str | None = None,
        seed: int = 0,
        backend: Backend | None = None,
    ) -> None:
        self.backbone = resolve_backbone(backbone)
        cfg = backend.config if backend is not None else backbone_config(self.backbone)
        self._config = cfg
        self._context: ContextLength | None = None
        self.client_is_chat = bool(getattr(cfg, "chat", True))
        #: the backend accepts a GBNF grammar (llama.cpp): answers can be constrained
        self.can_constrain = bool(getattr(cfg, "grammar_param", None))
        variant = default_variant(cfg) if variant is None else variant
        if variant not in PROMPT_VARIANTS:
            raise InputError(
                f"unknown prompt variant {variant!r}; choose one of {', '.join(PROMPT_VARIANTS)}",
                field="variant",
            )
        self.variant = variant
        self.seed = int(seed)
        self._backend_arg = backend
        self._client: JudgeClient | None = None

    @property
    def context(self) -> ContextLength:
        """The backbone's context length (config ``n_ctx``, else the server's ``/v1/models``)."""
        if self._context is None:
            self._context = context_length(self._config)
        return self._context

    @property
    def n_ctx(self) -> int:
        return self.context.tokens

    @property
    def client(self) -> JudgeClient:
        if self._client is None:
            self._client = JudgeClient(
                self.backbone, backend=self._backend_arg, parser_version=self.parser_version
            )
        return self._client

    def use_client(self, client: JudgeClient | None) -> None:
        """Share another judge's client (its backend, cache and ledger) instead of opening one;
        ``None`` lets go of a shared client without closing it."""
        self._client = client

    def prompt(self, task: str) -> PromptTemplate:
        return load_prompt(task, self.variant)

    def _identity(self) -> str:
        if self._backend_arg is not None:
            return str(self._backend_arg.model_id)
        return backbone_identity(self.backbone)

    def _signature_parts(self, name: str, prompts: str, **opts: Any) -> str:
        """``name|backbone:…|model:…|variant:…|<prompts>|opts…|seed:…|parser:…|version:…``."""
        parts = [
            name,
            f"backbone:{self.backbone}",
            f"model:{self._identity()}",
            f"variant:{self.variant}",
            prompts,
        ]
        parts += [f"{k}:{v}" for k, v in opts.items()]
        parts += [f"seed:{self.seed}", f"parser:{self.parser_version}", f"version:{__version__}"]
        return "|".join(parts)

    def cost(self) -> dict[str, Any] | None:
        """The judge's ledger (requests, calls, cache hits, tokens, time), once it ran."""
        return None if self._client is None else self._client.stats.summary()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


class JudgeMetric(JudgeBase, Metric):
    """A judge that is a registry metric: table budget, parse counts, run summary."""

    tasks: tuple[str, ...] = ()  # prompt tasks used (their hashes go into the signature)

    def __init__(
        self,
        *,
        backbone: str | None = None,
        variant: str | None = None,
        max_rows: int | None = None,
        max_table_chars: int | None = None,
        seed: int = 0,
        backend: Backend | None = None,
    ) -> None:
        super().__init__(backbone=backbone, variant=variant, seed=seed, backend=backend)
        for name, v in (("max_rows", max_rows), ("max_table_chars", max_table_chars)):
            if v is not None and int(v) < 0:
                raise InputError(f"must be >= 0 or unset, got {v!r}", field=name)
        #: rows kept per table (``None``: all, cut only to fit ``max_table_chars``)
        self.max_rows = None if max_rows is None else int(max_rows)
        self._max_table_chars = None if max_table_chars is None else int(max_table_chars)
        #: responses whose tables were serialised / cut to fit the context (see :attr:`summary`)
        self.tables_seen = 0
        self.tables_cut = 0
        #: responses affected by each cap, de-dup or cut (``note``), shown in :attr:`summary`
        self.affected: dict[str, int] = {}
        #: claim/topic cap (judges that decompose set it; ``None``: no cap)
        self.max_claims: int | None = None
        self.parse_failures = 0
        self.parse_attempts = 0
        self.items_scored = 0
        self.items_failed = 0

    @property
    def max_table_chars(self) -> int:
        """Characters of serialised tables per prompt: given, else sized from the context."""
        if self._max_table_chars is None:
            return table_budget_chars(self.n_ctx)
        return self._max_table_chars

    def _signature(self, name: str, **opts: Any) -> str:
        prompts = "+".join(self.prompt(t).short_hash for t in self.tasks)
        return self._signature_parts(
            name,
            f"prompts:{prompts}",
            **opts,
            ctx=self.context,
            claims=self.max_claims or "none",
            rows=self.max_rows or "all",
            tchars=self.max_table_chars,
        )

    def tables_text(self, inp: Input | None) -> tuple[str, dict[str, Any]] | None:
        """Serialised tables of an input (or its context text when it has no table), with the
        truncation record; ``None`` when the input has neither."""
        tables = tables_of(inp)
        if tables:
            s: SerializedTables = serialize_tables(
                tables, max_rows=self.max_rows, max_chars=self.max_table_chars
            )
            text, record = s.text, s.truncation()
        elif inp is not None and inp.context:
            text = inp.context[: self.max_table_chars]
            record = {
                "tables": 0,
                "context_chars": len(inp.context),
                "truncated": len(inp.context) > self.max_table_chars,
            }
        else:
            return None
        record["budget_chars"] = self.max_table_chars
        self.tables_seen += 1
        self.tables_cut += int(bool(record["truncated"]))
        return text, record

    def schemas_text(self, inp: Input | None) -> str | None:
        tables = tables_of(inp)
        if tables:
            return serialize_schemas(tables)
        if inp is not None and inp.context:
            return inp.context.splitlines()[0][:500] if inp.context.strip() else None
        return None

    def note(self, what: str, happened: bool = True) -> None:
        """Count one response affected by ``what`` (a cap, a de-dup, a cut)."""
        if happened:
            self.affected[what] = self.affected.get(what, 0) + 1

    def count(self, attempts: int, failures: int) -> None:
        self.parse_attempts += attempts
        self.parse_failures += failures

    @property
    def summary(self) -> dict[str, Any]:
        """Run totals: items scored/failed, parse failures and their rate, backend cost."""
        rate = self.parse_failures / self.parse_attempts if self.parse_attempts else 0.0
        out: dict[str, Any] = {
            "metric": getattr(self, "name", type(self).__name__),
            "items_scored": self.items_scored,
            "items_failed": self.items_failed,
            "parse_attempts": self.parse_attempts,
            "parse_failures": self.parse_failures,
            "parse_failure_rate": round(rate, 4),
            "context_tokens": str(self.context),
            "responses_tables_cut": self.tables_cut,
            "tables_cut_share": round(self.tables_cut / self.tables_seen, 4)
            if self.tables_seen
            else 0.0,
            "responses_affected": dict(self.affected),
        }
        cost = self.cost()
        if cost is not None:
            out["cost"] = cost
        return out


def error_text(c: Completion | BackendError) -> str | None:
    return f"backend error: {c}" if isinstance(c, BackendError) else None


def texts(c: Completion) -> list[str]:
    return [ch.text for ch in c.choices]


def chunked(seq: Sequence[Any], n: int) -> list[list[Any]]:
    return [list(seq[i : i + n]) for i in range(0, len(seq), n)]
