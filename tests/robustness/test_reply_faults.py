"""Issue 44, items 5-10: hostile replies from a scripted loopback server, through the commands a
user runs. Each one is a retried or counted failure of that one call, never a traceback or a dead
run; nothing unparseable or secret is cached.

- item 5: a G-Eval reply whose log-probabilities carry no score digit ("Yes") or a digit off the
  scale ("9" on 1-5) is not cached; the rerun asks again;
- item 6: a body cut mid-transfer (short ``Content-Length``, a TCP reset, a bad chunk header);
- item 7: a lone surrogate in the reply text or in a log-probability token;
- item 8: a 100,000-deep reply JSON;
- item 9: replicas ``[dead, alive]``: every call goes to the live one, the dead one is marked;
- item 10: a key echoed in the reply's ``model`` field or in log-probability tokens is in no
  cache row and not in ``cache export``.

The body faults need byte-level control, so :class:`RawServer` (below) writes its replies on the
socket itself; the content faults reuse :class:`tests.backends.test_http.FakeOpenAI`. Every
server is shut down when its test ends.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import pytest

from metajudge.backends.base import Completion
from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.cli import main
from tests.backends.test_http import KEY, KEY_ENV, FakeOpenAI, cfg, chat

MARK = "units"  # in every judge prompt of the dataset below


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("METAJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("METAJUDGE_BACKENDS_DIR", str(tmp_path / "backends"))


def _backbone(tmp_path: Path, base_url: str | list[str], **kw: Any) -> None:
    """A user backbone ``fake`` at ``base_url`` (read from $METAJUDGE_BACKENDS_DIR)."""
    d = tmp_path / "backends"
    d.mkdir(exist_ok=True)
    fields = {
        "name": "fake",
        "kind": "openai",
        "model": "fake-model",
        "base_url": base_url,
        "api_key_env": KEY_ENV,
        "n_ctx": 8192,
        "max_retries": 1,
        "backoff_base_s": 0.01,
        "timeout_s": 10.0,
        **kw,
    }
    (d / "fake.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items()))


def _dataset(tmp_path: Path, n: int = 2) -> Path:
    """``n`` pairwise items; every response distinct, so each is one judge call (2n calls)."""
    f = tmp_path / "tiny.jsonl"
    rows = [
        {
            "id": f"p{i}",
            "input": {"question": "How many units were sold?", "context": "Week 1: 10 units."},
            "a": {"system": "s1", "response": f"{10 + i} units."},
            "b": {"system": "s2", "response": f"{40 + i} units."},
            "labels": {"overall": [(-1) ** i]},
        }
        for i in range(n)
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f


def _score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int = 2, *extra: str
) -> tuple[object, list[dict[str, Any]], str]:
    """``metrics run`` with G-Eval on the ``fake`` backbone: (exit status, rows, stderr);
    anything escaping ``main`` is the status, as text."""
    out = tmp_path / "scores.jsonl"
    argv = ["metrics", "run", "--input", str(_dataset(tmp_path, n)), "--metrics"]
    argv += ["geval_faithfulness", "--backbone", "fake", "-o", str(out), "--quiet", *extra]
    capsys.readouterr()
    try:
        rc: object = main(argv)
    except BaseException as e:  # noqa: BLE001 - the point: nothing may escape main()
        rc = f"raised {type(e).__name__}: {e}"
    rows = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return rc, rows, capsys.readouterr().err


def _cache_rows(tmp_path: Path) -> list[tuple[str, str]]:
    db = tmp_path / "cache" / "llm-cache.sqlite"
    if not db.exists():
        return []
    with sqlite3.connect(db) as con:
        return list(con.execute("SELECT request_json, response_json FROM responses"))


def _reply(content: str, tokens: list[tuple[str, float, list[tuple[str, float]]]]) -> str:
    """An OpenAI chat reply body (JSON text) with ``content`` and these logprob tokens."""
    lp = [
        {
            "token": t,
            "logprob": v,
            "top_logprobs": [{"token": a, "logprob": b} for a, b in top],
        }
        for t, v, top in tokens
    ]
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "model": "fake-model",
            "created": 0,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                    "logprobs": {"content": lp},
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        }
    )


GOOD = _reply("Score: 4", [("Score", -0.01, []), (":", -0.01, []), (" 4", -0.1, [(" 4", -0.1)])])


# -- item 5: unparseable verdicts are not cached -------------------------------------------------
class NoVerdict(FakeOpenAI):
    """``noscore``: log-probabilities of "Yes" (no digit); ``offscale``: a "9" on 1-5."""

    def spoil(self, reply: dict[str, Any], action: str) -> dict[str, Any]:
        ch = reply["choices"][0]
        if action in ("noscore", "offscale"):
            tok = "Yes" if action == "noscore" else " 9"
            ch["message"]["content"] = tok.strip()
            alts = [{"token": tok, "logprob": -0.1}, {"token": " 8", "logprob": -2.5}]
            if action == "noscore":
                alts = alts[:1] + [{"token": "No", "logprob": -2.5}]
            ch["logprobs"] = {"content": [{"token": tok, "logprob": -0.1, "top_logprobs": alts}]}
            return reply
        return super().spoil(reply, action)


@pytest.mark.parametrize("fault", ["noscore", "offscale"])
def test_an_unparseable_verdict_is_not_cached_and_the_rerun_asks_again(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the 4 unparseable replies were stored; the rerun made 0 calls and failed the
    same 4 rows from the cache."""
    with NoVerdict() as server:
        _backbone(tmp_path, server.base_url)
        server.faults[MARK] = [fault] * 4
        rc, rows, err = _score(tmp_path, capsys)
        assert rc == 1 and len(rows) == 4 and "Traceback" not in err, (rc, err[-800:])
        assert all(r["score"] is None and "unparseable" in r["error"] for r in rows)
        assert _cache_rows(tmp_path) == [] and set(server.attempts.values()) == {1}
        rc, rows, err = _score(tmp_path, capsys)  # the server now answers with a score
        assert rc == 0 and set(server.attempts.values()) == {2}, (rc, err[-800:])
        assert all(r["error"] is None and 1.0 <= r["score"] <= 5.0 for r in rows)
        assert len(_cache_rows(tmp_path)) == 4


