"""Claim and topic sets of MT-RAIG Eval's decomposers (Seo et al. 2025, Tables 15–16): parsing,
de-duplication and the optional cap, each recorded in ``details`` and counted on the judge.
"""

from __future__ import annotations

from typing import Any

from metajudge.errors import InputError
from metajudge.metrics.judges.common import JudgeMetric
from metajudge.metrics.judges.parsers.ratings import dedupe_items, parse_items

#: Claims (and topics) kept per insight on embedded small backbones, which loop; the paper states
#: no limit, so remote backbones keep every claim (``max_claims="auto"``). A cap is recorded in
#: ``details`` (``claims_capped``) and counted in the summary.
SMALL_MODEL_MAX_CLAIMS = 20


def match_schema(n_a: int, n_b: int) -> dict[str, Any]:
    """JSON schema of a topic matching: index lists no longer than the two topic sets."""
    return {
        "type": "object",
        "properties": {
            "matched_a": {"type": "array", "items": {"type": "integer"}, "maxItems": n_a},
            "matched_b": {"type": "array", "items": {"type": "integer"}, "maxItems": n_b},
        },
        "required": ["matched_a", "matched_b"],
    }


def decompose_tokens(max_tokens: int | None, config: Any) -> int:
    """Answer tokens of a decomposition: given, else 256 on embedded backbones (their lists loop)
    and 1,024 on remote ones (room for 25+ claims; a reply cut at the limit is recorded).

    >>> from types import SimpleNamespace as NS
    >>> decompose_tokens(None, NS(kind="openai")), decompose_tokens(None, NS(kind="embedded"))
    (1024, 256)
    """
    if max_tokens is not None:
        return int(max_tokens)
    return 256 if getattr(config, "kind", "openai") == "embedded" else 1024


def resolve_max_claims(max_claims: int | str | None, config: Any) -> int | None:
    """``"auto"``: :data:`SMALL_MODEL_MAX_CLAIMS` on embedded backbones, no cap on remote ones.

    >>> from types import SimpleNamespace as NS
    >>> resolve_max_claims("auto", NS(kind="openai")), resolve_max_claims("auto", NS(kind="embedded"))
    (None, 20)
    """
    if max_claims == "auto":
        return SMALL_MODEL_MAX_CLAIMS if getattr(config, "kind", "openai") == "embedded" else None
    if max_claims is not None and (not isinstance(max_claims, int) or max_claims < 1):
        raise InputError(
            f"max_claims must be >= 1, None or 'auto', got {max_claims!r}", field="max_claims"
        )
    return max_claims


def split_items(
    judge: JudgeMetric, raw: str, what: str, details: dict[str, Any]
) -> list[str] | None:
    """Claims/topics of a decomposition reply, de-duplicated and capped; both recorded in
    ``details`` and counted on ``judge`` (``what``: "claims", "reference_topics", …)."""
    items = parse_items(raw, continued=judge.variant == "small")
    if items is None:
        return None
    kept = dedupe_items(items, judge.max_claims)
    details.update(kept.record(what))
    judge.note("duplicates_removed", bool(kept.duplicates))
    judge.note(f"{what}_capped" if what == "claims" else "topics_capped", kept.capped > 0)
    return kept.items
