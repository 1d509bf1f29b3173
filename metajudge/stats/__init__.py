"""Statistics for meta-evaluation: every statistic metajudge reports, each written once.

Plain functions over numpy arrays, in the spirit of mt-metrics-eval's ``stats.py``; every
function's docstring names the paper its formula comes from. Randomness always comes from a
``numpy.random.Generator`` the caller passes in.

- :mod:`.correlation` — Pearson, Spearman, Kendall τ_b, Fisher-z CIs.
- :mod:`.decisions` — the pairwise decision type :class:`Pref`, the tie band, pairwise accuracy
  under named tie policies, verdict protocols over two orders, position consistency.
- :mod:`.human` — the mean over annotators and the leave-one-annotator-out reference.
- :mod:`.bootstrap` — THE bootstrap: :func:`bootstrap_ci` = :func:`.bootstrap.resample` +
  :func:`correlate` + the percentile interval (nlpstats' shape); grouped correlation, the
  bootstrap p-value. The engine inside :func:`correlate` is its own package,
  :mod:`metajudge.engine` (weighted resamples as matrix products, per-item sums, the lazy
  ``Resamples``; a plain reference loop beside it), with the formulas that finish its sums
  (``pearson_from_sums``, ``pearson_from_moments``, ``accuracy_from_sums``, re-exported here).
- :mod:`.intervals` — THE rule that picks a value's CI method from n (percentile bootstrap above
  ``small_n`` units; Fisher z, Student t or Wilson at or below; none below 5).
- :mod:`.significance` — paired bootstrap, permutation and Williams tests, Holm, Benjamini–Yekutieli, one-sided t.
- :mod:`.power` — sample sizes (Fisher z; one-sided margin tests).
- :mod:`.heterogeneity` — Fisher z per slice and Cochran's Q.
- :mod:`.kendall` — τ_a/τ_b/τ_c, τ_23 and acc_23 with tie calibration (Deutsch et al. 2023).
- :mod:`.spa` — soft pairwise accuracy of system rankings (Thompson et al. 2024).
- :mod:`.resampling_tests` — Perm/Boot-Sys/Inp/Both for two correlations (Deutsch et al. 2021).
- :mod:`.clusters` — WMT-style greedy rank clusters.
- :mod:`.clustered` — cluster-robust (CR1) standard errors, the delete-a-group jackknife, Welch df.

Everything is re-exported here: ``from metajudge import stats; stats.pearson(x, y)``. One
public function per statistic and per interval.

**Argument order.** A truth and a prediction go in as ``(human, judge)``, as sklearn's
``(y_true, y_pred)``: pairwise accuracy (:func:`pairwise_accuracy`, :func:`accuracy_tally`,
:func:`pair_credit`), errors (``mae``, ``rmse``, ``brier``), classification (``gold, pred``),
calibration (``outcome``/``correct`` before ``pred``/``confidence``), selective thresholds,
PPI (``y, f``) and SPA (``human, metric``). Symmetric statistics take neutral ``(x, y)``
(``pearson``, ``spearman``, ``kendall_tau_b``, κ, the bootstrap and permutation helpers): the
order does not matter for the value, and metajudge's callers pass the metric as ``x``. One
exception, named for what it is: the correlation engine's dispatch :func:`statistic` and the
:func:`correlate` requests take ``(name, judge, human)`` — symmetric in value for Pearson,
Spearman and Kendall τ_b, but Kendall's last bits follow the order, so the engine keeps the
metric first. ``tests/stats/test_argument_order.py`` holds the vocabulary of each side and fails
on any other function whose judge-side parameter comes first.
"""

from __future__ import annotations

