"""The one protocol of every result: ``to_dict()``, ``to_json()`` and ``to_pandas()``.

A result class derives from :class:`Result` and defines :meth:`Result.to_dict` (a dataclass gets
one for free: its fields, :func:`dataclasses.asdict`); it overrides :meth:`Result.to_pandas`
when its table is not the one-row flattening of that dict.

- ``to_dict()`` — the result as plain JSON data (dicts, lists, str, numbers, None);
- ``to_json(**kw)`` — that dict as JSON text: non-finite floats written as ``null`` (never
  ``NaN``, which is not JSON), ``allow_nan=False``, ``ensure_ascii=False``, ``indent=1`` unless
  ``kw`` says otherwise (the layout of every ``result.json`` the project writes);
- ``to_pandas()`` — a :class:`pandas.DataFrame` (pandas is imported only here, lazily).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def finite(obj: Any) -> Any:
    """``obj`` as JSON data: NaN and ±inf become None, tuples lists, numpy scalars Python numbers.

    >>> finite({"r": float("nan"), "ci": (0.1, float("inf")), "n": 3})
    {'r': None, 'ci': [0.1, None], 'n': 3}
    """
    t = type(obj)  # (the common exact types first: a run's report holds a million values)
    if t is float:
        return obj if math.isfinite(obj) else None
    if t is str or t is int or t is bool or obj is None:
        return obj
    if t is dict:
        return {k: finite(v) for k, v in obj.items()}
    if t is list:
        return [finite(v) for v in obj]
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    item = getattr(obj, "item", None)  # numpy scalars (np.float64, np.int64, np.bool_)
    if item is not None and getattr(obj, "shape", None) == ():
        return finite(item())
    return obj


class Result:
    """Base of every result: subclasses define :meth:`to_dict` (dataclasses inherit one)."""

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON data; a dataclass result gives its fields."""
        if dataclasses.is_dataclass(self):
            return dataclasses.asdict(self)
        raise TypeError(f"{type(self).__name__} is not a dataclass and defines no to_dict()")

    def to_json(self, **kw: Any) -> str:
        """:meth:`to_dict` as JSON text (see the module docstring; ``kw`` goes to ``json.dumps``)."""
        opts: dict[str, Any] = {"indent": 1, "ensure_ascii": False} | kw
        return json.dumps(finite(self.to_dict()), allow_nan=False, **opts)

    def to_pandas(self) -> pd.DataFrame:
        """One row: :meth:`to_dict` flattened one level (``a.b`` columns)."""
        import pandas as pd

        return pd.json_normalize(self.to_dict(), max_level=1)


class ItemAccess:
    """Compatibility for results that used to be dicts: ``res["name"]`` is ``res.name`` for a
    key of :meth:`Result.to_dict` (KeyError otherwise), ``dict(res)`` its :meth:`keys`. New code
    uses the attributes and ``to_dict()``; this goes with the dict spelling."""

    def keys(self) -> list[str]:
        return list(self.to_dict())  # type: ignore[attr-defined]

    def __getitem__(self, key: str) -> Any:
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)


def as_data(res: Result | Mapping[str, Any]) -> Mapping[str, Any]:
    """What a renderer reads: a result's :meth:`Result.to_dict`, or a mapping as it is (the JSON
    of a result read back from its file, e.g. ``swap.json``)."""
    return res.to_dict() if isinstance(res, Result) else res
