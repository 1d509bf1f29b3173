"""docs/architecture.md: each trace from a command to its number names real ``file:function``
hops in ``metajudge/``; the hand-written traces cross at most 6 files, and the recorded ones (the
``meta-eval`` Pearson CI, the ``judge card`` agreement CI, a ``calibrate estimate`` system CI) list
exactly the modules recorded at run time (:func:`recorded_paths`, one :class:`Trigger` each),
none entered twice along one value's path."""

from __future__ import annotations

import ast
import functools
import re
import sys
import threading
from dataclasses import dataclass
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
    "the `judge card` agreement CI",
    "a `calibrate estimate` system CI",
)
#: the traces checked against the modules recorded at run time (every module they pass through)
RECORDED = (TRACES[0], TRACES[3], TRACES[4])
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


def test_the_five_traces_are_there() -> None:
    assert set(_traces()) == set(TRACES)


@pytest.mark.parametrize("title", TRACES)
def test_every_hop_exists(title: str) -> None:
    hops = HOP.findall(_traces()[title])
    assert len(hops) >= 3, title
    for file, func in hops:
        path = PACKAGE / file
        assert path.is_file(), f"{title}: no file metajudge/{file}"
        assert func in _defined(path), f"{title}: no {func} in metajudge/{file}"


@pytest.mark.parametrize("title", [t for t in TRACES if t not in RECORDED])
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
    assert "bootstrap_ci" in _defined(PACKAGE / "stats" / "bootstrap.py")


def _stop(module: str) -> str:
    """The stop of a trace a ``metajudge`` module is: its file relative to ``metajudge/``, or
    ``engine`` for the resampling engine (``metajudge.engine.*`` or its modules in ``stats``)."""
    parts = module.split(".")[1:]
    if parts[:1] == ["engine"] or (parts[:1] == ["stats"] and parts[-1] in ENGINE):
        return "engine"
    path = "/".join(parts)
    return f"{path}.py" if (PACKAGE / f"{path}.py").is_file() else f"{path}/__init__.py"


@dataclass(frozen=True)
class Trigger:
    """Where a trace's value is made: a call of a function of one of ``makes`` (``(module, name
    prefix)``; ``""`` any function of the module) while a frame of module ``within`` is on the
    stack."""

    makes: tuple[tuple[str, str], ...]
    within: str

    def fires(self, module: str, name: str) -> bool:
        """A call of a function that makes the value (a module's import is none)."""
        return name != "<module>" and any(module == m and name.startswith(p) for m, p in self.makes)


#: the ``meta-eval`` Pearson CI: the point value's entry and the engine's formula
#: (``stats.correlation.pearson*``, ``engine.formulas.pearson*``), a resample's Pearson, and the
#: interval (``stats.intervals.choose``), from a cell
PEARSON = Trigger(
    makes=(
        ("metajudge.stats.correlation", "pearson"),
        ("metajudge.engine.formulas", "pearson"),
        ("metajudge.stats.intervals", "choose"),
    ),
    within="metajudge.analyses.metric_vs_human.cells",
)


#: the ``judge card`` agreement CI: the same values as ``meta-eval``'s (the card's agreement part
#: is a ``meta-eval`` run)
CARD = PEARSON
#: a ``calibrate estimate`` system CI: the calibration map's fit and predictions
#: (``analyses.calibration.maps``) and the clustered variances and the t interval
#: (``stats.clustered``), from the estimate (``analyses.calibration.estimate``)
ESTIMATE = Trigger(
    makes=(("metajudge.analyses.calibration.maps", ""), ("metajudge.stats.clustered", "")),
    within="metajudge.analyses.calibration.estimate",
)


def recorded_paths(argv: list[str], trigger: Trigger) -> set[tuple[str, ...]]:
    """Run ``metajudge argv`` with a profile hook on every thread; at each call where
    ``trigger`` fires, record the path of the value: the stops of the ``metajudge`` frames on
    the stack, outermost first, consecutive frames of one stop as one."""
    from metajudge.cli import main

    paths: set[tuple[str, ...]] = set()

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        if not trigger.fires(frame.f_globals.get("__name__", ""), frame.f_code.co_name):
            return
        stack, f = [], frame
        while f is not None:
            stack.append(f.f_globals.get("__name__", ""))
            f = f.f_back
        if trigger.within in stack:
            stops = [_stop(m) for m in reversed(stack) if m.startswith("metajudge.")]
            paths.add(tuple(s for i, s in enumerate(stops) if i == 0 or stops[i - 1] != s))

    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        assert main(argv) == 0
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return paths


def _check_recorded(title: str, paths: set[tuple[str, ...]], must: set[str]) -> None:
    """The trace ``title`` lists the stops of ``paths`` (which hold ``must``: the hook saw the
    value made), and no path enters a module twice."""
    recorded = set().union(*paths)
    assert must <= recorded, sorted(recorded)
    hops = HOP.findall(_traces()[title])
    listed = {_stop("metajudge." + f.removesuffix(".py").replace("/", ".")) for f, _ in hops}
    assert listed == recorded, (sorted(listed - recorded), sorted(recorded - listed))
    assert [p for p in paths if len(set(p)) < len(p)] == []


def test_the_pearson_trace_lists_the_recorded_modules(data_dir: Path, tmp_path: Path) -> None:
    argv = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", "shipped",
            "--metrics", "ragchecker", "--n-boot", "100", "--no-plots", "--paths-only",
            "--data-dir", str(data_dir), "--out", str(tmp_path / "run")]  # fmt: skip
    paths = recorded_paths(argv, PEARSON)
    _check_recorded(RECORDED[0], paths, {"engine", "stats/intervals.py"})


def test_the_card_trace_lists_the_recorded_modules(data_dir: Path, tmp_path: Path) -> None:
    argv = ["judge", "card", "--dataset", "trust_or_escalate_jung2025", "--judge", "gpt-4-turbo",
            "--n-boot", "100", "--repeats", "3",
            "--data-dir", str(data_dir), "--out", str(tmp_path / "card")]  # fmt: skip
    paths = recorded_paths(argv, CARD)
    _check_recorded(RECORDED[1], paths, {"engine", "runs/judge_card.py", "stats/intervals.py"})


def test_the_estimate_trace_lists_the_recorded_modules(data_dir: Path) -> None:
    fresh = data_dir / "cje_arena_sample" / "fresh_draws"
    paths = recorded_paths(["calibrate", "estimate", "--input", str(fresh)], ESTIMATE)
    _check_recorded(RECORDED[2], paths, {"analyses/calibration/maps.py", "stats/clustered.py"})


def test_a_trigger_fires_on_its_calls_only() -> None:
    assert ESTIMATE.fires("metajudge.stats.clustered", "t_interval")
    assert not ESTIMATE.fires("metajudge.stats.clustered", "<module>")
    assert PEARSON.fires("metajudge.engine.formulas", "pearson_from_sums")
    assert not PEARSON.fires("metajudge.stats.intervals", "percentile_ci")


def test_stops_fold_the_engine() -> None:
    assert _stop("metajudge.stats.moments") == _stop("metajudge.engine.passes") == "engine"
    assert _stop("metajudge.stats.bootstrap") == "stats/bootstrap.py"
    assert _stop("metajudge.cli") == "cli/__init__.py"
