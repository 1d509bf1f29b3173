"""Selective judging with a human-agreement guarantee, for one judge or a cascade (Jung, Brahman
& Choi, "Trust or Escalate", ICLR 2025).

A judge keeps a verdict when its confidence — the largest of its class probabilities — is at
least a threshold chosen on a calibration split by fixed-sequence testing with the exact binomial
bound (:func:`metajudge.stats.selective.fixed_sequence_threshold`), so that its agreement with
humans on kept items is ≥ 1 − α with probability ≥ 1 − δ. A cascade (cheapest judge first)
calibrates each judge in turn on the calibration items the judges before it left (the paper's
``CascadedClassifier.calibrate``); at test time an item goes to the judges in order and stops at
the first that keeps it; an item no judge keeps is escalated to humans (abstained).

Cost: each call of a judge costs its ``cost`` (default 1 per call: then the costs count calls);
a cascade's cost per item is the sum over the judges it reached. The reference is every item
sent to the strongest judge (the last of the cascade).

:func:`judge_columns` turns a dataset and score rows into the arrays; :func:`selective_judging`
runs ``repeats`` seeded calibration/test splits and reports, for each judge alone and for the
cascade, the mean threshold(s), coverage, agreement on kept test items, the raw agreement (every
test item, no abstention), the share of splits (that kept any) whose agreement on their finite
test set reached 1 − α — realised, with the test set's sampling noise, so not the guarantee's
probability — and the cost per 1,000 items. The guarantee's own quantity is shown beside: with
the dataset as the population, ``repeats`` calibration sets drawn i.i.d. from every unit, the
share whose thresholds give agreement below 1 − α on the units they keep (promised <= δ).
Calibration sets too small to keep anything (:func:`smallest_calibration`) are said so.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from metajudge.data.probabilities import SUM_TOL, check_probabilities
from metajudge.errors import InputError
from metajudge.limits import check_allocation
from metajudge.results import Result
from metajudge.stats.decisions import spell, to_pref
from metajudge.stats.intervals import percentile_ci
from metajudge.stats.selective import ThresholdTest, sorted_threshold

MIN_N = 30  # calibration items at or above a candidate threshold (the paper's code)
GRID_POINTS = 5000  # the paper's candidate thresholds: linspace(0, 1, 5000)
#: candidate thresholds: the paper's grid, or every distinct calibration confidence
THRESHOLDS = ("grid", "distinct")


@dataclass(frozen=True)
class JudgeColumn:
    """One judge's verdict (``pred``: a class per item) and confidence (its max probability)."""

    name: str
    pred: tuple[str, ...]
    conf: tuple[float, ...]
    cost: float = 1.0


def check_level(value: float, name: str) -> float:
    """``value`` strictly inside (0, 1), else an InputError naming ``name``."""
    v = float(value)
    if not (math.isfinite(v) and 0.0 < v < 1.0):
        raise InputError(f"must be strictly between 0 and 1, got {value!r}", field=name)
    return v


def _check_sum(probs: Sequence[float], judge: str, item: str, field: str = "score") -> None:
    check_probabilities(probs, field=field, where=f"judge {judge!r}, item {item!r}: ")


def _pairwise_probs(rows: Sequence[Mapping[str, Any]], judge: str) -> dict[str, dict[str, float]]:
    """``{item: {"a": p, "b": p}}`` from side a / b probabilities (summing to 1)."""
    from metajudge.scores.readers.rows import metric_scores

    sides: dict[str, dict[str, float]] = {}
    for item, side, score in metric_scores(rows, judge):
        if score is not None and side in ("a", "b"):
            sides.setdefault(str(item), {})[side] = float(score)
    out = {item: {"a": s["a"], "b": s["b"]} for item, s in sides.items() if len(s) == 2}
    a = np.fromiter((s["a"] for s in out.values()), dtype=float, count=len(out))
    b = np.fromiter((s["b"] for s in out.values()), dtype=float, count=len(out))
    total = a + b  # two floats: their fsum
    fine = (a >= 0) & (a <= 1) & (b >= 0) & (b <= 1)  # (NaN fails, an infinity too)
    if not (fine & (total >= 1.0 - SUM_TOL) & (total <= 1.0 + SUM_TOL)).all():
        for item, s in out.items():  # the first item at fault, as the check names it
            _check_sum((s["a"], s["b"]), judge, item)
    return out