# -- items 6-8: a body cut off, a lone surrogate, a deep body ------------------------------------
class RawServer:
    """A loopback HTTP server writing each reply on the socket itself (one request per
    connection): the first ``faults`` answers to each prompt carrying :data:`MARK` are the fault
    ``mode``, later ones :data:`GOOD`. Modes: ``short`` (``Content-Length`` larger than the
    body, then the connection closes), ``reset`` (half the body, then a TCP reset), ``badchunk``
    (a chunked body whose chunk header is not hex), ``deep`` (100,000 nested arrays),
    ``surrogate`` / ``tokensurrogate`` (a lone ``\\ud800`` in the text / a logprob token)."""

    def __init__(self, mode: str, faults: int = 1) -> None:
        self.mode, self.faults = mode, faults
        self.attempts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> dict[str, Any]:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        n = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < n:
            body += conn.recv(65536)
        return dict(json.loads(body))

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        try:
            req = self._read_request(conn)
            text = req["messages"][-1]["content"]
            with self.lock:
                k = self.attempts[text] = self.attempts.get(text, 0) + 1
            mode = self.mode if MARK in text and k <= self.faults else "ok"
            self._reply(conn, mode)
        except OSError:
            pass
        finally:
            conn.close()

    def _reply(self, conn: socket.socket, mode: str) -> None:
        body = GOOD.encode()
        if mode == "deep":
            body = b"[" * 100_000 + b"]" * 100_000
        elif mode == "surrogate":  # the JSON escape of a lone surrogate, in the text
            body = GOOD.replace('"content": "Score: 4"', '"content": "Score: 4 \\ud800"').encode()
        elif mode == "tokensurrogate":
            body = GOOD.replace('"token": ":"', '"token": ":\\udc00"').encode()
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
        if mode == "badchunk":
            conn.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
            conn.sendall(b"zz!\r\n" + body[:20] + b"\r\n0\r\n\r\n")
            return
        size = len(body) * (2 if mode == "short" else 1)
        conn.sendall((head + f"Content-Length: {size}\r\n\r\n").encode())
        if mode == "reset":
            conn.sendall(body[: len(body) // 2])
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return  # close() now sends RST
        conn.sendall(body)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


MODES = ["short", "reset", "badchunk", "surrogate", "tokensurrogate", "deep"]


@pytest.mark.parametrize("mode", MODES)
def test_a_bad_body_is_retried_and_the_run_completes(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: an httpx traceback (cut bodies), UnicodeEncodeError in ``cache.put``
    (surrogates) or RecursionError (deep), exit 1 after 2-3 calls. After: each bad body is a
    retried failure of its call; the retry gets a good reply and all 4 rows are scored."""
    with RawServer(mode) as server:
        _backbone(tmp_path, server.base_url)
        rc, rows, err = _score(tmp_path, capsys)
        assert rc == 0 and "Traceback" not in err, (rc, err[-800:])
        assert len(rows) == 4 and all(r["error"] is None for r in rows), rows
        assert set(server.attempts.values()) == {2}  # one bad answer, one retry per call
        stored = "".join(r for row in _cache_rows(tmp_path) for r in row)
        assert len(_cache_rows(tmp_path)) == 4 and "\\ud800" not in stored


@pytest.mark.parametrize("mode", ["reset", "surrogate", "deep"])
def test_a_bad_body_past_the_retries_is_a_counted_failure(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no retry left, the call fails and is counted: every row says why, exit 1."""
    with RawServer(mode, faults=9) as server:
        _backbone(tmp_path, server.base_url, max_retries=0)
        rc, rows, err = _score(tmp_path, capsys)
        assert rc == 1 and "Traceback" not in err, (rc, err[-800:])
        assert len(rows) == 4 and all(r["score"] is None for r in rows)
        assert all("backend error" in r["error"] for r in rows), rows
        assert _cache_rows(tmp_path) == []


# -- item 9: replicas [dead, alive] ---------------------------------------------------------------
def _dead_url() -> str:
    """The URL of a loopback port nobody listens on (connections are refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def alive() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


def test_a_dead_replica_is_marked_and_every_call_goes_to_the_live_one(
    alive: FakeOpenAI,
) -> None:
    """Before: 10 of 12 calls failed, every retry went to the dead replica. After: 12 of 12
    succeed, the dead replica is marked down and no retry is spent on it."""
    dead = _dead_url()
    c = cfg(alive, base_urls=(dead, alive.base_url), max_retries=1, concurrency=4)
    with OpenAIBackend(c) as be:
        res = be.complete([chat(f"q{i}") for i in range(12)])
        assert all(isinstance(r, Completion) for r in res), [str(r) for r in res]
        assert list(be.replicas_down) == [dead] and "connection error" in be.replicas_down[dead]
        assert len(alive.answered) == 12 and be.ledger.errors == 0 and be.ledger.retries == 0


def test_a_dead_replica_through_the_command_line(
    alive: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``metrics run`` on a backbone whose first replica is dead: all 12 rows scored, exit 0,
    and the warning names the replica marked down."""
    dead = _dead_url()
    _backbone(tmp_path, [dead, alive.base_url], max_retries=0)
    rc, rows, err = _score(tmp_path, capsys, 6)
    assert rc == 0 and len(rows) == 12 and all(r["error"] is None for r in rows), err[-800:]
    assert len(alive.answered) == 12
    assert f"replica {dead} marked down" in caplog.text


# -- item 10: a key echoed outside the text ---------------------------------------------------------
class EchoKey(FakeOpenAI):
    """``keyfields``: the key in the ``model`` field, as one logprob token and alternative, and
    split over two tokens."""

    def spoil(self, reply: dict[str, Any], action: str) -> dict[str, Any]:
        if action != "keyfields":
            return super().spoil(reply, action)
        reply["model"] = f"fake-model ({self.key})"
        ch = reply["choices"][0]
        items = ch["logprobs"]["content"]
        items[0]["top_logprobs"].append({"token": self.key, "logprob": -9.0})
        half = len(self.key) // 2
        items += [
            {"token": " key", "logprob": -0.5, "top_logprobs": []},
            {"token": self.key, "logprob": -0.5, "top_logprobs": []},
            {"token": " " + self.key[:half], "logprob": -0.5, "top_logprobs": []},
            {"token": self.key[half:], "logprob": -0.5, "top_logprobs": []},
        ]
        return reply


def test_a_key_in_the_model_field_or_logprob_tokens_is_scrubbed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the key was stored in the cache row and printed by ``cache export``."""
    with EchoKey() as server:
        _backbone(tmp_path, server.base_url)
        server.faults[MARK] = ["keyfields"] * 4
        rc, rows, err = _score(tmp_path, capsys)
        assert rc == 0 and all(r["error"] is None for r in rows), err[-800:]
    rows_db = _cache_rows(tmp_path)
    assert len(rows_db) == 4 and "***" in rows_db[0][1]
    out = tmp_path / "export.jsonl"
    db = str(tmp_path / "cache" / "llm-cache.sqlite")
    assert main(["cache", "export", "--cache-file", db, "-o", str(out)]) == 0
    exported = out.read_text(encoding="utf-8")
    assert exported.count("\n") == 4
    for secret in (KEY, KEY[: len(KEY) // 2 + 2], KEY[len(KEY) // 2 :]):
        assert secret not in exported, secret
        assert secret.encode() not in Path(db).read_bytes()
