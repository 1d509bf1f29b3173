"""Several ``base_url`` replicas of one deployment, least-in-flight routing (issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metajudge.backends.cache import cache_key
from metajudge.backends.config import BackendConfig, load_config_file
from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.errors import InputError
from tests.backends.test_http import KEY, KEY_ENV, FakeOpenAI, cfg, chat


def test_calls_spread_over_replicas_least_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeOpenAI(delay_s=0.05) as s1, FakeOpenAI(delay_s=0.05) as s2:
        c = cfg(s1, base_urls=(s1.base_url, s2.base_url), concurrency=6)
        with OpenAIBackend(c) as be:
            res = be.complete([chat(f"q{i}") for i in range(30)])
        assert all(r.text for r in res)
        assert len(s1.answered) + len(s2.answered) == 30
        assert len(s1.answered) >= 10 and len(s2.answered) >= 10  # both replicas took a share
        assert s1.max_inflight <= 4 and s2.max_inflight <= 4  # 6 in flight, least loaded first


def test_replicas_in_a_config_file(tmp_path: Path) -> None:
    p = tmp_path / "multi.toml"
    p.write_text(
        'kind = "openai"\nmodel = "m"\nbase_url = ["http://a:8000/v1", "http://b:8000/v1"]\n'
    )
    c = load_config_file(p)
    assert c.base_url == "http://a:8000/v1"
    assert c.endpoints == ("http://a:8000/v1", "http://b:8000/v1")
    one = BackendConfig(name="multi", kind="openai", model="m", base_url="http://a:8000/v1")
    # the first replica names the deployment in cache keys: adding replicas keeps the cache
    assert OpenAIBackend(c).cache_endpoint == OpenAIBackend(one).cache_endpoint
    assert cache_key("openai", "m", chat("x"), "", OpenAIBackend(c).cache_endpoint)
    with pytest.raises(InputError, match="base_urls"):
        BackendConfig(
            name="x", kind="openai", model="m", base_url="http://c/v1", base_urls=("http://a/v1",)
        )
