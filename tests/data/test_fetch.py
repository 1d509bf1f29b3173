"""Where data comes from: data folder, user cache, pinned download with sha256 verification.

The download path runs against a real HTTP server on 127.0.0.1 that serves copies laid out as
``<repo>/<commit>/<path>``, plus a handler that cuts the body short (truncated download).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.fetch import cache_path
from metajudge.data.loading import load as load_dataset
from metajudge.data.registry import load_card, resolve_file
from metajudge.errors import ChecksumError, MissingResourceError

REPO, COMMIT = "toy-org/toy-repo", "0123456789abcdef0123456789abcdef01234567"
PAYLOAD = b'{"hello": "world", "values": [1, 2, 3]}\n' * 50


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/trunc/"):
            # announce the full length, send half, close: a truncated body
            real = Path(self.directory) / urllib.parse.unquote(self.path[len("/trunc/") :])  # type: ignore[attr-defined]
            body = real.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "srv"
    root.mkdir()

    def handler(*a, **k):  # type: ignore[no-untyped-def]
        return _Handler(*a, directory=str(root), **k)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture()
def toy_cards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cards folder with one toy card pinning PAYLOAD; no local data folder."""
    cards = tmp_path / "cards"
    cards.mkdir()
    card = {
        "name": "toy",
        "kind": "pairwise",
        "description": "toy",
        "repository": REPO,
        "commit": COMMIT,
        "files": [
            {
                "path": "data/dir name/toy.json",
                "sha256": hashlib.sha256(PAYLOAD).hexdigest(),
                "bytes": len(PAYLOAD),
                "local": "toy.json",
            }
        ],
        "license": "MIT",
        "dimensions": ["overall"],
        "scale": {"min": -1, "max": 1},
        "annotators": 1,
        "direction": "positive = b better",
    }
    (cards / "toy.json").write_text(json.dumps(card))
    monkeypatch.setenv("METAJUDGE_CARDS_DIR", str(cards))
    monkeypatch.delenv("METAJUDGE_DATA_DIR", raising=False)
    return cards


def _serve(root: Path, data: bytes, prefix: str = "") -> None:
    p = root / prefix / REPO / COMMIT / "data" / "dir name" / "toy.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)


def test_download_verifies_and_caches(server: tuple[str, Path], toy_cards: Path) -> None:
    base, root = server
    _serve(root, PAYLOAD)
    p = resolve_file("toy", "toy.json", base_url=base)
    assert p == cache_path("toy", "toy.json") and p.read_bytes() == PAYLOAD
    # second call: served from the cache, even with the server gone
    (root / REPO).rename(root / "gone")
    assert resolve_file("toy", "toy.json", base_url=base) == p


