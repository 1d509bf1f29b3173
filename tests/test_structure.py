"""Structure: functions <= 80 lines, modules <= 800 lines, no import cycle between packages nor
between the modules of one package,
no ``# fmt: skip`` outside pure data tables; the compute layer (``metajudge.stats``,
``metajudge.analyses``) neither renders nor calls models.

A small AST checker (the same rules as the project's structure check): a function's length is
its last line minus its first (decorators included), a module's length its line count; an
import inside a function counts like one at the top. Packages are the directories of
``metajudge`` (a module's package is its parent package).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "metajudge"
MAX_FUNCTION = 80
MAX_MODULE = 800  # a guide of about 800 lines; a module above it fails
#: pure data tables (prompt text, unit lists) may be longer
MODULE_EXCEPTIONS: frozenset[str] = frozenset()
#: packages still being restructured by other slices; the lead removes entries as they land
PENDING: dict[str, str] = {}  # packages not yet held to the limits (none)


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(p: Path) -> str:
    rel = p.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package(p: Path) -> str:
    """A module's unit in the graph: its package; a top-level module (``metajudge.io``,
    ``metajudge.__main__``) is a unit of its own, as in ``shared/tools/structure_check.py``."""
    if p.parent == ROOT and p.name != "__init__.py":
        return _module_name(p)
    return ".".join(p.relative_to(ROOT.parent).parent.parts)


def _packages() -> list[str]:
    return sorted({_package(p) for p in _modules()})


def long_functions(p: Path) -> list[tuple[str, int]]:
    tree = ast.parse(p.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            n = (node.end_lineno or node.lineno) - first + 1
            if n > MAX_FUNCTION:
                out.append((f"{p.name}:{node.lineno}:{node.name}", n))
    return out


_MODULE_NAMES = frozenset(_module_name(p) for p in _modules())


def _imports(p: Path) -> set[str]:
    return {m for m in all_imports(p) if m.startswith("metajudge")}


def all_imports(p: Path, module: str | None = None) -> set[str]:
    """Every module (and ``module.name``) that ``p`` imports, at module level or in a function;
    relative imports resolved against ``module`` (default: ``p``'s place under ``metajudge``)."""
    tree = ast.parse(p.read_text(encoding="utf-8"))
    mod = module or _module_name(p)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".")
                base = base[: len(base) - node.level + (p.name == "__init__.py")]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            subs = {f"{name}.{a.name}" for a in node.names}
            out |= subs
            if not subs <= _MODULE_NAMES:  # `from pkg import mod` imports mod, not pkg
                out.add(name)
    return out


