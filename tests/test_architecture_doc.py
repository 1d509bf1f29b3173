"""docs/architecture.md: each trace from a command to its number names real ``file:function``
hops in ``metajudge/``; the hand-written traces cross at most 6 files, and the ``meta-eval``
Pearson CI trace lists exactly the modules recorded at run time (:func:`_recorded_stops`)."""

from __future__ import annotations

import ast
import functools
import re
import sys
import threading
from pathlib import Path
from typing import Any

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
#: the trace checked against the modules recorded at run time (every module it passes through)
RECORDED = TRACES[0]
#: the resampling engine's modules before they moved from ``stats/`` to ``engine/`` (one stop of a
#: trace, wherever they live)
ENGINE = ("weighted", "moments", "resample", "rank_pass", "count_pass", "weighted_kendall")
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


@pytest.mark.parametrize("title", [t for t in TRACES if t != RECORDED])
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


def _stop(module: str) -> str:
    """The stop of a trace a ``metajudge`` module is: its file relative to ``metajudge/``, or
    ``engine`` for the resampling engine (``metajudge.engine.*`` or its modules in ``stats``)."""
    parts = module.split(".")[1:]
    if parts[:1] == ["engine"] or (parts[:1] == ["stats"] and parts[-1] in ENGINE):
        return "engine"
    path = "/".join(parts)
    return f"{path}.py" if (PACKAGE / f"{path}.py").is_file() else f"{path}/__init__.py"


#: where a Pearson value is made: the point value's entry and the engine's formula
PEARSON_MODULES = ("metajudge.stats.correlation", "metajudge.engine.formulas")


def _recorded_stops(argv: list[str]) -> set[str]:
    """Run ``metajudge argv`` with a profile hook on every thread; at each call that makes the
    Pearson value, a resample's Pearson or the interval (``stats.correlation.pearson*``,
    ``engine.formulas.pearson*``,
    ``stats.intervals.choose``) from a cell (``analyses.metric_vs_human.cells`` on the stack),
    record the stop of every ``metajudge`` frame on the stack."""
    from metajudge.cli import main

    stops: set[str] = set()

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        module, name = frame.f_globals.get("__name__", ""), frame.f_code.co_name
        if not (
            (module in PEARSON_MODULES and name.startswith("pearson"))
            or (module == "metajudge.stats.intervals" and name == "choose")
        ):
            return
        stack, f = [], frame
        while f is not None:
            stack.append(f.f_globals.get("__name__", ""))
            f = f.f_back
        if "metajudge.analyses.metric_vs_human.cells" in stack:
            stops.update(_stop(m) for m in stack if m.startswith("metajudge."))

    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        assert main(argv) == 0
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return stops


def test_the_pearson_trace_lists_the_recorded_modules(data_dir: Path, tmp_path: Path) -> None:
    argv = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", "shipped",
            "--metrics", "ragchecker", "--n-boot", "100", "--no-plots", "--paths-only",
            "--data-dir", str(data_dir), "--out", str(tmp_path / "run")]  # fmt: skip
    recorded = _recorded_stops(argv)
    hops = HOP.findall(_traces()[RECORDED])
    listed = {_stop("metajudge." + f.removesuffix(".py").replace("/", ".")) for f, _ in hops}
    assert "engine" in recorded and "stats/intervals.py" in recorded  # the hook saw the CI
    assert listed == recorded, (sorted(listed - recorded), sorted(recorded - listed))


def test_stops_fold_the_engine() -> None:
    assert _stop("metajudge.stats.moments") == _stop("metajudge.engine.passes") == "engine"
    assert _stop("metajudge.stats.bootstrap") == "stats/bootstrap.py"
    assert _stop("metajudge.cli") == "cli/__init__.py"
