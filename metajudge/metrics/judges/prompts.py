"""Judge prompts are files: ``prompts/<task>.<variant>.txt`` next to this module.

Variants:

- ``paper`` — the MT-RAIG paper's prompts copied verbatim (Seo et al. 2025, Table 15:
  ``mtraig_claims``, ``mtraig_verify``; Table 16: ``mtraig_topics``, ``mtraig_match``; Table 18:
  ``geval_faithfulness``, ``geval_completeness``). ``mtraig_verify_batched`` (all claims in one
  call), ``equivalence`` and ``fact_coverage`` (MuDABench judging) have no published prompt:
  ours, written in the same layout. ``geval_coherence``, ``geval_consistency``,
  ``geval_fluency``, ``geval_relevance`` (SummEval) are ours in the G-Eval form (Liu et al.
  2023): task, the SummEval definitions (Fabbri et al. 2021), evaluation steps, form filling.
- ``small`` — few-shot, completion-style prompts for the embedded small models (a base model
  continues the pattern; a chat model gets the same text as one user message).

A placeholder is ``{name}``; only the names a task declares are replaced, so braces elsewhere
(JSON examples, table cells) are left alone. The sha256 of the file text goes into the metric's
signature.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from metajudge.errors import InputError

PROMPT_DIR = Path(__file__).with_name("prompts")
PROMPT_VARIANTS: tuple[str, ...] = ("paper", "small")


@dataclass(frozen=True)
class PromptTemplate:
    task: str
    variant: str
    text: str  # trailing whitespace stripped: the model continues right after the last word
    sha256: str

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]

    def placeholders(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(re.findall(r"\{([a-z_]+)\}", self.text)))

    def render(self, **values: str) -> str:
        """Fill the placeholders; every placeholder must be given (a missing one is a bug).

        >>> PromptTemplate("t", "x", "Claim: {claim} {json}", "0").render(claim="a {b}", json="")
        'Claim: a {b} '
        """
        names = self.placeholders()
        missing = [n for n in names if n not in values]
        if missing:
            raise KeyError(f"prompt {self.task}.{self.variant} needs {missing}")
        pattern = re.compile(r"\{(" + "|".join(map(re.escape, names)) + r")\}") if names else None
        if pattern is None:
            return self.text
        return pattern.sub(lambda m: values[m.group(1)], self.text)


@cache
def load_prompt(task: str, variant: str) -> PromptTemplate:
    """The template of ``task`` in ``variant``; a clear error naming the file when it is absent."""
    if variant not in PROMPT_VARIANTS:
        raise InputError(
            f"unknown prompt variant {variant!r}; choose one of {', '.join(PROMPT_VARIANTS)}",
            field="variant",
        )
    path = PROMPT_DIR / f"{task}.{variant}.txt"
    if not path.is_file():
        raise InputError("prompt file missing", path=path)
    raw = path.read_text(encoding="utf-8")
    return PromptTemplate(
        task, variant, raw.rstrip(), hashlib.sha256(raw.encode("utf-8")).hexdigest()
    )


def numbered(items: list[str] | tuple[str, ...]) -> str:
    """``1. a\\n2. b`` — how claim and topic sets are shown to the judge.

    >>> print(numbered(["a", "b"]))
    1. a
    2. b
    """
    return "\n".join(f"{i}. {s}" for i, s in enumerate(items, 1))
