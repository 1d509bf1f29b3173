"""The label in a judge's free-text reply on a dataset's scale (JUDGE-BENCH's annotation prompts).

Rules of the upstream ``extract_answer`` (JUDGE-BENCH, Bavaresco et al. 2025,
``eval_responses.py``, non-CoT prompts), except that an unparseable reply is ``None`` — counted
by the caller — where upstream substitutes a random label. Re-exported by
:mod:`metajudge.metrics.judges.parsers.ratings`.
"""

from __future__ import annotations

import re

from metajudge.data.formats import Scale


def parse_reply(reply: str | None, scale: Scale) -> str | float | None:
    """The label in a judge's reply on ``scale``, or None.

    Categorical: the first label *of the list* found as a whole word (case-insensitive);
    graded (listed integer values): the first integer in range not touching another digit;
    continuous: the first number.

    >>> parse_reply("Answer: Yes.", Scale.from_dict({"labels": ["No", "Yes"]}))
    'Yes'
    >>> parse_reply("I'd say 4/7", Scale(1, 7, (1, 2, 3, 4, 5, 6, 7)))
    4.0
    >>> parse_reply("score 12", Scale(1, 7, (1, 2, 3, 4, 5, 6, 7))) is None
    True
    """
    if not reply:
        return None
    text = reply.strip().lower()
    if scale.labels is not None:
        for lab in scale.labels:
            if re.search(rf"\b{re.escape(lab.strip().lower())}\b", text):
                return lab
        return None
    if scale.values is not None:
        for m in re.finditer(r"(?<![\d.])\d+(?![\d.])", text):
            if scale.contains(float(m.group())):
                return float(m.group())
        return None
    m = re.search(r"[-+]?[0-9]*\.?[0-9]+", text)
    return float(m.group()) if m else None
