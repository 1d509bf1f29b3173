"""The Alternative Annotator Test (Calderon, Reichart & Dror, ACL 2025): may an LLM replace the
human annotators?

Leave one annotator h out. On each item h labelled, score the LLM's label and h's label against
the *remaining* annotators' labels with the same scoring function (accuracy for categories,
negative RMSE for ratings); the LLM "wins" the item when its score is at least h's, h wins when
h's is at least the LLM's (a tie counts for both). With ``d_i = 1[h wins] - 1[LLM wins]``, a
one-sided t-test of H0: mean(d) >= ε against H1: mean(d) < ε per annotator
(:func:`~metajudge.stats.t_test_less`), then the Benjamini–Yekutieli procedure at FDR q over the
annotators (:func:`~metajudge.stats.benjamini_yekutieli`). The **winning rate** ω is the share of
annotators whose H0 is rejected (the LLM "beats" them); the LLM passes when ω >= 0.5. The
**advantage probability** is the mean over annotators of the share of items the LLM wins.

Items are kept with at least ``min_annotators`` annotators and an LLM label; annotators are
kept with at least ``min_items`` kept items (the paper's 2 and 30). Everything left out is counted
in the result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from metajudge.data.alt_test_dir import AltLabel, AltTestData
from metajudge.errors import InputError
from metajudge.results import Result


def share_equal(pred: AltLabel, others: Sequence[AltLabel]) -> float:
    """Share of ``others`` equal to ``pred``."""
    return sum(1.0 for o in others if o == pred) / len(others)


def minus_rmse(pred: AltLabel, others: Sequence[AltLabel]) -> float:
    """Minus the root mean squared difference of ``pred`` from ``others``."""
    return -math.sqrt(sum((float(pred) - float(o)) ** 2 for o in others) / len(others))


def minus_mae(pred: AltLabel, others: Sequence[AltLabel]) -> float:
    """Minus the mean absolute difference of ``pred`` from ``others``."""
    return -sum(abs(float(pred) - float(o)) for o in others) / len(others)


SCORINGS: dict[str, Callable[[AltLabel, Sequence[AltLabel]], float]] = {
    "accuracy": share_equal,
    "neg_rmse": minus_rmse,
    "neg_mae": minus_mae,
}
NUMERIC_ONLY = ("neg_rmse", "neg_mae")

#: The paper's settings per dataset (alt_test_calderon2025/PROVENANCE.txt: the repository's
#: alt_test_example.ipynb): (scoring, ε); q = 0.05, items with >= 2 annotators, annotators with
#: >= 30 items.
PAPER_SETTINGS: dict[str, tuple[str, float]] = {
    "cebab_aspects": ("accuracy", 0.1),
    "framing": ("accuracy", 0.15),
    "lgbteen": ("accuracy", 0.2),
    "mtbench": ("accuracy", 0.2),
    "summeval": ("neg_rmse", 0.2),
    "cebab_stars": ("neg_rmse", 0.1),
}


@dataclass(frozen=True)
class AltTestSettings:
    """ε (the cost-benefit margin), q (FDR), the scoring function (None: from the label type)
    and the two filters."""

    epsilon: float = 0.2
    q: float = 0.05
    scoring: str | None = None
    min_annotators: int = 2
    min_items: int = 30


@dataclass
class AnnotatorRow:
    """One left-out annotator: items, the LLM's and the human's winning shares, the test."""

    annotator: str
    n_items: int
    llm_win_rate: float  # ρ_f: share of items the LLM wins (the advantage probability)
    human_win_rate: float  # ρ_h
    t: float
    p: float
    beaten: bool  # H0 rejected after Benjamini–Yekutieli: the LLM beats this annotator


@dataclass
class LLMAltTest:
    llm: str
    winning_rate: float
    advantage_probability: float
    passed: bool
    n_items: int  # kept items the LLM labelled
    annotators: list[AnnotatorRow]


@dataclass
class AltTestResult(Result):
    """The Alt-Test of every LLM of one annotation set (:func:`alt_test`)."""

    source: str
    label_type: str
    scoring: str
    epsilon: float
    q: float
    min_annotators: int
    min_items: int
    n_items: int  # items kept
    dropped: dict[str, Any]
    llms: list[LLMAltTest] = field(default_factory=list)

    def sentence(self) -> str:
        """The verdict in one sentence."""
        passed = [r.llm for r in self.llms if r.passed]
        best = max(self.llms, key=lambda r: (r.winning_rate, r.advantage_probability))
        where = f" on {self.source}" if self.source else ""
        head = (
            f"{len(passed)} of {len(self.llms)} LLMs pass the Alt-Test{where} "
            f"(winning rate >= 0.5; ε = {self.epsilon:g}, {self.scoring}, BY q = {self.q:g})"
        )
        names = f": {', '.join(passed)}" if passed else ""
        return (
            f"{head}{names}; the strongest is {best.llm} (winning rate "
            f"{best.winning_rate:.2f}, advantage probability {best.advantage_probability:.2f})."
        )


def _scoring(settings: AltTestSettings, label_type: str) -> str:
    name = settings.scoring or ("accuracy" if label_type == "categorical" else "neg_rmse")
    if name not in SCORINGS:
        raise InputError(
            f"unknown scoring {name!r} (known: {', '.join(SCORINGS)})", field="--scoring"
        )
    if name in NUMERIC_ONLY and label_type != "numeric":
        raise InputError(
            f"scoring {name} needs numeric labels; these are {label_type} (use accuracy)",
            field="--scoring",
        )
    return name


def _filtered(
    humans: Mapping[str, Mapping[str, AltLabel]],
    llm_items: set[str],
    settings: AltTestSettings,
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, Any]]:
    """``(items of each kept annotator, kept annotators of each kept item, what was dropped)``."""
    by_item: dict[str, list[str]] = {}
    for h, row in humans.items():
        for i in row:
            by_item.setdefault(i, []).append(h)
    kept = {i for i, hs in by_item.items() if len(hs) >= settings.min_annotators and i in llm_items}
    items_of = {h: [i for i in row if i in kept] for h, row in humans.items()}
    keep_h = [h for h in humans if len(items_of[h]) >= settings.min_items]
    dropped = {
        "items_without_llm_label": sum(1 for i in by_item if i not in llm_items),
        "llm_items_without_human_label": sum(1 for i in llm_items if i not in by_item),
        "items_below_min_annotators": sum(
            1 for i, hs in by_item.items() if i in llm_items and len(hs) < settings.min_annotators
        ),
        "annotators_below_min_items": [h for h in humans if h not in keep_h],
    }
    annotators_of = {i: [h for h in by_item[i] if h in keep_h] for i in sorted(kept)}
    return {h: items_of[h] for h in keep_h}, annotators_of, dropped


def _annotator(
    h: str,
    items: Sequence[str],
    annotators_of: Mapping[str, Sequence[str]],
    humans: Mapping[str, Mapping[str, AltLabel]],
    llm: Mapping[str, AltLabel],
    score: Callable[[AltLabel, Sequence[AltLabel]], float],
    epsilon: float,
) -> AnnotatorRow:
    """The leave-``h``-out comparison on ``h``'s items (items with no other annotator skipped)."""
    from metajudge.stats.significance import t_test_less

    llm_wins: list[int] = []
    human_wins: list[int] = []
    for i in items:
        others = [humans[g][i] for g in annotators_of[i] if g != h]
        if not others:
            continue
        s_h = score(humans[h][i], others)
        s_f = score(llm[i], others)
        llm_wins.append(int(s_f >= s_h))
        human_wins.append(int(s_h >= s_f))
    n = len(llm_wins)
    t, p = t_test_less([a - b for a, b in zip(human_wins, llm_wins)], epsilon)
    return AnnotatorRow(
        annotator=h,
        n_items=n,
        llm_win_rate=sum(llm_wins) / n if n else math.nan,
        human_win_rate=sum(human_wins) / n if n else math.nan,
        t=t,
        p=p,
        beaten=False,
    )


