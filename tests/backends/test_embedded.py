"""End-to-end against the real embedded llama.cpp server (SmolLM2-135M; Gemma-3-270M base)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from metajudge.backends.base import BackendError, Completion, Request
from metajudge.backends.registry import get_backend

pytest.importorskip(
    "llama_cpp.server", reason="llama-cpp-python[server] not installed (make llama)"
)
pytestmark = [pytest.mark.slow, pytest.mark.llm]

SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}},
    "required": ["metrics", "run"],
}


def ask(text: str, **kw: object) -> Request:
    kw.setdefault("max_tokens", 8)
    return Request(messages=({"role": "user", "content": text},), **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def smol(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    run = tmp_path_factory.mktemp("smol-run")
    be = get_backend(
        "smollm2-135m", run_dir=run, cache=False, n_ctx=2048, n_parallel=1, concurrency=3
    )
    yield be
    be.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "\nState:\tZ" not in fh.read()
    except FileNotFoundError:
        return False


def test_start_chat_logprobs_and_stop_on_close(tmp_path: Path) -> None:
    be = get_backend("smollm2-135m", run_dir=tmp_path, cache=False, n_ctx=1024)
    [res] = be.complete(
        [
            ask(
                "Rate from 1 to 5 how fluent this is: 'The cat sat.' Answer with a digit.",
                max_tokens=2,
                logprobs=True,
                top_logprobs=4,
            )
        ]
    )
    assert (
        isinstance(res, Completion)
        and res.prompt_tokens > 10
        and res.completion_tokens >= 1
        and res.latency_s > 0
    )
    lp = res.choices[0].logprobs
    assert lp is not None and len(lp) == res.completion_tokens
    top = lp[0].top
    assert len(top) == 4 and [t[1] for t in top] == sorted((t[1] for t in top), reverse=True)
    assert lp[0].token in {t[0] for t in top} and all(v <= 0 for _, v in top)
    pids = [s.pid for s in be.servers]
    assert len(pids) == be.config.n_parallel and all(p is not None and _alive(p) for p in pids)
    be.close()
    assert not any(_alive(p) for p in pids if p)
    logs = "".join(p.read_text() for p in tmp_path.glob("llama-server-smollm2-135m*.log"))
    assert "POST /v1/chat/completions" in logs
    assert json.loads((tmp_path / "ledger-smollm2-135m.json").read_text())["calls"] == 1


def test_completion_endpoint_top_logprobs(smol: object) -> None:
    [res] = smol.complete(
        [
            Request(
                prompt="Question: is water wet? Answer (yes/no):",
                max_tokens=1,
                logprobs=True,
                top_logprobs=5,
            )
        ]
    )  # type: ignore[attr-defined]
    assert isinstance(res, Completion)
    [tok] = res.choices[0].logprobs
    assert len(tok.top) == 5 and tok.top[0][1] >= tok.top[-1][1]


def test_json_mode_chat_and_completion(smol: object) -> None:
    chat, comp = smol.complete(
        [  # type: ignore[attr-defined]
            ask(
                "Score the sentence 'I like tea' from 1 to 5 and answer in JSON.",
                max_tokens=24,
                json_schema=SCHEMA,
            ),
            Request(prompt="Rating of 'I like tea' as JSON:", max_tokens=24, json_schema=SCHEMA),
        ]
    )
    for res in (chat, comp):
        assert isinstance(res, Completion), res
        assert isinstance(json.loads(res.text)["score"], int)


def test_grammar(smol: object) -> None:
    res = smol.complete(
        [
            ask(f"Is {x} a colour? Reply yes or no.", max_tokens=4, grammar='root ::= "yes" | "no"')
            for x in ("red", "seven")
        ]
    )  # type: ignore[attr-defined]
    assert all(isinstance(r, Completion) and r.text in {"yes", "no"} for r in res)


def test_stop_sequence(smol: object) -> None:
    [res] = smol.complete([Request(prompt="1, 2, 3, 4, 5,", max_tokens=24, stop=(" 8",))])  # type: ignore[attr-defined]
    assert isinstance(res, Completion)
    assert " 8" not in res.text and res.choices[0].finish_reason == "stop"


def test_concurrent_requests_and_samples(smol: object) -> None:
    before = smol.ledger.calls  # type: ignore[attr-defined]
    reqs = [
        ask(f"Give one word that rhymes with {w}.", max_tokens=4)
        for w in ("cat", "dog", "sun", "tree", "blue", "red")
    ]
    reqs.append(ask("Say a number.", max_tokens=3, n=3, temperature=0.9, seed=7))
    res = smol.complete(reqs)  # type: ignore[attr-defined]
    assert all(isinstance(r, Completion) for r in res)
    assert len(res[-1].choices) == 3  # n fanned out over three calls (llama.cpp ignores n)
    assert smol.ledger.calls - before == 9  # type: ignore[attr-defined]
    # temperature 0 is deterministic: the same request again (alone) gives the same text
    [again] = smol.complete([reqs[0]])  # type: ignore[attr-defined]
    assert again.text == res[0].text


def test_n_parallel_replicas(tmp_path: Path) -> None:
    with get_backend(
        "smollm2-135m", run_dir=tmp_path, cache=False, n_parallel=2, n_ctx=512, concurrency=4
    ) as be:
        res = be.complete([ask(f"Name a fruit starting with {c}.", max_tokens=3) for c in "abcdef"])
        assert all(isinstance(r, Completion) for r in res)
        assert len(be.servers) == 2 and len({s.port for s in be.servers}) == 2
        pids = [s.pid for s in be.servers]
    assert not any(_alive(p) for p in pids if p)
    for i in range(2):
        assert (
            "POST /v1/chat/completions"
            in (tmp_path / f"llama-server-smollm2-135m-{i}.log").read_text()
        )


# The child behaves like a program started from a terminal: Ctrl-C raises KeyboardInterrupt.
# (A process launched from a non-interactive shell's background job inherits SIGINT as ignored,
# as CI runners may do; restoring Python's default handler keeps the test about metajudge.)
_CHILD = r"""
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from metajudge.backends.registry import get_backend
be = get_backend("smollm2-135m", run_dir=sys.argv[1], cache=False, n_ctx=512)
be.start()
print("PID", *[s.pid for s in be.servers], flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_no_orphan_server(tmp_path: Path, sig: signal.Signals) -> None:
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    line = proc.stdout.readline() if proc.stdout else ""
    assert line.startswith("PID"), line
    pids = [int(p) for p in line.split()[1:]]
    assert pids and all(_alive(p) for p in pids)
    os.kill(proc.pid, sig)
    proc.wait(30)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), f"a server outlived its parent after {sig.name}"


