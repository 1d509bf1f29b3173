"""Unit tests: response parsing, request building, configs, the cache (keys, migrations, concurrent
writers, prune/export) and the CLI. A scripted fake backend is used only for the cache-wrapper logic."""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.base import BackendError, Choice, Completion, Request, TokenLogprob
from metajudge.backends.cache import (
    MIGRATIONS,
    ResponseCache,
    cache_key,
    completion_from_json,
    completion_to_json,
)
from metajudge.backends.cached import CachedBackend
from metajudge.backends.config import BackendConfig, load_config_file
from metajudge.backends.ledger import Ledger
from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.backends.openai_parse import (
    merge_samples,
    parse_choice,
    parse_response,
    retry_after_s,
    scrub,
)
from metajudge.backends.registry import list_backends, resolve_config
from metajudge.errors import InputError

# -- parsing ---------------------------------------------------------------------------------


def test_parse_chat_choice_with_top_logprobs() -> None:
    ch = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": "4"},
        "logprobs": {
            "content": [
                {
                    "token": "4",
                    "logprob": -0.2,
                    "top_logprobs": [
                        {"token": "3", "logprob": -2.0},
                        {"token": "4", "logprob": -0.2},
                    ],
                }
            ]
        },
    }
    c = parse_choice(ch, chat=True)
    assert c.text == "4" and c.finish_reason == "stop"
    assert c.logprobs == (TokenLogprob("4", -0.2, (("4", -0.2), ("3", -2.0))),)  # most likely first


def test_parse_completion_choice_logprobs() -> None:
    ch = {
        "index": 0,
        "text": "1.5",
        "finish_reason": "length",
        "logprobs": {
            "tokens": ["1", ".", "5"],
            "token_logprobs": [-1.2, -1.3, None],
            "top_logprobs": [{"2": -1.6, "1": -1.2}, {".": -1.3}, None],
        },
    }
    c = parse_choice(ch, chat=False)
    assert c.text == "1.5"
    assert [t.token for t in c.logprobs] == ["1", ".", "5"]
    assert c.logprobs[0].top == (("1", -1.2), ("2", -1.6))
    assert math.isnan(c.logprobs[2].logprob) and c.logprobs[2].top == ()


def test_think_stripped_token_count_from_logprobs() -> None:
    toks = ["<think>", "hmm", " ok", "</think>", " Score", ": 4"]
    ch = {
        "message": {"content": "".join(toks)},
        "logprobs": {"content": [{"token": t, "logprob": -0.1, "top_logprobs": []} for t in toks]},
    }
    c = parse_choice(ch, chat=True, completion_tokens=6)
    assert c.text == "Score: 4" and c.raw_text.startswith("<think>")
    assert c.reasoning_tokens == 4


def test_think_token_count_from_usage_and_by_share() -> None:
    ch = {"message": {"content": "<think>abcdefgh</think>XY"}}
    assert (
        parse_choice(ch, chat=True, completion_tokens=10, reasoning_tokens=7).reasoning_tokens == 7
    )
    c = parse_choice(ch, chat=True, completion_tokens=25)
    assert c.text == "XY" and c.reasoning_tokens == round(25 * 23 / 25)
    # reasoning delivered separately (vLLM/DeepSeek reasoning parsers)
    c2 = parse_choice(
        {"message": {"content": "Score: 2", "reasoning_content": "hmm"}},
        chat=True,
        completion_tokens=8,
        reasoning_tokens=3,
    )
    assert c2.text == "Score: 2" and c2.reasoning_tokens == 3 and "hmm" in c2.raw_text
    # unterminated think (truncated by max_tokens): nothing left to parse
    assert (
        parse_choice(
            {"message": {"content": "<think>still going"}}, chat=True, completion_tokens=5
        ).text
        == ""
    )


