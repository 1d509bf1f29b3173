"""Issue 30, the fake-server fault suite (loopback only, bounded): a reply that is no usable
verdict is never cached and the fixed server is asked again; one deadline per call however slowly
a server sends; a reply body capped from ``max_tokens``; a key a server echoes is written nowhere;
``cache prune --damaged`` leaves a live or healthy cache alone; configs are range-checked when read; a
full cache disk is one message naming the file and a real way out.

The server is :class:`tests.backends.test_http.FakeOpenAI` (its faults: ``nologprobs``,
``nanlogprob``, ``biglogprob``, ``trickle:S``, ``huge:N``, ``echokey``)."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.base import BackendError, Choice, Completion, Request
from metajudge.backends.cache import ResponseCache, completion_to_json
from metajudge.backends.cached import CachedBackend
from metajudge.backends.openai_backend import OpenAIBackend
from metajudge.cli import main
from metajudge.errors import InputError
from tests.backends.test_http import KEY, KEY_ENV, FakeOpenAI, cfg, chat

MARK = "units"  # in every judge prompt of the dataset below


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("METAJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("METAJUDGE_BACKENDS_DIR", str(tmp_path / "backends"))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


def _backbone(tmp_path: Path, base_url: str, **kw: Any) -> Path:
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
        **kw,
    }
    p = d / "fake.toml"
    p.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items()))
    return p


def _dataset(tmp_path: Path, n: int = 2) -> Path:
    """``n`` pairwise items; every response distinct, so each is one judge call."""
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


def _score(tmp_path: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    out = tmp_path / "scores.jsonl"
    argv = ["metrics", "run", "--input", str(_dataset(tmp_path)), "--metrics", "geval_faithfulness"]
    rc = main([*argv, "--backbone", "fake", "-o", str(out), "--quiet", *extra])
    rows = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return rc, rows


def _cache_entries(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "cache" / "llm-cache.sqlite") as db:
        return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


@pytest.mark.parametrize("fault", ["nologprobs", "nanlogprob", "biglogprob"])
def test_unusable_geval_reply_is_not_cached_and_the_fixed_server_is_asked_again(
    fault: str, server: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: stored as valid; reruns made 0 calls and failed the same way (1000 ended in an
    OverflowError traceback)."""
    _backbone(tmp_path, server.base_url)
    server.faults[MARK] = [fault] * 4  # the first answer to each of the 4 prompts is bad
    rc, rows = _score(tmp_path)
    assert rc == 1 and len(rows) == 4 and "Traceback" not in capsys.readouterr().err
    assert all(r["score"] is None and "unusable reply" in r["error"] for r in rows)
    assert _cache_entries(tmp_path) == 0 and set(server.attempts.values()) == {1}
    # the server is fixed (its script is spent): the rerun asks again and succeeds
    rc, rows = _score(tmp_path)
    assert rc == 0 and set(server.attempts.values()) == {2}
    assert all(r["error"] is None and 1.0 <= r["score"] <= 5.0 for r in rows)
    assert _cache_entries(tmp_path) == 4
    rc, again = _score(tmp_path, "--fresh")  # now from the cache: no call
    assert rc == 0 and set(server.attempts.values()) == {2}
    assert [r["score"] for r in again] == [r["score"] for r in rows]


def test_a_stored_unusable_reply_is_never_served(server: FakeOpenAI, tmp_path: Path) -> None:
    """An entry recorded before replies were checked (a logprobs request, no logprobs) is a miss."""
    db = tmp_path / "c.sqlite"
    req = chat("stored badly", logprobs=True, top_logprobs=2)
    with CachedBackend(OpenAIBackend(cfg(server)), ResponseCache(db)) as be:
        key = be.key(req)
        bad = completion_to_json(Completion(choices=(Choice("Score: 3", "Score: 3"),)))
        with sqlite3.connect(db) as con:
            con.execute(
                "INSERT INTO responses (key, kind, model_id, parser_version, request_json, "
                "response_json, prompt_tokens, completion_tokens, latency_s, created_at, endpoint) "
                "VALUES (?, 'openai', 'fake-model', '', '{}', ?, 1, 1, 0.1, 0, ?)",
                (key, bad, be.endpoint),
            )
        [res] = be.complete([req])
        assert isinstance(res, Completion) and not res.cached and res.choices[0].logprobs
        assert server.attempts["stored badly"] == 1 and be.ledger.cached == 0
        [again] = be.complete([req])
        assert again.cached and server.attempts["stored badly"] == 1  # the good answer replaced it


