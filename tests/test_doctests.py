"""The docstring examples of the meta-evaluation, reports and pipeline packages run and hold."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import metajudge

PACKAGES = ("metajudge.analyses", "metajudge.reports", "metajudge.runs")


def _modules() -> list[str]:
    out = ["metajudge"]
    for pkg in PACKAGES:
        mod = importlib.import_module(pkg)
        out.append(pkg)
        out += [m.name for m in pkgutil.walk_packages(mod.__path__, pkg + ".")]
    return sorted(out)


@pytest.mark.parametrize("name", _modules())
def test_doctests(name: str) -> None:
    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0, name


def test_the_engine_has_examples() -> None:
    attempted = sum(
        doctest.testmod(importlib.import_module(n), report=False).attempted
        for n in _modules()
        if n.startswith("metajudge.analyses")
    )
    assert attempted >= 20
    assert metajudge.__version__
