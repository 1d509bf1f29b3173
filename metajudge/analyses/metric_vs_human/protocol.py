"""The meta-evaluation protocol as a value: one frozen object from the CLI to the engine.

:class:`Protocol` carries every option of a meta-evaluation (how differences are normalised,
how annotators are aggregated, the unit of correlation, the tie band, the bootstrap). It is
built once (by the CLI, the public API or a test), validated once, printed with every result
(:meth:`Protocol.to_dict`) and passed down unchanged.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from metajudge.engine import ENGINES
from metajudge.errors import InputError
from metajudge.stats import AGGREGATION_RULES, STATISTICS
from metajudge.stats.estimates import LEVEL_ALIASES, LEVELS
from metajudge.stats.intervals import SMALL_N
from metajudge.stats.partial import SPEARMAN_METHODS

NORMALIZE_MODES: tuple[str, ...] = ("minmax", "sign", "raw")
AGGREGATIONS: tuple[str, ...] = ("per_annotator", *AGGREGATION_RULES)
#: how each aggregation is said in headers, signatures and captions
AGGREGATION_WORDS: dict[str, str] = {
    "per_annotator": "one row per annotator label, not aggregated",
    **AGGREGATION_RULES,
}
MISSING_RULES: tuple[str, ...] = ("drop", "median", "error")
#: Williams' test p-values: how each sidedness is stated
WILLIAMS_WORDS: dict[str, str] = {
    "two-sided": "two-sided",
    "one-sided": "one-sided, in the direction of the observed difference (as FRANK reports)",
}
CORRELATES: tuple[str, ...] = ("pairwise-difference", "pointwise")
#: ``correlate`` not given: the data's kind chooses (:func:`correlate_for`), before evaluating
AUTO_CORRELATE = "auto"
COMPARE_STATS: tuple[str, ...] = ("pearson", "spearman")


@dataclass(frozen=True)
class Protocol:
    """Options of one meta-evaluation (defaults: RAGChecker's protocol, Ru et al. 2024).

    correlate
        ``pairwise-difference`` (metric difference of two responses vs the human preference:
        RAGChecker, MT-RAIG) or ``pointwise`` (each response's metric score vs its human score:
        G-Eval, JUDGE-BENCH); ``auto`` (:data:`AUTO_CORRELATE`): the data's kind chooses
        (:meth:`for_kind`, what :meth:`from_options` leaves when none is given).
    level
        ``global`` | ``item`` | ``system-grouped`` | ``system`` (system-level; alias
        ``system-level``) (:mod:`metajudge.analyses.metric_vs_human.levels`);
        the pairwise-difference protocol has ``global`` and ``item`` (= ``grouped``).

    normalize
        ``minmax`` | ``sign`` | ``raw`` difference normalisation
        (:mod:`metajudge.analyses.metric_vs_human.normalize`).
    aggregation
        ``per_annotator`` (one row per label; the default) or one label per unit under a rule of
        :func:`~metajudge.stats.aggregate_labels`: ``mean``, ``median``, ``majority`` (a tie
        between the most frequent labels: their median) or ``mode-else-mean`` (the label most
        annotators agree on, else the mean); :data:`AGGREGATION_WORDS` says each.
    grouped
        Correlation per input, averaged over inputs (G-Eval, LFTQA-Eval).
    epsilon, learn_epsilon, cv_folds
        Tie band of ``sign`` decisions; learned by ``cv_folds``-fold CV with ``learn_epsilon``.
    n_boot, seed, ci_level
        Bootstrap resamples of items (0: none), seed of the ``numpy.random.Generator``, CI level.
    engine
        The resampling engine of the run's bootstrap values (:data:`metajudge.engine.ENGINES`;
        the resamples are drawn for it, so the cells, the inter-human reference, the
        comparisons' paired bootstrap and the grouped means all reach it): ``fast``, or
        ``reference``, a plain loop over resamples that gives the same values. (The
        permutation tests and the system-level values are computed outside the engine.)
    compare, n_perm, max_compare
        Metric-vs-metric tests; ``n_perm`` permutations (None: ``n_boot``); skipped with more than
        ``max_compare`` metrics.
    statistics, min_pairs, kendall_ci_max_rows, spearman_ci_max_rows
        Statistics computed; fewest scored pairs for a value; above ``kendall_ci_max_rows`` rows
        (100,000; None: no limit) Kendall's τ_b, above ``spearman_ci_max_rows`` (None: no limit,
        the default: Spearman's bootstrap is one compiled O(rows) pass per resample,
        :mod:`metajudge.engine.rank_pass`) Spearman's ρ gets its Fisher-z CI as its CI
        (``ci_method`` names it) instead of the bootstrap, in cells, the matched inter-human
        reference and comparisons alike (:meth:`Protocol.ci_skipped` words the note shown with
        the value).
    small_n
        Below this many independent units (pairs; responses, inputs or systems by level) a
        value's CI is not the percentile bootstrap but an interval that keeps its level —
        Fisher z, Student t on per-group values, Wilson — and below 5 there is none
        (:func:`~metajudge.stats.intervals.choose`; the method is named per value).
    missing
        What a missing metric score does: ``drop`` the pair (or response), impute the
        ``median`` difference (RAGChecker's ``meta_eval.py``), or ``error``. Default (None):
        ``median`` for pairwise differences under ``minmax`` (RAGChecker), ``drop`` otherwise
        (pointwise: what metric papers do); the count is reported.
    control, control_spearman
        Partial correlation controlling for a field (``system``, a record or ``meta`` field;
        pointwise protocol, global level): Pearson and Spearman of the residuals
        (:mod:`metajudge.stats.partial`); Spearman as FRANK (``residuals``) or rank-based
        (``ranks``, pingouin).
    williams
        Williams' test p-values ``two-sided`` (default) or ``one-sided`` in the direction of the
        observed difference (FRANK's); stated with the comparisons.
    compare_to
        Compare every metric against this one only (m - 1 tests per dimension and statistic;
        no ``max_compare`` cap) instead of every pair.
    """

    correlate: str = "pairwise-difference"
    level: str = "global"
    normalize: str = "minmax"
    aggregation: str = "per_annotator"
    grouped: bool = False
    epsilon: float = 0.0
    learn_epsilon: bool = False
    cv_folds: int = 5
    n_boot: int = 1000
    seed: int = 0
    engine: str = "fast"
    ci_level: float = 0.95
    compare: bool = True
    n_perm: int | None = None
    max_compare: int = 12
    statistics: tuple[str, ...] = STATISTICS
    min_pairs: int = 3
    kendall_ci_max_rows: int | None = 100_000
    spearman_ci_max_rows: int | None = None
    missing: str | None = None
    small_n: int = SMALL_N
    control: str | None = None
    control_spearman: str = "residuals"
    compare_to: str | None = None
    williams: str = "two-sided"

    def __post_init__(self) -> None:
        object.__setattr__(self, "statistics", tuple(self.statistics))
        object.__setattr__(self, "level", LEVEL_ALIASES.get(self.level, self.level))
        if self.grouped and self.level == "global":  # --grouped is --level item
            object.__setattr__(self, "level", "item")
        object.__setattr__(self, "grouped", self.level == "item")
        self.validate()

    def validate(self) -> None:
        """Raise :class:`~metajudge.errors.InputError` naming the first invalid option."""
        _choice("correlate", self.correlate, (*CORRELATES, AUTO_CORRELATE))
        _choice("level", self.level, LEVELS)
        if self.correlate == "pairwise-difference" and self.level not in ("global", "item"):
            raise InputError(
                f"level {self.level!r} needs the pointwise protocol (pairwise differences are "
                "correlated globally or per item)",
                field="level",
            )
        _choice("normalize", self.normalize, NORMALIZE_MODES)
        _choice("aggregation", self.aggregation, AGGREGATIONS)
        _choice("williams", self.williams, tuple(WILLIAMS_WORDS))
        if self.learn_epsilon and self.normalize != "sign":
            raise InputError("learn_epsilon needs normalize='sign'", field="learn_epsilon")
        if not math.isfinite(self.epsilon) or self.epsilon < 0:
            raise InputError(
                f"epsilon must be a finite number >= 0, got {self.epsilon!r}", field="epsilon"
            )
        unknown = [s for s in self.statistics if s not in STATISTICS]
        if unknown:
            raise InputError(
                f"unknown statistic(s) {unknown} (expected {', '.join(STATISTICS)})",
                field="statistics",
            )
        if self.missing is not None:
            _choice("missing", self.missing, MISSING_RULES)
        _choice("engine", self.engine, ENGINES)
        if self.n_boot < 0:
            raise InputError(f"n_boot must be >= 0, got {self.n_boot}", field="n_boot")
        if self.small_n < 0:
            raise InputError(f"small_n must be >= 0, got {self.small_n}", field="small_n")
        _choice("control_spearman", self.control_spearman, SPEARMAN_METHODS)
        if self.control is not None and self.correlate == "pairwise-difference":
            raise InputError(
                "--control needs the pointwise protocol (a partial correlation of each "
                "response's metric and human score)",
                field="control",
            )
        if self.control is not None and self.level != "global":
            raise InputError(
                f"--control needs level global (got {self.level!r}): the control is removed "
                "from all responses pooled",
                field="control",
            )
        if not 0 < self.ci_level < 1:
            raise InputError(f"ci_level must be in (0, 1), got {self.ci_level}", field="ci_level")

    @property
    def missing_rule(self) -> str:
        """The missing-score rule in force (``missing``, or the default for ``normalize``)."""
        if self.missing is not None:
            return self.missing
        pairwise_minmax = self.normalize == "minmax" and self.correlate != "pointwise"
        return "median" if pairwise_minmax else "drop"

    @property
    def permutations(self) -> int:
        """Permutations of the permutation test (``n_perm``, default ``n_boot``)."""
        return self.n_boot if self.n_perm is None else self.n_perm

    def ci_skipped(self, statistic: str, n_rows: int) -> str | None:
        """Why ``statistic`` on ``n_rows`` rows gets no bootstrap CI (None: it gets one).

        >>> Protocol().ci_skipped("kendall", 200_000)
        'bootstrap CI skipped above 100000 rows (kendall_ci_max_rows); see fisher_ci'
        >>> Protocol(spearman_ci_max_rows=None).ci_skipped("spearman", 10**7) is None
        True
        """
        limits = {"kendall": self.kendall_ci_max_rows, "spearman": self.spearman_ci_max_rows}
        limit = limits.get(statistic)
        if limit is None or n_rows <= limit:
            return None
        return f"bootstrap CI skipped above {limit} rows ({statistic}_ci_max_rows); see fisher_ci"

    def with_options(self, **changes: Any) -> Protocol:
        """A copy with some options changed (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["statistics"] = list(self.statistics)
        return d

    def for_kind(self, kind: str) -> Protocol:
        """This protocol with ``correlate`` chosen from the data's ``kind`` when it is
        :data:`AUTO_CORRELATE` (:func:`correlate_for`); itself otherwise.

        >>> Protocol(correlate="auto").for_kind("likert").correlate
        'pointwise'
        """
        if self.correlate != AUTO_CORRELATE:
            return self
        return self.with_options(correlate=correlate_for(kind)[0])

    @classmethod
    def from_options(cls, d: dict[str, Any]) -> Protocol:
        """The options a command line gives (:func:`from_dict`); without a ``correlate`` the
        data's kind chooses it (:data:`AUTO_CORRELATE`)."""
        return cls.from_dict({"correlate": AUTO_CORRELATE, **d})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Protocol:
        """The options named in ``d`` (unknown keys are an error naming them)."""
        names = {f.name for f in fields(cls)}
        bad = sorted(set(d) - names)
        if bad:
            raise InputError(f"unknown protocol option(s) {bad}", field="protocol")
        return cls(**d)


def correlate_for(kind: str) -> tuple[str, str]:
    """The protocol a dataset's kind calls for when none is given, and why: the pairwise
    difference for pairwise records, pointwise for per-response (Likert) labels.

    >>> correlate_for("likert"), correlate_for("pairwise")
    (('pointwise', 'per-response labels'), ('pairwise-difference', 'pairwise records'))
    """
    if kind == "likert":
        return "pointwise", "per-response labels"
    return "pairwise-difference", "pairwise records"


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        what = {"normalize": "normalisation"}.get(name, name)
        raise InputError(
            f"unknown {what} {value!r} (expected one of {', '.join(allowed)})", field=name
        )
