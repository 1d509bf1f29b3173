"""docs/architecture.md: each trace from a command to its number names real ``file:function``
hops in ``metajudge/`` and crosses at most 6 files."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "metajudge"
MAX_FILES = 6
TRACES = (
    "the `meta-eval` Pearson CI",
    "the Alt-Test winning rate",
    "the `calibrate conformal` coverage",
)
HOP = re.compile(r"`([\w/]+\.py):(\w+(?:\.\w+)?)`")


def _traces() -> dict[str, str]:
    """``title -> text`` of every ``### Trace N: title`` section."""
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(
        r"^### Trace \d+: (.+?)\n(.*?)(?=^#{1,3} |\Z)", text, flags=re.DOTALL | re.MULTILINE
    )
    return {title.strip(): body for title, body in found}


@functools.cache
def _defined(path: Path) -> frozenset[str]:
    """Every function and class of ``path``, as ``name`` and ``Class.name``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {
                f"{node.name}.{f.name}"
                for f in node.body
                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
            }
    return frozenset(names)


def test_the_three_traces_are_there() -> None:
    assert set(_traces()) == set(TRACES)


@pytest.mark.parametrize("title", TRACES)
def test_every_hop_exists(title: str) -> None:
    hops = HOP.findall(_traces()[title])
    assert len(hops) >= 3, title
    for file, func in hops:
        path = PACKAGE / file
        assert path.is_file(), f"{title}: no file metajudge/{file}"
        assert func in _defined(path), f"{title}: no {func} in metajudge/{file}"


@pytest.mark.parametrize("title", TRACES)
def test_each_trace_crosses_at_most_six_files(title: str) -> None:
    files = {file for file, _ in HOP.findall(_traces()[title])}
    assert len(files) <= MAX_FILES, f"{title}: {len(files)} files: {sorted(files)}"


def test_every_hop_of_the_page_exists() -> None:
    """The hops outside the traces too (the engine's section): real files and functions."""
    hops = HOP.findall(DOC.read_text(encoding="utf-8"))
    assert any(file.startswith("engine/") for file, _ in hops)
    for file, func in hops:
        assert func in _defined(PACKAGE / file), f"no {func} in metajudge/{file}"


def test_the_trace_checker_sees_a_wrong_hop() -> None:
    assert "no_such_function" not in _defined(PACKAGE / "stats" / "bootstrap.py")
    assert "correlate" in _defined(PACKAGE / "stats" / "bootstrap.py")