def _categorical_probs(
    rows: Sequence[Mapping[str, Any]], judge: str, labels: Sequence[str] | None = None
) -> dict[str, dict[str, float]]:
    """``{response key: {label: probability}}`` from ``details.probs``; on a binary scale
    (``labels``: two) the keys ``0`` / ``1`` of a binary verdict (answer equivalence) are its
    first / second label."""
    binary = {"0": labels[0], "1": labels[1]} if labels and len(labels) == 2 else {}
    binary = {k: v for k, v in binary.items() if k not in (labels or ())}  # a label stays
    out = {}
    for r in rows:
        if r["metric"] != judge:
            continue
        probs = (r.get("details") or {}).get("probs")
        if not isinstance(probs, Mapping) or not probs:
            raise InputError(
                f"judge {judge!r}, item {r['item']!r}: a categorical judge needs its class "
                "probabilities in details.probs ({label: probability})",
                field="details.probs",
            )
        vals = [float(v) for v in probs.values()]
        _check_sum(vals, judge, str(r["key"]), field="details.probs")
        named = {binary.get(str(k), str(k)): float(v) for k, v in probs.items()}
        out[str(r["key"])] = named
    return out


def class_probabilities(
    rows: Sequence[Mapping[str, Any]],
    judge: str,
    *,
    pairwise: bool,
    labels: Sequence[str] | None = None,
) -> dict[str, dict[str, float]]:
    """THE reading of a judge's class probabilities: ``{unit: {class: probability}}``.

    Pairwise data (unit: the pair's item): side a / side b scores = p(a better) / p(b better),
    classes ``a`` and ``b``; categorical data (unit: the response key): ``details.probs`` =
    ``{label: probability}``. Probabilities must sum to 1 (± 1e-6), else exit 2 naming the
    field (``score`` / ``details.probs``). ``labels``: the dataset's labels (a binary verdict's
    ``0`` / ``1`` are read as the first / second of two)."""
    return _pairwise_probs(rows, judge) if pairwise else _categorical_probs(rows, judge, labels)


def renormalised_note(rows: Sequence[Mapping[str, Any]], judge: str, units: set[str]) -> str:
    """How many of ``units`` had their released probabilities renormalised (they summed to less
    than 1: ``details.renormalised``, ``details.raw_probs``), with the lowest raw sum; ""
    when none."""
    from metajudge.scores.readers.rows import detailed_rows

    raw = {
        str(r["item"]): math.fsum(r["details"]["raw_probs"])
        for r in detailed_rows(rows)
        if r["metric"] == judge
        and str(r["item"]) in units
        and (r.get("details") or {}).get("renormalised")
        and "raw_probs" in r["details"]
    }
    if not raw:
        return ""
    return (
        f"{judge}: {len(raw)} of {len(units)} units' probabilities summed to less than 1 "
        f"(lowest {min(raw.values()):.6g}; the released format's rest of the mass went to other "
        "tokens) and were renormalised to sum to 1"
    )


def _top(probs: Mapping[str, float]) -> tuple[str, float]:
    """The likeliest class and its probability (a tie: the first class, as given)."""
    label = max(probs, key=lambda k: probs[k])
    return label, probs[label]


def human_class(record: Any, dimension: str, pairwise: bool) -> str | None:
    """The majority human class of a record (pairwise: sign of the mean → a / tie / b)."""
    labels = record.labels if pairwise else record.scores
    vals = [v for v in labels.get(dimension, ()) if v is not None]
    if not vals:
        return None
    if pairwise:  # one label (an Arena battle's) is its own mean
        m = float(vals[0]) if len(vals) == 1 else float(np.mean([float(v) for v in vals]))
        return _side_class(m)
    return str(Counter(str(v) for v in vals).most_common(1)[0][0])


@functools.lru_cache(maxsize=1024)
def _side_class(mean: float) -> str | None:
    """The pairwise class (a / tie / b) of a mean label, by its sign (a few distinct means: kept)."""
    return spell(to_pref(mean), "side")


