"""Batch export / import (issue 17): OpenAI batch input format, deterministic ids, resumable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from metajudge.backends.base import Request
from metajudge.backends.batch_file import (
    BATCH_FIELDS,
    custom_id,
    export_requests,
    import_results,
    manifest_path,
)
from metajudge.backends.cache import ResponseCache
from metajudge.backends.cached import CachedBackend
from metajudge.backends.config import BackendConfig
from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.backends.recording import PendingError, RecordingBackend

URLS = {"/v1/chat/completions", "/v1/completions"}


def _be(**kw: Any) -> OpenAIBackend:  # an endpoint nothing listens on: any call would fail
    base: dict[str, Any] = {"name": "t", "kind": "openai", "model": "m"}
    base.update({"base_url": "http://127.0.0.1:9/v1", "max_retries": 0, **kw})
    return OpenAIBackend(BackendConfig(**base))


def _reqs() -> list[Request]:
    return [
        Request(messages=({"role": "user", "content": f"q{i}"},), max_tokens=4, seed=i)
        for i in range(3)
    ]


def check_batch_input(path: Path) -> list[dict[str, Any]]:
    """Each line of an OpenAI batch input file: exactly custom_id, method, url, body."""
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    ids = [x["custom_id"] for x in lines]
    assert len(set(ids)) == len(ids)
    for x in lines:
        assert tuple(sorted(x)) == tuple(sorted(BATCH_FIELDS))
        assert x["method"] == "POST" and x["url"] in URLS
        assert isinstance(x["body"], dict) and x["body"]["model"]
    return lines


def _answer(line: dict[str, Any], text: str) -> dict[str, Any]:
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": line["body"]["model"],
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    if line["body"].get("logprobs"):  # a real server answers a logprobs request with them
        top = [{"token": text, "logprob": -0.1}]
        body["choices"][0]["logprobs"] = {
            "content": [{"token": text, "logprob": -0.1, "top_logprobs": top}]
        }
    return {
        "id": "b",
        "custom_id": line["custom_id"],
        "response": {"status_code": 200, "request_id": "r", "body": body},
        "error": None,
    }


def test_export_import_round_trip_is_resumable(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    rec = RecordingBackend(_be(), cache, parser_version="p1")
    res = rec.complete(_reqs())
    assert all(isinstance(r, PendingError) for r in res)
    out = tmp_path / "requests.jsonl"
    s = export_requests(rec.inner, rec.records.values(), out)
    assert (s.n_new, s.n_total) == (3, 3)
    lines = check_batch_input(out)
    keys = [rec.key(r) for r in _reqs()]
    assert [x["custom_id"] for x in lines] == [custom_id(k) for k in keys]
    assert manifest_path(out).is_file()
    # the same run exported again adds nothing (ids come from the cache keys)
    rec2 = RecordingBackend(_be(), cache, parser_version="p1")
    rec2.complete(_reqs())
    assert export_requests(rec2.inner, rec2.records.values(), out).n_new == 0
    # results for two of three requests, one of them an error: one import, pending otherwise
    results = tmp_path / "results.jsonl"
    err = {"custom_id": lines[1]["custom_id"], "response": None, "error": {"message": "boom"}}
    results.write_text(json.dumps(_answer(lines[0], "A0")) + "\n" + json.dumps(err) + "\n")
    summ = import_results(cache, results, out)
    assert (summ.n_imported, summ.n_failed, summ.n_missing) == (1, 1, 1)
    # a live backend behind the cache: the imported answer comes with zero calls
    live = CachedBackend(_be(), cache, parser_version="p1", close_cache=False)
    got = live.complete(_reqs()[:1])
    assert got[0].text == "A0" and got[0].cached and live.ledger.calls == 0
    # export again: only the two still missing; then the rest of the results
    rec3 = RecordingBackend(_be(), cache, parser_version="p1", close_cache=False)
    rec3.complete(_reqs())
    assert len(rec3.records) == 2
    results.write_text("".join(json.dumps(_answer(x, f"A{i}")) + "\n" for i, x in enumerate(lines)))
    summ = import_results(cache, results, out)
    assert (summ.n_imported, summ.n_already, summ.n_failed) == (2, 1, 0)
    texts = [r.text for r in live.complete(_reqs())]
    assert texts == ["A0", "A1", "A2"] and live.ledger.calls == 0
    cache.close()


def test_parser_version_views_share_the_records(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    rec = RecordingBackend(_be(), cache)
    rec.with_parser_version("a").complete(_reqs()[:1])
    rec.with_parser_version("b").complete(_reqs()[:1])
    assert sorted(r.parser_version for r in rec.records.values()) == ["a", "b"]
    cache.close()


def test_cli_export_then_import_then_nothing_left(tmp_path: Path, capsys: Any) -> None:
    """`judge export-batch` runs the judges without a model call (the embedded server never
    starts); `judge import-batch` fills the cache; a second export finds nothing missing."""
    from metajudge.cli import main

    data = tmp_path / "tiny.jsonl"
    rec = {
        "input": {"question": "How many units were sold?", "context": "Week 1: 10 units sold."},
        "a": {"system": "s1", "response": "10 units."},
        "b": {"system": "s2", "response": "40 units."},
        "labels": {"overall": [-1]},
    }
    data.write_text("".join(json.dumps({"id": f"p{i}", **rec}) + "\n" for i in range(2)))
    req, cache = tmp_path / "req.jsonl", tmp_path / "c.sqlite"
    args = ["judge", "export-batch", "--input", str(data), "--metrics", "geval_faithfulness"]
    args += ["--backbone", "smollm2-135m", "-o", str(req), "--cache-file", str(cache), "--quiet"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    lines = check_batch_input(req)
    assert first["n_new"] == len(lines) == 2  # two distinct responses (a pair repeats them)
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(_answer(x, "4")) + "\n" for x in lines))
    imp = ["judge", "import-batch", "--results", str(results), "--requests", str(req)]
    assert main([*imp, "--cache-file", str(cache)]) == 0
    assert json.loads(capsys.readouterr().out)["n_imported"] == 2
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["n_new"] == 0 and again["n_cached"] == 2
