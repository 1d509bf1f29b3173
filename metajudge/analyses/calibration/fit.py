"""``calibrate fit``: fit a calibration map on labelled rows, measure it on held-out rows, and
keep it as a calibrator file that carries the judge's signature and the data's hash.

Held-out numbers come from ``repeats`` seeded splits (fit on ``fraction`` of the rows, measure
on the rest: :func:`~metajudge.analyses.calibration.table.splits`) or, with ``folds`` K, from
K-fold cross-fitting (each row predicted by the map fitted on the other folds). The map in the
calibrator file is fitted on ALL rows. Ratings: MAE and RMSE before (the judge's score as it
is) and after; probability methods and distributions add the Brier score and the expected
calibration error (10 equal-width bins; top label for distributions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from metajudge.analyses.calibration import maps
from metajudge.analyses.calibration.table import FArr, IArr, RatingTable, splits
from metajudge.errors import InputError
from metajudge.results import Result
from metajudge.stats import calibration as cs

CALIBRATOR_FORMAT = "metajudge.calibrator/1"


def held_out_warning(n_held: int) -> str | None:
    """The warning for ``n_held`` held-out rows per split (None from
    :data:`metajudge.stats.calibration.MIN_HELD_OUT` on)."""
    if n_held >= cs.MIN_HELD_OUT:
        return None
    return (
        f"the held-out errors come from only {n_held} rows per split (fewer than "
        f"{cs.MIN_HELD_OUT}): MAE and RMSE are rough, and Brier and ECE (10 bins) are not "
        "meaningful; fit on more rows"
    )


@dataclass
class FitResult(Result):
    """Held-out errors before/after (means over repeats, and their standard deviations), the
    protocol and the calibrator (a JSON-able dict, see :func:`calibrator_dict`)."""

    judge: str
    method: str
    n: int
    protocol: dict[str, Any]
    before: dict[str, float]
    after: dict[str, float]
    sd: dict[str, float]
    calibrator: dict[str, Any] = field(repr=False)
    reliability: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _errors(table: RatingTable, method: str, fit_idx: IArr, test_idx: IArr) -> dict[str, float]:
    fit, test = table.take(fit_idx), table.take(test_idx)
    params = maps.fit_map(method, fit.pred, fit.human, probs=fit.probs, values=fit.values)
    after = maps.apply_map(method, params, test.pred, probs=test.probs, values=test.values)
    if method != "platt":
        after = np.clip(after, *table.scale)
    out = {
        "mae_before": cs.mae(human=test.human, judge=test.pred),
        "mae_after": cs.mae(human=test.human, judge=after),
        "rmse_before": cs.rmse(human=test.human, judge=test.pred),
        "rmse_after": cs.rmse(human=test.human, judge=after),
    }
    if method == "platt":
        y = test.human.astype(int)
        out |= {
            "brier_before": cs.brier(labels=y, probs=test.pred),
            "brier_after": cs.brier(labels=y, probs=after),
            "ece_before": cs.expected_calibration_error(correct=y, confidence=test.pred),
            "ece_after": cs.expected_calibration_error(correct=y, confidence=after),
        }
    elif test.probs is not None and test.values is not None:
        out |= _distribution_errors(test, method, params)
    return out


def _distribution_errors(
    test: RatingTable, method: str, params: Mapping[str, Any]
) -> dict[str, float]:
    """Brier and top-label ECE of the distribution against the rounded human score (after: the
    temperature-scaled distribution; the other methods map the score, not the distribution)."""
    assert test.probs is not None and test.values is not None
    cls = maps.nearest_class(test.human, test.values)
    after = (
        maps.rescale(test.probs, params["temperature"]) if method == "temperature" else test.probs
    )
    out = {}
    pairs = [("before", test.probs)] + ([("after", after)] if method == "temperature" else [])
    for tag, p in pairs:
        conf, pred = cs.top_label(p)
        out[f"brier_{tag}"] = cs.brier(labels=cls, probs=p)
        out[f"ece_{tag}"] = cs.expected_calibration_error(
            correct=(pred == cls).astype(float), confidence=conf
        )
    return out


def reliability(
    table: RatingTable, method: str, fit_idx: IArr, test_idx: IArr
) -> dict[str, list[dict[str, float]]]:
    """Reliability-diagram points on held-out rows (10 equal-count bins of each prediction):
    the judge's score and the calibrated score against the mean human score (platt: the
    probability against the share of label 1)."""
    fit, test = table.take(fit_idx), table.take(test_idx)
    params = maps.fit_map(method, fit.pred, fit.human, probs=fit.probs, values=fit.values)
    after = maps.apply_map(method, params, test.pred, probs=test.probs, values=test.values)
    if method != "platt":
        after = np.clip(after, *table.scale)
    return {
        "before": cs.reliability_bins(outcome=test.human, pred=test.pred),
        "after": cs.reliability_bins(outcome=test.human, pred=after),
    }


def _folds(n: int, k: int, seed: int) -> list[tuple[IArr, IArr]]:
    if k < 2 or k > n // 2:
        raise InputError(f"--folds must be in [2, {n // 2}], got {k}", field="--folds")
    perm = np.random.default_rng([seed, 0]).permutation(n)
    parts = np.array_split(perm, k)
    return [
        (np.sort(np.concatenate([p for j, p in enumerate(parts) if j != i])), np.sort(parts[i]))
        for i in range(k)
    ]


def calibrate_fit(
    table: RatingTable,
    method: str = "isotonic",
    *,
    seed: int = 0,
    repeats: int = 50,
    fraction: float = 0.5,
    folds: int | None = None,
) -> FitResult:
    """Held-out errors of ``method`` on ``table`` and its calibrator fitted on every row."""
    if method not in maps.MAP_METHODS:
        raise InputError(
            f"unknown method {method!r} (known: {', '.join(maps.MAP_METHODS)})", field="--method"
        )
    if repeats < 1:
        raise InputError(f"--repeats must be >= 1, got {repeats}", field="--repeats")
    if folds:
        parts = _folds(len(table), folds, seed)
        oof = [_errors(table, method, f, t) for f, t in parts]
        w = np.array([len(t) for _, t in parts], float)
        runs = [{k: float(np.average([o[k] for o in oof], weights=w)) for k in oof[0]}]
        protocol = {"kind": "cross-fit", "folds": folds, "seed": seed}
    else:
        parts = splits(len(table), seed=seed, repeats=repeats, fraction=fraction)
        runs = [_errors(table, method, f, t) for f, t in parts]
        protocol = {
            "kind": "repeated splits",
            "repeats": repeats,
            "fraction": fraction,
            "seed": seed,
        }
    protocol["final_map"] = "fitted on all rows"
    warn = held_out_warning(min(len(t) for _, t in parts))
    mean = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
    sd = {k: float(np.std([r[k] for r in runs])) for k in runs[0]}
    return FitResult(
        judge=table.judge,
        method=method,
        n=len(table),
        protocol=protocol,
        before={k.removesuffix("_before"): v for k, v in mean.items() if k.endswith("_before")},
        after={k.removesuffix("_after"): v for k, v in mean.items() if k.endswith("_after")},
        sd=sd,
        calibrator=calibrator_dict(table, method, protocol),
        reliability=reliability(
            table, method, *parts[0]
        ),  # the first split's (fold's) held-out rows
        warnings=[warn] if warn else [],
    )


def judge_key(signature: str) -> str:
    """What a calibrator is keyed on: the judge's signature without where its scores were read
    (``|source:...`` parts) — its definition and backbone, not a file path.

    >>> judge_key("sheng.4omini_coherence|source:conformal_judge_sheng2025/summeval/x.csv|external")
    'sheng.4omini_coherence|external'
    """
    return "|".join(p for p in str(signature).split("|") if not p.startswith("source:"))


def calibrator_dict(table: RatingTable, method: str, protocol: Mapping[str, Any]) -> dict[str, Any]:
    """The calibrator file's content: the map fitted on every row of ``table``; the judge's
    signature and key (:func:`judge_key`), the scale, and the fitting rows' judge scores (for
    the distribution-shift check where it is applied)."""
    params = maps.fit_map(method, table.pred, table.human, probs=table.probs, values=table.values)
    return {
        "format": CALIBRATOR_FORMAT,
        "method": method,
        "params": params,
        "judge": {
            "metric": table.judge,
            "signature": table.signature,
            "key": judge_key(table.signature),
        },
        "data": {
            "sha256": table.data_hash(),
            "n": len(table),
            "source": table.source,
            "judge_scores": [round(float(x), 6) for x in table.pred],
        },
        "scale": list(table.scale),
        "protocol": dict(protocol),
    }


def check_calibrator(obj: Any, path: Any = None) -> dict[str, Any]:
    """A calibrator read from a file, checked; errors name the file and field."""
    if not isinstance(obj, dict) or obj.get("format") != CALIBRATOR_FORMAT:
        raise InputError(
            f"not a calibrator file (format {CALIBRATOR_FORMAT!r})", path=path, field="format"
        )
    for k in ("method", "params", "judge", "data", "scale"):
        if k not in obj:
            raise InputError("missing required field", path=path, field=k)
    if obj["method"] not in maps.MAP_METHODS:
        raise InputError(f"unknown method {obj['method']!r}", path=path, field="method")
    if not isinstance(obj["judge"], dict) or "signature" not in obj["judge"]:
        raise InputError("missing required field", path=path, field="judge.signature")
    return obj


def check_signature(
    cal: Mapping[str, Any],
    metric: str,
    signature: str,
    path: Any = None,
    scale: Sequence[float] | None = None,
) -> None:
    """Refuse a judge whose definition or backbone (:func:`judge_key` of its signature) or whose
    scale differs from the calibrator's; where the scores were read does not matter."""
    want = cal["judge"]
    if judge_key(signature) != judge_key(want["signature"]):
        raise InputError(
            f"the calibrator was fitted for judge {want.get('metric')!r} "
            f"({judge_key(want['signature'])!r}); {metric!r} is "
            f"{judge_key(signature)!r}: refit it (`metajudge calibrate fit`) for this judge, or "
            "name the judge of a --ratings CSV with --judge-name",
            path=path,
            field="judge.signature",
        )
    if scale is not None and [float(x) for x in scale] != [float(x) for x in cal["scale"]]:
        raise InputError(
            f"the calibrator maps onto the scale {list(cal['scale'])}; these rows are on "
            f"{list(scale)}: refit it for this scale",
            path=path,
            field="scale",
        )