def test_put_refuses_an_unusable_reply(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    req = Request(prompt="x", logprobs=True)
    no_logprobs = Completion(choices=(Choice("4", "4"),))
    stored = cache.put(
        "k", kind="x", model_id="m", parser_version="", request=req, completion=no_logprobs
    )
    assert stored is False and cache.refused == 1 and len(cache) == 0
    cache.close()


@pytest.mark.parametrize(
    ("chosen", "alternative", "usable"),
    [
        (-0.1, -2.0, True),
        (1e-5, -2.0, True),  # a server's rounding of a certain token
        (-0.1, -math.inf, True),  # an alternative a grammar ruled out: probability 0
        (-math.inf, -2.0, False),
        (-0.1, math.nan, False),
        (math.nan, -2.0, False),
        (1000.0, -2.0, False),
        (-0.1, 0.5, False),
    ],
)
def test_which_logprobs_are_usable(chosen: float, alternative: float, usable: bool) -> None:
    from metajudge.backends.base import TokenLogprob
    from metajudge.backends.reply import reply_problem

    lp = (TokenLogprob(" 4", chosen, ((" 4", chosen), (" 3", alternative))),)
    comp = Completion(choices=(Choice("4", "4", logprobs=lp),))
    req = Request(prompt="x", logprobs=True, top_logprobs=2)
    assert (reply_problem(req, comp) is None) is usable


def test_one_deadline_per_call_against_a_trickling_server(server: FakeOpenAI) -> None:
    """Before: timeout_s was a read timeout; one byte every 0.2 s held a call for a minute
    (34.5 s measured on 3a16549). With the deadline it ends after about 1 s (1.1 s measured);
    the bound leaves room for a loaded machine and stays far below the trickle's length."""
    server.faults["SLOW"] = ["trickle:0.2"]
    t0 = time.monotonic()
    with OpenAIBackend(cfg(server, timeout_s=1.0, max_retries=0)) as be:
        [res] = be.complete([chat("SLOW")])
    elapsed = time.monotonic() - t0
    assert isinstance(res, BackendError) and "timed out" in str(res) and res.retryable
    assert elapsed < 10.0, elapsed


@pytest.mark.parametrize("declared", [False, True], ids=["read-until-close", "content-length"])
def test_huge_reply_is_refused_and_the_fixed_reply_stored_once(
    declared: bool, server: FakeOpenAI, tmp_path: Path
) -> None:
    """Before: a 50 MB body for max_tokens 64 was accepted and stored three times."""
    server.faults["BIG"] = ["huge:50000000" + (":cl" if declared else "")]
    req = Request(messages=({"role": "user", "content": "BIG"},), max_tokens=64)
    db = tmp_path / "c.sqlite"
    t0 = time.monotonic()
    with CachedBackend(OpenAIBackend(cfg(server)), ResponseCache(db)) as be:
        [res] = be.complete([req])
        assert isinstance(res, BackendError) and "above the cap" in str(res)
        assert server.attempts["BIG"] == 1 and len(be.cache) == 0  # not retried, not stored
        assert time.monotonic() - t0 < 10
        [ok] = be.complete([req])  # fixed: asked again
        assert isinstance(ok, Completion) and server.attempts["BIG"] == 2
    with sqlite3.connect(db) as con:
        [(stored,)] = con.execute("SELECT response_json FROM responses").fetchall()
    assert stored.count(ok.text) == 1 and "raw_text" not in stored
    assert ResponseCache(db).get_many([be.key(req)])[be.key(req)].choices[0].raw_text == ok.text


def test_an_echoed_key_is_in_no_file_a_judge_run_writes(
    server: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: stored unscrubbed in the cache, scores.jsonl and report.html."""
    _backbone(tmp_path, server.base_url)
    server.faults[MARK] = ["echokey"] * 100
    data = _dataset(tmp_path, n=6)
    run = tmp_path / "run"
    argv = ["meta-eval", "--input", str(data), "--metrics", "geval_faithfulness"]
    argv += [
        "--backbone",
        "fake",
        "--out",
        str(run),
        "--no-plots",
        "--no-baselines",
        "--no-compare",
    ]
    argv += ["--n-boot", "20", "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    assert len(server.answered) == 12 and (run / "report.html").is_file()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "llm-cache.sqlite" for p in written)
    assert any(p.name == "scores.jsonl" for p in written)
    for p in written:
        assert KEY.encode() not in p.read_bytes(), p
    assert KEY not in capsys.readouterr().out


def test_backends_list_never_prints_url_credentials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _backbone(tmp_path, "https://user:password@llm.example/v1?api-key=S3CRETVALUE&v=2")
    for fmt in ("text", "json"):
        assert main(["backends", "list", *(["--format", "json"] if fmt == "json" else [])]) == 0
        out = capsys.readouterr().out
        assert "fake" in out and "llm.example/v1" in out
        assert "password" not in out and "S3CRETVALUE" not in out and "user:" not in out


@pytest.mark.parametrize(
    ("field", "value"),
    [("backoff_base_s", "inf"), ("timeout_s", "nan"), ("timeout_s", "-1"), ("timeout_s", "0")],
)
def test_config_values_are_range_checked_when_read(
    field: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: backoff_base_s = inf hung on the first retry, nan failed late, -1 was accepted."""
    conf = _backbone(tmp_path, "http://127.0.0.1:9/v1")
    kept = [x for x in conf.read_text().splitlines() if not x.startswith(field)]
    conf.write_text("\n".join([*kept, f"{field} = {value}"]) + "\n")
    assert main(["backends", "check", str(conf)]) == 2
    err = capsys.readouterr().err
    assert str(conf) in err and field in err and "finite number" in err


def test_a_deeply_nested_toml_config_is_exit_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30 item 4: a 100,000-deep nested array in a TOML config was a RecursionError."""
    conf = _backbone(tmp_path, "http://127.0.0.1:9/v1")
    conf.write_text(conf.read_text() + "deep = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert main(["backends", "check", str(conf)]) == 2
    err = capsys.readouterr().err
    assert str(conf) in err and "field <toml>" in err and "nested too deeply" in err
    assert "Traceback" not in err


def test_repair_leaves_a_healthy_cache_where_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "c.sqlite"
    _one_entry(db)
    assert main(["cache", "prune", "--damaged", "--cache-file", str(db)]) == 0
    assert "healthy (1 entries); nothing was moved" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir() if "damaged" in p.name] == []
    assert len(ResponseCache(db)) == 1
    assert main(["cache", "prune", "--damaged", "--all", "--cache-file", str(db)]) == 2
    assert "--damaged takes no selection (--all)" in capsys.readouterr().err
    assert len(ResponseCache(db)) == 1  # nothing pruned


def _one_entry(db: Path) -> None:
    cache = ResponseCache(db)
    answer = Completion(choices=(Choice("4", "4"),))
    cache.put(
        "k",
        kind="x",
        model_id="m",
        parser_version="",
        request=Request(prompt="q"),
        completion=answer,
    )
    cache.close()


_HOLDER = """
import sys
from metajudge.backends.cache import ResponseCache
c = ResponseCache(sys.argv[1])
print("open", flush=True)
sys.stdin.readline()
c.close()
"""


def test_repair_refuses_while_another_process_has_the_cache_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: a live cache was moved aside as damaged; a concurrent run's entries were lost."""
    db = tmp_path / "c.sqlite"
    _one_entry(db)
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
    with sqlite3.connect(db) as con:  # … and damaged while it is open
        con.execute("UPDATE responses SET response_json = '{broken'")
    try:
        assert main(["cache", "prune", "--damaged", "--cache-file", str(db)]) == 2
        err = capsys.readouterr().err
        assert "in use by another process" in err and str(db) in err
        assert [p.name for p in tmp_path.iterdir() if "damaged" in p.name] == []
    finally:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(timeout=30)
    assert (
        main(["cache", "prune", "--damaged", "--cache-file", str(db)]) == 0
    )  # alone now: repaired
    assert "damaged file is now" in capsys.readouterr().out


def test_a_full_cache_is_one_message_naming_the_file_and_a_real_option(
    server: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: two "Event loop is closed" tracebacks, and advice to use cache=False (no CLI option).
    SQLite's own limit on the file's pages makes the cache file full, as a full disk does."""
    opened = ResponseCache._open_writable

    def capped(self: ResponseCache, busy: float) -> None:
        opened(self, busy)
        pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
        self._conn.execute(f"PRAGMA max_page_count={pages}")

    monkeypatch.setattr(ResponseCache, "_open_writable", capped)
    _backbone(tmp_path, server.base_url)
    out = tmp_path / "scores.jsonl"
    argv = [
        "metrics",
        "run",
        "--input",
        str(_dataset(tmp_path, n=20)),
        "--metrics",
        "geval_faithfulness",
    ]
    assert main([*argv, "--backbone", "fake", "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    cache = tmp_path / "cache" / "llm-cache.sqlite"
    assert f"{cache}: the response cache cannot grow" in err
    assert "metajudge cache prune" in err and "$METAJUDGE_CACHE_DIR" in err
    assert "cache=False" not in err and "Traceback" not in err and "Event loop" not in err


def test_a_nan_in_details_is_blamed_on_its_field(tmp_path: Path) -> None:
    from metajudge.scores.readers.rows import ROW_FIELDS
    from metajudge.scores.scoring import write_scores

    row: dict[str, Any] = dict.fromkeys(ROW_FIELDS)
    row.update(key="i::a", metric="geval", score=3.0, details={"probs": {"4": math.nan}})
    with pytest.raises(InputError) as e:
        write_scores(tmp_path / "s.jsonl", [row])
    assert e.value.field == "details.probs.4" and "details.probs.4" in str(e.value)
