"""Issue 18, cache and HTTP: the cache key identifies what answered (two loopback servers serving
one model name are both called), ``Retry-After`` is capped, a damaged, read-only or missing cache
ends in a message naming the file and the fix (never a sqlite traceback), a corrupt stored row is
a counted miss, and pruning never deletes everything without ``--yes``."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from metajudge.backends.base import Choice, Completion, Request
from metajudge.backends.cache import MIGRATIONS, ResponseCache, cache_key, completion_to_json
from metajudge.backends.cached import CachedBackend
from metajudge.backends.openai_backend import RETRY_AFTER_MAX_S, OpenAIBackend
from metajudge.backends.openai_parse import endpoint_id
from metajudge.cli import main
from metajudge.errors import CacheError, InputError
from tests.backends.test_http import KEY, KEY_ENV, FakeOpenAI, cfg, chat


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


class Inverted(FakeOpenAI):
    """Same model name, different deployment: answers ``6 - score``."""

    def answer(self, body: dict[str, Any], *, chat: bool) -> dict[str, Any]:
        out = super().answer(body, chat=chat)
        ch = out["choices"][0]
        if chat:
            s = int(ch["message"]["content"].rsplit(" ", 1)[1])
            ch["message"]["content"] = f"Score: {6 - s}"
        return out


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_two_endpoints_same_model_name_are_both_called(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    reqs = [chat(f"item {i}") for i in range(4)]
    with FakeOpenAI() as a, Inverted() as b:
        with CachedBackend(OpenAIBackend(cfg(a, name="a")), ResponseCache(db)) as be:
            ra = be.complete(reqs)
        with CachedBackend(OpenAIBackend(cfg(b, name="b")), ResponseCache(db)) as be:
            rb = be.complete(reqs)
            assert be.ledger.cached == 0
        assert len(a.answered) == 4 and len(b.answered) == 4  # both called
        assert [x.text for x in ra] != [x.text for x in rb]  # their real disagreement shows
        assert all(int(x.text[-1]) + int(y.text[-1]) == 6 for x, y in zip(ra, rb, strict=True))
        with CachedBackend(OpenAIBackend(cfg(b, name="b2")), ResponseCache(db)) as be:
            again = be.complete(reqs)  # same endpoint under another config name: a hit
            assert be.ledger.cached == 4 and [x.text for x in again] == [x.text for x in rb]
    stats = ResponseCache(db).stats()
    assert {g["endpoint"] for g in stats["groups"]} == {
        endpoint_id(a.base_url),
        endpoint_id(b.base_url),
    }


def test_endpoint_id_drops_credentials() -> None:
    e = endpoint_id("https://me:pw@Host.example:443/v1/?api-version=1&api_key=SECRET&sig=x")
    assert e == "https://host.example/v1?api-version=1" and "SECRET" not in e and "pw" not in e
    assert endpoint_id("http://127.0.0.1:8000/v1") != endpoint_id("http://127.0.0.1:8001/v1")
    assert endpoint_id(None) == "" and endpoint_id("http://[::1]:9/v1") == "http://[::1]:9/v1"
    r = Request(prompt="x")
    # no endpoint: the key is what it was before endpoints were keyed (local models stay valid)
    assert (
        cache_key("embedded", "m@sha256:1", r, "p")
        == hashlib.sha256(
            json.dumps(
                {
                    "kind": "embedded",
                    "model_id": "m@sha256:1",
                    "parser_version": "p",
                    "request": r.to_dict(),
                },
                sort_keys=True,
                separators=(",", ":"),
                ensure_ascii=False,
            ).encode()
        ).hexdigest()
    )
    assert cache_key("openai", "m", r, "p", "http://a/v1") != cache_key(
        "openai", "m", r, "p", "http://b/v1"
    )


def test_migration_keeps_unambiguous_entries(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    body = completion_to_json(Completion((Choice("t", "t"),)))
    with sqlite3.connect(db) as con:
        for m in MIGRATIONS[:4]:
            con.execute(m)
        con.execute(
            "INSERT INTO responses VALUES ('k1','embedded','g@sha256:1','p','{}',?,1,1,0,0,0,NULL)",
            (body,),
        )
        con.execute(
            "INSERT INTO responses VALUES ('k2','openai','gpt','p','{}',?,1,1,0,0,0,NULL)", (body,)
        )
        con.execute("PRAGMA user_version=4")
    c = ResponseCache(db)
    assert c.schema_version == len(MIGRATIONS)
    assert "k1" in c.get_many(["k1"])  # same key as before: still served
    ends = {g["kind"]: g["endpoint"] for g in c.stats()["groups"]}
    assert ends == {"embedded": "", "openai": None}  # the remote one: endpoint unknown
    c.close()


def test_retry_after_is_capped_and_said() -> None:
    be = OpenAIBackend(cfg_for_units())
    delay, note = be._retry_delay(0, 100000.0)
    assert delay == max(be.config.backoff_max_s, RETRY_AFTER_MAX_S) and "capped at" in note
    assert be._retry_delay(0, 0.5) == (0.5, "")


def cfg_for_units() -> Any:
    from metajudge.backends.config import BackendConfig

    return BackendConfig(name="u", kind="openai", model="m", base_url="http://127.0.0.1:9/v1")


def test_retry_after_cap_in_log_line(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import metajudge.backends.openai_backend as ob

    monkeypatch.setattr(ob, "RETRY_AFTER_MAX_S", 0.2)
    with FakeOpenAI() as s:
        s.faults["RL"] = ["429:100000"]
        with caplog.at_level(logging.INFO), OpenAIBackend(cfg(s, backoff_max_s=0.01)) as be:
            [res] = be.complete([chat("RL now")])
    assert isinstance(res, Completion)
    assert "Retry-After 100000 s; capped at 0.2 s" in caplog.text


# -- damaged, read-only, missing ------------------------------------------------------------------
def _filled(tmp_path: Path) -> Path:
    db = tmp_path / "c.sqlite"
    c = ResponseCache(db)
    for i in range(3):
        r = Request(prompt=f"q{i}")
        c.put(
            cache_key("x", "m", r, ""),
            kind="x",
            model_id="m",
            parser_version="",
            request=r,
            completion=Completion((Choice(str(i), str(i)),), 1, 1, 0.0),
        )
    c._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    return db


@pytest.mark.parametrize("damage", ["garbage", "truncated", "zeroed_pages"])
def test_damaged_cache_names_file_and_fix(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _filled(tmp_path)
    data = db.read_bytes()
    if damage == "garbage":
        db.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        db.write_bytes(data[:150])
    else:
        db.write_bytes(data[:100] + b"\xff" * (len(data) - 100))
    before = _sha(db)
    rc = main(["cache", "stats", "--cache-file", str(db)])
    err = capsys.readouterr().err
    assert rc == 2 and str(db) in err and "cache prune --damaged" in err and "Traceback" not in err
    assert _sha(db) == before
    with pytest.raises(CacheError, match="cache prune --damaged"):
        c = ResponseCache(db)
        c.get_many(["k"])
        len(c)
    assert main(["cache", "prune", "--damaged", "--cache-file", str(db)]) == 0
    out = capsys.readouterr().out
    assert "damaged file is now" in out
    assert any(p.name.startswith("c.sqlite.damaged-") for p in tmp_path.iterdir())
    assert main(["cache", "stats", "--cache-file", str(db)]) == 0  # usable again


def test_repair_keeps_readable_rows(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE responses SET response_json = '{broken' WHERE rowid = 1")
    assert main(["cache", "prune", "--damaged", "--cache-file", str(db)]) == 0
    assert len(ResponseCache(db)) == 2


def test_corrupt_row_is_a_counted_miss(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    keys = [cache_key("x", "m", Request(prompt=f"q{i}"), "") for i in range(3)]
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE responses SET response_json = '{\"nochoices\": 1}' WHERE key = ?", (keys[0],)
        )
        con.execute("UPDATE responses SET response_json = 'not json' WHERE key = ?", (keys[1],))
    c = ResponseCache(db)
    got = c.get_many(keys)
    assert set(got) == {keys[2]} and c.corrupt_rows == 2
    c.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_cache_names_file(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    db.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(CacheError, match=r"c\.sqlite.*(cannot be written|damaged|failed)"):
            c = ResponseCache(db)
            r = Request(prompt="new")
            c.put(
                cache_key("x", "m", r, ""),
                kind="x",
                model_id="m",
                parser_version="",
                request=r,
                completion=Completion((Choice("a", "a"),), 1, 1, 0.0),
            )
    finally:
        tmp_path.chmod(0o755)
        db.chmod(0o644)


def test_stats_on_missing_path_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "nonexistent" / "x.sqlite"
    assert main(["cache", "stats", "--cache-file", str(target)]) == 2
    assert "cache file not found" in capsys.readouterr().err
    assert not (tmp_path / "nonexistent").exists()
    assert main(["cache", "stats", "--cache-file", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    with pytest.raises(InputError):
        ResponseCache(target, create=False)


def test_prune_validates_and_confirms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _filled(tmp_path)
    before = _sha(db)
    for bad in ("-1", "nan", "inf", "x"):
        assert main(["cache", "prune", "--cache-file", str(db), "--older-than", bad]) == 2
        assert "--older-than" in capsys.readouterr().err
    assert main(["cache", "prune", "--cache-file", str(db), "--older-than", "0"]) == 2
    err = capsys.readouterr()
    assert "3 of 3 entries match" in err.out and "--yes" in err.err
    assert _sha(db) == before and len(ResponseCache(db)) == 3
    assert main(["cache", "prune", "--cache-file", str(db), "--all", "--yes"]) == 0
    assert len(ResponseCache(db)) == 0
    with pytest.raises(InputError, match="duration"):
        ResponseCache(db).prune(older_than_s=-1.0)


def test_export_refuses_its_own_cache_and_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _filled(tmp_path)
    before = _sha(db)
    assert main(["cache", "export", "--cache-file", str(db), "-o", str(db)]) == 2
    assert "is also an input" in capsys.readouterr().err and _sha(db) == before
    assert main(["cache", "export", "--cache-file", str(db), "-o", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


class DigitJudge(FakeOpenAI):
    """Answers a score digit with its logprobs (what G-Eval's logprobs mode reads); ``invert``
    answers ``6 - s``: another deployment of the same model name that disagrees."""

    def __init__(self, invert: bool = False) -> None:
        super().__init__()
        self.invert = invert

    def answer(self, body: dict[str, Any], *, chat: bool) -> dict[str, Any]:
        out = super().answer(body, chat=chat)
        text = body["messages"][-1]["content"] if chat else body["prompt"]
        s = 1 + sum(map(ord, text)) % 5
        tok = str(6 - s if self.invert else s)
        ch = out["choices"][0]
        lp = [{"token": tok, "logprob": -0.01, "top_logprobs": [{"token": tok, "logprob": -0.01}]}]
        if chat:
            ch["message"]["content"] = tok
            ch["logprobs"] = {"content": lp}
        else:
            ch["text"] = tok
            ch["logprobs"] = {
                "tokens": [tok],
                "token_logprobs": [-0.01],
                "top_logprobs": [{tok: -0.01}],
                "text_offset": [0],
            }
        return out


def _cfg_file(tmp_path: Path, name: str, server: FakeOpenAI) -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(
        f'name = "{name}"\nkind = "openai"\nmodel = "same-model"\nbase_url = "{server.base_url}"\n'
        f'api_key_env = "{KEY_ENV}"\nmax_retries = 0\n'
    )
    return p


def test_backbone_swap_between_two_deployments_shows_their_disagreement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """issue 18: two endpoints serving one model name through the shared user cache; before the
    endpoint was keyed, the second run was served the first one's answers (perfect agreement)."""
    import metajudge as mj

    fixture = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"
    monkeypatch.setenv("METAJUDGE_BACKENDS_DIR", str(tmp_path))
    with DigitJudge() as a, DigitJudge(invert=True) as b:
        ca, cb = _cfg_file(tmp_path, "deploy-a", a), _cfg_file(tmp_path, "deploy-b", b)
        res = mj.backbone_swap(
            None,
            "geval_faithfulness",
            input_file=fixture,
            backbones=[ca.stem, cb.stem],
            dimension="coherence",
            n_boot=50,
        )
        assert a.answered and len(b.answered) == len(a.answered)  # both were called
    [pair] = res["pairs"]
    assert pair["pearson"]["value"] < -0.9  # their real (inverted) disagreement


def test_stats_and_export_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _filled(tmp_path)
    for side in ("-wal", "-shm"):
        Path(f"{db}{side}").unlink(missing_ok=True)
    before = _sha(db)
    assert main(["cache", "stats", "--cache-file", str(db), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == 3
    assert main(["cache", "export", "--cache-file", str(db), "-o", str(tmp_path / "e.jsonl")]) == 0
    assert _sha(db) == before
    c = ResponseCache(db, read_only=True)
    assert len(c.get_many([cache_key("x", "m", Request(prompt="q0"), "")])) == 1
    c.close()
    assert _sha(db) == before  # a read-only hit is not counted (no write)


def test_stats_on_old_schema_says_to_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as con:
        con.execute(MIGRATIONS[0])
        con.execute("PRAGMA user_version=1")
    assert main(["cache", "stats", "--cache-file", str(db)]) == 2
    err = capsys.readouterr().err
    assert "schema v1" in err and "Traceback" not in err


def test_two_threads_write_one_cache_file_through_their_own_connections(tmp_path: Path) -> None:
    """``metajudge demo`` judges its two backbones at once in two threads of one process, each
    backend with its own :class:`ResponseCache` on the user cache file (its own SQLite
    connection, one shared lock descriptor): 2 x 150 answers stored and read back while the
    other thread writes, none lost, none failed; closing one leaves the other open."""
    import threading

    db = tmp_path / "c.sqlite"
    caches = {name: ResponseCache(db) for name in ("smol", "gemma")}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def write(name: str) -> None:
        try:
            c = caches[name]
            barrier.wait()
            for i in range(150):
                r = Request(prompt=f"{name}{i}")
                k = cache_key("embedded", name, r, "p")
                comp = Completion((Choice(f"{name}-{i}", f"{name}-{i}"),), 3, 1, 0.1)
                c.put(
                    k,
                    kind="embedded",
                    model_id=name,
                    parser_version="p",
                    request=r,
                    completion=comp,
                )
                assert c.get_many([k])[k].text == f"{name}-{i}"
        except BaseException as e:  # noqa: BLE001 - asserted below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(n,)) for n in caches]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and not any(t.is_alive() for t in threads)
    caches["smol"].close()
    assert len(caches["gemma"]) == 300  # still open after the other closed (the shared lock kept)
    keys = [
        cache_key("embedded", n, Request(prompt=f"{n}{i}"), "p") for n in caches for i in range(150)
    ]
    assert len(caches["gemma"].get_many(keys)) == 300
    caches["gemma"].close()


def _big_cache(tmp_path: Path, n: int = 48) -> Path:
    """``n`` entries whose replies (9 KB each, ``row<i>|`` repeated) span overflow pages."""
    db = tmp_path / "big.sqlite"
    c = ResponseCache(db)
    for i in range(1, n + 1):
        r = Request(prompt=f"q{i}")
        text = f"row{i:02d}|" * 1500
        c.put(
            cache_key("x", "m", r, ""),
            kind="x",
            model_id="m",
            parser_version="",
            request=r,
            completion=Completion((Choice(text, text),), 1, 1, 0.0),
        )
    c._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    return db


def _break_overflow_page(db: Path, marker: bytes) -> None:
    """Point the overflow chain of the row whose payload holds ``marker`` at a page that does
    not exist: reading that row fails ("database disk image is malformed"), the others do not."""
    data = bytearray(db.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    pages = [k for k in range(1, len(data) // size) if marker in data[k * size : (k + 1) * size]]
    overflow = [k for k in pages if data[k * size] == 0 and data[k * size + 1] == 0]  # next ptr
    k = overflow[0]
    data[k * size : k * size + 4] = (0x7FFFFFF0).to_bytes(4, "big")
    db.write_bytes(bytes(data))


def test_repair_scans_past_a_damaged_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44 item 4. Before: the scan stopped at the first unreadable row (row 37 of 48: kept
    36) and said "dropped 0". After: the 47 readable rows kept, "dropped 1"; then a row whose
    stored JSON is broken is dropped and counted too."""
    db = _big_cache(tmp_path)
    _break_overflow_page(db, b"row37|")
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con, pytest.raises(sqlite3.Error):
        con.execute("SELECT * FROM responses").fetchall()  # a plain scan dies at row 37
    capsys.readouterr()
    assert main(["cache", "prune", "--damaged", "--cache-file", str(db)]) == 0
    out = capsys.readouterr().out
    assert "kept 47 entries, dropped 1 unreadable" in out, out
    c = ResponseCache(db)
    texts = {e["response"]["choices"][0]["text"][:6] for e in c.iter_entries()}
    assert len(c) == 47 and "row37|" not in texts and {"row01|", "row38|", "row48|"} <= texts
    c.close()
    with sqlite3.connect(db) as con:
        con.execute("UPDATE responses SET response_json = '{broken' WHERE rowid = 5")
    assert main(["cache", "prune", "--damaged", "--cache-file", str(db)]) == 0
    assert "kept 46 entries, dropped 1 unreadable" in capsys.readouterr().out
