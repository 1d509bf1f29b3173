"""``calibrate conformal`` on categorical and pairwise verdicts: split-conformal prediction sets
from a judge's class probabilities, and how they hold on held-out units.

A judge's column gives, per unit, a probability for each class
(:func:`metajudge.analyses.selective.class_probabilities`: pairwise data p(a better) / p(b
better) on sides a / b, categorical data ``details.probs``); the human class is the majority of
the annotators (pairwise: the sign of the mean label, a tie of humans the class ``tie``). The
classes are the judge's; a human class the judge gives no probability (a human tie before a
2-way judge) has probability 0 there, and is counted in the notes.

Methods (:func:`metajudge.stats.calibration.set_scores`), ``alpha`` the miscoverage:

- ``lac``: score 1 - p(true class); the set holds every class with 1 - p <= q (may be empty);
- ``aps``: adaptive prediction sets, randomised (Romano, Sesia & Candès 2020): score = the
  mass of the classes more probable than the true one plus U times its own, U uniform(0, 1)
  drawn per unit from ``numpy.random.default_rng([seed, split, 2])`` (calibration units) and
  ``[seed, split, 3]`` (test units); the set holds every class whose score is at most q (may
  be empty). The non-randomised score (U = 1) puts a judge's wrong top class at score 1, so
  with two classes and more than alpha wrong verdicts every set would hold both classes.

q is the split-conformal quantile of the calibration units' scores
(:func:`metajudge.stats.calibration.conformal_quantile`); coverage (share of test units whose
human class is in the set) and mean set size over ``repeats`` seeded calibration/test splits
(:func:`metajudge.analyses.calibration.table.splits`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.analyses.calibration.table import FArr, IArr, check_alpha, splits
from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats.calibration import (
    SET_METHODS,
    aps_mass_above,
    conformal_quantile,
    prediction_sets,
    true_class_scores,
)


@dataclass(frozen=True)
class VerdictTable:
    """One judge's class probabilities beside the human class, unit by unit."""

    probs: FArr  # n x K
    human: IArr  # index into classes
    classes: tuple[str, ...]
    ids: np.ndarray  # the units' ids (an object array: a split takes them without a loop)
    judge: str
    signature: str
    source: str
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.human)

    def take(self, idx: IArr) -> VerdictTable:
        i = np.asarray(idx, dtype=int)
        return VerdictTable(
            self.probs[i],
            self.human[i],
            self.classes,
            self.ids[i],
            self.judge,
            self.signature,
            self.source,
            self.notes,
        )


def is_verdict_dataset(card: Any) -> bool:
    """A pairwise dataset or one with categorical / binary labels: sets, not intervals."""
    return card.kind == "pairwise" or card.label_kind in ("categorical", "binary")


def verdict_table(
    dataset: Any,
    rows: Sequence[Mapping[str, Any]],
    *,
    dimension: str | None = None,
    class_reading: Any = None,
) -> VerdictTable:
    """The units with a human class and the judge's class probabilities, in record order, from
    score ``rows`` of ONE judge column (what is left out is counted in ``notes``);
    ``class_reading``: those already read from ``rows``
    (:func:`~metajudge.analyses.selective.read_classes`), not read again."""
    from metajudge.analyses.selective import ClassReading, read_classes
    from metajudge.scores.readers.rows import row_metrics

    card = dataset.card
    metrics = sorted(set(map(str, row_metrics(rows))))
    if len(metrics) != 1:
        raise InputError(
            f"give exactly one judge column (got {', '.join(metrics) or 'none'}); pick one with "
            "--scores shipped:COLUMN or FILE:COLUMN",
            field="--scores",
        )
    dim = dimension or card.dimensions[0]
    if dim not in card.dimensions:
        raise InputError(
            f"unknown dimension {dim!r} (known: {', '.join(card.dimensions)})", field="--dimension"
        )
    read: ClassReading | None = class_reading
    if read is None or read.judge != metrics[0] or read.dimension != dim:
        read = read_classes(dataset, rows, metrics[0], dim)
    got = read.probs
    classes = sorted({c for p in got.values() for c in p})
    units, humans, no_label, no_verdict = [], [], 0, 0
    for unit, h in read.units:
        if h is None:
            no_label += 1
        elif unit not in got:
            no_verdict += 1
        else:
            units.append(unit)
            humans.append(h)
    classes += sorted({h for h in humans} - set(classes))
    return _table(got, units, humans, classes, metrics[0], rows, card.name, (no_label, no_verdict))