def test_gemma_base_completion(tmp_path: Path) -> None:
    """Gemma-3-270M is a base model: completions (with top logprobs) work, chat is refused."""
    with get_backend("gemma3-270m", run_dir=tmp_path, cache=tmp_path / "c.sqlite", n_ctx=512) as be:
        assert "a5fd3b62230aa5ec" in be.model_id
        prompt = (
            "Review: The food was great.\nSentiment: positive\nReview: Awful service.\nSentiment:"
        )
        res, chat = be.complete(
            [Request(prompt=prompt, max_tokens=2, logprobs=True, top_logprobs=3), ask("hi")],
            parser_version="t",
        )
        assert isinstance(res, Completion) and res.text.strip() != ""
        assert res.choices[0].logprobs and len(res.choices[0].logprobs[0].top) == 3
        assert isinstance(chat, BackendError) and "completion-only" in str(chat)
        [cached] = be.complete(
            [Request(prompt=prompt, max_tokens=2, logprobs=True, top_logprobs=3)],
            parser_version="t",
        )
        assert cached.cached and cached.text == res.text


def test_backends_check_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from metajudge.cli import main

    assert (
        main(["backends", "check", "smollm2-135m", "--log-dir", str(tmp_path), "--format", "json"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["latency_s"] > 0
    assert report["logprobs"] is True and report["json_mode"] is True and report["errors"] == {}


def test_processed_prompt_tokens_come_with_each_completion(tmp_path: Path) -> None:
    """llama_cpp.server logs the prompt tokens it evaluated (prefix reuse); the embedded backend
    attaches them to each Completion, and they add up to the logs' total."""
    from metajudge.backends.server import prompt_eval_stats

    pre = "You are a careful judge. " * 20
    with get_backend(
        "smollm2-135m", run_dir=tmp_path, cache=False, n_ctx=1024, n_parallel=1, concurrency=2
    ) as be:
        be.start()
        log = be.servers[0].log_path
        offset = log.stat().st_size
        res = be.complete(
            [ask(pre + f"Question {i}: is {i} even?", max_tokens=3) for i in range(4)]
        )
        comps = [r for r in res if isinstance(r, Completion)]
        assert len(comps) == 4 and all(c.processed_prompt_tokens is not None for c in comps)
        # the shared prefix is reused after the first request the server ran (any of them)
        ran_full = [c for c in comps if c.processed_prompt_tokens == c.prompt_tokens]
        assert len(ran_full) == 1
        assert sum(c.processed_prompt_tokens < c.prompt_tokens for c in comps) == 3  # type: ignore[operator]
        total = sum(c.processed_prompt_tokens or 0 for c in comps)
        assert total == prompt_eval_stats(log, offset)["prompt_tokens_evaluated"]
        assert be.ledger.processed_prompt_tokens == total and be.ledger.processed_known
