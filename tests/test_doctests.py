"""The docstring examples run once, by pytest's ``--doctest-modules`` over ``metajudge/``.

This module runs none of them (they used to run three times: here, in the protocol's tests and
by the collector); it checks that the collector is configured to run them and that the modules
whose examples document the engine still have them.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import tomllib
from pathlib import Path
from types import ModuleType

import metajudge
from metajudge import stats

_PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

#: modules whose examples are part of their documentation: each keeps at least one
DOCUMENTED = (
    *(f"metajudge.stats.{m}" for m in stats.MODULES),
    "metajudge.stats.ppi",
    "metajudge.engine.weighted",
    "metajudge.engine.formulas",
    "metajudge.analyses.metric_vs_human.normalize",
    "metajudge.scores.readers.rows",
    "metajudge.analyses.decide.noninferiority",
    "metajudge.analyses.decide.frontier",
)


def _examples(mod: ModuleType) -> int:
    """How many docstring examples ``mod`` defines (found, not run)."""
    tests = doctest.DocTestFinder().find(mod, mod.__name__)
    return sum(len(t.examples) for t in tests)


def _package_modules(pkg: str) -> list[ModuleType]:
    mod = importlib.import_module(pkg)
    names = [m.name for m in pkgutil.walk_packages(mod.__path__, pkg + ".")]
    return [mod, *(importlib.import_module(n) for n in names)]


def test_the_collector_runs_the_doctests_of_metajudge() -> None:
    ini = tomllib.loads(_PYPROJECT.read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert "--doctest-modules" in ini["addopts"].split()
    assert "metajudge" in ini["testpaths"]


def test_the_engine_has_examples() -> None:
    assert sum(_examples(m) for m in _package_modules("metajudge.analyses")) >= 20
    missing = [n for n in DOCUMENTED if _examples(importlib.import_module(n)) == 0]
    assert not missing, missing
    assert metajudge.__version__