def unit_classes(dataset: Any, dim: str) -> tuple[tuple[str, str | None], ...]:
    """Each record's unit (a pair's item; a response's ``item::system``) and its majority human
    class on ``dim`` (None: no human label), in record order."""
    pairwise = dataset.card.kind == "pairwise"
    return tuple(
        (rec.id if pairwise else f"{rec.id}::{rec.system}", human_class(rec, dim, pairwise))
        for rec in dataset.records
    )


@dataclass(frozen=True)
class ClassReading:
    """What selective judging and prediction sets read of a dataset and ONE judge column, read
    once for both (:func:`read_classes`): the judge's class probabilities by unit
    (:func:`class_probabilities`) and :func:`unit_classes` on ``dimension``."""

    judge: str
    dimension: str
    probs: Mapping[str, Mapping[str, float]]
    units: tuple[tuple[str, str | None], ...]


def read_classes(
    dataset: Any, rows: Sequence[Mapping[str, Any]], judge: str, dim: str
) -> ClassReading:
    """The :class:`ClassReading` of ``judge``'s column of ``rows`` on ``dataset``'s ``dim``."""
    card = dataset.card
    pairwise = card.kind == "pairwise"
    probs = class_probabilities(rows, judge, pairwise=pairwise, labels=card.scale.labels)
    return ClassReading(judge, dim, probs, unit_classes(dataset, dim))


def _units(dataset: Any, dim: str, read: ClassReading | None) -> tuple[tuple[str, str | None], ...]:
    """:func:`unit_classes`, those of ``read`` where it read them on ``dim``."""
    if read is not None and read.dimension == dim:
        return read.units
    return unit_classes(dataset, dim)


@dataclass(frozen=True)
class SelectiveData:
    """Human classes and the judges' columns on the same units (pairs, or responses)."""

    units: tuple[str, ...]
    human: tuple[str, ...]
    judges: tuple[JudgeColumn, ...]
    notes: tuple[str, ...] = ()


def judge_columns(
    dataset: Any,
    rows: Sequence[Mapping[str, Any]],
    judges: Sequence[str],
    *,
    costs: Mapping[str, float] | None = None,
    dimension: str | None = None,
    class_reading: ClassReading | None = None,
) -> SelectiveData:
    """The units every judge gave a verdict on and that have a human label, in record order.

    Pairwise data: a judge column holds p(a better) on side a and p(b better) on side b, summing
    to 1 (± 1e-6); the verdict is the likelier side, the confidence its probability; the human
    class is the sign of the mean label (a tie of humans is a class no 2-way judge can match).
    Categorical data: a judge row gives ``details.probs`` ({label: probability}). Units left
    out (no human label, a judge without a verdict) are counted in ``notes``. ``class_reading``: a
    judge's class probabilities and the units' human classes already read from ``rows``
    (:func:`read_classes`), not read again.
    """
    card = dataset.card
    pairwise = card.kind == "pairwise"
    if not pairwise and card.label_kind not in ("categorical", "binary"):
        raise InputError(
            f"selective judging needs a pairwise or categorical dataset; {card.name!r} is "
            f"{card.kind} with {card.label_kind} labels",
            field="dataset",
        )
    dim = dimension or card.dimensions[0]
    if dim not in card.dimensions:
        raise InputError(
            f"no dimension {dim!r} (have {', '.join(card.dimensions)})", field="dimension"
        )
    from metajudge.scores.readers.rows import row_metrics

    have = set(row_metrics(rows))  # a score table's from its columns (no row dict built)
    verdicts = {}
    for j in judges:
        if j not in have:
            raise InputError(
                f"no score column {j!r} (have {', '.join(sorted(have))})", field="judge"
            )
        read = class_reading
        got = read.probs if read is not None and read.judge == j else None
        if got is None:
            got = class_probabilities(rows, j, pairwise=pairwise, labels=card.scale.labels)
        verdicts[j] = {u: _top(p) for u, p in got.items()}
    units, human = [], []
    no_label = no_verdict = 0
    for unit, h in _units(dataset, dim, class_reading):
        if h is None:
            no_label += 1
        elif not all(unit in verdicts[j] for j in judges):
            no_verdict += 1
        else:
            units.append(unit)
            human.append(h)
    cols = tuple(
        JudgeColumn(
            j,
            tuple(verdicts[j][u][0] for u in units),
            tuple(verdicts[j][u][1] for u in units),
            float((costs or {}).get(j, 1.0)),
        )
        for j in judges
    )
    notes = [f"{len(units)} units with a human label and a verdict of every judge"]
    notes += [n for j in judges if (n := renormalised_note(rows, j, set(units)))]
    if no_label:
        notes.append(f"{no_label} units without a human label left out")
    if no_verdict:
        notes.append(f"{no_verdict} units without a verdict of every judge left out")
    ties = sum(h == "tie" for h in human)
    if ties:
        notes.append(f"{ties} human ties kept: a 2-way judge disagrees with them")
    return SelectiveData(tuple(units), tuple(human), cols, tuple(notes))


