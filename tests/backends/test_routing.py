"""Replica choice: least in flight, or the replica holding the prompt's prefix (backends/routing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.backends.routing import (
    AFFINITY_MIN_CHARS,
    pick_endpoint,
    prompt_text,
    shared_prefix,
)
from tests.backends.test_http import KEY, KEY_ENV, FakeOpenAI, cfg, chat

INSTR = "Rate the faithfulness of the answer to the table. " * 4
TABLES = ["| city | pop |\n" + f"| town{i} | {i * 1000} |\n" * 40 for i in range(4)]


def _prompt(item: int, resp: str) -> str:
    return f"{INSTR}\nTable:\n{TABLES[item]}\nAnswer: {resp}"


def test_shared_prefix_and_prompt_text() -> None:
    assert shared_prefix("abcdef", "abcxyz") == 3
    assert shared_prefix("abc", "abc") == 3
    assert shared_prefix("", "abc") == 0
    assert shared_prefix("abc", "abcdef") == 3
    kw = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}
    assert prompt_text(kw) == "system\x1fs\x1euser\x1fu"
    assert prompt_text({"prompt": "p"}) == "p"
    assert prompt_text({}) is None


def test_responses_of_one_item_go_to_the_replica_holding_its_context() -> None:
    eps, inflight, last = ["r0", "r1"], {}, {}
    # four in flight at once, in item order: a0 b0 a1 b1 (the first pair meets two fresh replicas)
    got = [pick_endpoint(eps, inflight, last, _prompt(i, r)) for i in (0, 1) for r in "ab"]
    assert got == ["r0", "r1", "r0", "r0"]  # b1 joins a1 on r0: one more in flight than r1
    assert inflight == {"r0": 3, "r1": 1}
    inflight.update(r0=0, r1=0)
    got = [pick_endpoint(eps, inflight, last, _prompt(i, r)) for i in (2, 3) for r in "ab"]
    assert got == ["r0", "r0", "r1", "r1"]  # each item's pair on one replica


def test_affinity_is_bounded_by_the_load_and_by_the_prefix_gain() -> None:
    eps = ["r0", "r1"]
    last = {"r0": _prompt(0, "a"), "r1": _prompt(1, "a")}
    # r0 holds item 0 but has 2 more in flight than r1: the least loaded takes it
    assert pick_endpoint(eps, {"r0": 2, "r1": 0}, dict(last), _prompt(0, "b")) == "r1"
    assert pick_endpoint(eps, {"r0": 1, "r1": 0}, dict(last), _prompt(0, "b")) == "r0"
    # a prefix gain under AFFINITY_MIN_CHARS (the instructions only): least loaded
    short = {"r0": INSTR + "x" * (AFFINITY_MIN_CHARS - 1), "r1": INSTR}
    assert pick_endpoint(eps, {"r0": 1, "r1": 0}, short, INSTR + "x" * 500) == "r1"
    # a retry (no prompt): least loaded, the replica's last prompt is kept
    kept = dict(last)
    assert pick_endpoint(eps, {"r0": 1, "r1": 0}, kept, None) == "r1"
    assert kept == last


def test_backend_sends_each_items_responses_to_one_replica(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAI(delay_s=0.05) as s1, FakeOpenAI(delay_s=0.05) as s2:
        c = cfg(s1, base_urls=(s1.base_url, s2.base_url), concurrency=4)
        with OpenAIBackend(c) as be:
            reqs = [chat(_prompt(i, r)) for i in range(4) for r in "ab"]
            res = be.complete(reqs)
        assert all(r.text for r in res)
        assert len(s1.answered) + len(s2.answered) == 8 and s1.answered and s2.answered
        together = sum(
            any(_prompt(i, "a") in t for t in s.answered)
            and any(_prompt(i, "b") in t for t in s.answered)
            for i in range(1, 4)
            for s in (s1, s2)
        )
        assert together >= 2  # items after the first: their two responses on one replica


def test_embedded_replicas_take_one_call_at_a_time_in_routing_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded backend sends a replica its calls one by one, in the order they were
    routed there (llama_cpp.server would take waiting requests in no set order)."""
    from metajudge.backends.embedded import EmbeddedBackend
    from metajudge.backends.openai_backend import NO_KEY
    from metajudge.metrics.judges.engine import backbone_config

    with FakeOpenAI(delay_s=0.05, key=NO_KEY) as s1, FakeOpenAI(delay_s=0.05, key=NO_KEY) as s2:
        be = EmbeddedBackend(backbone_config("smollm2-135m"), run_dir=tmp_path)
        monkeypatch.setattr(be, "_ensure_started", lambda: None)
        monkeypatch.setattr(be, "_endpoints", lambda: [s1.base_url, s2.base_url])
        routed: list[tuple[str, str]] = []
        pick = be._pick_endpoint

        def recorded(kw: Any) -> str:
            ep = pick(kw)
            routed.append((ep, kw["messages"][-1]["content"]))
            return ep

        monkeypatch.setattr(be, "_pick_endpoint", recorded)
        with be:
            res = be.complete([chat(_prompt(i, r)) for i in range(4) for r in "ab"])
        assert all(r.text for r in res)
        assert s1.max_inflight == 1 and s2.max_inflight == 1
        assert s1.answered == [t for e, t in routed if e == s1.base_url]
        assert s2.answered == [t for e, t in routed if e == s2.base_url]
        assert len(routed) == 8 and s1.answered and s2.answered


def _embedded_routes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delays: tuple[float, float]
) -> list[tuple[int, str]]:
    """(replica index, prompt) in routing order for 8 calls on two fake replicas."""
    from metajudge.backends.embedded import EmbeddedBackend
    from metajudge.backends.openai_backend import NO_KEY
    from metajudge.metrics.judges.engine import backbone_config

    with (
        FakeOpenAI(delay_s=delays[0], key=NO_KEY) as s1,
        FakeOpenAI(delay_s=delays[1], key=NO_KEY) as s2,
    ):
        be = EmbeddedBackend(backbone_config("smollm2-135m"), run_dir=tmp_path)
        eps = [s1.base_url, s2.base_url]
        monkeypatch.setattr(be, "_ensure_started", lambda: None)
        monkeypatch.setattr(be, "_endpoints", lambda: eps)
        routed: list[tuple[int, str]] = []
        pick = be._pick_endpoint

        def recorded(kw: Any) -> str:
            ep = pick(kw)
            routed.append((eps.index(ep), kw["messages"][-1]["content"]))
            return ep

        monkeypatch.setattr(be, "_pick_endpoint", recorded)
        with be:
            res = be.complete([chat(_prompt(i, r)) for i in range(4) for r in "ab"])
        assert all(r.text for r in res)
    return routed


def test_embedded_routing_does_not_depend_on_replica_speed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow first replica and a slow second one: the same replica for every call (the prefix
    llama.cpp reuses, hence the logits, do not depend on timing)."""
    slow_first = _embedded_routes(tmp_path / "a", monkeypatch, (0.3, 0.01))
    slow_second = _embedded_routes(tmp_path / "b", monkeypatch, (0.01, 0.3))
    assert slow_first == slow_second
    # the first item's pair spreads (every replica takes a call first), then each pair on one
    assert [e for e, _ in slow_first] == [0, 1, 0, 0, 1, 1, 0, 0]