def apply_calibrator(
    cal: Mapping[str, Any], pred: FArr, probs: FArr | None = None, values: FArr | None = None
) -> FArr:
    """The calibrated scores of judge scores ``pred`` (clipped to the calibrator's scale)."""
    out = maps.apply_map(
        cal["method"], cal["params"], np.asarray(pred, float), probs=probs, values=values
    )
    return out if cal["method"] == "platt" else np.clip(out, *cal["scale"])


@dataclass
class ApplyResult(Result):
    """A calibrator applied: the calibrated score of each row and, with human scores, the MAE
    before/after on these rows (``in_sample``: they are the rows the map was fitted on)."""

    judge: str
    method: str
    n: int
    in_sample: bool
    mae_before: float
    mae_after: float
    scores: list[float] = field(repr=False)
    # the judge's scores here against the fitting rows' (the shift check of conformal --target;
    # None: in-sample, or a calibrator written before it kept the fitting rows' scores)
    shift: dict[str, Any] | None = None


def apply_result(
    cal: Mapping[str, Any], table: RatingTable, path: Any = None, shift_alpha: float = 0.05
) -> ApplyResult:
    """``cal`` applied to ``table`` (refused for another judge or scale, :func:`check_signature`);
    on other rows than the fitting ones, the shift check of the judge's scores
    (:func:`~metajudge.analyses.calibration.shift.score_shift`)."""
    from metajudge.analyses.calibration.shift import score_shift

    check_signature(cal, table.judge, table.signature, path, scale=table.scale)
    after = apply_calibrator(cal, table.pred, table.probs, table.values)
    in_sample = table.data_hash() == cal["data"].get("sha256")
    fitted = cal["data"].get("judge_scores")
    shift = None
    if fitted and not in_sample:
        shift = score_shift(
            fitted,
            table.pred,
            shift_alpha,
            consequence="the calibration map may not hold on these rows",
        )
    return ApplyResult(
        judge=table.judge,
        method=str(cal["method"]),
        n=len(table),
        in_sample=in_sample,
        mae_before=cs.mae(human=table.human, judge=table.pred),
        mae_after=cs.mae(human=table.human, judge=after),
        scores=[float(x) for x in after],
        shift=shift,
    )


def calibrated_name(cal: Mapping[str, Any]) -> tuple[str, str]:
    """(metric, signature) of a calibrated column: ``<judge>.calibrated`` and the judge's
    signature with ``|calibrated:<method>:<first 12 hex of the data hash>``."""
    j = cal["judge"]
    return (
        f"{j.get('metric')}.calibrated",
        f"{j['signature']}|calibrated:{cal['method']}:{str(cal['data'].get('sha256', ''))[:12]}",
    )


def calibrated_rows(
    cal: Mapping[str, Any], table: RatingTable, scores: list[float]
) -> list[dict[str, Any]]:
    """Score rows of the calibrated column (``details.raw``: the judge's score)."""
    from metajudge.scores.readers.rows import make_row

    metric, sig = calibrated_name(cal)
    out = []
    for rid, raw, s in zip(table.ids, table.pred, scores, strict=True):
        item, _, system = rid.partition("::")
        out.append(
            make_row(
                item=item,
                system=system or None,
                side=None,
                metric=metric,
                score=float(s),
                signature=sig,
                details={"raw": float(raw)},
            )
        )
    return out