def test_parse_response_usage_and_errors() -> None:
    resp = {
        "model": "m",
        "choices": [{"index": 1, "text": "b"}, {"index": 0, "text": "a"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }
    c = parse_response(resp, chat=False, latency_s=0.5, model="x")
    assert (
        [ch.text for ch in c.choices] == ["a", "b"] and c.prompt_tokens == 5 and c.latency_s == 0.5
    )
    with pytest.raises(ValueError):
        parse_response({"choices": []}, chat=True, latency_s=0, model="m")


def test_merge_samples() -> None:
    a = Completion(
        (Choice("x", "x"),), prompt_tokens=5, completion_tokens=2, latency_s=0.3, model="m"
    )
    b = Completion(
        (Choice("y", "y"),), prompt_tokens=5, completion_tokens=4, latency_s=0.5, model="m"
    )
    m = merge_samples([a, b])
    assert (
        [c.text for c in m.choices] == ["x", "y"]
        and m.prompt_tokens == 5
        and m.completion_tokens == 6
        and m.latency_s == 0.5
    )


def test_retry_after_forms() -> None:
    assert retry_after_s({"retry-after": "3"}) == 3.0
    assert retry_after_s({"retry-after-ms": "250"}) == 0.25
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None


def test_scrub() -> None:
    assert "abc123secret" not in scrub("key abc123secret here", "abc123secret")
    assert (
        scrub("Incorrect API key provided: sk-proj-ABCDEFGHIJ", None)
        == "Incorrect API key provided: sk-***"
    )


# -- request building -------------------------------------------------------------------------


def _be(**kw: Any) -> OpenAIBackend:
    base: dict[str, Any] = {
        "name": "t",
        "kind": "openai",
        "model": "m",
        "base_url": "http://127.0.0.1:9/v1",
    }
    base.update(kw)
    return OpenAIBackend(BackendConfig(**base))


def test_build_kwargs_chat_json_modes_and_grammar() -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    req = Request(
        messages=({"role": "user", "content": "hi"},),
        json_schema=schema,
        logprobs=True,
        top_logprobs=5,
        stop=("\n",),
        seed=3,
    )
    kind, kw = _be().build_kwargs(req, seed=3)
    assert kind == "chat" and kw["response_format"]["type"] == "json_schema"
    assert kw["response_format"]["json_schema"]["schema"] == schema
    assert (
        kw["logprobs"] is True
        and kw["top_logprobs"] == 5
        and kw["stop"] == ["\n"]
        and kw["seed"] == 3
    )
    _, kw = _be(json_mode="json_object_schema").build_kwargs(req)
    assert kw["response_format"] == {"type": "json_object", "schema": schema}
    g = Request(prompt="x", grammar='root ::= "a"')
    _, kw = _be(grammar_param="grammar").build_kwargs(g)
    assert kw["extra_body"] == {"grammar": 'root ::= "a"'} and kw["prompt"] == "x"
    with pytest.raises(BackendError, match="grammar"):
        _be().validate(g)


def test_completion_logprobs_and_schema_as_grammar() -> None:
    pytest.importorskip("llama_cpp")
    req = Request(
        prompt="Score:",
        logprobs=True,
        top_logprobs=3,
        json_schema={"type": "object", "properties": {"s": {"type": "integer"}}},
    )
    kind, kw = _be(grammar_param="grammar").build_kwargs(req)
    assert kind == "completion" and kw["logprobs"] == 3
    assert "root" in kw["extra_body"]["grammar"]


def test_make_request_uses_config_decoding() -> None:
    be = _be(decoding={"temperature": 0.3, "max_tokens": 17, "stop": ["###"]})
    r = be.make_request(prompt="x", max_tokens=5)
    assert r.temperature == 0.3 and r.max_tokens == 5 and r.stop == ("###",)


# -- configs ----------------------------------------------------------------------------------


def test_builtin_configs() -> None:
    names = {c.name: c for c in list_backends()}
    assert {"smollm2-135m", "gemma3-270m"} <= set(names)
    assert names["smollm2-135m"].chat and not names["gemma3-270m"].chat
    assert names["gemma3-270m"].gguf_sha256 and names["smollm2-135m"].logits_all


def test_config_files_toml_yaml_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.yaml").write_text(
        "kind: openai\nmodel: llama3\nbase_url: http://localhost:11434/v1\nconcurrency: 8\ndecoding:\n  temperature: 0.5\n"
    )
    c = load_config_file(tmp_path / "a.yaml")
    assert c.name == "a" and c.concurrency == 8 and c.decoding == {"temperature": 0.5}
    (tmp_path / "bad.toml").write_text('name = "b"\nkind = "openai"\nmodel = "m"\ncolour = "red"\n')
    with pytest.raises(InputError, match="colour") as e:
        load_config_file(tmp_path / "bad.toml")
    assert e.value.field == "colour" and e.value.path == str(tmp_path / "bad.toml")
    (tmp_path / "key.toml").write_text(
        'name = "k"\nkind = "openai"\nmodel = "m"\napi_key = "sk-x"\n'
    )
    with pytest.raises(InputError, match="api_key"):
        load_config_file(tmp_path / "key.toml")
    (tmp_path / "dec.toml").write_text(
        'name = "d"\nkind = "openai"\nmodel = "m"\n[decoding]\ntop_p = 0.9\n'
    )
    with pytest.raises(InputError) as e2:
        load_config_file(tmp_path / "dec.toml")
    assert e2.value.field == "decoding.top_p"
    # a configured backbone shows up in the list and overrides nothing else
    cfgdir = tmp_path / "cfg"
    cfgdir.mkdir()
    (cfgdir / "ollama.toml").write_text(
        'kind = "openai"\nmodel = "llama3"\nbase_url = "http://localhost:11434/v1"\n'
    )
    monkeypatch.setenv("METAJUDGE_BACKENDS_DIR", str(cfgdir))
    assert "ollama" in {c.name for c in list_backends()}
    assert resolve_config("ollama").base_url == "http://localhost:11434/v1"
    with pytest.raises(InputError, match="unknown backend"):
        resolve_config("nope")


# -- cache ------------------------------------------------------------------------------------


class ScriptedBackend:
    """Answers ``echo:<prompt>``; fails prompts containing FAIL. Counts the requests it saw."""

    kind = "scripted"
    name = "scripted"

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.ledger = Ledger()

    @property
    def model_id(self) -> str:
        return "scripted-1"

    def complete(self, requests: Sequence[Request]) -> list[Completion | BackendError]:
        out: list[Completion | BackendError] = []
        for r in requests:
            self.seen.append(str(r.prompt))
            if "FAIL" in str(r.prompt):
                out.append(BackendError("nope"))
            else:
                out.append(
                    Completion(
                        (
                            Choice(
                                f"echo:{r.prompt}",
                                f"echo:{r.prompt}",
                                logprobs=(TokenLogprob("e", -0.5, (("e", -0.5), ("f", -1.5))),),
                            ),
                        ),
                        prompt_tokens=2,
                        completion_tokens=1,
                        latency_s=0.01,
                    )
                )
        return out

    def close(self) -> None:
        pass


def test_cache_key_covers_everything() -> None:
    r = Request(prompt="x")
    k = cache_key("embedded", "m@sha256:1", r, "p1")
    assert k != cache_key("embedded", "m@sha256:2", r, "p1")
    assert k != cache_key("openai", "m@sha256:1", r, "p1")
    assert k != cache_key("embedded", "m@sha256:1", r, "p2")
    assert k != cache_key("embedded", "m@sha256:1", Request(prompt="x", temperature=0.1), "p1")
    assert k == cache_key("embedded", "m@sha256:1", Request(prompt="x"), "p1")


def test_completion_json_roundtrip() -> None:
    c = Completion(
        (
            Choice(
                "a",
                "<think>t</think>a",
                "stop",
                (TokenLogprob("a", -0.1, (("a", -0.1), ("b", -2.0))),),
                3,
            ),
        ),
        4,
        5,
        0.25,
        model="m",
        extra={"k": 1},
    )
    back = completion_from_json(completion_to_json(c))
    assert (
        back.cached
        and back.choices == c.choices
        and back.prompt_tokens == 4
        and back.extra == {"k": 1}
    )


def test_cached_backend_hits_parser_version_and_failures(tmp_path: Path) -> None:
    inner = ScriptedBackend()
    be = CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"), parser_version="v1")
    reqs = [Request(prompt="a"), Request(prompt="b"), Request(prompt="a"), Request(prompt="FAIL")]
    first = be.complete(reqs)
    assert inner.seen == ["a", "b", "FAIL"]  # duplicate sent once
    assert isinstance(first[3], BackendError) and first[0].text == "echo:a" and not first[0].cached
    second = be.complete(reqs)
    assert (
        inner.seen[3:] == ["FAIL"]
        and second[1].cached
        and second[1].choices[0].logprobs[0].top[1] == ("f", -1.5)
    )
    assert be.ledger.cached == 3
    be.complete([Request(prompt="a")], parser_version="v2")
    assert inner.seen[-1] == "a"
    view = be.with_parser_version("v2")
    assert view.complete([Request(prompt="a")])[0].cached
    view.close()  # a view does not close the shared cache
    assert len(be.cache) == 3
    be.close()


def test_migrations_upgrade_old_schema(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as con:
        con.execute(MIGRATIONS[0])
        con.execute(
            "INSERT INTO responses VALUES ('k','kind','m','p','{}', ?, 1, 2, 0.1, 0)",
            (completion_to_json(Completion((Choice("t", "t"),))),),
        )
        con.execute("PRAGMA user_version=1")
    c = ResponseCache(db)
    assert c.schema_version == len(MIGRATIONS)
    assert c.get_many(["k"])["k"].text == "t"
    assert c.stats()["hits"] == 1
    c.close()
    assert ResponseCache(db).schema_version == len(MIGRATIONS)  # idempotent


def _writer(path: str, wid: int, n: int) -> None:
    c = ResponseCache(path)
    for i in range(n):
        r = Request(prompt=f"w{wid}-{i}")
        c.put(
            cache_key("x", "m", r, ""),
            kind="x",
            model_id="m",
            parser_version="",
            request=r,
            completion=Completion((Choice(str(i), str(i)),), 1, 1, 0.0),
        )
    c.close()


def test_concurrent_writers_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert all(p.exitcode == 0 for p in procs)
    c = ResponseCache(path)
    assert len(c) == 600
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    c.close()


def test_prune_export_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from metajudge.cli import main

    path = tmp_path / "c.sqlite"
    be = CachedBackend(ScriptedBackend(), ResponseCache(path), parser_version="p1")
    be.complete([Request(prompt=f"q{i}") for i in range(5)])
    be.complete([Request(prompt="old")], parser_version="p0")
    be.close()
    assert main(["cache", "stats", "--cache-file", str(path), "--format", "json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["entries"] == 6 and {g["parser_version"] for g in stats["groups"]} == {"p0", "p1"}
    assert (
        main(
            [
                "cache",
                "export",
                "--cache-file",
                str(path),
                "--parser-version",
                "p1",
                "--output",
                str(tmp_path / "e.jsonl"),
            ]
        )
        == 0
    )
    rows = [json.loads(x) for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert (
        len(rows) == 5
        and rows[0]["request"]["prompt"] == "q0"
        and rows[0]["response"]["choices"][0]["text"] == "echo:q0"
    )
    assert main(["cache", "prune", "--cache-file", str(path)]) == 2  # must say what to prune
    assert main(["cache", "prune", "--cache-file", str(path), "--parser-version", "p0"]) == 0
    assert "pruned 1 entries; 5 left" in capsys.readouterr().out
    assert main(["cache", "prune", "--cache-file", str(path), "--older-than", "1"]) == 0
    assert "pruned 0 entries" in capsys.readouterr().out
    assert main(["cache", "prune", "--cache-file", str(path), "--all", "--yes"]) == 0
    assert "5 left" not in capsys.readouterr().out and len(ResponseCache(path)) == 0


def test_backends_list_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from metajudge.cli import main

    assert main(["backends", "list"]) == 0
    out = capsys.readouterr().out
    assert "smollm2-135m" in out and "gemma3-270m" in out
    assert main(["backends", "list", "--format", "json"]) == 0
    assert {c["name"] for c in json.loads(capsys.readouterr().out)} >= {
        "smollm2-135m",
        "gemma3-270m",
    }


def test_gguf_path_config_and_model_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metajudge.backends.models import gguf_sha256, model_dir, resolve_gguf
    from metajudge.errors import ChecksumError, MissingResourceError
    from metajudge.io import sha256_file

    f = tmp_path / "tiny.gguf"
    f.write_bytes(b"GGUF" + bytes(100))
    c = resolve_config(str(f))
    assert c.kind == "embedded" and c.name == "tiny" and c.gguf == str(f.resolve()) and c.chat
    with pytest.raises(InputError, match="not found"):
        resolve_config(str(tmp_path / "missing.gguf"))
    digest = sha256_file(f)
    assert gguf_sha256(f) == digest and (tmp_path / "tiny.gguf.sha256").exists()
    assert gguf_sha256(f) == digest  # from the memo
    f.write_bytes(b"GGUF" + bytes(101))  # size changed: recomputed
    assert gguf_sha256(f) == sha256_file(f) != digest
    with pytest.raises(ChecksumError):
        resolve_gguf(str(f), "0" * 64)
    with pytest.raises(MissingResourceError, match="not installed"):
        resolve_gguf("package:no_such_pkg_xyz/model.gguf")
    monkeypatch.setenv("METAJUDGE_MODEL_DIR", str(tmp_path / "models"))
    assert model_dir() == tmp_path / "models"


def test_processed_tokens_travel_in_the_completion(tmp_path: Path) -> None:
    """llama.cpp's C++ server (timings.prompt_n) and OpenAI/vLLM (cached_tokens) report what was
    evaluated; the embedded llama_cpp.server only logs it: PromptEvalLog reads it in order."""
    from metajudge.backends.server import PromptEvalLog

    base = {"choices": [{"index": 0, "message": {"content": "x"}}]}
    usage = {"prompt_tokens": 100, "completion_tokens": 2}
    c1 = parse_response(
        {**base, "usage": usage, "timings": {"prompt_n": 7}}, chat=True, latency_s=0, model="m"
    )
    c2 = parse_response(
        {**base, "usage": {**usage, "prompt_tokens_details": {"cached_tokens": 64}}},
        chat=True,
        latency_s=0,
        model="m",
    )
    c3 = parse_response({**base, "usage": usage}, chat=True, latency_s=0, model="m")
    assert (c1.processed_prompt_tokens, c2.processed_prompt_tokens, c3.processed_prompt_tokens) == (
        7,
        36,
        None,
    )
    assert merge_samples([c1, c2]).processed_prompt_tokens == 43
    assert merge_samples([c1, c3]).processed_prompt_tokens is None

    log = tmp_path / "server.log"
    log.write_text("llama_perf_context_print: prompt eval time = 1.0 ms / 99 tokens\n")
    reader = PromptEvalLog(log, wait_s=0.0)  # lines before the reader started are not ours
    with log.open("a") as fh:
        fh.write("Llama.generate: 20 prefix-match hit, remaining 12 prompt tokens to eval\n")
        fh.write("llama_perf_context_print: prompt eval time =  5.2 ms /    12 tokens (...)\n")
        fh.write("llama_perf_context_print: prompt eval time =  5.2 ms /    30 tok")
    assert reader.next() == 12
    assert reader.next() is None  # the second line is not complete yet: unknown, skipped later
    with log.open("a") as fh:
        fh.write("ens\nllama_perf_context_print: prompt eval time = 1 ms / 4 tokens\n")
    assert reader.next() == 4


def test_ledger_is_one_class_for_backends_and_judges() -> None:
    from metajudge.metrics.judges import engine

    a = Ledger()
    a.add_call(10, 1, 0.1, processed_prompt_tokens=4)
    b = Ledger()
    b.add_call(20, 2, 0.2)  # not reported: counted as sent, processed_known turns False
    a.add(b)
    s = a.summary()
    assert (s["calls"], s["prompt_tokens"], s["processed_prompt_tokens"]) == (2, 30, 24)
    assert s["processed_known"] is False
    assert not hasattr(engine, "CallStats")  # the old judge counter is gone: one Ledger


def test_cache_hits_carry_the_cost_they_had_when_computed(tmp_path: Path) -> None:
    """A run answered from the cache still knows what its answers cost the model (the matrix
    reports it for cells whose calls were made by an earlier command)."""
    be = CachedBackend(ScriptedBackend(), ResponseCache(tmp_path / "c.sqlite"), parser_version="v")
    first = be.complete([Request(prompt="a"), Request(prompt="bb")])
    spent = be.ledger.summary()
    assert spent["cached"] == 0 and spent["cached_prompt_tokens"] == 0
    second = be.complete([Request(prompt="a"), Request(prompt="bb"), Request(prompt="a")])
    s = be.ledger.summary()
    assert s["cached"] == 3
    want = sum(c.prompt_tokens for c in first) + first[0].prompt_tokens
    assert s["cached_prompt_tokens"] == want == sum(c.prompt_tokens for c in second)
    assert s["cached_completion_tokens"] == sum(c.completion_tokens for c in second)
    assert s["cached_latency_s"] == round(sum(c.latency_s for c in second), 4)
