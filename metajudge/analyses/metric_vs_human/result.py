"""The result of a meta-evaluation: JSON data with typed accessors (:class:`~metajudge.results.Result`).

Layout (``to_dict()``, schema ``metajudge.analyses/1``): ``dataset`` {name, subset, kind, scale,
dimensions, n_pairs, n_items, annotators}, ``protocol`` (the :class:`~metajudge.analyses.metric_vs_human.protocol.
Protocol` options and how each step is defined), ``metrics`` [{name, columns, signatures,
missing}], ``cells`` [{metric, dimension, column, n_rows, n_items, stats: {stat: {value, ci,
ci_method (:func:`~metajudge.stats.intervals.choose`), ci_n (its independent units),
fisher_ci, undefined}}}], ``ceiling`` [{dimension, method, stats}], ``comparisons`` [...],
``points`` (per-pair values for plots) and, once a report attached them, ``published`` [...].
Every value is plain JSON (no arrays): ``metajudge report DIR`` re-renders from the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metajudge.errors import InputError
from metajudge.io import atomic_write, read_json
from metajudge.results import Result

SCHEMA = "metajudge.analyses/1"
#: The keys of a ``result.json`` that the tables and plots read, with their JSON types.
_REQUIRED: tuple[tuple[str, type], ...] = (
    ("dataset", dict),
    ("protocol", dict),
    ("metrics", list),
    ("cells", list),
    ("ceiling", list),
)


@dataclass
class MetaEvalResult(Result):
    """A meta-evaluation result (see the module docstring for the layout of ``data``)."""

    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.data

    def to_pandas(self) -> Any:
        """One row per (metric, dimension, statistic): value, CI and its method, Fisher CI, n,
        undefined reason."""
        import pandas as pd

        rows = []
        for c in self.data["cells"]:
            for s, e in c["stats"].items():
                ci = e.get("ci") or [None, None]
                fci = e.get("fisher_ci") or [None, None]
                rows.append(
                    {
                        "metric": c["metric"],
                        "dimension": c["dimension"],
                        "statistic": s,
                        "value": e.get("value"),
                        "ci_low": ci[0],
                        "ci_high": ci[1],
                        "fisher_low": fci[0],
                        "fisher_high": fci[1],
                        "ci_method": e.get("ci_method"),
                        "n_rows": c.get("n_rows"),
                        "n_items": c.get("n_items"),
                        "undefined": e.get("undefined"),
                    }
                )
        return pd.DataFrame(rows)

    # accessors -----------------------------------------------------------------------------
    @property
    def metrics(self) -> list[str]:
        return [m["name"] for m in self.data["metrics"]]

    @property
    def dimensions(self) -> list[str]:
        return list(self.data["dataset"]["dimensions"])

    @property
    def comparisons(self) -> list[dict[str, Any]]:
        return list(self.data.get("comparisons", []))

    def cell(self, metric: str, dimension: str) -> dict[str, Any]:
        for c in self.data["cells"]:
            if c["metric"] == metric and c["dimension"] == dimension:
                return c
        raise KeyError(f"no cell for metric {metric!r} and dimension {dimension!r}")

    def value(self, metric: str, dimension: str, statistic: str = "pearson") -> float | None:
        """The point value (None when undefined)."""
        return self.cell(metric, dimension)["stats"][statistic]["value"]

    def ci(self, metric: str, dimension: str, statistic: str = "pearson") -> list[float] | None:
        """The bootstrap interval (None without bootstrap or when undefined)."""
        return self.cell(metric, dimension)["stats"][statistic]["ci"]

    def ceiling(self, dimension: str, statistic: str = "pearson") -> float | None:
        for c in self.data["ceiling"]:
            if c["dimension"] == dimension:
                return c["stats"][statistic]["value"]
        raise KeyError(dimension)

    def cells_of(self, metric: str, dimension: str | None = None) -> list[dict[str, Any]]:
        """The metric's cells (on ``dimension`` only, where given), in the result's order."""
        return [
            c
            for c in self.data.get("cells", [])
            if c["metric"] == metric and (dimension is None or c["dimension"] == dimension)
        ]

    def ceiling_stat(self, dimension: str, statistic: str = "pearson") -> dict[str, Any]:
        """The inter-human ceiling's entry of ``statistic`` on ``dimension`` (``value``, ``ci``,
        ``undefined``); {} without a ceiling there."""
        for c in self.data.get("ceiling", []):
            if c.get("dimension") == dimension:
                return dict(c["stats"][statistic])
        return {}

    def signatures(self) -> list[str]:
        """Every signature of every metric's columns (the judges' definitions), sorted."""
        return sorted(
            {
                s
                for m in self.data.get("metrics", [])
                for v in (m.get("signatures") or {}).values()
                for s in v
            }
        )

    # I/O ------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        path = Path(path)
        with atomic_write(path) as fh:
            fh.write(self.to_json() + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> MetaEvalResult:
        """Read a ``result.json``; a missing or unreadable file, bad JSON, another schema or a
        missing key raise :class:`InputError` naming the file and the key."""
        path = Path(path)
        if not path.exists():
            raise InputError("result file not found (run `metajudge meta-eval` first)", path=path)
        data = read_json(path)
        if not isinstance(data, dict):
            raise InputError(
                f"expected a JSON object, got {type(data).__name__}", path=path, field="<json>"
            )
        if data.get("schema", SCHEMA) != SCHEMA:
            raise InputError(
                f"not a metajudge meta-evaluation result (schema {SCHEMA!r} expected)",
                path=path,
                field="schema",
            )
        for key, kind in (("schema", str), *_REQUIRED):
            if key not in data:
                raise InputError(
                    f"missing key {key!r}: not a complete meta-evaluation result (rerun "
                    "`metajudge meta-eval`)",
                    path=path,
                    field=key,
                )
            if not isinstance(data[key], kind):
                raise InputError(
                    f"expected {kind.__name__}, got {type(data[key]).__name__}",
                    path=path,
                    field=key,
                )
        return cls(data)