@dataclass(frozen=True)
class SplitOutcome:
    """One configuration on one calibration/test split."""

    thresholds: tuple[float | None, ...]
    coverage: float
    n_kept: int
    agreement: float | None  # on kept test items; None when nothing was kept
    raw_agreement: float  # the last judge on every test item
    share_by_judge: tuple[float, ...]  # share of test items kept by each judge
    cost_per_item: float


@dataclass(frozen=True)
class Ranked:
    """A judge's column on every unit, ranked once for every split: ``right`` (its verdict is
    the human class), ``conf`` and ``order`` (the units by descending confidence); in that
    order, ``wrong_desc`` (not right) and ``conf_desc``."""

    right: np.ndarray
    conf: np.ndarray
    order: np.ndarray
    wrong_desc: np.ndarray
    conf_desc: np.ndarray

    @classmethod
    def of(cls, human: np.ndarray, judge: JudgeColumn) -> Ranked:
        conf = np.asarray(judge.conf, dtype=float)
        right = np.asarray(judge.pred) == np.asarray(human)
        order = np.argsort(-conf, kind="stable")
        return cls(right, conf, order, ~right[order], conf[order])

    def test(
        self, idx: np.ndarray, alpha: float, delta: float, min_n: int, grid: int | None
    ) -> ThresholdTest:
        """The fixed-sequence test of the units ``idx`` (a unit drawn k times counts k times),
        in descending confidence without a sort of their own
        (:func:`~metajudge.stats.selective.sorted_threshold`)."""
        times = np.bincount(idx, minlength=len(self.conf))[self.order]
        wrong, conf = (np.repeat(a, times) for a in (self.wrong_desc, self.conf_desc))
        return sorted_threshold(wrong, conf, alpha, delta, min_n=min_n, grid=grid)


def _ranked(human: np.ndarray, judges: Sequence[Any]) -> list[Ranked]:
    return [j if isinstance(j, Ranked) else Ranked.of(human, j) for j in judges]


def calibrate_cascade(
    human: np.ndarray,
    judges: Sequence[JudgeColumn | Ranked],
    idx: np.ndarray,
    alpha: float,
    delta: float,
    min_n: int = MIN_N,
    grid: int | None = GRID_POINTS,
) -> tuple[float | None, ...]:
    """Each judge's threshold, calibrated in order on the items the judges before it left
    (``judges``: their columns, or :class:`Ranked` once for every split)."""
    left = idx
    out: list[float | None] = []
    for r in _ranked(human, judges):
        t = r.test(left, alpha, delta, min_n, grid).threshold
        out.append(t)
        if t is not None:
            left = left[r.conf[left] < t]
    return tuple(out)


def apply_cascade(
    human: np.ndarray,
    judges: Sequence[JudgeColumn],
    idx: np.ndarray,
    thresholds: Sequence[float | None],
    ranked: Sequence[Ranked] | None = None,
) -> SplitOutcome:
    """The cascade with ``thresholds`` on the test items ``idx`` (``ranked``: the judges'
    :class:`Ranked` columns, made once for every split)."""
    n = len(idx)
    taken = np.full(n, -1)
    cost = np.zeros(n)
    ranked = _ranked(human, ranked or judges)
    for k, (j, r, t) in enumerate(zip(judges, ranked, thresholds, strict=True)):
        open_ = taken < 0
        cost[open_] += j.cost
        if t is not None:
            taken[open_ & (r.conf[idx] >= t)] = k
    right = np.stack([r.right[idx] for r in ranked])
    kept = taken >= 0
    agree = right[taken[kept], np.flatnonzero(kept)]
    return SplitOutcome(
        thresholds=tuple(thresholds),
        coverage=float(kept.mean()) if n else 0.0,
        n_kept=int(kept.sum()),
        agreement=float(agree.mean()) if kept.any() else None,
        raw_agreement=float(right[-1].mean()),
        share_by_judge=tuple(float((taken == k).mean()) for k in range(len(judges))),
        cost_per_item=float(cost.mean()),
    )


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return float(np.mean(vals)) if vals else None


