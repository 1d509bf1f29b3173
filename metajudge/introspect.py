"""The keyword options a function or class takes, read from its signature and annotations.

One reader for two users: ``--option METRIC.KEY=VALUE`` checks a value against the parameter
(:func:`metajudge.cli.types.check_kwargs`), and ``metajudge metrics show`` lists every option
with its type, default and choices (:func:`metajudge.metrics.registry.metric_options`).

>>> def f(x: int = 3, *, mode: typing.Literal['a', 'b'] = 'a', **kw): ...
>>> [(o.name, o.type_text, o.default, o.choices) for o in options(f)]
[('x', 'int', 3, None), ('mode', "'a' | 'b'", 'a', ('a', 'b'))]
"""

from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any

_NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True)
class Option:
    """One keyword option: its annotation (None when it cannot be evaluated: a type imported for
    type checking only, i.e. an object that cannot be given as text) and default."""

    name: str
    hint: Any
    default: Any

    @property
    def choices(self) -> tuple[Any, ...] | None:
        """The allowed values of a ``Literal`` annotation (``X | None`` adds None), else None."""
        return literal_choices(self.hint)

    @property
    def type_text(self) -> str:
        return type_text(self.hint)

    @property
    def settable(self) -> bool:
        """Whether the option can be given as a value on the command line."""
        return self.hint is not None


def _owners(fn: Any) -> list[Any]:
    return [c.__init__ for c in inspect.getmro(fn)] if inspect.isclass(fn) else [fn]


def _evaluate(ann: Any, owner: Any) -> Any:
    if ann is _NO_DEFAULT:
        return Any
    if isinstance(ann, str):
        scope = {"typing": typing, **getattr(owner, "__globals__", {})}
        try:
            return eval(ann, scope)  # the code's own annotation
        except Exception:  # noqa: BLE001 (a name imported under TYPE_CHECKING)
            return None
    return ann


def options(fn: Any) -> list[Option]:
    """Every named parameter of ``fn`` (a class: its ``__init__`` along the MRO, the first
    definition of a name winning), in order; ``self``, ``*args`` and ``**kwargs`` left out."""
    seen: dict[str, Option] = {}
    for owner in _owners(fn):
        try:
            params = inspect.signature(owner).parameters
        except (TypeError, ValueError):
            continue
        for p in params.values():
            if p.name == "self" or p.name in seen:
                continue
            if p.kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL):
                continue
            default = None if p.default is _NO_DEFAULT else p.default
            seen[p.name] = Option(p.name, _evaluate(p.annotation, owner), default)
    return list(seen.values())


def parameter(fn: Any, key: str) -> tuple[bool, Any, Any]:
    """``(found, type, default)`` of parameter ``key`` of ``fn`` (see :func:`options`); ``type``
    is None when the annotation cannot be evaluated."""
    for opt in options(fn):
        if opt.name == key:
            return True, opt.hint, opt.default
    return False, None, None


def literal_choices(hint: Any) -> tuple[Any, ...] | None:
    """``Literal["a", "b"]`` → ``("a", "b")``; ``Literal[...] | None`` adds None; else None."""
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        parts = [literal_choices(a) for a in typing.get_args(hint) if a is not type(None)]
        if len(parts) == 1 and parts[0] is not None:
            return (*parts[0], None)
    return None


def type_text(hint: Any) -> str:
    """A short name for an annotation: ``int``, ``float | None``, ``'13a' | 'whitespace'``."""
    if hint is None:
        return "object (not settable as text)"
    if hint is Any:
        return "any"
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in typing.get_args(hint))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_text(a) for a in typing.get_args(hint))
    if hint is type(None):
        return "None"
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
