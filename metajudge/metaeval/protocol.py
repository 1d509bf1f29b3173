"""The meta-evaluation protocol (DESIGN.md §4): metric differences vs human pairwise labels.

For a pair (a, b) and a metric m: d = m(b) − m(a) (negated for lower-is-better metrics),
normalised (``minmax`` / ``sign`` / ``raw``, see :mod:`metajudge.metaeval.normalize`), then
correlated with the human labels per dimension:

* rows: one per annotator label (``aggregation="per_annotator"``, RAGChecker's protocol: each
  pair's d' is repeated once per label — 560 rows for 280 pairs × 2 annotators) or one per pair
  with the annotators' mean (``aggregation="mean"``);
* statistics: Pearson, Spearman, Kendall τ_b, pairwise accuracy with and without ties (from the
  sign of the *raw* d with the tie band ε — minmax moves 0), n;
* ``grouped=True``: correlation per input, then averaged over inputs (G-Eval, LFTQA-Eval). For
  Likert datasets this is computed on the responses themselves (metric score vs human score of
  every system that answered the input), exactly as LFTQA-Eval's ``correlation_calculation.py``;
  for pairwise datasets on the pair rows of each input;
* inter-human ceiling on the same pairs: annotator vs annotator (two) or each annotator vs the
  mean of the others, averaged (three or more);
* uncertainty: one set of seeded bootstrap resamples of *items* (pairs; inputs when grouped)
  shared by every metric, so CIs and metric-vs-metric differences are paired; Fisher-z CIs;
* metric vs metric: paired bootstrap and permutation test on the difference of correlations and
  the Williams test (Pearson), Holm-corrected across every comparison of the result.

The result (:class:`MetaEvalResult`) is plain JSON; :mod:`metajudge.reports` renders it.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from metajudge.data.formats import LikertRecord, PairwiseRecord
from metajudge.errors import InputError
from metajudge.io import atomic_write
from metajudge.metaeval import normalize as norm
from metajudge.metaeval import stats as st
from metajudge.metaeval.external import collapse_families, metric_for_dimension

SCHEMA = "metajudge.metaeval/1"
AGGREGATIONS = ("per_annotator", "mean")
COMPARE_STATS = ("pearson", "spearman")


# ---------------------------------------------------------------------------------------------
# Result container


class MetaEvalResult:
    """A meta-evaluation result: a JSON-serialisable dict with a few accessors.

    Layout (``to_dict()``): ``schema``, ``dataset`` {name, subset, kind, scale, dimensions,
    n_pairs, n_items, annotators}, ``protocol`` {normalize, aggregation, grouped, unit, epsilon,
    n_boot, seed, level, fisher_n, ...}, ``metrics`` [{name, columns, signatures, missing...}],
    ``cells`` [{metric, dimension, column, n_rows, n_items, stats: {stat: {value, ci, fisher_ci,
    undefined}}}], ``ceiling`` [{dimension, method, stats}], ``comparisons`` [...],
    ``published`` [...], ``timing_s``.
    """

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return self.data

    # accessors -----------------------------------------------------------------------------
    @property
    def metrics(self) -> list[str]:
        return [m["name"] for m in self.data["metrics"]]

    @property
    def dimensions(self) -> list[str]:
        return list(self.data["dataset"]["dimensions"])

    def cell(self, metric: str, dimension: str) -> dict[str, Any]:
        for c in self.data["cells"]:
            if c["metric"] == metric and c["dimension"] == dimension:
                return c
        raise KeyError(f"no cell for metric {metric!r} and dimension {dimension!r}")

    def value(self, metric: str, dimension: str, statistic: str = "pearson") -> float | None:
        """The point value (None when undefined)."""
        return self.cell(metric, dimension)["stats"][statistic]["value"]

    def ceiling(self, dimension: str, statistic: str = "pearson") -> float | None:
        for c in self.data["ceiling"]:
            if c["dimension"] == dimension:
                return c["stats"][statistic]["value"]
        raise KeyError(dimension)

    # I/O ------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        path = Path(path)
        with atomic_write(path) as fh:
            json.dump(self.data, fh, indent=1, ensure_ascii=False, allow_nan=False)
            fh.write("\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> MetaEvalResult:
        path = Path(path)
        if not path.is_file():
            raise InputError("result file not found (run `metajudge meta-eval` first)", path=path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise InputError(
                f"malformed JSON: {e.msg}", path=path, line=e.lineno, field="<json>"
            ) from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise InputError(
                f"not a metajudge meta-evaluation result (schema {SCHEMA!r} expected)",
                path=path,
                field="schema",
            )
        return cls(data)


# ---------------------------------------------------------------------------------------------
# Helpers


def _f(v: float) -> float | None:
    """JSON-safe float: NaN/inf → None."""
    return float(v) if v is not None and math.isfinite(v) else None


def _ci(lo: float, hi: float) -> list[float | None] | None:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return [float(lo), float(hi)]


@dataclass
class _Pairs:
    """The pairs of a dataset as arrays."""

    ids: list[str]
    items: list[str]  # input id per pair (for grouped correlation)
    keys_a: list[str]
    keys_b: list[str]
    labels: dict[str, np.ndarray]  # dim -> (P, A) float, NaN = no label
    half_width: float


def _pair_table(dataset: Any, dimensions: Sequence[str]) -> _Pairs:
    pairs: list[PairwiseRecord] = dataset.pairs()
    likert = dataset.card.kind == "likert"
    pcard = dataset.pairwise_card() if hasattr(dataset, "pairwise_card") else dataset.card
    by_key: dict[tuple[str, str], LikertRecord] = {}
    if likert:
        for r in dataset.records:
            if isinstance(r, LikertRecord):
                by_key[(r.id, r.system)] = r
    ids, items, ka, kb = [], [], [], []
    lab_lists: dict[str, list[list[float]]] = {d: [] for d in dimensions}
    for p in pairs:
        ids.append(p.id)
        if likert:
            item = str(p.meta.get("item_id"))
            items.append(item)
            ka.append(f"{item}::{p.a.system}")
            kb.append(f"{item}::{p.b.system}")
            ra, rb = by_key[(item, p.a.system)], by_key[(item, p.b.system)]
            for d in dimensions:
                sa, sb = ra.scores.get(d, ()), rb.scores.get(d, ())
                row = [
                    (float(b) - float(a)) if a is not None and b is not None else math.nan
                    for a, b in zip(sa, sb, strict=False)
                ]
                if len(sa) != len(sb) or not any(math.isfinite(v) for v in row):
                    # annotators not aligned across systems: fall back to the expansion's mean label
                    lab = p.labels.get(d)
                    row = [float(lab[0])] if lab and lab[0] is not None else [math.nan]
                lab_lists[d].append(row)
        else:
            items.append(str(p.meta.get("item_id", p.id)))
            ka.append(f"{p.id}::a")
            kb.append(f"{p.id}::b")
            for d in dimensions:
                lab_lists[d].append(
                    [math.nan if v is None else float(v) for v in p.labels.get(d, ())] or [math.nan]
                )
    labels: dict[str, np.ndarray] = {}
    for d, rows in lab_lists.items():
        A = max((len(r) for r in rows), default=1)
        arr = np.full((len(rows), A), np.nan)
        for i, r in enumerate(rows):
            arr[i, : len(r)] = r
        labels[d] = arr
    return _Pairs(ids, items, ka, kb, labels, float(pcard.scale.half_width))


def _index_scores(
    rows: Iterable[Mapping[str, Any]], wanted_keys: set[str]
) -> tuple[dict[str, dict[str, float | None]], dict[str, dict[str, Any]]]:
    """metric -> key -> score (None = could not score); per-metric bookkeeping."""
    scores: dict[str, dict[str, float | None]] = {}
    info: dict[str, dict[str, Any]] = {}
    for i, r in enumerate(rows):
        try:
            metric, key = r["metric"], r["key"]
        except (KeyError, TypeError):
            raise InputError("score row without 'metric' and 'key'", field=f"scores[{i}]") from None
        if key not in wanted_keys:
            inf = info.setdefault(
                metric, {"signatures": set(), "n_errors": 0, "n_unmatched": 0, "errors": {}}
            )
            inf["n_unmatched"] += 1
            continue
        col = scores.setdefault(metric, {})
        if key in col:
            raise InputError(f"duplicate score for {key!r} metric {metric!r}", field=f"scores[{i}]")
        s = r.get("score")
        if s is not None:
            if isinstance(s, bool) or not isinstance(s, (int, float)):
                raise InputError(
                    f"non-numeric score {s!r} for {key!r} metric {metric!r}",
                    field=f"scores[{i}].score",
                )
            s = float(s) if math.isfinite(float(s)) else None
        col[key] = s
        inf = info.setdefault(
            metric, {"signatures": set(), "n_errors": 0, "n_unmatched": 0, "errors": {}}
        )
        if r.get("signature"):
            inf["signatures"].add(str(r["signature"]))
        if s is None:
            inf["n_errors"] += 1
            err = str(r.get("error") or "no score")[:120]
            inf["errors"][err] = inf["errors"].get(err, 0) + 1
    return scores, info


@dataclass
class _Rows:
    """The correlation rows of one (metric, dimension) cell."""

    x: np.ndarray  # normalised d' per row
    raw: np.ndarray  # raw d per row (for accuracies)
    y: np.ndarray  # human label per row
    pair: np.ndarray  # pair index per row
    eps: np.ndarray  # tie band per row (sign decisions for accuracy)
    ann: np.ndarray  # annotator index per row (0 for the mean)


def _rows_for(
    x_pair: np.ndarray,
    raw_pair: np.ndarray,
    L: np.ndarray,
    aggregation: str,
    eps: np.ndarray | float = 0.0,
) -> _Rows:
    P, _A = L.shape
    eps_pair = np.broadcast_to(np.asarray(eps, dtype=float), (P,))
    if aggregation == "mean":
        with np.errstate(invalid="ignore"):
            cnt = np.isfinite(L).sum(axis=1)
            y = np.where(cnt > 0, np.nansum(L, axis=1) / np.maximum(cnt, 1), np.nan)
        ok = np.isfinite(y) & np.isfinite(x_pair)
        idx = np.flatnonzero(ok)
        return _Rows(
            x_pair[idx],
            raw_pair[idx],
            y[idx],
            idx,
            eps_pair[idx],
            np.zeros(idx.size, dtype=np.int64),
        )
    ok = np.isfinite(L) & np.isfinite(x_pair)[:, None]
    pi, ai = np.nonzero(ok)  # row-major: pair 0's annotators first, like RAGChecker's 2i / 2i+1
    return _Rows(x_pair[pi], raw_pair[pi], L[pi, ai], pi, eps_pair[pi], ai.astype(np.int64))


def _decisions(raw: np.ndarray, eps: np.ndarray) -> np.ndarray:
    return np.where(np.abs(raw) <= eps, 0.0, np.sign(raw))


def _stat_block(
    rows: _Rows,
    W_rows: np.ndarray | None,
    level: float,
    statistics: Sequence[str],
    min_pairs: int,
    kendall_ci_max_rows: int = 5000,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Point values, bootstrap CIs and Fisher CIs of every statistic for one cell."""
    out: dict[str, Any] = {}
    samples: dict[str, np.ndarray] = {}
    n_items = int(np.unique(rows.pair).size)
    dec = _decisions(rows.raw, rows.eps)
    W = W_rows if W_rows is not None and rows.pair.size else None
    base_reason = None
    if n_items < min_pairs:
        base_reason = f"only {n_items} scored pairs (need at least {min_pairs})"
    for s in statistics:
        is_corr = s in st.CORRELATIONS
        xv = rows.x if is_corr else dec
        reason = base_reason
        if reason is None and is_corr:
            reason = st.undefined_reason(rows.x, rows.y)
        if (
            reason is None
            and not is_corr
            and s == "acc_no_ties"
            and not (np.sign(rows.y) != 0).any()
        ):
            reason = "every human label is a tie"
        entry: dict[str, Any] = {"value": None, "ci": None, "fisher_ci": None, "undefined": reason}
        if reason is None:
            v = st.statistic(s, xv, rows.y)
            entry["value"] = _f(v)
            if W is not None and s == "kendall" and rows.x.size > kendall_ci_max_rows:
                entry["ci_note"] = (
                    f"bootstrap CI skipped above {kendall_ci_max_rows} rows; see fisher_ci"
                )
            elif W is not None:
                smp = st.weighted_statistic(s, xv, rows.y, W)
                samples[s] = smp
                entry["ci"] = _ci(*st.percentile_ci(smp, level))
                entry["n_boot_undefined"] = int(np.isnan(smp).sum())
            if is_corr:
                entry["fisher_ci"] = _ci(*st.fisher_z_ci(v, n_items, level=level, method=s))  # type: ignore[arg-type]
        out[s] = entry
    return out, samples