def test_download_base_from_env(
    server: tuple[str, Path], toy_cards: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, root = server
    _serve(root, PAYLOAD)
    monkeypatch.setenv("METAJUDGE_DOWNLOAD_BASE", base)
    assert resolve_file("toy", "toy.json").read_bytes() == PAYLOAD


def test_checksum_mismatch_leaves_nothing(server: tuple[str, Path], toy_cards: Path) -> None:
    base, root = server
    _serve(root, PAYLOAD.replace(b"world", b"WORLD"))  # same length, different bytes
    with pytest.raises(ChecksumError, match="sha256 mismatch") as ei:
        resolve_file("toy", "toy.json", base_url=base)
    assert "data/dir name/toy.json" in str(ei.value) and "127.0.0.1" in str(ei.value)
    cache_dir = cache_path("toy", "toy.json").parent
    assert not cache_dir.exists() or list(cache_dir.iterdir()) == []


def test_wrong_size_is_rejected(server: tuple[str, Path], toy_cards: Path) -> None:
    base, root = server
    _serve(root, PAYLOAD + b"extra")
    with pytest.raises(ChecksumError, match="the card pins"):
        resolve_file("toy", "toy.json", base_url=base)
    assert not cache_path("toy", "toy.json").exists()


def test_truncated_body(server: tuple[str, Path], toy_cards: Path) -> None:
    base, root = server
    _serve(root, PAYLOAD)
    with pytest.raises(ChecksumError, match="truncated"):
        resolve_file("toy", "toy.json", base_url=base + "/trunc")
    cache_dir = cache_path("toy", "toy.json").parent
    assert not cache_dir.exists() or list(cache_dir.iterdir()) == []


def test_http_404_is_a_clear_error(server: tuple[str, Path], toy_cards: Path) -> None:
    base, _root = server
    with pytest.raises(MissingResourceError, match="HTTP 404.*METAJUDGE_DATA_DIR"):
        resolve_file("toy", "toy.json", base_url=base)


def test_unreachable_host(toy_cards: Path) -> None:
    with pytest.raises(MissingResourceError, match="cannot download"):
        resolve_file(
            "toy", "toy.json", base_url="http://127.0.0.1:9"
        )  # discard port: connection refused


def test_resolution_order(server: tuple[str, Path], toy_cards: Path, tmp_path: Path) -> None:
    base, root = server
    # 1. the data folder wins
    dd = tmp_path / "data"
    (dd / "toy").mkdir(parents=True)
    (dd / "toy" / "toy.json").write_bytes(PAYLOAD)
    assert resolve_file("toy", "toy.json", data_dir=dd) == dd / "toy" / "toy.json"
    # 2. a wrong local copy is an error naming the file, not silently replaced
    (dd / "toy" / "toy.json").write_bytes(PAYLOAD.replace(b"1", b"7"))
    with pytest.raises(ChecksumError, match=r"toy\.json: sha256 mismatch"):
        resolve_file("toy", "toy.json", data_dir=dd)
    # 3. absent from the data folder: cache, then download
    (dd / "toy" / "toy.json").unlink()
    _serve(root, PAYLOAD)
    assert resolve_file("toy", "toy.json", data_dir=dd, base_url=base) == cache_path(
        "toy", "toy.json"
    )
    # 4. a corrupted cache entry is re-downloaded
    cache_path("toy", "toy.json").write_bytes(b"garbage")
    assert resolve_file("toy", "toy.json", data_dir=dd, base_url=base).read_bytes() == PAYLOAD
    # 5. downloads off: a clear error
    cache_path("toy", "toy.json").unlink()
    with pytest.raises(MissingResourceError, match="downloads are disabled"):
        resolve_file("toy", "toy.json", data_dir=dd, download=False)


def test_unknown_file_and_dataset(toy_cards: Path) -> None:
    from metajudge.errors import InputError

    with pytest.raises(InputError, match="has no file 'nope.json'"):
        resolve_file("toy", "nope.json")
    with pytest.raises(InputError, match="unknown dataset 'nope'"):
        load_card("nope")


def test_real_dataset_through_download(
    server: tuple[str, Path], data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real SummaC file served from a local copy: download, verify, convert."""
    base, root = server
    card = load_card("summeval_summac_consistency")
    sf = card.files[0]
    dest = root / card.repository / card.commit / sf.path
    dest.parent.mkdir(parents=True)
    shutil.copy(data_dir / card.name / (sf.local or ""), dest)
    monkeypatch.delenv("METAJUDGE_DATA_DIR", raising=False)
    monkeypatch.setenv("METAJUDGE_DOWNLOAD_BASE", base)
    ds = load_dataset("summeval_summac_consistency")
    assert len(ds.records) == 100
    assert cache_path(card.name, sf.local or "").is_file()


def test_real_dataset_corrupt_local_copy_cli(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong checksum in the data folder: one clear error, exit 2, no output file."""
    dd = tmp_path / "dd" / "summeval_summac_consistency"
    dd.mkdir(parents=True)
    raw = (data_dir / "summeval_summac_consistency" / "summeval.json").read_bytes()
    (dd / "summeval.json").write_bytes(raw.replace(b'"M11"', b'"M12"', 1))
    out = tmp_path / "out.jsonl"
    rc = main(
        [
            "data",
            "export",
            "--dataset",
            "summeval_summac_consistency",
            "-o",
            str(out),
            "--data-dir",
            str(tmp_path / "dd"),
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "summeval.json: sha256 mismatch" in err and err.count("\n") == 1
    assert not out.exists()


def test_source_urls_of_real_cards() -> None:
    """Raw URLs at the pinned commit; per-file repository overrides; awkward characters quoted."""
    from metajudge.data.fetch import find_source, source_url

    hanna = load_card("hanna")
    assert source_url(hanna, find_source(hanna, "hanna_ppairs.jsonl")) == (
        "https://raw.githubusercontent.com/maiush/PPairS/cc4ba407ba0ece35214d286345371a60ee028230/data/hanna.jsonl"
    )
    assert source_url(
        hanna, find_source(hanna, "hanna_metric_scores_llm.csv"), base_url="https://h/"
    ).startswith("https://h/dig-team/hanna-benchmark-asg/282f27536a5d05ad4ce14298abcd70c45668fed2/")
    jb = load_card("judgebench")
    assert source_url(jb, find_source(jb, "judgebench_gpt-4o-2024-05-13.jsonl")).endswith(
        "/data/dataset=judgebench,response_model=gpt-4o-2024-05-13.jsonl"
    )
    lb = load_card("llmbar")
    assert source_url(lb, find_source(lb, "Processed/LLMEval^2/dataset.json")).endswith(
        "/Dataset/Processed/LLMEval%5E2/dataset.json"
    )
