"""The items where a label judge (binary or categorical) and the humans disagree, each with the
judge's explanation where its score file keeps one (an inspect_ai scorer's ``explanation``,
``details.explanation`` in the score rows). Nothing is rendered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: the most items listed (the count says how many disagree in all)
CAP = 200
EXPLANATION_CAP = 300


def _cut(text: Any) -> str | None:
    if text is None:
        return None
    s = str(text)
    return s if len(s) <= EXPLANATION_CAP else s[: EXPLANATION_CAP - 1] + "…"


def label_disagreements(
    records: Sequence[Any],
    gold: Sequence[str | None],
    pred: Sequence[str | None],
    explanations: Mapping[str, str],
    *,
    cap: int = CAP,
) -> dict[str, Any]:
    """The records whose judge verdict ``pred`` differs from the human label ``gold`` (both
    given), in the data's order, at most ``cap``; ``explanations``: the judge's, by response
    key. Counts: labelled items judged, disagreements, those with an explanation."""
    from metajudge.data.formats import response_key

    judged = [i for i, (g, p) in enumerate(zip(gold, pred, strict=True)) if g and p]
    bad = [i for i in judged if gold[i] != pred[i]]
    items = []
    for i in bad[:cap]:
        r = records[i]
        key = response_key(r.id, r.system)
        items.append(
            {
                "id": str(r.id),
                "system": r.system,
                "human": gold[i],
                "judge": pred[i],
                "explanation": _cut(explanations.get(key)),
                "response": _cut(r.response),
            }
        )
    return {
        "judged": len(judged),
        "disagree": len(bad),
        "explained": sum(
            1 for i in bad if explanations.get(response_key(records[i].id, records[i].system))
        ),
        "listed": len(items),
        "items": items,
    }