@dataclass(frozen=True)
class ConfigSummary:
    """One configuration (a judge alone, or the cascade) over every split."""

    name: str
    judges: tuple[str, ...]
    costs: tuple[float, ...]
    threshold_mean: tuple[float | None, ...]  # per judge, over the splits where it keeps items
    splits_without_threshold: tuple[int, ...]  # per judge: splits where its test rejected none
    coverage_mean: float
    agreement_mean: float | None  # on kept test items, over splits that kept any
    raw_agreement_mean: float  # the strongest judge of the configuration, every test item
    # realised, NOT the guarantee: the share of the splits that kept any test item whose
    # agreement on their finite test set reached 1 - alpha (test-set sampling noise included)
    reached_share: float | None
    splits_empty: int  # splits where no test item was kept
    share_by_judge_mean: tuple[float, ...]
    cost_per_1000: float
    reference_cost_per_1000: float  # every item to the strongest judge of the run
    splits: tuple[SplitOutcome, ...] = field(repr=False, default=())
    # the guarantee's own quantity, the dataset standing in for the population: calibration sets
    # drawn i.i.d. (with replacement) from every unit, the thresholds applied to every unit; the
    # share of draws whose agreement on the units kept falls below 1 - alpha (<= delta promised)
    population_violation_share: float | None = None
    population_draws_kept: int = 0  # draws whose thresholds keep any unit
    # the share kept over the splits: its median and (25th, 75th) percentiles (a split keeping
    # nothing counts with 0)
    coverage_median: float | None = None
    coverage_quartiles: tuple[float, float] | None = None


def _summarise(
    name: str,
    judges: Sequence[JudgeColumn],
    outs: Sequence[SplitOutcome],
    alpha: float,
    reference_cost: float,
    population: Sequence[float | None] = (),
) -> ConfigSummary:
    kept = [o for o in outs if o.agreement is not None]
    pop = [a for a in population if a is not None]
    k = len(judges)
    cov = np.array([o.coverage for o in outs], dtype=float)
    return ConfigSummary(
        name=name,
        judges=tuple(j.name for j in judges),
        costs=tuple(j.cost for j in judges),
        threshold_mean=tuple(_mean([o.thresholds[i] for o in outs]) for i in range(k)),
        splits_without_threshold=tuple(
            sum(o.thresholds[i] is None for o in outs) for i in range(k)
        ),
        coverage_mean=float(np.mean(cov)),
        agreement_mean=_mean([o.agreement for o in kept]),
        raw_agreement_mean=float(np.mean([o.raw_agreement for o in outs])),
        # a tolerance for 0.85 computed as 1 - 0.15 in floating point
        reached_share=(
            float(np.mean([o.agreement >= 1 - alpha - 1e-12 for o in kept])) if kept else None
        ),
        splits_empty=len(outs) - len(kept),
        share_by_judge_mean=tuple(
            float(np.mean([o.share_by_judge[i] for o in outs])) for i in range(k)
        ),
        cost_per_1000=1000.0 * float(np.mean([o.cost_per_item for o in outs])),
        reference_cost_per_1000=1000.0 * reference_cost,
        splits=tuple(outs),
        population_violation_share=(
            float(np.mean([a is not None and a < 1 - alpha - 1e-12 for a in population]))
            if population
            else None
        ),
        population_draws_kept=len(pop),
        coverage_median=float(np.median(cov)) if len(cov) else None,
        coverage_quartiles=percentile_ci(np.asarray(cov), 0.5) if len(cov) else None,
    )