def package_graph() -> dict[str, set[str]]:
    pkgs = set(_packages())
    graph: dict[str, set[str]] = {k: set() for k in pkgs}
    for p in _modules():
        src = _package(p)
        for m in _imports(p):
            # the package of an imported name: its longest prefix that is a package
            parts = m.split(".")
            for k in range(len(parts), 0, -1):
                cand = ".".join(parts[:k])
                if cand in pkgs:
                    if cand != src:
                        graph[src].add(cand)
                    break
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs (a, b) with a path a -> b and b -> a."""
    reach: dict[str, set[str]] = {}
    for a, direct in graph.items():
        seen, todo = set(), list(direct)
        while todo:
            b = todo.pop()
            if b not in seen:
                seen.add(b)
                todo += graph.get(b, ())
        reach[a] = seen
    pairs = {tuple(sorted((a, b))) for a in graph for b in reach[a] if a != b and a in reach[b]}
    return sorted(pairs)  # type: ignore[arg-type]


@functools.cache
def module_graph() -> dict[str, set[str]]:
    """Imports between the modules of one package (``metajudge.data.loading`` ->
    ``metajudge.data.registry``); an imported name counts as its longest prefix that is a module."""
    paths = {_module_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = {k: set() for k in paths}
    for mod, p in paths.items():
        for m in _imports(p):
            parts = m.split(".")
            target = next(
                (c for k in range(len(parts), 0, -1) if (c := ".".join(parts[:k])) in paths), None
            )
            if target and target != mod and _package(paths[target]) == _package(p):
                graph[mod].add(target)
    return graph


def _mark(pkg: str) -> object:
    if pkg in PENDING:
        return pytest.param(pkg, marks=pytest.mark.xfail(strict=False, reason=PENDING[pkg]))
    return pkg


@pytest.mark.parametrize("package", [_mark(p) for p in _packages()])
def test_functions_and_modules_are_short(package: str) -> None:
    problems = []
    for p in _modules():
        if _package(p) != package:
            continue
        problems += long_functions(p)
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE and _module_name(p) not in MODULE_EXCEPTIONS:
            problems.append((p.name, n))
    assert not problems, problems


@pytest.mark.parametrize("package", [_mark(p) for p in _packages()])
def test_no_import_cycle_through_package(package: str) -> None:
    found = [c for c in cycles(package_graph()) if package in c]
    assert not found, found


@functools.cache
def _module_cycles() -> list[tuple[str, str]]:
    return cycles(module_graph())


@pytest.mark.parametrize("package", [_mark(p) for p in _packages()])
def test_no_import_cycle_between_modules_of_a_package(package: str) -> None:
    """Inside a package too: no module imports, directly or through others, one that imports it."""
    unit = {_module_name(p): _package(p) for p in _modules()}
    found = [c for c in _module_cycles() if unit[c[0]] == package]
    assert not found, found


def test_the_checker_sees_cycles_and_long_functions(tmp_path: Path) -> None:
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [("a", "b")]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [("a", "b"), ("a", "c"), ("b", "c")]
    f = tmp_path / "m.py"
    f.write_text("def f():\n" + "    x = 1\n" * 90)
    assert long_functions(f) == [("m.py:1:f", 91)]


def test_metaeval_and_reports_do_not_import_each_other() -> None:
    g = package_graph()
    assert "metajudge.reports" not in g["metajudge.analyses"]
    assert "metajudge.runs" not in g["metajudge.analyses"]
    assert "metajudge.runs" not in g["metajudge.reports"]


#: the compute layer: it receives data (judged scores, verdicts) and returns results
COMPUTE = ("metajudge.stats", "metajudge.analyses")
#: what the compute layer never imports: plotting and templates (rendering is reports/), model
#: calls (backends, the judges), and the layers above it
FORBIDDEN = (
    "matplotlib",
    "jinja2",
    "metajudge.backends",
    "metajudge.metrics.judges",
    "metajudge.reports",
    "metajudge.runs",
    "metajudge.cli",
)
#: pure functions under a forbidden package: parsing a judge's reply text calls no model
ALLOWED = ("metajudge.metrics.judges.parsers",)


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def forbidden(names: set[str]) -> list[str]:
    """The imported names that the compute layer must not import."""
    return sorted(m for m in names if _under(m, FORBIDDEN) and not _under(m, ALLOWED))


@pytest.mark.parametrize("package", COMPUTE)
def test_compute_layer_neither_renders_nor_calls_models(package: str) -> None:
    found = {
        _module_name(p): bad
        for p in _modules()
        if _under(_module_name(p), (package,)) and (bad := forbidden(all_imports(p)))
    }
    assert not found, found


def test_the_compute_checker_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    f = tmp_path / "probe.py"
    f.write_text(
        "import numpy\n"
        "from metajudge.metrics.judges.parsers.ratings import parse_score\n"
        "def f():\n"
        "    import matplotlib.pyplot as plt\n"
        "    from metajudge.backends.registry import get_backend\n"
        "    from ..reports import tables\n"
    )
    names = all_imports(f, module="metajudge.analyses.probe")
    assert forbidden(names) == [
        "matplotlib.pyplot",
        "metajudge.backends.registry",
        "metajudge.backends.registry.get_backend",
        "metajudge.reports.tables",  # `from pkg import module` imports the module
    ]


def test_importing_the_compute_layer_loads_no_renderer_and_no_backend() -> None:
    """Transitively too: every compute module imported in a fresh interpreter; nothing forbidden
    ends up in ``sys.modules`` (an import through data/ or scores/ would show here)."""
    import subprocess
    import sys

    code = (
        "import importlib, pkgutil, sys\n"
        f"for pkg in {COMPUTE!r}:\n"
        "    p = importlib.import_module(pkg)\n"
        "    for m in pkgutil.walk_packages(p.__path__, pkg + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "print('\\n'.join(sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT.parent
    ).stdout.split()
    assert len(out) > 50
    # the parsers' parent packages load with them; their __init__ files import nothing
    parents = {a.rsplit(".", k)[0] for a in ALLOWED for k in range(1, a.count(".") + 1)}
    parents = {m for m in parents if _under(m, FORBIDDEN)}
    assert all(not all_imports(ROOT.parent.joinpath(*m.split("."), "__init__.py")) for m in parents)
    assert forbidden(set(out) - parents) == []


# --- a thin CLI: cli/ parses, calls one run function (metajudge.runs) and prints ------------

#: what a CLI module never imports: the computation is reached through ``metajudge.runs``
CLI_FORBIDDEN = ("metajudge.analyses", "metajudge.stats")
#: the CLI's one printer, the only CLI module that encodes JSON
CLI_PRINTER = "metajudge.cli.output"


def json_encoding_calls(p: Path) -> list[str]:
    """``file:line`` of each ``json.dump``/``json.dumps`` call (``json`` imported under any name,
    or ``dump``/``dumps`` imported from it)."""
    tree = ast.parse(p.read_text(encoding="utf-8"))
    modules, funcs = {"json"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "json"}
        elif isinstance(node, ast.ImportFrom) and node.module == "json":
            funcs |= {a.asname or a.name for a in node.names if a.name in ("dump", "dumps")}
    out: list[int] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        by_module = (
            isinstance(f, ast.Attribute)
            and f.attr in ("dump", "dumps")
            and isinstance(f.value, ast.Name)
            and f.value.id in modules
        )
        if by_module or (isinstance(f, ast.Name) and f.id in funcs):
            out.append(node.lineno)
    return [f"{p.name}:{n}" for n in sorted(out)]


def cli_leaks(p: Path, module: str | None = None) -> list[str]:
    """What a CLI module does that belongs below it: imports of the compute layer, JSON encoded
    outside the one printer."""
    mod = module or _module_name(p)
    bad = sorted(m for m in all_imports(p, mod) if _under(m, CLI_FORBIDDEN))
    return bad + ([] if mod == CLI_PRINTER else json_encoding_calls(p))


def _cli_modules() -> list[Path]:
    return [p for p in _modules() if _under(_module_name(p), ("metajudge.cli",))]


@pytest.mark.parametrize("path", _cli_modules(), ids=lambda p: p.stem)
def test_cli_modules_only_parse_call_and_print(path: Path) -> None:
    """A thin CLI: no CLI module imports ``metajudge.analyses`` or ``metajudge.stats`` (the run
    functions of ``metajudge.runs`` call them), and JSON is encoded only by ``cli/output.py``."""
    found = cli_leaks(path)
    assert not found, found


def test_the_cli_checker_sees_compute_imports_and_json(tmp_path: Path) -> None:
    f = tmp_path / "probe.py"
    f.write_text(
        "import json as j\n"
        "from json import dumps\n"
        "def f(x):\n"
        "    from metajudge.analyses.alt_test import alt_test\n"
        "    from ..stats import power\n"
        "    print(j.dumps(x))\n"
        "    j.dump(x, None)\n"
        "    return dumps(x), j.loads('1')\n"
    )
    assert cli_leaks(f, module="metajudge.cli.probe") == [
        "metajudge.analyses.alt_test",
        "metajudge.analyses.alt_test.alt_test",
        "metajudge.stats.power",
        "probe.py:6",
        "probe.py:7",
        "probe.py:8",
    ]
    assert cli_leaks(f, module=CLI_PRINTER) == cli_leaks(f, module="metajudge.cli.probe")[:3]


# --- run folders are written through metajudge.run_folder ------------------------------------

#: the layers that write run folders (tables, plots, pages, results)
FOLDER_WRITERS = ("metajudge.reports", "metajudge.runs")
#: modules there that write files the user names (``-o FILE``) or the stored baselines, not run
#: folders: they write through ``metajudge.io``
USER_FILE_WRITERS = {
    "metajudge.runs.agreement": "data agreement -o FILE",
    "metajudge.runs.stats_commands": "stats rank-clusters/kendall -o FILE",
    "metajudge.runs.matrix.table": "matrix list -o FILE",
    "metajudge.runs.baselines": "baselines check --write: the stored baselines/",
    "metajudge.runs.rank_baselines": "the stored baselines/ of rank clusters",
    "metajudge.runs.verdicts": "judge verdicts -o FILE",
    "metajudge.runs.calibrate_estimate": "calibrate plan -o FILE",
    "metajudge.runs.plot_ahead": "its child's temporary folder (plots drawn ahead, errors)",
}


def direct_file_writes(p: Path) -> list[str]:
    """``file:line`` of each call that writes a file other than through ``metajudge.run_folder``:
    ``atomic_write(...)``, ``open(..., "w"/"wb")``, ``Path.write_text/write_bytes`` and
    ``fig.savefig(...)``."""
    out: list[int] = []
    for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        # open(path, mode) or path.open(mode); writing os.devnull writes no file
        args = node.args if isinstance(f, ast.Name) else [None, *node.args]
        mode = args[1] if name == "open" and len(args) > 1 else None
        devnull = name == "open" and bool(args[0]) and "devnull" in ast.unparse(args[0])
        writes_open = isinstance(mode, ast.Constant) and "w" in str(mode.value) and not devnull
        # Path.write_text(text); RunFolder.write_text(name, text) writes through run_folder
        path_write = name in ("write_text", "write_bytes") and len(node.args) == 1
        if name in ("atomic_write", "savefig") or path_write or writes_open:
            out.append(node.lineno)
    return [f"{p.name}:{n}" for n in sorted(out)]


def test_run_folders_are_written_through_run_folder() -> None:
    """A report or run writes its folder's files with ``metajudge.run_folder.write_file`` (and
    ``write_json_file``, ``write_png``, ``RunFolder.write_text``): atomic, and in the stage the
    manifest vouches for; only the writers of user-named files write directly."""
    found = {
        _module_name(p): hits
        for p in _modules()
        if _under(_module_name(p), FOLDER_WRITERS)
        and _module_name(p) not in USER_FILE_WRITERS
        and (hits := direct_file_writes(p))
    }
    assert not found, found


def test_the_writer_checker_sees_direct_writes(tmp_path: Path) -> None:
    f = tmp_path / "w.py"
    f.write_text(
        "def f(fig, p, out):\n"
        "    with atomic_write(p) as fh:\n"
        "        fh.write('x')\n"
        "    fig.savefig(p)\n"
        "    open(p, 'w').close()\n"
        "    open(p).read()\n"
        "    open(os.devnull, 'w').close()\n"
        "    p.open('wb').close()\n"
        "    p.write_text('x')\n"
        "    write_file(out, 'a.md', 'x')\n"
        "    rf.write_text('a.md', 'x')\n"
    )
    assert direct_file_writes(f) == ["w.py:2", "w.py:4", "w.py:5", "w.py:8", "w.py:9"]


# --- formatting: ``# fmt: skip`` / ``# fmt: off`` only on pure data tables -------------------

#: ``module:name`` of an assignment whose value is not a literal but may keep its own layout,
#: with the reason (none today)
FMT_SKIP_ALLOWED: dict[str, str] = {}


def _fmt_pragma_lines(src: str) -> list[int]:
    """Lines holding a ``# fmt: skip`` / ``# fmt: off`` / ``# fmt: on`` comment (not string text)."""
    import io
    import tokenize

    out = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        text = tok.string.lstrip("#").strip()
        if tok.type == tokenize.COMMENT and text.startswith(("fmt: skip", "fmt: off", "fmt: on")):
            out.append(tok.start[0])
    return out


