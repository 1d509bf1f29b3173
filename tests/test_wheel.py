"""The package works installed from its built wheel, not only as an editable checkout: the wheel
carries the cards, schemas, templates, prompts, backend configs and published numbers, and its
``metajudge`` command lists the datasets and reproduces RAGChecker's meta-evaluation.

The wheel is built from this checkout and installed (``--no-deps``) into a fresh virtual
environment; the dependencies come from the test's own environment through a ``.pth`` line placed
after the new environment's site-packages (an editable install there is not picked up: ``.pth``
files of an appended folder are not read), so ``metajudge`` itself comes from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: files the installed package reads at run time, one of each kind
SHIPPED = (
    "metajudge/data/cards/ragchecker_meta_eval.json",
    "metajudge/data/schemas/card.schema.json",
    "metajudge/data/published/published_ragchecker.json",
    "metajudge/backends/configs/smollm2-135m.toml",
    "metajudge/metrics/judges/prompts/geval_coherence.paper.txt",
    "metajudge/reports/static/report.css",
    "metajudge/py.typed",
)


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(
        argv, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert p.returncode == 0, f"{' '.join(argv)}\n{p.stdout}\n{p.stderr}"
    return p


def _package_files() -> set[str]:
    """Every non-Python file of ``metajudge/`` the repository tracks."""
    out = subprocess.run(
        ["git", "ls-files", "metajudge"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {f for f in out if not f.endswith(".py")}


def _not_source(folder: str, names: list[str]) -> set[str]:
    """What the copy of the checkout leaves out: caches everywhere; at the top, the environment,
    git, build outputs and run folders (``metajudge/runs/`` is source)."""
    skip = {n for n in names if n == "__pycache__" or n.endswith(("_cache", ".egg-info"))}
    if Path(folder) == ROOT:
        skip |= {".git", ".venv", "build", "dist", "runs", "site"} & set(names)
    return skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the checkout (the build leaves ``build/`` and
    ``*.egg-info`` behind it, not in the checkout)."""
    dist, src = tmp_path_factory.mktemp("dist"), tmp_path_factory.mktemp("src") / "metajudge"
    shutil.copytree(ROOT, src, symlinks=True, ignore=_not_source)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    _run([*argv, "-w", str(dist), str(src)], cwd=dist, env=env)
    (whl,) = dist.glob("metajudge-*.whl")
    return whl


@pytest.mark.slow
def test_the_wheel_carries_every_data_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert set(SHIPPED) <= names
    missing = sorted(_package_files() - names) if (ROOT / ".git").exists() else []
    assert not missing, missing


@pytest.mark.slow
def test_installed_wheel_lists_and_reproduces(wheel: Path, data_dir: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(
        _run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
            env=dict(os.environ),
        ).stdout.strip()
    )
    (site / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["METAJUDGE_DATA_DIR"] = str(data_dir)
    _run(
        [str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        cwd=tmp_path,
        env=env,
    )

    where = _run([str(py), "-c", "import metajudge; print(metajudge.__file__)"], tmp_path, env)
    assert Path(where.stdout.strip()).is_relative_to(env_dir), where.stdout

    exe = str(env_dir / "bin" / "metajudge")
    listing = _run([exe, "data", "list"], tmp_path, env).stdout
    assert "ragchecker_meta_eval" in listing and "alt_test_calderon2025" in listing

    out = tmp_path / "rc"
    argv = [exe, "meta-eval", "--dataset", "ragchecker_meta_eval", "--scores", "shipped"]
    _run([*argv, "--metrics", "ragchecker", "--out", str(out)], tmp_path, env)
    res = json.loads((out / "result.json").read_text(encoding="utf-8"))
    cells = {(c["metric"], c["dimension"]): c["stats"] for c in res["cells"]}
    assert round(100 * cells[("ragchecker", "overall")]["pearson"]["value"], 2) == 61.93
    assert "published" in (out / "table.md").read_text(encoding="utf-8")
    assert (out / "report.html").is_file()