from metajudge.engine import accuracy_from_sums, pearson_from_moments, pearson_from_sums
from metajudge.stats.bootstrap import (
    BootstrapResult,
    bootstrap_ci,
    bootstrap_indices,
    bootstrap_mean_ci,
    bootstrap_p_value,
    bootstrap_weights,
    correlate,
    grouped_correlation,
    grouped_mean_samples,
    per_group_values,
)
from metajudge.stats.clusters import rank_clusters
from metajudge.stats.correlation import (
    CORRELATIONS,
    STATISTICS,
    SortOrders,
    Statistic,
    accuracy_rows,
    fisher_z_ci,
    kendall_tau_b,
    pearson,
    pearson_rows,
    rows_order,
    spearman,
    statistic,
    statistic_fn,
    undefined_reason,
)
from metajudge.stats.decisions import (
    ORDER_PROTOCOLS,
    TIE_POLICIES,
    AccuracyTally,
    Pref,
    accuracy_tally,
    p_first_wins,
    pair_credit,
    pairwise_accuracy,
    position_consistency,
    pref_array,
    protocol_correct,
    tie_decisions,
    to_pref,
)
from metajudge.stats.heterogeneity import Heterogeneity, cochran_q
from metajudge.stats.human import (
    AGGREGATION_RULES,
    HumanComparison,
    aggregate_labels,
    annotator_mean,
    leave_one_out,
)
from metajudge.stats.intervals import percentile_ci
from metajudge.stats.kendall import kendall_variant, tie_calibration, tie_calibration_cv
from metajudge.stats.partial import partial_pearson
from metajudge.stats.power import (
    n_for_correlation,
    n_for_correlation_difference,
    n_for_margin,
)
from metajudge.stats.resampling_tests import (
    boot_tests,
    perm_tests,
    permutation_p_value,
    permutation_test_diff,
    shared_permutation_tests,
)
from metajudge.stats.significance import (
    DiffResult,
    PFloor,
    WilliamsResult,
    benjamini_yekutieli,
    holm,
    paired_bootstrap_diff,
    t_test_less,
    williams_test,
)
from metajudge.stats.spa import soft_pairwise_accuracy

MODULES = (
    "correlation",
    "decisions",
    "human",
    "bootstrap",
    "significance",
    "power",
    "heterogeneity",
    "kendall",
    "spa",
    "resampling_tests",
    "clusters",
    "clustered",
)

__all__ = [
    "AGGREGATION_RULES",
    "CORRELATIONS",
    "ORDER_PROTOCOLS",
    "STATISTICS",
    "TIE_POLICIES",
    "AccuracyTally",
    "BootstrapResult",
    "DiffResult",
    "Heterogeneity",
    "HumanComparison",
    "PFloor",
    "Pref",
    "SortOrders",
    "Statistic",
    "WilliamsResult",
    "accuracy_from_sums",
    "accuracy_rows",
    "accuracy_tally",
    "aggregate_labels",
    "annotator_mean",
    "benjamini_yekutieli",
    "boot_tests",
    "bootstrap_ci",
    "bootstrap_indices",
    "bootstrap_mean_ci",
    "bootstrap_p_value",
    "bootstrap_weights",
    "cochran_q",
    "correlate",
    "fisher_z_ci",
    "grouped_correlation",
    "grouped_mean_samples",
    "holm",
    "kendall_tau_b",
    "kendall_variant",
    "leave_one_out",
    "n_for_correlation",
    "n_for_correlation_difference",
    "n_for_margin",
    "p_first_wins",
    "pair_credit",
    "paired_bootstrap_diff",
    "pairwise_accuracy",
    "partial_pearson",
    "pearson",
    "pearson_from_moments",
    "pearson_from_sums",
    "pearson_rows",
    "per_group_values",
    "percentile_ci",
    "perm_tests",
    "permutation_p_value",
    "permutation_test_diff",
    "position_consistency",
    "pref_array",
    "protocol_correct",
    "rank_clusters",
    "rows_order",
    "shared_permutation_tests",
    "soft_pairwise_accuracy",
    "spearman",
    "statistic",
    "statistic_fn",
    "t_test_less",
    "tie_calibration",
    "tie_calibration_cv",
    "tie_decisions",
    "to_pref",
    "undefined_reason",
    "williams_test",
]
