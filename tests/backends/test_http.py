"""Fault injection against a scripted OpenAI-compatible HTTP server on 127.0.0.1 that the test controls.

The server answers like an OpenAI endpoint and, for prompts carrying a marker, first misbehaves in
a scripted way: 429 with Retry-After, 500, a hang past the client timeout, a dropped connection,
an invalid JSON body, a 400; replies without or with NaN / out-of-range log-probabilities, a body
trickled one byte at a time, a huge body, a reply echoing the API key (:meth:`FakeOpenAI.spoil`;
the fault suite built on them is test_faults.py). It counts the calls it answered, which is how the kill -9 test checks
that a rerun makes only the missing calls. It also implements /v1/files and /v1/batches for the
Batch API path. (The live end-to-end path against the real llama.cpp server is in
test_backends_embedded.py.)
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest

from metajudge.backends.base import BackendError, Completion, Request
from metajudge.backends.cache import ResponseCache
from metajudge.backends.cached import CachedBackend
from metajudge.backends.config import BackendConfig
from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.backends.registry import get_backend

KEY = "sk-test-SECRET-9f8e7d6c5b4a"
KEY_ENV = "MJ_TEST_API_KEY"


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-reply (a deadline, a size cap) is expected, not a server bug."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (OSError, ValueError)):
            super().handle_error(request, client_address)


class FakeOpenAI:
    """A threaded OpenAI-compatible server with scripted faults keyed by a marker in the prompt."""

    def __init__(self, *, delay_s: float = 0.0, key: str = KEY) -> None:
        self.delay_s = delay_s
        self.key = key
        self.faults: dict[str, list[str]] = {}
        self.lock = threading.Lock()
        self.answered: list[str] = []  # prompt texts answered with 200
        self.attempts: dict[str, int] = {}
        self.times: dict[str, list[float]] = {}
        self.files: dict[str, bytes] = {}
        self.inflight = 0
        self.max_inflight = 0
        self.batches: dict[str, dict[str, Any]] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def _send(
                self,
                code: int,
                body: bytes,
                ctype: str = "application/json",
                headers: dict[str, str] | None = None,
            ) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                self._send(code, json.dumps(obj).encode(), headers=headers)

            def _auth(self) -> bool:
                got = self.headers.get("Authorization", "")
                if got != f"Bearer {outer.key}":
                    self._json(
                        401,
                        {
                            "error": {
                                "message": f"Incorrect API key provided: {got.removeprefix('Bearer ')}",
                                "type": "invalid_request_error",
                            }
                        },
                    )
                    return False
                return True

            def do_GET(self) -> None:
                if not self._auth():
                    return
                m = re.fullmatch(r"/v1/batches/([\w-]+)", self.path)
                if m:
                    b = outer.batches[m.group(1)]
                    b["polls"] += 1
                    if b["polls"] >= 2 and b["status"] != "completed":
                        outer._finish_batch(b)
                    self._json(200, {k: v for k, v in b.items() if k not in ("polls",)})
                    return
                m = re.fullmatch(r"/v1/files/([\w-]+)/content", self.path)
                if m:
                    self._send(200, outer.files[m.group(1)], ctype="application/octet-stream")
                    return
                self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(n)
                if not self._auth():
                    return
                if self.path == "/v1/files":
                    fid = "file-" + uuid.uuid4().hex[:12]
                    m = re.search(
                        rb'filename="[^"]*"[^\r]*\r\n(?:[^\r]+\r\n)*\r\n(.*?)\r\n--', raw, re.DOTALL
                    )
                    outer.files[fid] = m.group(1) if m else b""
                    self._json(
                        200,
                        {
                            "id": fid,
                            "object": "file",
                            "purpose": "batch",
                            "bytes": len(outer.files[fid]),
                            "created_at": 0,
                            "filename": "x.jsonl",
                            "status": "processed",
                        },
                    )
                    return
                if self.path == "/v1/batches":
                    body = json.loads(raw)
                    bid = "batch_" + uuid.uuid4().hex[:12]
                    outer.batches[bid] = {
                        "id": bid,
                        "object": "batch",
                        "endpoint": body["endpoint"],
                        "input_file_id": body["input_file_id"],
                        "completion_window": "24h",
                        "status": "in_progress",
                        "created_at": 0,
                        "polls": 0,
                        "output_file_id": None,
                        "error_file_id": None,
                    }
                    self._json(200, {k: v for k, v in outer.batches[bid].items() if k != "polls"})
                    return
                body = json.loads(raw)
                chat = self.path.endswith("/chat/completions")
                text = body["messages"][-1]["content"] if chat else body["prompt"]
                action = outer._next_fault(text)
                if action.startswith("429"):
                    self._json(
                        429,
                        {"error": {"message": "rate limited"}},
                        headers={"Retry-After": action.split(":")[1]},
                    )
                    return
                if action == "500":
                    self._json(500, {"error": {"message": "boom"}})
                    return
                if action == "400":
                    self._json(400, {"error": {"message": "bad request"}})
                    return
                if action.startswith("hang"):
                    time.sleep(float(action.split(":")[1]))
                    return  # the client gave up long ago
                if action == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if action == "badjson":
                    self._send(200, b'{"id": "x", "choices": [ {"message": oops')
                    return
                if action.startswith("trickle"):  # one byte every N s: a read timeout never fires
                    self._trickle(json.dumps(outer.answer(body, chat=chat)).encode(), action)
                    return
                if action.startswith("huge"):
                    self._huge(int(action.split(":")[1]), body["model"], action.endswith(":cl"))
                    return
                with outer.lock:
                    outer.inflight += 1
                    outer.max_inflight = max(outer.max_inflight, outer.inflight)
                if outer.delay_s:
                    time.sleep(outer.delay_s)
                with outer.lock:
                    outer.inflight -= 1
                self._json(200, outer.spoil(outer.answer(body, chat=chat), action))

            def _trickle(self, body: bytes, action: str) -> None:
                step = float(action.split(":")[1])
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                deadline = time.monotonic() + 30  # bounded even if nobody hangs up
                try:
                    for i in range(len(body)):
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        if time.monotonic() > deadline:
                            return
                        time.sleep(step)
                except OSError:
                    return  # the client hung up

            def _huge(self, size: int, model: str, declared: bool) -> None:
                """A ``size``-byte reply body; with Content-Length when ``declared``, else read
                until the server closes the connection."""
                head = b'{"id":"x","object":"chat.completion","model":"%s","created":0,' % (
                    model.encode()
                )
                head += b'"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"'
                tail = b'"}}],"usage":{"prompt_tokens":1,"completion_tokens":64,"total_tokens":65}}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")
                if declared:
                    self.send_header("Content-Length", str(size))
                self.end_headers()
                self.close_connection = True
                try:
                    self.wfile.write(head)
                    left = size - len(head) - len(tail)
                    chunk = b"A" * 65536
                    while left > 0:
                        self.wfile.write(chunk[: min(left, len(chunk))])
                        left -= len(chunk)
                    self.wfile.write(tail)
                except OSError:
                    return

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    # -- behaviour ------------------------------------------------------------------------------
    def _next_fault(self, text: str) -> str:
        with self.lock:
            self.attempts[text] = self.attempts.get(text, 0) + 1
            self.times.setdefault(text, []).append(time.monotonic())
            for marker, script in self.faults.items():
                if marker in text and script:
                    return script.pop(0)
        return "ok"

    def spoil(self, reply: dict[str, Any], action: str) -> dict[str, Any]:
        """A 200 reply made unusable (or hostile) as ``action`` says; ``ok`` leaves it alone.

        ``nologprobs``: no log-probabilities; ``nanlogprob`` / ``biglogprob``: NaN / 1000 as the
        log-probability of every token and alternative; ``echokey``: the API key in the text."""
        ch = reply["choices"][0]
        lps = (ch.get("logprobs") or {}).get("content") or []
        if action == "nologprobs":
            ch.pop("logprobs", None)
        elif action in ("nanlogprob", "biglogprob"):
            bad = float("nan") if action == "nanlogprob" else 1000.0
            for item in lps:
                item["logprob"] = bad
                for alt in item["top_logprobs"]:
                    alt["logprob"] = bad
        elif action == "echokey":
            if "message" in ch:
                ch["message"]["content"] += f" (you sent {self.key})"
            else:
                ch["text"] += f" (you sent {self.key})"
        return reply

    def answer(self, body: dict[str, Any], *, chat: bool) -> dict[str, Any]:
        text = body["messages"][-1]["content"] if chat else body["prompt"]
        score = 1 + sum(map(ord, text)) % 5
        content = (
            f"<think>let me see</think>Score: {score}" if "THINK" in text else f"Score: {score}"
        )
        with self.lock:
            self.answered.append(text)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
        if chat:
            choice["message"] = {"role": "assistant", "content": content}
            if body.get("logprobs"):  # the tokens of "Score: N", N with two alternatives
                other = 1 + score % 5
                choice["logprobs"] = {
                    "content": [
                        {
                            "token": "Score",
                            "logprob": -0.01,
                            "top_logprobs": [{"token": "Score", "logprob": -0.01}],
                        },
                        {"token": ":", "logprob": -0.01, "top_logprobs": []},
                        {
                            "token": f" {score}",
                            "logprob": -0.1,
                            "top_logprobs": [
                                {"token": f" {score}", "logprob": -0.1},
                                {"token": f" {other}", "logprob": -2.4},
                            ],
                        },
                    ]
                }
        else:
            choice["text"] = content
        return {
            "id": "x",
            "object": "chat.completion" if chat else "text_completion",
            "model": body["model"],
            "created": 0,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(text.split()),
                "completion_tokens": 3,
                "total_tokens": len(text.split()) + 3,
            },
        }

    def _finish_batch(self, b: dict[str, Any]) -> None:
        lines = [
            json.loads(x) for x in self.files[b["input_file_id"]].decode().splitlines() if x.strip()
        ]
        out = []
        for item in lines:
            chat = item["url"].endswith("/chat/completions")
            out.append(
                {
                    "id": "resp",
                    "custom_id": item["custom_id"],
                    "error": None,
                    "response": {
                        "status_code": 200,
                        "request_id": "q",
                        "body": self.answer(item["body"], chat=chat),
                    },
                }
            )
        fid = "file-" + uuid.uuid4().hex[:12]
        self.files[fid] = "".join(json.dumps(x) + "\n" for x in out).encode()
        b.update(status="completed", output_file_id=fid)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def cfg(server: FakeOpenAI, **kw: Any) -> BackendConfig:
    base = {
        "name": "fake",
        "kind": "openai",
        "model": "fake-model",
        "base_url": server.base_url,
        "api_key_env": KEY_ENV,
        "concurrency": 4,
        "timeout_s": 5.0,
        "max_retries": 3,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "price_input_per_mtok": 1.0,
        "price_output_per_mtok": 2.0,
    }
    base.update(kw)
    return BackendConfig(**base)


def chat(text: str, **kw: Any) -> Request:
    return Request(messages=({"role": "user", "content": text},), max_tokens=8, **kw)


def test_plain_calls_tokens_and_cost(server: FakeOpenAI) -> None:
    with OpenAIBackend(cfg(server)) as be:
        res = be.complete(
            [chat(f"item {i}") for i in range(6)] + [Request(prompt="a b c", max_tokens=4)]
        )
    assert all(isinstance(r, Completion) for r in res)
    assert res[6].text.startswith("Score: ") and res[6].prompt_tokens == 3
    s = be.ledger.summary()
    assert s["calls"] == 7 and s["errors"] == 0 and s["retries"] == 0
    assert s["prompt_tokens"] == 6 * 2 + 3 and s["completion_tokens"] == 21
    assert s["cost_usd"] == pytest.approx((15 * 1.0 + 21 * 2.0) / 1e6)


def test_concurrency_limit() -> None:
    with FakeOpenAI(delay_s=0.15) as server, OpenAIBackend(cfg(server, concurrency=3)) as be:
        t0 = time.monotonic()
        assert all(
            isinstance(r, Completion) for r in be.complete([chat(f"c{i}") for i in range(9)])
        )
        assert server.max_inflight == 3 and time.monotonic() - t0 < 9 * 0.15
        server.max_inflight = 0
        be.complete([chat(f"d{i}") for i in range(4)], concurrency=1)
        assert server.max_inflight == 1


def test_429_honours_retry_after(server: FakeOpenAI) -> None:
    server.faults["RL"] = ["429:1"]
    with OpenAIBackend(cfg(server, backoff_base_s=0.001, backoff_max_s=0.001)) as be:
        [res] = be.complete([chat("RL please")])
    assert isinstance(res, Completion)
    t = server.times["RL please"]
    assert len(t) == 2 and t[1] - t[0] >= 0.95  # waited as told, not the 1 ms backoff
    assert be.ledger.retries == 1


def test_500_is_retried_then_reported(server: FakeOpenAI) -> None:
    server.faults["FIVE"] = ["500", "500"]
    server.faults["DEAD"] = ["500"] * 10
    with OpenAIBackend(cfg(server, max_retries=3)) as be:
        ok, dead, other = be.complete([chat("FIVE"), chat("DEAD"), chat("fine")])
    assert isinstance(ok, Completion) and server.attempts["FIVE"] == 3
    assert isinstance(dead, BackendError) and dead.status == 500 and dead.retryable
    assert "after 4 attempts" in str(dead) and server.attempts["DEAD"] == 4
    assert isinstance(other, Completion)
    assert be.ledger.errors == 1 and be.ledger.calls == 2


def test_hang_past_timeout_is_retried(server: FakeOpenAI) -> None:
    server.faults["HANG"] = ["hang:3"]
    t0 = time.monotonic()
    with OpenAIBackend(cfg(server, timeout_s=0.5)) as be:
        [res] = be.complete([chat("HANG")])
    assert isinstance(res, Completion)
    assert server.attempts["HANG"] == 2 and time.monotonic() - t0 < 2.5


def test_hang_every_time_reports_timeout(server: FakeOpenAI) -> None:
    server.faults["HANG"] = ["hang:2"] * 3
    with OpenAIBackend(cfg(server, timeout_s=0.3, max_retries=1)) as be:
        [res] = be.complete([chat("HANG")])
    assert isinstance(res, BackendError) and "timed out" in str(res) and res.status is None


def test_dropped_connection_is_retried(server: FakeOpenAI) -> None:
    server.faults["DROP"] = ["drop", "drop"]
    with OpenAIBackend(cfg(server)) as be:
        [res] = be.complete([chat("DROP")])
    assert isinstance(res, Completion) and server.attempts["DROP"] == 3 and be.ledger.retries == 2


def test_invalid_json_body_is_retried_then_reported(server: FakeOpenAI) -> None:
    server.faults["BADONCE"] = ["badjson"]
    server.faults["BADALWAYS"] = ["badjson"] * 10
    with OpenAIBackend(cfg(server, max_retries=2)) as be:
        once, always = be.complete([chat("BADONCE"), chat("BADALWAYS")])
    assert isinstance(once, Completion)
    assert isinstance(always, BackendError) and "invalid response" in str(always)
    assert server.attempts["BADALWAYS"] == 3


def test_400_is_not_retried(server: FakeOpenAI) -> None:
    server.faults["BAD"] = ["400"] * 5
    with OpenAIBackend(cfg(server)) as be:
        [res] = be.complete([chat("BAD")])
    assert isinstance(res, BackendError) and res.status == 400 and not res.retryable
    assert server.attempts["BAD"] == 1


def test_missing_key_env_is_a_clean_error(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    with OpenAIBackend(cfg(server)) as be:
        [res] = be.complete([chat("x")])
    assert isinstance(res, BackendError) and KEY_ENV in str(res)
    assert server.attempts == {}


def test_completion_only_backbone_rejects_messages(server: FakeOpenAI) -> None:
    with OpenAIBackend(cfg(server, chat=False)) as be:
        msg, prompt = be.complete([chat("x"), Request(prompt="y", max_tokens=3)])
    assert isinstance(msg, BackendError) and "completion-only" in str(msg)
    assert isinstance(prompt, Completion)
    assert list(server.attempts) == ["y"]


def test_fanned_out_samples(server: FakeOpenAI) -> None:
    with OpenAIBackend(cfg(server, native_n=False)) as be:
        [res] = be.complete([chat("sample me", n=3, temperature=0.7, seed=5)])
    assert isinstance(res, Completion) and len(res.choices) == 3
    assert server.attempts["sample me"] == 3 and res.completion_tokens == 9


def test_think_is_stripped_and_counted(server: FakeOpenAI) -> None:
    with OpenAIBackend(cfg(server)) as be:
        [res] = be.complete([chat("THINK about it")])
    assert isinstance(res, Completion)
    assert res.text.startswith("Score:") and res.choices[0].raw_text.startswith("<think>")
    assert res.choices[0].reasoning_tokens > 0


def test_completed_calls_survive_a_failing_request(server: FakeOpenAI, tmp_path: Path) -> None:
    server.faults["DOOMED"] = ["500"] * 100
    reqs = [chat(f"q{i}") for i in range(9)] + [chat("DOOMED")]
    with CachedBackend(
        OpenAIBackend(cfg(server, max_retries=1)), ResponseCache(tmp_path / "c.sqlite")
    ) as be:
        first = be.complete(reqs)
        assert sum(isinstance(r, Completion) for r in first) == 9
        n_before = len(server.attempts) and sum(server.attempts.values())
        second = be.complete(reqs)
        assert sum(server.attempts.values()) - n_before == 2  # only DOOMED again (1 try + 1 retry)
        assert all(r.cached for r in second[:9] if isinstance(r, Completion))
        assert be.ledger.cached == 9


_CHILD = r"""
import sys
from metajudge.backends.registry import get_backend
from metajudge.backends.base import Request
be = get_backend(sys.argv[1], cache=sys.argv[2], run_dir=sys.argv[3])
reqs = [Request(messages=({"role": "user", "content": f"judge item {i}"},), max_tokens=8) for i in range(50)]
res = be.complete(reqs, parser_version="kill-test")
be.close()
print("DONE", sum(1 for r in res if hasattr(r, "choices")))
"""


def _write_cfg(tmp_path: Path, server: FakeOpenAI, **kw: Any) -> Path:
    lines = [
        'name = "fake"',
        'kind = "openai"',
        'model = "fake-model"',
        f'base_url = "{server.base_url}"',
        f'api_key_env = "{KEY_ENV}"',
    ]
    lines += [f"{k} = {json.dumps(v)}" for k, v in kw.items()]
    p = tmp_path / "fake.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_kill_9_then_rerun_makes_only_missing_calls(tmp_path: Path) -> None:
    with FakeOpenAI(delay_s=0.1) as server:
        conf = _write_cfg(tmp_path, server, concurrency=4)
        cache = tmp_path / "cache.sqlite"
        script = tmp_path / "child.py"
        script.write_text(_CHILD)
        env = {**os.environ, KEY_ENV: KEY}
        proc = subprocess.Popen(
            [sys.executable, str(script), str(conf), str(cache), str(tmp_path / "run")], env=env
        )
        deadline = time.monotonic() + 60
        while len(server.answered) < 20 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(
            0.5
        )  # requests in flight at the kill still reach the server's handler; let them finish
        answered_first = len(server.answered)
        assert 20 <= answered_first < 50, "the kill must land mid-run"
        with sqlite3.connect(cache) as db:
            stored = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        # every answered call is stored, except at most the ones in flight at the kill (concurrency 4)
        assert answered_first - 4 <= stored <= answered_first
        out = subprocess.run(
            [sys.executable, str(script), str(conf), str(cache), str(tmp_path / "run2")],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert "DONE 50" in out.stdout, out.stderr
        rerun_calls = len(server.answered) - answered_first
        assert rerun_calls == 50 - stored
        assert set(server.answered) == {f"judge item {i}" for i in range(50)}
        ledger = json.loads((tmp_path / "run2" / "ledger-fake.json").read_text())
        assert ledger["calls"] == rerun_calls and ledger["cached"] == stored


def test_batch_api_submit_poll_collect(server: FakeOpenAI, tmp_path: Path) -> None:
    reqs = [chat(f"b{i}") for i in range(5)] + [Request(prompt="plain b", max_tokens=4)]
    be = CachedBackend(
        OpenAIBackend(cfg(server)), ResponseCache(tmp_path / "c.sqlite"), parser_version="p1"
    )
    with be:
        res = be.complete_batch(reqs, state_path=tmp_path / "batch.json", poll_s=0.05, timeout_s=10)
        assert all(isinstance(r, Completion) for r in res)
        assert len(server.batches) == 2  # chat and completion endpoints
        assert be.ledger.batch_calls == 6 and be.ledger.cost_usd == pytest.approx(
            0.5 * (7 * 1.0 + 18 * 2.0) / 1e6
        )
        assert not (tmp_path / "batch.json").exists()
        again = be.complete(reqs)
        assert all(isinstance(r, Completion) and r.cached for r in again)
        assert len(server.attempts) == 0  # nothing ever went through the live endpoints


def test_batch_resumes_from_state_file(server: FakeOpenAI, tmp_path: Path) -> None:
    from metajudge.backends.batch import run_batch, submit

    reqs = [chat(f"r{i}") for i in range(3)]
    be = OpenAIBackend(cfg(server))
    submit(be, reqs, state_path=tmp_path / "state.json")  # … and the process "dies" here
    assert len(server.batches) == 1
    res = run_batch(be, reqs, state_path=tmp_path / "state.json", poll_s=0.05, timeout_s=10)
    assert len(server.batches) == 1  # polled the old job, did not resubmit
    assert [r.text for r in res if isinstance(r, Completion)] == [
        server.answer({"messages": [{"content": f"r{i}"}], "model": "m"}, chat=True)["choices"][0][
            "message"
        ]["content"]
        for i in range(3)
    ]
    be.close()


def test_api_key_never_leaks(
    server: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Errors (including a 401 whose body echoes a wrong key), logs, cache, ledger, exports: no key."""
    from metajudge.cli import main

    wrong = "sk-wrong-LEAKME-0123456789"
    run = tmp_path / "run"
    logfile = tmp_path / "debug.log"
    handler = logging.FileHandler(logfile)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.DEBUG)
    caplog.set_level(logging.DEBUG)
    try:
        server.faults["RL"] = ["429:0", "500", "drop"]
        conf = _write_cfg(tmp_path, server, backoff_base_s=0.01)
        with get_backend(
            str(conf), cache=tmp_path / "c.sqlite", run_dir=run, parser_version="k"
        ) as be:
            res = be.complete([chat("RL"), chat("hello"), Request(prompt="p", max_tokens=2)])
            assert all(isinstance(r, Completion) for r in res)
            monkeypatch.setenv(KEY_ENV, wrong)
            with get_backend(str(conf), cache=False, run_dir=tmp_path / "run-bad") as bad:
                [err] = bad.complete([chat("nope")])
            assert isinstance(err, BackendError) and err.status == 401
            assert wrong not in str(err) and "***" in str(err)
            assert (
                main(
                    [
                        "cache",
                        "export",
                        "--cache-file",
                        str(tmp_path / "c.sqlite"),
                        "--output",
                        str(tmp_path / "export.jsonl"),
                    ]
                )
                == 0
            )
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()
    files = [
        tmp_path / "c.sqlite",
        tmp_path / "export.jsonl",
        logfile,
        *run.rglob("*"),
        *(tmp_path / "run-bad").rglob("*"),
    ]
    files += [
        Path(str(tmp_path / "c.sqlite") + s)
        for s in ("-wal", "-shm")
        if Path(str(tmp_path / "c.sqlite") + s).exists()
    ]
    assert (run / "ledger-fake.json").exists()
    for f in files:
        if f.is_file():
            data = f.read_bytes()
            assert KEY.encode() not in data, f
            assert wrong.encode() not in data, f
    assert KEY not in caplog.text and wrong not in caplog.text
    assert len(caplog.text) > 0  # the debug logs really were captured


def test_backends_check_reports_capabilities(server: FakeOpenAI, tmp_path: Path) -> None:
    from metajudge.backends.registry import check_backend

    conf = _write_cfg(tmp_path, server)
    report = check_backend(str(conf))
    assert report["ok"] and report["latency_s"] > 0 and report["answer"].startswith("Score")
    assert report["logprobs"] is True  # the fake server returns top_logprobs for chat
    assert report["json_mode"] is False  # … but ignores response_format, and check notices
    assert report["ledger"]["calls"] == 3