def _table(
    got: Mapping[str, Mapping[str, float]],
    units: list[str],
    humans: list[str],
    classes: list[str],
    judge: str,
    rows: Sequence[Mapping[str, Any]],
    source: str,
    left: tuple[int, int],
) -> VerdictTable:
    if len(units) < 4:
        raise InputError(
            f"only {len(units)} units have both a human label and the judge's probabilities",
            field="--scores",
        )
    col = {c: k for k, c in enumerate(classes)}
    probs = np.zeros((len(units), len(classes)))
    for n, u in enumerate(units):
        for c, p in got[u].items():
            probs[n, col[c]] = p
    notes = [f"{len(units)} units with a human label and the judge's class probabilities"]
    if left[0]:
        notes.append(f"{left[0]} units without a human label left out")
    if left[1]:
        notes.append(f"{left[1]} units without the judge's probabilities left out")
    unseen = sum(h not in got[u] for u, h in zip(units, humans, strict=True))
    if unseen:
        notes.append(
            f"{unseen} units whose human class the judge gives no probability (counted with "
            "probability 0: only a set of every class covers them)"
        )
    return VerdictTable(
        probs=probs,
        human=np.array([col[h] for h in humans], dtype=int),
        classes=tuple(classes),
        ids=np.array(units, dtype=object),
        judge=judge,
        signature=str(rows[0].get("signature") or judge),
        source=source,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class SplitRows:
    """One calibration/test split of a :class:`VerdictTable`, read once for every method: the
    calibration units' probability of their human class (``cal_true``) and, for aps, the mass
    ranked above it (``cal_above``); the test units' probabilities, (aps) the mass ranked above
    each class, and human classes."""

    cal_true: FArr
    cal_above: FArr | None
    test_probs: FArr
    test_above: FArr | None
    test_human: IArr

    @classmethod
    def reader(cls, table: VerdictTable, aps: bool) -> Callable[[IArr, IArr], SplitRows]:
        """``(cal_i, test_i) -> SplitRows`` of ``table``, what each unit gives computed once for
        every split (``aps``: the mass ranked above each class too)."""
        rows = np.arange(len(table))
        above = aps_mass_above(table.probs) if aps else None  # row by row: once
        p_true = table.probs[rows, table.human]
        a_true = None if above is None else above[rows, table.human]

        def split(cal_i: IArr, test_i: IArr) -> SplitRows:
            return cls(
                p_true[cal_i],
                None if a_true is None else a_true[cal_i],
                table.probs[test_i],
                None if above is None else above[test_i],
                table.human[test_i],
            )

        return split


def sets_for(method: str, rows: SplitRows, alpha: float, draws: tuple[int, int]) -> Any:
    """The prediction sets (n_test x K boolean) ``method`` gives the test units of ``rows``,
    calibrated on its calibration units, and the conformal quantile; ``draws``: (seed, split)
    of aps' uniforms (module docstring)."""
    u_cal = u_test = None
    if method == "aps":
        u_cal = np.random.default_rng([*draws, 2]).uniform(size=len(rows.cal_true))
        u_test = np.random.default_rng([*draws, 3]).uniform(size=len(rows.test_human))
    q = conformal_quantile(true_class_scores(method, rows.cal_true, rows.cal_above, u_cal), alpha)
    return prediction_sets(method, rows.test_probs, q, u_test, above=rows.test_above), q


@dataclass
class SetResult(Result):
    """Per method: mean coverage, mean set size (and their sd), the shares of empty, singleton
    and full sets, the mean conformal quantile, over the repeats; ``items``: each test unit's
    set of the first split (when asked for)."""

    judge: str
    signature: str
    source: str
    n: int
    classes: list[str]
    options: dict[str, Any]
    protocol: dict[str, Any]
    methods: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    kind: str = "prediction sets"
    items: list[dict[str, Any]] = field(default_factory=list, repr=False)


def _summary(method: str, runs: Sequence[dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {"method": method}
    for k in ("coverage", "size"):
        vals = [r[k] for r in runs]
        out[k], out[f"{k}_sd"] = float(np.mean(vals)), float(np.std(vals))
    for k in ("empty", "singleton", "full", "q"):
        out[k] = float(np.mean([r[k] for r in runs]))
    out["q_inf"] = int(sum(r["q_inf"] for r in runs))
    return out


def set_coverage(sets: Any, human: IArr, q: float) -> dict[str, float]:
    size = sets[:, 0].astype(np.int64)  # column by column: a row sum over few classes is slow
    for k in range(1, sets.shape[1]):
        size += sets[:, k]
    return {
        "coverage": float(sets[np.arange(len(human)), human].mean()),
        "size": float(size.mean()),
        "empty": float((size == 0).mean()),
        "singleton": float((size == 1).mean()),
        "full": float((size == sets.shape[1]).mean()),
        "q": float(min(q, 1.0)),  # inf (too few calibration units): counted in q_inf
        "q_inf": float(np.isinf(q)),
    }


def calibrate_sets(
    table: VerdictTable,
    methods: Sequence[str] = SET_METHODS,
    *,
    alpha: float = 0.1,
    seed: int = 0,
    repeats: int = 50,
    fraction: float = 0.5,
    keep_items: bool = False,
) -> SetResult:
    """Coverage and mean set size of each method over ``repeats`` seeded splits (``fraction``
    of the units calibrate); ``keep_items``: each test unit's set of the first split."""
    check_alpha(alpha)
    for m in methods:
        if m not in SET_METHODS:
            raise InputError(
                f"method {m!r} gives no prediction sets (for verdicts: {', '.join(SET_METHODS)})",
                field="--method",
            )
    runs: dict[str, list[dict[str, float]]] = {m: [] for m in methods}
    items: list[dict[str, Any]] = []
    read = SplitRows.reader(table, "aps" in methods)
    for r, (cal_i, test_i) in enumerate(
        splits(len(table), seed=seed, repeats=repeats, fraction=fraction)
    ):
        rows = read(cal_i, test_i)
        for m in methods:
            sets, q = sets_for(m, rows, alpha, (seed, r))
            runs[m].append(set_coverage(sets, rows.test_human, q))
            if keep_items and r == 0:
                items += _items(table.take(test_i), m, sets)
    return SetResult(
        judge=table.judge,
        signature=table.signature,
        source=table.source,
        n=len(table),
        classes=list(table.classes),
        options={"alpha": alpha},
        protocol={"repeats": repeats, "fraction": fraction, "seed": seed},
        methods=[_summary(m, runs[m]) for m in methods],
        notes=list(table.notes),
        items=items,
    )


def _items(test: VerdictTable, method: str, sets: Any) -> list[dict[str, Any]]:
    """Each test unit's set: id, the judge's top class and its probability, the set (classes
    joined by ``|``), its size, the human class, covered."""
    cls = test.classes
    out = []
    for i in range(len(test)):
        top = int(np.argmax(test.probs[i]))
        out.append(
            {
                "id": test.ids[i],
                "method": method,
                "judge": cls[top],
                "p_judge": float(test.probs[i, top]),
                "set": "|".join(c for c, s in zip(cls, sets[i], strict=True) if s),
                "size": int(sets[i].sum()),
                "human": cls[int(test.human[i])],
                "covered": bool(sets[i, test.human[i]]),
            }
        )
    return out