def _grouped_block(
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    n_groups: int,
    Wg: np.ndarray | None,
    level: float,
    statistics: Sequence[str],
) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Grouped correlations: per group, then averaged; bootstrap over groups (exact)."""
    out: dict[str, Any] = {}
    samples: dict[str, np.ndarray] = {}
    per_group: dict[str, np.ndarray] = {}
    for s in statistics:
        if s not in st.CORRELATIONS:
            continue
        vals = np.full(n_groups, np.nan)
        present = np.unique(groups)
        if present.size:
            _, v, _ = st.grouped_correlation(x, y, groups, statistic=s)
            # grouped_correlation relabels groups in first-seen order; map back
            order = list(dict.fromkeys(groups.tolist()))
            vals[np.asarray(order, dtype=int)] = v
        per_group[s] = vals
        ok = np.isfinite(vals)
        entry: dict[str, Any] = {
            "value": None,
            "ci": None,
            "fisher_ci": None,
            "undefined": None,
            "n_groups": int(present.size),
            "n_groups_undefined": int(present.size - ok.sum()),
        }
        if not ok.any():
            entry["undefined"] = (
                f"no input has a defined {s} correlation (every group constant or < 2 rows)"
            )
        else:
            entry["value"] = float(vals[ok].mean())
            if Wg is not None:
                v0 = np.where(ok, vals, 0.0)
                with np.errstate(invalid="ignore", divide="ignore"):
                    smp = np.einsum("ij,j->i", Wg, v0) / np.einsum("ij,j->i", Wg, ok.astype(float))
                samples[s] = smp
                entry["ci"] = _ci(*st.percentile_ci(smp, level))
        out[s] = entry
    return out, samples, per_group


def _ceiling(
    L: np.ndarray,
    W_items: np.ndarray | None,
    pair_group: np.ndarray,
    level: float,
    statistics: Sequence[str],
) -> dict[str, Any]:
    """Inter-human agreement on the same pairs (annotator vs annotator / leave-one-out)."""
    _P, A = L.shape
    n_lab = np.isfinite(L).sum(axis=1)
    if A < 2 or (n_lab >= 2).sum() < 3:
        why = (
            "one label per pair (no second annotator)"
            if A < 2 or (n_lab >= 2).sum() == 0
            else "fewer than 3 pairs with two labels"
        )
        return {
            "method": None,
            "n_pairs": int((n_lab >= 2).sum()),
            "stats": {s: {"value": None, "ci": None, "undefined": why} for s in statistics},
        }
    if A == 2:
        ok = np.isfinite(L).all(axis=1)
        idx = np.flatnonzero(ok)
        xs, ys, ps = [L[idx, 0]], [L[idx, 1]], [idx]
        method = "annotator 1 vs annotator 2"
    else:
        xs, ys, ps = [], [], []
        for j in range(A):
            others = np.delete(L, j, axis=1)
            cnt = np.isfinite(others).sum(axis=1)
            with np.errstate(invalid="ignore"):
                mo = np.where(cnt > 0, np.nansum(others, axis=1) / np.maximum(cnt, 1), np.nan)
            ok = np.isfinite(L[:, j]) & np.isfinite(mo)
            idx = np.flatnonzero(ok)
            xs.append(mo[idx])
            ys.append(L[idx, j])
            ps.append(idx)
        method = f"each of {A} annotators vs the mean of the others (averaged)"
    res: dict[str, Any] = {
        "method": method,
        "n_pairs": int(np.unique(np.concatenate(ps)).size),
        "stats": {},
    }
    for s in statistics:
        vals, smps, reasons = [], [], []
        for x, y, p in zip(xs, ys, ps, strict=True):
            xv = x if s in st.CORRELATIONS else np.sign(x)
            r = (
                st.undefined_reason(x, y)
                if s in st.CORRELATIONS
                else (None if x.size else "no pairs")
            )
            if r is not None:
                reasons.append(r)
                continue
            vals.append(st.statistic(s, xv, y))
            if W_items is not None:
                smps.append(st.weighted_statistic(s, xv, y, W_items[:, pair_group[p]]))
        entry: dict[str, Any] = {"value": None, "ci": None, "undefined": None}
        if not vals:
            entry["undefined"] = reasons[0] if reasons else "no pairs"
        else:
            entry["value"] = _f(float(np.mean(vals)))
            if smps:
                entry["ci"] = _ci(*st.percentile_ci(np.mean(np.vstack(smps), axis=0), level))
        res["stats"][s] = entry
    return res


# ---------------------------------------------------------------------------------------------
# Published numbers


def _published_matches(
    dataset_name: str,
    subset: str | None,
    protocol: dict[str, Any],
    metrics: Sequence[str],
    dims: Sequence[str],
) -> list[dict[str, Any]]:
    from metajudge.reports.published import load_published

    out = []
    for e in load_published():
        if e.get("dataset") != dataset_name or (e.get("subset") or None) != (subset or None):
            continue
        if e.get("metric") not in (*metrics, "human") or e.get("dimension") not in dims:
            continue
        want = e.get("protocol") or {}
        if any(protocol.get(k) != v for k, v in want.items()):
            continue
        out.append(e)
    return out


# ---------------------------------------------------------------------------------------------
# The protocol


def meta_evaluate(
    dataset: Any,
    scores_rows: Iterable[Mapping[str, Any]],
    *,
    metrics: Sequence[str] | None = None,
    dimensions: Sequence[str] | None = None,
    normalize: str = "minmax",
    aggregation: str = "per_annotator",
    grouped: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    epsilon: float = 0.0,
    learn_epsilon: bool = False,
    cv_folds: int = 5,
    compare: bool = True,
    n_perm: int | None = None,
    directions: Mapping[str, str] | None = None,
    statistics: Sequence[str] = st.STATISTICS,
    subset: str | None = None,
    min_pairs: int = 3,
    published: bool = True,
    max_compare: int = 12,
    kendall_ci_max_rows: int = 5000,
) -> MetaEvalResult:
    """Meta-evaluate metrics against the human labels of ``dataset``.

    Parameters
    ----------
    dataset
        A :class:`metajudge.data.registry.Dataset` (``.card``, ``.records``, ``.pairs()``).
    scores_rows
        Per-response score rows (``key``, ``metric``, ``score`` …) from ``metajudge score`` or
        :mod:`metajudge.metaeval.external`.
    metrics
        Metric rows of the table (default: every metric in the rows; ``X_<dim>`` families
        collapse to ``X`` — RAGChecker's per-dimension scores).
    normalize
        ``minmax`` | ``sign`` | ``raw`` (see :mod:`metajudge.metaeval.normalize`).
    aggregation
        ``per_annotator`` (one row per label, RAGChecker) or ``mean`` (annotators' mean).
    grouped
        Per-input correlation averaged over inputs (G-Eval / LFTQA-Eval).
    n_boot, seed, level
        Bootstrap resamples (0: none), seed of the ``numpy.random.Generator``, CI level.
    epsilon, learn_epsilon, cv_folds
        Tie band of the ``sign`` decisions; with ``learn_epsilon`` learned per metric and
        dimension by ``cv_folds``-fold cross-validation over pairs (never on the scored pair).
    compare, n_perm, max_compare
        Metric-vs-metric tests (paired bootstrap, permutation with ``n_perm`` (default n_boot)
        permutations, Williams), Holm-corrected; skipped (and said so) with more than
        ``max_compare`` metrics, where the number of pairs of metrics explodes.
    kendall_ci_max_rows
        Above this many rows Kendall's τ_b gets its Fisher-z CI only (its exact bootstrap costs
        O(B·n·K)); the cell says so.
    directions
        ``{metric: "higher"|"lower"}``; lower-is-better metrics have d negated.
    subset
        Restrict to ``dataset.subset(subset)`` (e.g. LFTQA-Eval's ``qtsumm``).
    """
    t0 = time.perf_counter()
    if normalize not in norm.MODES:
        raise InputError(
            f"unknown normalisation {normalize!r} (expected one of {', '.join(norm.MODES)})",
            field="normalize",
        )
    if aggregation not in AGGREGATIONS:
        raise InputError(
            f"unknown aggregation {aggregation!r} (expected one of {', '.join(AGGREGATIONS)})",
            field="aggregation",
        )
    if learn_epsilon and normalize != "sign":
        raise InputError("learn_epsilon needs normalize='sign'", field="learn_epsilon")
    if not math.isfinite(epsilon) or epsilon < 0:
        raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}", field="epsilon")
    unknown = [s for s in statistics if s not in st.STATISTICS]
    if unknown:
        raise InputError(
            f"unknown statistic(s) {unknown} (expected {', '.join(st.STATISTICS)})",
            field="statistics",
        )
    if subset:
        dataset = dataset.subset(subset)
    card = dataset.card
    if card.kind not in ("pairwise", "likert"):
        raise InputError(
            f"dataset {card.name!r} is a {card.kind} dataset without human judgments",
            field="dataset",
        )
    dims = list(dimensions) if dimensions else list(card.dimensions)
    bad = [d for d in dims if d not in card.dimensions]
    if bad:
        raise InputError(
            f"unknown dimension(s) {bad} (dataset has {', '.join(card.dimensions)})",
            field="dimensions",
        )
    pt = _pair_table(dataset, dims)
    P = len(pt.ids)
    if P < 3:
        raise InputError(
            f"dataset {card.name!r} has {P} pairs; meta-evaluation needs at least 3", field="pairs"
        )
    likert_grouped = grouped and card.kind == "likert"

    # scores ---------------------------------------------------------------------------------
    pair_keys = set(pt.keys_a) | set(pt.keys_b)
    wanted = set(pair_keys)
    if likert_grouped:
        wanted |= {f"{r.id}::{r.system}" for r in dataset.records}
    scores, info = _index_scores(scores_rows, wanted)
    available = sorted(scores)
    if metrics is None:
        metrics = collapse_families(available, dims)
    metrics = list(dict.fromkeys(metrics))
    if not metrics:
        raise InputError(
            "no metric scores for this dataset (none of the score rows matches its pairs)",
            field="metrics",
        )
    directions = dict(directions or {})
    n_perm = n_boot if n_perm is None else n_perm

    # items (inputs): a pair's item is its input (RAGChecker: the pair itself; Likert: the input)
    group_ids = {g: i for i, g in enumerate(dict.fromkeys(pt.items))}
    pair_group = np.array([group_ids[g] for g in pt.items], dtype=int)
    if likert_grouped:
        for r in dataset.records:
            group_ids.setdefault(r.id, len(group_ids))
    G = len(group_ids)
    # one set of seeded bootstrap resamples of items, shared by every metric, dimension and the
    # ceiling (so differences are paired); all rows of an item come along
    rng = np.random.default_rng(seed)
    W_items = st.bootstrap_weights(G, n_boot, rng) if n_boot > 0 else None
    Wg = W_items if grouped else None

    # per-response arrays for Likert grouped correlation
    if likert_grouped:
        resp = [r for r in dataset.records if isinstance(r, LikertRecord)]
        resp_keys = [f"{r.id}::{r.system}" for r in resp]
        resp_group = np.array([group_ids[r.id] for r in resp], dtype=int)

    metric_entries: list[dict[str, Any]] = []
    points_norm: dict[str, np.ndarray] = {}
    cells: list[dict[str, Any]] = []
    cell_cache: dict[tuple[str, str], dict[str, Any]] = {}
    d_cache: dict[str, tuple[np.ndarray, norm.Normalized, dict[str, Any]]] = {}

    def column(name: str) -> tuple[np.ndarray, norm.Normalized, dict[str, Any]]:
        if name in d_cache:
            return d_cache[name]
        col = scores.get(name, {})
        sa = np.array([np.nan if col.get(k) is None else col[k] for k in pt.keys_a], dtype=float)
        sb = np.array([np.nan if col.get(k) is None else col[k] for k in pt.keys_b], dtype=float)
        sign_dir = -1.0 if directions.get(name, "higher") == "lower" else 1.0
        d = (sb - sa) * sign_dir
        inf = info.get(name, {})
        miss = {
            "responses_total": len(pair_keys),
            "responses_absent": int(sum(1 for k in pair_keys if k not in col)),
            "responses_unscored": int(inf.get("n_errors", 0)),
            "pairs_missing": int(np.isnan(d).sum()),
            "rows_unmatched": int(inf.get("n_unmatched", 0)),
            "errors": dict(sorted(inf.get("errors", {}).items(), key=lambda kv: -kv[1])[:5]),
        }
        if normalize == "minmax":
            nd = norm.minmax(d, pt.half_width)
        elif normalize == "sign":
            nd = norm.sign(d, epsilon)
        else:
            nd = norm.raw(d)
        miss["pairs_imputed_median"] = nd.n_imputed
        d_cache[name] = (d, nd, miss)
        return d_cache[name]

    for m in metrics:
        cols = {d: metric_for_dimension(m, d, available) for d in dims}
        entry: dict[str, Any] = {
            "name": m,
            "columns": cols,
            "direction": directions.get(m, "higher"),
            "signatures": {},
            "missing": {},
        }
        for d in dims:
            c = cols[d]
            cell: dict[str, Any] = {
                "metric": m,
                "dimension": d,
                "column": c,
                "n_rows": 0,
                "n_pairs": 0,
                "n_items": 0,
                "stats": {},
            }
            if c is None:
                reason = f"no scores for metric {m!r} (nor {m}_{d})"
                cell["undefined"] = reason
                cell["stats"] = {
                    s: {"value": None, "ci": None, "fisher_ci": None, "undefined": reason}
                    for s in statistics
                }
                cells.append(cell)
                continue
            d_raw, nd, miss = column(c)
            entry["missing"][c] = miss
            entry["signatures"][c] = sorted(info.get(c, {}).get("signatures", set()))
            L = pt.labels[d]
            eps_pair: np.ndarray | float = epsilon
            x_pair = nd.values
            if learn_epsilon:
                rows0 = _rows_for(d_raw, d_raw, L, aggregation)
                eps_rows, per_fold = norm.learn_epsilon_cv(
                    rows0.raw,
                    rows0.y,
                    rows0.pair,
                    k=cv_folds,
                    rng=np.random.default_rng([seed, 2, len(cells)]),
                )
                eps_p = np.full(P, np.nan)
                eps_p[rows0.pair] = eps_rows
                eps_p = np.where(np.isnan(eps_p), epsilon, eps_p)
                eps_pair = eps_p
                x_pair = norm.sign(d_raw, eps_p).values
                cell["epsilon_per_fold"] = per_fold
            rows = _rows_for(
                x_pair, np.where(np.isfinite(d_raw), d_raw, np.nan), L, aggregation, eps_pair
            )
            if normalize == "minmax":
                # RAGChecker imputes missing d with the median for correlations; accuracies need a
                # real decision, so an imputed pair's decision is a tie (d' of the median pair)
                rows.raw = np.where(np.isfinite(rows.raw), rows.raw, 0.0)
            cell["n_rows"] = int(rows.x.size)
            cell["n_pairs"] = int(np.unique(rows.pair).size)
            cell["n_items"] = int(np.unique(pair_group[rows.pair]).size)
            points_norm[c] = x_pair
            if nd.undefined:
                reason = nd.undefined
                cell["undefined"] = reason
                cell["stats"] = {
                    s: {"value": None, "ci": None, "fisher_ci": None, "undefined": reason}
                    for s in statistics
                }
                cells.append(cell)
                continue
            W_rows = W_items[:, pair_group[rows.pair]] if W_items is not None else None
            stats_out, samples = _stat_block(
                rows, W_rows, level, statistics, min_pairs, kendall_ci_max_rows
            )
            if grouped:
                if likert_grouped:
                    colv = scores.get(c, {})
                    xr = np.array(
                        [np.nan if colv.get(k) is None else colv[k] for k in resp_keys], dtype=float
                    )
                    yr = _likert_human(resp, d, aggregation)
                    reps = np.array([len(v) for v in yr], dtype=int)
                    xr_rows = np.repeat(xr, reps)
                    yr_rows = (
                        np.concatenate([np.asarray(v, dtype=float) for v in yr])
                        if len(yr)
                        else np.array([])
                    )
                    gr_rows = np.repeat(resp_group, reps)
                    ok = np.isfinite(xr_rows) & np.isfinite(yr_rows)
                    gx, gy, gg = xr_rows[ok], yr_rows[ok], gr_rows[ok]
                    cell["grouped_unit"] = "response"
                else:
                    gx, gy, gg = rows.x, rows.y, pair_group[rows.pair]
                    cell["grouped_unit"] = "pair"
                gstats, gsamples, _ = _grouped_block(gx, gy, gg, G, Wg, level, statistics)
                for s, e in gstats.items():
                    stats_out[s] = e
                    if s in gsamples:
                        samples[s] = gsamples[s]
                    elif s in samples:
                        del samples[s]
                cell["grouped_data"] = {"x": gx, "y": gy, "g": gg}
            cell["stats"] = stats_out
            cell["_rows"] = rows
            cell["_samples"] = samples
            cells.append(cell)
            cell_cache[(m, d)] = cell
        metric_entries.append(entry)

    # inter-human ceiling ---------------------------------------------------------------------
    ceiling = []
    for d in dims:
        c = _ceiling(pt.labels[d], W_items, pair_group, level, statistics)
        c["dimension"] = d
        ceiling.append(c)

    # metric vs metric ------------------------------------------------------------------------
    comparisons: list[dict[str, Any]] = []
    compare_note = None
    if compare and len(metrics) > max_compare:
        compare_note = f"skipped: {len(metrics)} metrics > max_compare={max_compare}"
        compare = False
    if compare and len(metrics) > 1:
        comparisons = _compare(
            metrics, dims, cell_cache, W_items, pair_group, grouped, n_perm, seed, level
        )

    protocol = {
        "normalize": normalize,
        "aggregation": aggregation,
        "grouped": grouped,
        "grouped_unit": ("response" if likert_grouped else "pair") if grouped else None,
        "epsilon": f"learned by {cv_folds}-fold CV" if learn_epsilon else epsilon,
        "half_width": pt.half_width,
        "n_boot": n_boot,
        "n_perm": n_perm if compare else 0,
        "comparison_scope": compare_note
        or ("all pairs of metrics" if compare else "not requested"),
        "seed": seed,
        "level": level,
        "bootstrap_unit": "item (input): all pairs and annotator rows of an item together",
        "fisher_n": "number of pairs (items), not rows",
        "williams_n": "number of pairs (items) common to both metrics",
        "accuracy": "sign of the raw difference m(b)-m(a) with tie band epsilon vs sign of the human label",
        "holm": "across every comparison in this result, per test",
        "ceiling": "annotator 1 vs annotator 2 (two labels) or each annotator vs the mean of the others (more), on every pair with two or more labels, whatever the aggregation",
    }
    dataset_info = {
        "name": card.name,
        "subset": subset,
        "kind": card.kind,
        "scale": pt.half_width,
        "label_scale": card.scale.describe(),
        "dimensions": dims,
        "n_pairs": P,
        "n_items": G,
        "annotators": int(max((pt.labels[d].shape[1] for d in dims), default=1)),
    }
    pub = _published_matches(card.name, subset, protocol, metrics, dims) if published else []
    for c in cells:
        for k in ("_rows", "_samples", "grouped_data"):
            c.pop(k, None)
    data = {
        "schema": SCHEMA,
        "dataset": dataset_info,
        "protocol": protocol,
        "statistics": list(statistics),
        "metrics": metric_entries,
        "cells": cells,
        "ceiling": ceiling,
        "comparisons": comparisons,
        "published": pub,
        "points": _points(pt, dims, points_norm),
        "timing_s": round(time.perf_counter() - t0, 4),
    }
    return MetaEvalResult(_jsonable(data))


def _points(
    pt: _Pairs,
    dims: Sequence[str],
    norm_by_column: Mapping[str, np.ndarray],
    max_pairs: int = 20000,
) -> dict[str, Any]:
    """Per-pair normalised differences and labels, for scatter plots re-rendered from the JSON."""
    P = len(pt.ids)
    idx = np.arange(P) if P <= max_pairs else np.linspace(0, P - 1, max_pairs).astype(int)

    def r(a: np.ndarray) -> list[Any]:
        return [None if not math.isfinite(v) else round(float(v), 6) for v in a]

    return {
        "pairs": int(idx.size),
        "subsampled": bool(P > max_pairs),
        "labels": {d: [r(row) for row in pt.labels[d][idx]] for d in dims},
        "d_norm": {c: r(v[idx]) for c, v in norm_by_column.items()},
    }


def _likert_human(resp: Sequence[LikertRecord], dim: str, aggregation: str) -> list[list[float]]:
    out = []
    for r in resp:
        vals = [float(v) for v in r.scores.get(dim, ()) if v is not None]
        if not vals:
            out.append([])
        elif aggregation == "mean":
            out.append([sum(vals) / len(vals)])
        else:
            out.append(vals)
    return out


def _compare(
    metrics: Sequence[str],
    dims: Sequence[str],
    cells: Mapping[tuple[str, str], dict[str, Any]],
    W_items: np.ndarray | None,
    pair_group: np.ndarray,
    grouped: bool,
    n_perm: int,
    seed: int,
    level: float,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    rng_perm = np.random.default_rng([seed, 3])
    for d in dims:
        for m1, m2 in itertools.combinations(metrics, 2):
            c1, c2 = cells.get((m1, d)), cells.get((m2, d))
            if c1 is None or c2 is None:
                continue
            for s in COMPARE_STATS:
                e1, e2 = c1["stats"].get(s), c2["stats"].get(s)
                if not e1 or not e2 or e1["value"] is None or e2["value"] is None:
                    continue
                comp: dict[str, Any] = {
                    "dimension": d,
                    "statistic": s,
                    "metric_a": m1,
                    "metric_b": m2,
                }
                if grouped:
                    sa, sb = c1["_samples"].get(s), c2["_samples"].get(s)
                    comp["diff"] = e1["value"] - e2["value"]
                    comp["n"] = e1.get("n_groups")
                    if sa is not None and sb is not None:
                        dd = sa - sb
                        fin = dd[np.isfinite(dd)]
                        comp["ci"] = _ci(*st.percentile_ci(dd, level))
                        comp["p_bootstrap"] = (
                            float(min(1.0, 2 * min((fin <= 0).mean(), (fin >= 0).mean())))
                            if fin.size
                            else None
                        )
                    comp["p_permutation"] = None
                    comp["p_williams"] = None
                    comp["note"] = "grouped: paired bootstrap over inputs only"
                    out.append(comp)
                    continue
                r1, r2 = c1["_rows"], c2["_rows"]
                # common rows: same pair and same annotator row (rows are built in the same order)
                k1 = _row_keys(r1)
                k2 = _row_keys(r2)
                common = np.intersect1d(k1, k2)
                i1 = np.searchsorted(k1, common)
                i2 = np.searchsorted(k2, common)
                x1, x2, y = r1.x[i1], r2.x[i2], r1.y[i1]
                pairs = r1.pair[i1]
                n_items = int(np.unique(pairs).size)
                comp["n"] = n_items
                if n_items < 3 or st.undefined_reason(x1, y) or st.undefined_reason(x2, y):
                    comp["note"] = "undefined on the pairs both metrics scored"
                    out.append(comp)
                    continue
                comp["diff"] = st.statistic(s, x1, y) - st.statistic(s, x2, y)
                if W_items is not None:
                    # paired bootstrap (Koehn 2004) on the shared item resamples; when both cells
                    # use the same rows their stored resample values are already paired
                    if (
                        common.size == k1.size == k2.size
                        and s in c1["_samples"]
                        and s in c2["_samples"]
                    ):
                        dd = c1["_samples"][s] - c2["_samples"][s]
                    else:
                        Wr = W_items[:, pair_group[pairs]]
                        dd = st.weighted_statistic(s, x1, y, Wr) - st.weighted_statistic(
                            s, x2, y, Wr
                        )
                    fin = dd[np.isfinite(dd)]
                    comp["ci"] = _ci(*st.percentile_ci(dd, level))
                    comp["p_bootstrap"] = (
                        float(min(1.0, 2 * min((fin <= 0).mean(), (fin >= 0).mean())))
                        if fin.size
                        else None
                    )
                if n_perm > 0:
                    pr = st.permutation_test_diff(
                        x1,
                        x2,
                        y,
                        statistic=s,
                        groups=pair_group[pairs],
                        n_perm=n_perm,
                        rng=rng_perm,
                    )
                    comp["p_permutation"] = _f(pr.p_value)
                if s == "pearson":
                    r12 = st.pearson(x1, y)
                    r13 = st.pearson(x2, y)
                    r23 = st.pearson(x1, x2)
                    w = st.williams_test(r12, r13, r23, n_items)
                    comp["williams_t"] = _f(w.t)
                    comp["p_williams"] = _f(w.p_two_sided)
                out.append(comp)
    for test in ("p_bootstrap", "p_permutation", "p_williams"):
        idx = [i for i, c in enumerate(out) if c.get(test) is not None]
        if idx:
            adj = st.holm([out[i][test] for i in idx])
            for i, a in zip(idx, adj, strict=True):
                out[i][test + "_holm"] = _f(float(a))
    return out


def _row_keys(r: _Rows) -> np.ndarray:
    """A sorted key per row: (pair index, annotator index); rows are built in this order."""
    return r.pair.astype(np.int64) * (1 << 20) + r.ann


def _jsonable(o: Any) -> Any:
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    if isinstance(o, set):
        return sorted(_jsonable(v) for v in o)
    if isinstance(o, (np.floating, float)):
        return _f(float(o))
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.ndarray):
        return _jsonable(o.tolist())
    return o
