"""deepeval and ragas run for real (issue 39, slow tier): each framework, installed from PyPI
into one virtual environment of its own (``tests/fixtures/frameworks/requirements.txt``; never
metajudge's), runs its fixture's maker script on 4 responses with the embedded backbone's
OpenAI-compatible endpoint as the judge; ``meta-eval --scores <the file it wrote>`` gives the
same correlations, CIs and significance as the same scores written as a plain score CSV, and
``data doctor`` names the file's format.

The environment is built once per requirements file and Python version under pytest's cache
(``.pytest_cache/d/framework-venv``) and reused; no network to PyPI fails the test, it does not
skip."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from metajudge.cli import main
from tests.scores.framework_helpers import FIX, LABELS, _same_as_plain
from tests.scores.test_framework_files import _deepeval_rows, _ragas_rows

pytestmark = pytest.mark.slow
REQUIREMENTS = FIX / "requirements.txt"
#: the responses each framework judges: news1 and news2, both systems (human labels differ)
N_RESPONSES = 4


@pytest.fixture(scope="module")
def framework_python(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The Python of the frameworks' own environment, installed from PyPI unless already there
    (one build at a time: pytest-xdist workers wait on a lock)."""
    pins = REQUIREMENTS.read_bytes()
    key = hashlib.sha256(pins + f"{sys.version}{sys.base_prefix}".encode()).hexdigest()[:12]
    cache = getattr(request.config, "cache", None)
    root = Path(cache.mkdir("framework-venv")) if cache else tmp_path_factory.mktemp("fw-venv")
    venv = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / "installed.txt").is_file():
            _install(venv, pins)
    return venv / "bin" / "python"


def _install(venv: Path, pins: bytes) -> None:
    """``pip install --no-compile -r requirements.txt`` into a new venv; fails (no skip) when
    pip cannot install, with pip's message."""
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-compile", "-q"]
    done = subprocess.run(
        [*pip, "-r", str(REQUIREMENTS)], check=False, capture_output=True, text=True
    )
    if done.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)
        pytest.fail(
            f"could not install deepeval and ragas from PyPI ({REQUIREMENTS}) into {venv}: "
            f"pip exited {done.returncode} (is PyPI reachable?)\n{done.stderr[-4000:]}",
            pytrace=False,
        )
    (venv / "installed.txt").write_bytes(pins)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The embedded backbone's OpenAI-compatible endpoint (the fixtures' own server)."""
    pytest.importorskip("llama_cpp")
    sys.path.insert(0, str(FIX))
    from serve_backbone import start_backbone

    server = start_backbone(tmp_path_factory.mktemp("llama") / "llama.log")
    try:
        yield server.base_url
    finally:
        server.stop()


def _small_labels(out: Path) -> Path:
    """The labels file's card and its first ``N_RESPONSES`` responses."""
    lines = LABELS.read_text(encoding="utf-8").splitlines()
    out.write_text("\n".join(lines[: 1 + N_RESPONSES]) + "\n", encoding="utf-8")
    return out


def _make(python: Path, script: str, *args: str, cwd: Path) -> None:
    """Run a fixture's maker script in the frameworks' environment (telemetry off)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(DEEPEVAL_TELEMETRY_OPT_OUT="1", RAGAS_DO_NOT_TRACK="true", NO_COLOR="1")
    if script.startswith("deepeval"):
        env["DEEPEVAL_RESULTS_FOLDER"] = args[-1]
    done = subprocess.run(
        [str(python), str(FIX / script), *args],
        check=False,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"


def _doctor_names(path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "doctor", str(path), "--input", str(LABELS)]) == 0
    out = capsys.readouterr().out
    assert f"format: {fmt} (" in out, out
    assert f"{N_RESPONSES} of 12 responses scored" in out, out


def _scored(rows: list, metric: str) -> list[float]:
    return [s for _, _, m, s in rows if m == metric and s is not None]


def test_deepeval_run_read_by_meta_eval(
    framework_python: Path, base_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = _small_labels(tmp_path / "labels.jsonl")
    out = tmp_path / "deepeval"
    out.mkdir()
    _make(
        framework_python, "deepeval/make_test_run.py", str(labels), base_url, str(out), cwd=tmp_path
    )
    (run,) = out.glob("test_run_*.json")  # deepeval's own file name
    rows = _deepeval_rows(run)
    for metric in ("Coherence [GEval]", "Relevance [GEval]"):
        scores = _scored(rows, metric)
        assert len(scores) == N_RESPONSES and len(set(scores)) > 1, rows
    _same_as_plain(tmp_path, run, rows)
    _doctor_names(run, "deepeval", capsys)


def test_ragas_run_read_by_meta_eval(
    framework_python: Path, base_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = _small_labels(tmp_path / "labels.jsonl")
    table = tmp_path / "results.csv"
    _make(
        framework_python, "ragas/make_results.py", str(labels), base_url, str(table), cwd=tmp_path
    )
    rows = _ragas_rows(table)
    assert len(_scored(rows, "summary_rubric")) == N_RESPONSES, rows  # the judge's replies parsed
    assert len(set(_scored(rows, "non_llm_string_similarity"))) > 1, rows
    _same_as_plain(tmp_path, table, rows)
    _doctor_names(table, "ragas", capsys)
