"""The metric registry: a name → a lazily imported metric class or factory, with default options.

In the spirit of sacreBLEU's ``METRICS`` dict, but lazy: ``register("bertscore",
"metajudge.metrics.bertscore:BERTScore", model="all-MiniLM-L6-v2")`` imports nothing until the
metric is asked for, so ``import metajudge`` and ``metajudge --help`` stay fast.

Other packages add their entries by calling :func:`register` at import time; the modules named in
:data:`PLUGIN_MODULES` (the LLM judges) are imported on the first lookup when they exist.

>>> "bleu" in list_metrics()
True
>>> get_metric("rouge_l").signature.startswith("rouge_l|")
True
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any

from metajudge.errors import InputError
from metajudge.metrics.base import Metric

#: Modules that register more metrics when imported (only if installed / present).
PLUGIN_MODULES: tuple[str, ...] = ("metajudge.metrics.judges",)


@dataclass(frozen=True)
class _Entry:
    name: str
    target: str  # "module:ClassOrFactory"
    defaults: dict[str, Any] = field(default_factory=dict)


_REGISTRY: dict[str, _Entry] = {}
_plugins_loaded = False


def register(name: str, target: str, **defaults: Any) -> None:
    """Register metric ``name`` as ``target`` (``"module:ClassOrFactory"``, imported lazily).

    ``defaults`` are keyword options passed to the target unless :func:`get_metric` overrides
    them. Re-registering a name replaces it (last wins).
    """
    if ":" not in target:
        raise ValueError(f"target must be 'module:attribute', got {target!r}")
    _REGISTRY[name] = _Entry(name, target, dict(defaults))


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for mod in PLUGIN_MODULES:
        try:
            spec = importlib.util.find_spec(mod)
        except ModuleNotFoundError:
            spec = None
        if spec is not None:
            importlib.import_module(mod)


def list_metrics() -> list[str]:
    """Every registered metric name, sorted."""
    _load_plugins()
    return sorted(_REGISTRY)


def _entry(name: str) -> _Entry:
    _load_plugins()
    if name not in _REGISTRY:
        raise InputError(
            f"unknown metric {name!r}; known: {', '.join(sorted(_REGISTRY))}", field="metric"
        )
    return _REGISTRY[name]


def _resolve(target: str) -> Any:
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def get_metric(name: str, **options: Any) -> Metric:
    """A ready metric instance: the registered defaults updated with ``options``."""
    e = _entry(name)
    kwargs = {**e.defaults, **options}
    factory = _resolve(e.target)
    try:
        metric = factory(**kwargs)
    except TypeError as ex:
        raise InputError(f"bad options for metric {name!r}: {ex}", field="options") from None
    if not isinstance(metric, Metric):
        raise TypeError(f"{e.target} did not return a Metric (got {type(metric).__name__})")
    if getattr(metric, "name", None) != name:
        metric.name = name  # a factory registered under an alias keeps the registry name
    return metric


def metric_info(name: str, **options: Any) -> dict[str, Any]:
    """``{name, direction, range, signature, target, defaults}`` (instantiates the metric, loads no model)."""
    e = _entry(name)
    m = get_metric(name, **options)
    try:
        return {
            "name": name,
            "direction": m.direction,
            "range": list(m.range),
            "signature": m.signature,
            "target": e.target,
            "defaults": dict(e.defaults),
        }
    finally:
        m.close()


# Built-in metrics (DESIGN.md §3).
register("bleu", "metajudge.metrics.lexical:BLEU")
register("rouge_l", "metajudge.metrics.lexical:RougeL")
register("meteor", "metajudge.metrics.lexical:Meteor")
register("bertscore", "metajudge.metrics.bertscore:BERTScore")
register("number_match", "metajudge.metrics.number_match:NumberMatch")
