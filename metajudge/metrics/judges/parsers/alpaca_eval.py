"""AlpacaEval's completion parsers, batch of one: what ``ranking_parser``, ``logprob_parser`` and
``regex_parser`` of ``src/alpaca_eval/completion_parsers.py`` (tatsu-lab/alpaca_eval, commit
cd543a1) give on the same reply, in our own code (the config reader is
:mod:`metajudge.metrics.judges.alpaca_eval`; :func:`~.defined.read_alpaca` makes the verdict).

A preference is AlpacaEval's number: 1 = output_1 (a) better, 2 = output_2 (b) better, in between
for ``logprob_parser`` without ``is_binarize`` (2 - p(numerator)). A reply that yields other than
one annotation is unparsed (``None``), as AlpacaEval sets it to None for a batch of one.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

# ---------------------------------------------------------------------------------------------
# The three parsers (AlpacaEval's completion_parsers.py, batch of one)


def ranking_parser(completion: str, model_1_name: str = "model_1") -> float | None:
    """The rank of ``model_1_name`` in a Python-literal ranking (1: output_1 better, 2: output_2).

    >>> ranking_parser("[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]")
    1.0
    >>> ranking_parser("[{'model': 'model_1', 'rank': 2}, {'model': 'model_2', 'rank': 1}]")
    2.0
    >>> ranking_parser("[{'model': 'model_1', 'rank': 3}, {'model': 'model_2', 'rank': 1}]") is None
    True
    """
    if not completion:
        return None
    try:
        ranking = ast.literal_eval(completion)
        rank = next(c for c in ranking if c["model"] == model_1_name)["rank"]
    except (
        ValueError,
        TypeError,
        SyntaxError,
        KeyError,
        StopIteration,
        MemoryError,
        RecursionError,
    ):
        return None
    return float(rank) if rank in (1, 2) else None


def regex_parser(completion: str, outputs_to_match: Mapping[Any, str]) -> float | None:
    """The key of the one pattern that matches (earliest first, each match consumed); more than
    one annotation, or none, is no preference (a batch of one).

    >>> regex_parser(" Output (a)", {1: r"(?:^|\\n) ?Output \\(a\\)", 2: r"(?:^|\\n) ?Output \\(b\\)"})
    1.0
    >>> regex_parser("Output (a)\\nOutput (b)", {1: r"(?:^|\\n) ?Output \\(a\\)", 2: r"(?:^|\\n) ?Output \\(b\\)"}) is None
    True
    """
    if not completion:
        return None
    pats = {k: re.compile(v) for k, v in outputs_to_match.items()}
    found: list[Any] = []
    rest = completion
    while True:
        first: tuple[re.Match[str], Any] | None = None
        for k, rx in pats.items():
            m = rx.search(rest)
            if m and (first is None or m.start() < first[0].start()):
                first = (m, k)
        if first is None:
            break
        found.append(first[1])
        rest = rest[first[0].end() :]
        if len(found) > 1:
            return None
    if len(found) != 1:
        return None
    try:
        return float(found[0])
    except (TypeError, ValueError):
        return None


def logprob_parser(
    top_logprobs: Sequence[tuple[str, float]],
    numerator_token: str,
    denominator_tokens: Sequence[str],
    is_binarize: bool = True,
) -> float | None:
    """AlpacaEval's preference from one position's top log-probabilities: tokens matched
    exactly; binarised, 1 when the numerator's log-probability beats every other denominator
    token's, else 2; otherwise 2 - p(numerator) / Σ p(denominator). No listed token present →
    ``None`` (AlpacaEval's NaN).

    >>> round(logprob_parser([("m", -0.1), ("M", -2.4)], "m", ["m", "M"], False), 6)
    1.091123
    >>> logprob_parser([("m", -0.1), ("M", -2.4)], "m", ["m", "M"], True)
    1.0
    >>> logprob_parser([("The", -0.1)], "m", ["m", "M"]) is None
    True
    """
    wanted = [*denominator_tokens, numerator_token]
    found = {t: lp for t, lp in top_logprobs if t in wanted}
    if not found:
        return None
    num = found.get(numerator_token, -math.inf)
    if is_binarize:
        others = [found.get(t, -math.inf) for t in denominator_tokens if t != numerator_token]
        return 1.0 if all(num > o for o in others) else 2.0
    dens = [found.get(t, -math.inf) for t in denominator_tokens]
    top = max(dens)
    if top == -math.inf:
        return None  # no denominator token present: AlpacaEval's exp(-inf - (-inf)) is NaN
    lse = top + math.log(sum(math.exp(d - top) for d in dens))
    return 2.0 - math.exp(num - lse)