CURVE_POINTS = tuple(round(0.05 * k, 2) for k in range(1, 21))  # coverage 5%, 10%, ..., 100%


def coverage_curve(
    human: Sequence[str], judge: JudgeColumn, points: Sequence[float] = CURVE_POINTS
) -> tuple[tuple[float, float, float], ...]:
    """``(coverage, agreement, confidence)`` of the judge's most confident share of all units
    at each coverage in ``points``: the agreement a threshold at that confidence would give
    (no split; ties in confidence broken by unit order)."""
    conf = np.asarray(judge.conf)
    ok = np.asarray(judge.pred) == np.asarray(human)
    order = np.argsort(-conf, kind="stable")
    cum = np.cumsum(ok[order])
    n = len(conf)
    out = []
    for c in points:
        k = max(1, round(c * n))
        out.append((float(c), float(cum[k - 1] / k), float(conf[order][k - 1])))
    return tuple(out)


@dataclass(frozen=True)
class SelectiveResult(Result):
    """Selective judging over ``repeats`` seeded calibration/test splits (module docstring)."""

    alpha: float
    delta: float
    repeats: int
    seed: int
    n_units: int
    n_calibration: int
    n_test: int
    min_n: int
    thresholds: str  # the candidates: "grid" (linspace(0, 1, 5000)) or "distinct"
    confidence: str
    configs: tuple[ConfigSummary, ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    # per judge: (coverage, agreement, confidence) of its most confident units, all units
    curves: Mapping[str, tuple[tuple[float, float, float], ...]] = field(default_factory=dict)

    def to_dict(self, *, splits: bool = True) -> dict[str, Any]:
        from dataclasses import asdict

        d = asdict(self)
        if not splits:
            for c in d["configs"]:
                c.pop("splits")
        return d


def _splits(n: int, n_cal: int, repeats: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``repeats`` seeded calibration/test splits (any mix of human classes: the binomial bound
    counts agreements, whatever the classes), drawn one at a time: the same splits on every
    call, none held beside the next (a split of a million units is 8 MB of indices)."""
    from metajudge.stats.bootstrap import halves

    rng = np.random.default_rng(seed)
    for _ in range(repeats):
        yield halves(rng.permutation(n), n_cal)


def _population_draws(n: int, n_cal: int, repeats: int, seed: int) -> Iterator[np.ndarray]:
    """``repeats`` seeded i.i.d. calibration draws (with replacement) of ``n_cal`` of ``n``
    units: the guarantee's setting with the dataset as the population (drawn one at a time,
    as :func:`_splits`)."""
    rng = np.random.default_rng([seed, 1])
    for _ in range(repeats):
        yield rng.integers(0, n, n_cal)


def smallest_calibration(alpha: float, delta: float, min_n: int = MIN_N) -> int:
    """The fewest calibration items with which a judge can keep anything: ``min_n`` items at or
    above a threshold, and enough that even 0 disagreements give an exact upper bound <= alpha
    (1 - delta ** (1 / n) <= alpha, i.e. n >= ln delta / ln(1 - alpha)).

    >>> smallest_calibration(0.15, 0.1), smallest_calibration(0.01, 0.1)
    (30, 230)
    """
    return max(min_n, math.ceil(math.log(delta) / math.log1p(-alpha) - 1e-9))


def hopeless_warning(n_cal: int, alpha: float, delta: float, min_n: int = MIN_N) -> str | None:
    """The warning when ``n_cal`` calibration items can never keep anything (None otherwise)."""
    need = smallest_calibration(alpha, delta, min_n)
    if n_cal >= need:
        return None
    why = (
        f"a threshold needs at least {min_n} calibration items at or above it"
        if need == min_n
        else f"even with 0 disagreements the exact bound at delta {delta:g} reaches alpha "
        f"{alpha:g} only from {need} items"
    )
    return (
        f"{n_cal} calibration items can never pass: {why}, so every split keeps nothing "
        f"(give --calibration {need} or more)"
    )


def selective_judging(
    data: SelectiveData,
    *,
    alpha: float,
    delta: float,
    repeats: int = 1,
    n_calibration: int | None = None,
    seed: int = 0,
    min_n: int = MIN_N,
    thresholds: str = "grid",
) -> SelectiveResult:
    """Each judge alone and (with several judges, in the given order: cheapest first) the cascade,
    over ``repeats`` seeded splits of ``n_calibration`` calibration items (default: half) and the
    rest as test items. ``thresholds``: the candidates, the paper's 5,000-point grid or every
    distinct calibration confidence (:func:`~metajudge.stats.selective.fixed_sequence_threshold`)."""
    if thresholds not in THRESHOLDS:
        raise InputError(
            f"expected one of {', '.join(THRESHOLDS)}, got {thresholds!r}", field="thresholds"
        )
    grid = GRID_POINTS if thresholds == "grid" else None
    alpha = check_level(alpha, "alpha")
    delta = check_level(delta, "delta")
    n = len(data.units)
    if repeats < 1:
        raise InputError(f"must be at least 1, got {repeats}", field="repeats")
    n_cal = n // 2 if n_calibration is None else int(n_calibration)
    if not 0 < n_cal < n:
        raise InputError(
            f"must be between 1 and {n - 1} ({n} units), got {n_cal}", field="calibration"
        )
    human = np.asarray(data.human)
    check_allocation(repeats, n, field="--repeats")  # before a split is drawn
    # each column's verdicts and confidences as arrays once, not once a split
    judges = [replace(j, pred=np.asarray(j.pred), conf=np.asarray(j.conf)) for j in data.judges]
    configs = [(f"{j.name} alone", [j]) for j in judges]
    if len(judges) > 1:
        configs.append(("cascade " + " -> ".join(j.name for j in judges), judges))
    every = np.arange(n)
    summaries = []
    ranked = {j.name: Ranked.of(human, j) for j in judges}  # sorted once, not once a split
    for name, js in configs:
        rs = [ranked[j.name] for j in js]
        outs = [
            apply_cascade(
                human, js, test, calibrate_cascade(human, rs, cal, alpha, delta, min_n, grid), rs
            )
            for cal, test in _splits(n, n_cal, repeats, seed)
        ]
        pop = [
            apply_cascade(
                human, js, every, calibrate_cascade(human, rs, d, alpha, delta, min_n, grid), rs
            ).agreement
            for d in _population_draws(n, n_cal, repeats, seed)
        ]
        summaries.append(_summarise(name, js, outs, alpha, judges[-1].cost, pop))
    hopeless = hopeless_warning(n_cal, alpha, delta, min_n)
    return SelectiveResult(
        alpha=alpha,
        delta=delta,
        repeats=repeats,
        seed=seed,
        n_units=n,
        n_calibration=n_cal,
        n_test=n - n_cal,
        min_n=min_n,
        thresholds=thresholds,
        confidence="the judge's largest class probability",
        configs=tuple(summaries),
        notes=data.notes,
        warnings=(hopeless,) if hopeless else (),
        curves={j.name: coverage_curve(data.human, j) for j in judges},
    )


def calibrate_selective(
    dataset: Any,
    judges: Sequence[str],
    *,
    scores: Sequence[Any] = ("shipped",),
    costs: Mapping[str, float] | None = None,
    alpha: float = 0.15,
    delta: float = 0.1,
    repeats: int = 1,
    n_calibration: int | None = None,
    seed: int = 0,
    thresholds: str = "grid",
    dimension: str | None = None,
    data_dir: Any = None,
) -> SelectiveResult:
    """``mj.calibrate_selective``: selective judging on a dataset (a name, a path or a loaded
    Dataset) with the judges' columns from ``scores`` (the ``--scores`` grammar), cheapest first.

    >>> res = calibrate_selective("trust_or_escalate_jung2025", ["gpt-4-turbo"])  # doctest: +SKIP
    """
    from metajudge.data.loading import load
    from metajudge.scores.spec import gather_scores

    ds = load(dataset, data_dir)
    rows = gather_scores(ds, list(scores), data_dir=data_dir, labels=False)
    data = judge_columns(ds, rows, judges, costs=costs, dimension=dimension)
    return selective_judging(
        data,
        alpha=alpha,
        delta=delta,
        repeats=repeats,
        n_calibration=n_calibration,
        seed=seed,
        thresholds=thresholds,
    )