def _is_data_table(node: ast.AST) -> bool:
    """An assignment whose value is a literal tuple, list, set or dict (``ast.literal_eval`` can read it)."""
    value = getattr(node, "value", None)
    if not isinstance(node, (ast.Assign, ast.AnnAssign)) or value is None:
        return False
    if not isinstance(value, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
        return False
    try:
        ast.literal_eval(value)
    except ValueError:
        return False
    return True


def _assigned_name(node: ast.AST) -> str:
    targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
    return ast.unparse(targets[0]) if targets[0] is not None else "?"


def unformatted_code(p: Path) -> list[str]:
    """``file:line`` of each fmt pragma not inside a pure data table (or an allowed assignment)."""
    src = p.read_text(encoding="utf-8")
    lines = _fmt_pragma_lines(src)
    if not lines:
        return []
    mod = _module_name(p) if p.is_relative_to(ROOT) else p.stem
    spans = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            allowed = f"{mod}:{_assigned_name(node)}" in FMT_SKIP_ALLOWED
            if allowed or _is_data_table(node):
                spans.append((node.lineno, node.end_lineno or node.lineno))
    return [f"{p.name}:{n}" for n in lines if not any(a <= n <= b for a, b in spans)]


def test_fmt_skip_only_on_data_tables() -> None:
    found = [hit for p in _modules() for hit in unformatted_code(p)]
    assert not found, f"code kept out of ruff format (write it out formatted): {found}"


def test_the_checker_sees_fmt_skip_outside_data_tables(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text(
        "NAMES = (\n    'a', 'b',\n)  # fmt: skip\n"
        "x = f(1,\n      2)  # fmt: skip\n"
        "y = [g(1),\n     2]  # fmt: skip\n"
        "s = '# fmt: skip'\n"
        "if x: y = 1; z = 2  # fmt: skip\n"
    )
    assert unformatted_code(f) == ["m.py:5", "m.py:7", "m.py:9"]
