"""What every LLM-judge metric shares: backbone, prompt variant, table budget, signature, counts.

A judge metric's signature pins the backbone (config name and model identity with its GGUF
sha256), the sha256 of every prompt file it uses, the decoding settings, the mode and the
parser version (DESIGN.md §3). Parse failures are counted per item (``details``) and over the
run (:attr:`JudgeMetric.summary`), never turned into a score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metajudge import __version__
from metajudge.backends.base import Backend, BackendError, Completion
from metajudge.data.formats import Input
from metajudge.errors import InputError
from metajudge.metrics.base import Metric
from metajudge.metrics.judges.engine import (
    JudgeClient,
    backbone_config,
    backbone_identity,
    default_backbone,
)
from metajudge.metrics.judges.parsers import PARSER_VERSION
from metajudge.metrics.judges.prompts import VARIANTS, PromptTemplate, load_prompt
from metajudge.metrics.judges.tables import (
    DEFAULT_MAX_ROWS,
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

    >>> table_budget_chars(4096), table_budget_chars(2048), table_budget_chars(128000)
    (7040, 1920, 40000)
    """
    return int(min(40000, max(1000, (n_ctx - RESERVED_TOKENS) * CHARS_PER_TOKEN)))


class JudgeMetric(Metric):
    """Base class: owns a :class:`JudgeClient`; subclasses build requests and parse answers."""

    tasks: tuple[str, ...] = ()  # prompt tasks used (their hashes go into the signature)

    def __init__(
        self,
        *,
        backbone: str | None = None,
        variant: str | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
        max_table_chars: int | None = None,
        seed: int = 0,
        backend: Backend | None = None,
    ) -> None:
        backbone = backbone or default_backbone()
        self.backbone = backbone
        cfg = backbone_config(backbone) if backend is None else getattr(backend, "config", None)
        n_ctx = int(getattr(cfg, "n_ctx", 4096))
        self.client_is_chat = bool(getattr(cfg, "chat", True))
        #: the backend accepts a GBNF grammar (llama.cpp): answers can be constrained
        self.can_constrain = bool(getattr(cfg, "grammar_param", None))
        if variant is None:
            # the embedded small models do not follow the paper's zero-shot prompts (measured:
            # 100% unparseable decompositions with smollm2-135m); they get the few-shot ones
            variant = "small" if getattr(cfg, "kind", "openai") == "embedded" else "paper"
        if variant not in VARIANTS:
            raise InputError(
                f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}", field="variant"
            )
        self.variant = variant
        self.max_rows = int(max_rows)
        self.max_table_chars = (
            int(max_table_chars) if max_table_chars is not None else table_budget_chars(n_ctx)
        )
        self.seed = int(seed)
        self._backend_arg = backend
        self._client: JudgeClient | None = None
        self.parse_failures = 0
        self.parse_attempts = 0
        self.items_scored = 0
        self.items_failed = 0

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def client(self) -> JudgeClient:
        if self._client is None:
            self._client = JudgeClient(
                self.backbone, backend=self._backend_arg, parser_version=PARSER_VERSION
            )
        return self._client

    def prompt(self, task: str) -> PromptTemplate:
        return load_prompt(task, self.variant)

    def _identity(self) -> str:
        if self._backend_arg is not None:
            return str(getattr(self._backend_arg, "model_id", self.backbone))
        return backbone_identity(self.backbone)

    def _signature(self, name: str, **opts: Any) -> str:
        prompts = "+".join(self.prompt(t).short_hash for t in self.tasks)
        parts = [
            name,
            f"backbone:{self.backbone}",
            f"model:{self._identity()}",
            f"variant:{self.variant}",
            f"prompts:{prompts}",
        ]
        parts += [f"{k}:{v}" for k, v in opts.items()]
        parts += [
            f"rows:{self.max_rows}",
            f"tchars:{self.max_table_chars}",
            f"seed:{self.seed}",
            f"parser:{PARSER_VERSION}",
            f"version:{__version__}",
        ]
        return "|".join(parts)

    def tables_text(self, inp: Input | None) -> tuple[str, dict[str, Any]] | None:
        """Serialised tables of an input (or its context text when it has no table), with the
        truncation record; ``None`` when the input has neither."""
        tables = tables_of(inp)
        if tables:
            s: SerializedTables = serialize_tables(
                tables, max_rows=self.max_rows, max_chars=self.max_table_chars
            )
            return s.text, s.truncation()
        if inp is not None and inp.context:
            text = inp.context[: self.max_table_chars]
            return text, {
                "tables": 0,
                "context_chars": len(inp.context),
                "truncated": len(inp.context) > self.max_table_chars,
            }
        return None

    def schemas_text(self, inp: Input | None) -> str | None:
        tables = tables_of(inp)
        if tables:
            return serialize_schemas(tables)
        if inp is not None and inp.context:
            return inp.context.splitlines()[0][:500] if inp.context.strip() else None
        return None

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
        }
        if self._client is not None:
            out["cost"] = self._client.stats.to_dict()
        return out

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def error_text(c: Completion | BackendError) -> str | None:
    return f"backend error: {c}" if isinstance(c, BackendError) else None


def texts(c: Completion) -> list[str]:
    return [ch.text for ch in c.choices]


def chunked(seq: Sequence[Any], n: int) -> list[list[Any]]:
    return [list(seq[i : i + n]) for i in range(0, len(seq), n)]