def alt_test_one(
    data: AltTestData, llm: str, settings: AltTestSettings
) -> tuple[LLMAltTest, int, dict[str, Any]]:
    """The Alt-Test of ``llm``: its result, the number of kept items and what was dropped."""
    from metajudge.stats.significance import benjamini_yekutieli

    labels = data.llms[llm]
    score = SCORINGS[_scoring(settings, data.label_type)]
    items_of, annotators_of, dropped = _filtered(data.humans, set(labels), settings)
    if not items_of:
        raise InputError(
            f"no annotator has {settings.min_items} items labelled by {llm!r} and at least "
            f"{settings.min_annotators} annotators (--min-items, --min-annotators)",
            field=llm,
        )
    rows = [
        _annotator(h, items, annotators_of, data.humans, labels, score, settings.epsilon)
        for h, items in items_of.items()
    ]
    rejected = benjamini_yekutieli([r.p for r in rows], settings.q)
    for r, rej in zip(rows, rejected):
        r.beaten = bool(rej)
    omega = sum(r.beaten for r in rows) / len(rows)
    rhos = [r.llm_win_rate for r in rows if math.isfinite(r.llm_win_rate)]
    res = LLMAltTest(
        llm=llm,
        winning_rate=omega,
        advantage_probability=sum(rhos) / len(rhos) if rhos else math.nan,
        passed=omega >= 0.5,
        n_items=len(annotators_of),
        annotators=rows,
    )
    return res, len(annotators_of), dropped


def alt_test(
    data: AltTestData,
    settings: AltTestSettings = AltTestSettings(),
    *,
    llms: Sequence[str] | None = None,
) -> AltTestResult:
    """The Alt-Test of each LLM of ``data`` (``llms``: only these, in this order)."""
    names = list(llms) if llms else data.llm_names()
    unknown = [n for n in names if n not in data.llms]
    if unknown:
        raise InputError(f"no LLM {unknown[0]!r} (the LLMs: {', '.join(data.llms)})", field="--llm")
    scoring = _scoring(settings, data.label_type)
    out = AltTestResult(
        source=data.source,
        label_type=data.label_type,
        scoring=scoring,
        epsilon=settings.epsilon,
        q=settings.q,
        min_annotators=settings.min_annotators,
        min_items=settings.min_items,
        n_items=0,
        dropped={"null_labels": data.n_null, "by_llm": {}},
    )
    for name in names:
        res, n_items, dropped = alt_test_one(data, name, settings)
        out.llms.append(res)
        out.n_items = max(out.n_items, n_items)
        out.dropped["by_llm"][name] = dropped
    return out


def settings_for(dataset: str | None, **given: Any) -> AltTestSettings:
    """:class:`AltTestSettings` from the paper's defaults for ``dataset`` (if it is one of the
    six) overridden by the ``given`` values that are not None."""
    base: dict[str, Any] = {}
    if dataset in PAPER_SETTINGS:
        base["scoring"], base["epsilon"] = PAPER_SETTINGS[dataset]
    base.update({k: v for k, v in given.items() if v is not None})
    return AltTestSettings(**base)
