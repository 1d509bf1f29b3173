"""``--input mlflow:EXPERIMENT`` against a real MLflow tracking server (``mlflow server
--backend-store-uri sqlite:///… --host 127.0.0.1 --port <free>``, a subprocess): the checks of
``test_mlflow_traces.py`` (the canonical file's numbers; the card back in MLflow) over HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mlflow")

from tests.data.mlflow_experiment import log_experiment
from tests.data.test_mlflow_traces import EXPERIMENT, check_commands

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("mlflow_server")
    port = _free_port()
    argv = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri"]
    argv += [f"sqlite:///{root / 'mlflow.db'}", "--default-artifact-root", str(root / "art")]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    log = open(root / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{uri}/health", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail((root / "server.log").read_text(errors="replace")[-3000:])
                time.sleep(1)
        yield uri
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def store(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    mp = pytest.MonkeyPatch()
    mp.setenv("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")
    root = tmp_path_factory.mktemp("mlflow_client")
    made = log_experiment(server, EXPERIMENT, root / "canonical")
    yield {"uri": server, "root": root, **made}
    mp.undo()


def test_commands_against_a_server_give_the_canonical_numbers(
    store: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check_commands(store, tmp_path, capsys)
