"""The embedded llama.cpp server: start ``python -m llama_cpp.server`` on a free loopback port, wait
until it answers, stop it on exit — on ``close()``, at interpreter exit, on SIGTERM/SIGHUP, on
Ctrl-C (``KeyboardInterrupt`` unwinds through the backend's context manager and ``atexit``), and
even when metajudge is killed with SIGKILL (the child's parent watchdog, ``_llama_child``).

The server's output goes to a log file in the run folder. With ``verbose`` on, llama.cpp prints
one ``prompt eval time = … / N tokens`` line per request (``llama_cpp.server`` reports only
``usage.prompt_tokens`` in its responses, not the tokens it evaluated after prefix reuse):
:class:`PromptEvalLog` hands these counts out one per finished request, in order, so that the
embedded backend can attach them to each :class:`~metajudge.backends.base.Completion`;
:func:`prompt_eval_stats` sums a log for the benchmarks.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path

from metajudge.backends.base import BackendError

log = logging.getLogger(__name__)

_LIVE: set[LlamaServer] = set()
_LIVE_LOCK = threading.Lock()
_ATEXIT_INSTALLED = False
_SIGNALS_INSTALLED = False

# Environment variables pydantic-settings would read into the server's settings (llama-cpp-python's
# Settings have no prefix: API_KEY, PORT, MODEL, CONFIG_FILE … would silently change the server).
_SETTINGS_ENV = {
    "model",
    "model_alias",
    "api_key",
    "host",
    "port",
    "config_file",
    "n_ctx",
    "n_threads",
    "n_threads_batch",
    "chat_format",
    "logits_all",
    "verbose",
    "cache",
    "cache_type",
    "cache_size",
    "interrupt_requests",
    "root_path",
    "ssl_keyfile",
    "ssl_certfile",
    "n_gpu_layers",
    "seed",
    "n_batch",
    "n_ubatch",
    "embedding",
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop_all() -> None:
    with _LIVE_LOCK:
        servers = list(_LIVE)
    for s in servers:
        s.stop()


def _on_signal(signum: int, frame: object) -> None:
    _stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_handlers() -> None:
    """atexit always; SIGTERM/SIGHUP only from the main thread and only where nobody else set one.
    A call from another thread (a server started in a worker thread first) leaves the signal
    handlers to the next call from the main thread."""
    global _ATEXIT_INSTALLED, _SIGNALS_INSTALLED
    if not _ATEXIT_INSTALLED:
        _ATEXIT_INSTALLED = True
        atexit.register(_stop_all)
    if _SIGNALS_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    _SIGNALS_INSTALLED = True
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)


class LlamaServer:
    """One ``llama_cpp.server`` process serving one GGUF under the alias ``model_alias``."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        model_alias: str,
        log_path: str | Path,
        n_ctx: int = 2048,
        n_threads: int = 2,
        logits_all: bool = True,
        chat_format: str | None = None,
        prompt_cache: bool = False,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.model_path = Path(model_path)
        self.model_alias = model_alias
        self.log_path = Path(log_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.logits_all = logits_all
        self.chat_format = chat_format
        self.prompt_cache = prompt_cache
        self.startup_timeout_s = startup_timeout_s
        self.port: int | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise BackendError("the embedded server is not running")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def _argv(self, port: int) -> list[str]:
        argv = [
            sys.executable,
            "-m",
            "metajudge.backends._llama_child",
            str(os.getpid()),
            "--model",
            str(self.model_path),
            "--model_alias",
            self.model_alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            "--logits_all",
            str(self.logits_all),
            "--interrupt_requests",
            "False",
            "--verbose",
            "True",
        ]
        if self.chat_format:
            argv += ["--chat_format", self.chat_format]
        if self.prompt_cache:
            argv += ["--cache", "True"]
        return argv

    def _env(self) -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if k.lower() not in _SETTINGS_ENV}

    def _ready(self, port: int) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
                return bool(r.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def log_tail(self, n: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def start(self) -> None:
        """Start the server and block until ``/v1/models`` answers (or raise :class:`BackendError`)."""
        with self._lock:
            if self.proc is not None and self.proc.poll() is None:
                return
            try:
                import llama_cpp.server  # noqa: F401  (fail early with a clear message)
            except ImportError as e:
                from metajudge.errors import MissingResourceError

                raise MissingResourceError(
                    "the embedded backend needs llama-cpp-python's server: "
                    "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install --no-cache-dir 'llama-cpp-python[server]' "
                    "(or `make llama`)"
                ) from e
            install_handlers()
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            last = ""
            for _attempt in range(3):  # a port taken between free_port() and bind: try another
                port = free_port()
                logf = open(self.log_path, "ab")  # noqa: SIM115  (owned by the child from here)
                try:
                    proc = subprocess.Popen(
                        self._argv(port),
                        stdin=subprocess.DEVNULL,
                        stdout=logf,
                        stderr=subprocess.STDOUT,
                        env=self._env(),
                        start_new_session=True,
                    )
                finally:
                    logf.close()
                self.proc, self.port = proc, port
                with _LIVE_LOCK:
                    _LIVE.add(self)
                deadline = time.monotonic() + self.startup_timeout_s
                while time.monotonic() < deadline:
                    if proc.poll() is not None:
                        break
                    if self._ready(port):
                        log.info(
                            "llama.cpp server for %s on port %d (pid %d), log %s",
                            self.model_alias,
                            port,
                            proc.pid,
                            self.log_path,
                        )
                        return
                    time.sleep(0.2)
                last = self.log_tail()
                exited = proc.poll() is not None
                self._kill()
                if not exited:
                    raise BackendError(
                        f"llama.cpp server did not answer within {self.startup_timeout_s:g} s; log {self.log_path}:\n{last}"
                    )
                if "address already in use" not in last.lower():
                    break
            raise BackendError(
                f"llama.cpp server exited during start-up; log {self.log_path}:\n{last}"
            )

    def _kill(self) -> None:
        proc = self.proc
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        self.proc = None

    def stop(self) -> None:
        """Stop the server (SIGTERM to its process group, SIGKILL after 5 s). Idempotent."""
        with self._lock:
            self._kill()
            self.port = None

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def start_all(servers: list[LlamaServer]) -> None:
    """Start ``servers`` side by side (each loads its model while the others do) and block until
    all answer; the first start-up error is raised once every start has ended."""
    install_handlers()  # from this thread: a start-up thread would not install the signal ones
    if len(servers) <= 1:
        for s in servers:
            s.start()
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(servers), thread_name_prefix="llama-start") as pool:
        futures = [pool.submit(s.start) for s in servers]
    for f in futures:
        f.result()


_PROMPT_EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
_PREFIX_HIT = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens")


def prompt_eval_stats(log_path: str | Path, offset: int = 0) -> dict[str, int]:
    """From a server log (from byte ``offset``): requests, prompt tokens evaluated, prefix-cache hits.

    ``prompt_tokens_evaluated`` sums llama.cpp's per-request ``prompt eval … / N tokens`` lines,
    i.e. the prompt tokens the server actually ran through the model.
    """
    with open(log_path, "rb") as fh:
        fh.seek(offset)
        text = fh.read().decode("utf-8", errors="replace")
    evals = [int(m.group(1)) for m in _PROMPT_EVAL.finditer(text)]
    hits = [int(m.group(1)) for m in _PREFIX_HIT.finditer(text)]
    return {
        "requests": len(evals),
        "prompt_tokens_evaluated": sum(evals),
        "prefix_hit_tokens": sum(hits),
    }


class PromptEvalLog:
    """The ``prompt eval … / N tokens`` lines of one server log, handed out in order.

    ``llama_cpp.server`` runs one request at a time and prints the line before it answers, so
    the k-th answer a server returns goes with the k-th line after the reader was created.
    :meth:`next` waits up to ``wait_s`` for a line that is not written yet; when none comes it
    returns ``None`` (unknown) and skips that request's line if it turns up later.
    """

    def __init__(self, path: str | Path, *, wait_s: float = 0.05) -> None:
        self.path = Path(path)
        self.wait_s = wait_s
        self._offset = self.path.stat().st_size if self.path.exists() else 0
        self._partial = b""
        self._counts: deque[int] = deque()
        self._owed = 0
        self._lock = threading.Lock()

    def _read(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError:
            return
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            m = _PROMPT_EVAL.search(line.decode("utf-8", errors="replace"))
            if m is None:
                continue
            if self._owed:
                self._owed -= 1
            else:
                self._counts.append(int(m.group(1)))

    def next(self) -> int | None:
        """Prompt tokens the server evaluated for the next finished request (``None``: unknown)."""
        with self._lock:
            deadline = time.monotonic() + self.wait_s
            while True:
                self._read()
                if self._counts:
                    return self._counts.popleft()
                if time.monotonic() >= deadline:
                    self._owed += 1
                    return None
                time.sleep(0.005)
