"""The calibration maps: fitted parameters (plain JSON-able numbers) and their application.

Ratings (judge score -> human scale): ``isotonic`` (monotone, sklearn's IsotonicRegression,
applied as its piecewise-linear interpolation, clipped at the ends), ``linear`` (least squares),
``ordinal`` (proportional-odds logistic regression on the judge score over the human score
values seen in the fit rows; the prediction is the expected value). Probabilities:
``temperature`` (one temperature T on the log-probabilities, fitted by maximum likelihood of the
human score rounded to the nearest rating value) and ``platt`` (logistic regression on the
logit of a probability of a binary label). sklearn and scipy are imported when fitting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from metajudge.errors import InputError

FArr = npt.NDArray[np.float64]

RATING_METHODS = ("isotonic", "linear", "ordinal")
PROBABILITY_METHODS = ("temperature", "platt")
MAP_METHODS = RATING_METHODS + PROBABILITY_METHODS
_EPS = 1e-12


def fit_map(
    method: str, x: FArr, y: FArr, *, probs: FArr | None = None, values: FArr | None = None
) -> dict[str, Any]:
    """The parameters of ``method`` fitted on judge scores ``x`` (and distributions ``probs``
    over ``values``) against human scores ``y``."""
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(out_of_bounds="clip").fit(x, y)
        return {"x": iso.X_thresholds_.tolist(), "y": iso.y_thresholds_.tolist()}
    if method == "linear":
        if np.ptp(x) == 0:
            return {"slope": 0.0, "intercept": float(np.mean(y))}
        slope, intercept = np.polyfit(x, y, 1)
        return {"slope": float(slope), "intercept": float(intercept)}
    if method == "ordinal":
        return _fit_ordinal(x, y)
    if method == "temperature":
        if probs is None or values is None:
            raise InputError("temperature scaling needs the judge's distribution", field="--method")
        return {"temperature": _fit_temperature(probs, nearest_class(y, values))}
    if method == "platt":
        return _fit_platt(x, y)
    raise InputError(
        f"unknown method {method!r} (known: {', '.join(MAP_METHODS)})", field="--method"
    )


def apply_map(
    method: str,
    params: Mapping[str, Any],
    x: FArr,
    *,
    probs: FArr | None = None,
    values: FArr | None = None,
) -> FArr:
    """The calibrated score of each row (temperature: the expected rating of the rescaled
    distribution; platt: the calibrated probability)."""
    if method == "isotonic":
        return np.interp(x, params["x"], params["y"])
    if method == "linear":
        return params["slope"] * np.asarray(x, float) + params["intercept"]
    if method == "ordinal":
        return _ordinal_probs(params, x) @ np.asarray(params["classes"], float)
    if method == "temperature":
        assert probs is not None and values is not None
        return rescale(probs, params["temperature"]) @ values
    if method == "platt":
        return _sigmoid(params["a"] * _logit(x) + params["b"])
    raise InputError(f"unknown method {method!r} (known: {', '.join(MAP_METHODS)})", field="method")


def nearest_class(y: FArr, values: FArr) -> npt.NDArray[np.int64]:
    """Index of the rating value nearest to each human score (ties: the lower value)."""
    return np.abs(np.asarray(y, float)[:, None] - np.asarray(values, float)[None, :]).argmin(axis=1)


def rescale(probs: FArr, temperature: float) -> FArr:
    """softmax(log p / T) row by row."""
    z = np.log(np.maximum(probs, _EPS)) / temperature
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _fit_temperature(probs: FArr, cls: npt.NDArray[np.int64]) -> float:
    from scipy.optimize import minimize_scalar

    def nll(log_t: float) -> float:
        p = rescale(probs, float(np.exp(log_t)))
        return float(-np.mean(np.log(np.maximum(p[np.arange(len(cls)), cls], _EPS))))

    r = minimize_scalar(nll, bounds=(-4.0, 4.0), method="bounded")
    return float(np.exp(r.x))


def _sigmoid(z: FArr) -> FArr:
    return 1.0 / (1.0 + np.exp(-np.asarray(z, float)))


def _logit(p: FArr) -> FArr:
    q = np.clip(np.asarray(p, float), 1e-6, 1 - 1e-6)
    return np.log(q / (1 - q))


def _fit_platt(x: FArr, y: FArr) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression

    labels = set(np.unique(y).tolist())
    if not labels <= {0.0, 1.0} or len(labels) < 2:
        raise InputError(
            f"Platt scaling needs binary human labels 0/1 with both classes (got {sorted(labels)})",
            field="human",
        )
    if np.any((x < 0) | (x > 1)):
        raise InputError("Platt scaling needs judge probabilities in [0, 1]", field="score")
    lr = LogisticRegression(C=1e6).fit(_logit(x)[:, None], y.astype(int))
    return {"a": float(lr.coef_[0, 0]), "b": float(lr.intercept_[0])}


def _ordinal_probs(params: Mapping[str, Any], x: FArr) -> FArr:
    theta = np.asarray(params["theta"], float)
    z = (np.asarray(x, float) - params["mean"]) / params["sd"]
    cum = _sigmoid(theta[None, :] - params["beta"] * z[:, None])
    cum = np.hstack([np.zeros((len(z), 1)), cum, np.ones((len(z), 1))])
    return np.diff(cum, axis=1)


def _fit_ordinal(x: FArr, y: FArr) -> dict[str, Any]:
    """Proportional odds: P(Y <= c_k | x) = sigmoid(theta_k - beta * z), z = standardised x."""
    from scipy.optimize import minimize

    classes = np.unique(y)
    if len(classes) < 2:
        raise InputError("the fit rows have one human score value only", field="human")
    mean, sd = float(np.mean(x)), float(np.std(x) or 1.0)
    k = np.searchsorted(classes, y)
    z = (x - mean) / sd

    def unpack(w: FArr) -> tuple[FArr, float]:
        return np.cumsum(np.concatenate([[w[0]], np.exp(w[1:-1])])), float(w[-1])

    def nll(w: FArr) -> float:
        theta, beta = unpack(w)
        p = _ordinal_probs({"theta": theta, "beta": beta, "mean": 0.0, "sd": 1.0}, z)
        return float(-np.mean(np.log(np.maximum(p[np.arange(len(k)), k], _EPS))))

    w0 = np.concatenate([[-1.0], np.zeros(len(classes) - 2), [1.0]])
    w = minimize(nll, w0, method="L-BFGS-B").x
    theta, beta = unpack(w)
    return {
        "theta": theta.tolist(),
        "beta": beta,
        "mean": mean,
        "sd": sd,
        "classes": classes.tolist(),
    }
