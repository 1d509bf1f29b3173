"""Issue 18, paths: nothing taken from a card (``local``, ``path``, ``repository``, ``commit``), a
dataset name, an environment variable (``METAJUDGE_DOWNLOAD_BASE``) or ``--out``/``-o`` leads
outside its folder or overwrites an input."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.fetch import cache_path, download_base
from metajudge.data.loading import open_dataset
from metajudge.data.registry import load_card, resolve_file
from metajudge.errors import InputError
from metajudge.io import check_output_file, inside, prepare_out_dir
from tests.data.test_fetch import COMMIT, PAYLOAD, REPO, server, toy_cards  # noqa: F401 - fixtures


def _card(cards: Path, **files: str) -> None:
    card = json.loads((cards / "toy.json").read_text())
    card["files"][0].update(files)
    (cards / "toy.json").write_text(json.dumps(card))


@pytest.mark.parametrize(
    "local",
    [
        "../../../pwned/escape.json",
        "/tmp/pwned.json",
        "a/../../b.json",
        "..",
        "C:/x.json",
        "a\\..\\b",
    ],
)
def test_card_local_cannot_escape(
    server: tuple[str, Path],  # noqa: F811
    toy_cards: Path,  # noqa: F811
    tmp_path: Path,
    local: str,
) -> None:
    base, root = server
    p = root / REPO / COMMIT / "data" / "dir name" / "toy.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(PAYLOAD)
    _card(toy_cards, local=local)
    before = sorted(str(x) for x in tmp_path.rglob("*"))
    with pytest.raises(InputError, match="local|relative path"):
        resolve_file("toy", local, base_url=base)
    assert sorted(str(x) for x in tmp_path.rglob("*")) == before  # nothing written anywhere
    assert not Path("/tmp/pwned.json").exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("repository", "etc/ssl/.."), ("repository", "../etc"), ("commit", ".."), ("commit", "a/b")],
)
def test_card_repository_and_commit_are_checked(
    toy_cards: Path,  # noqa: F811
    field: str,
    value: str,
) -> None:
    card = json.loads((toy_cards / "toy.json").read_text())
    card[field] = value
    (toy_cards / "toy.json").write_text(json.dumps(card))
    with pytest.raises(InputError, match=field):
        load_card("toy")


@pytest.mark.parametrize(
    "base",
    [
        "file:///",
        "file://",
        "ftp://example.org",
        "http://example.org",
        "https://user:pw@example.org",
        "http://127.0.0.1.evil.org",
        "gopher://127.0.0.1",
        "https://",
    ],
)
def test_download_base_only_https_or_loopback(
    base: str,
    monkeypatch: pytest.MonkeyPatch,
    toy_cards: Path,  # noqa: F811
) -> None:
    monkeypatch.setenv("METAJUDGE_DOWNLOAD_BASE", base)
    with pytest.raises(InputError, match="download base"):
        download_base()
    with pytest.raises(InputError, match="download base"):
        resolve_file("toy", "toy.json")
    assert not cache_path("toy", "toy.json").exists()


def test_download_base_accepted() -> None:
    assert download_base("https://mirror.example/raw/") == "https://mirror.example/raw"
    assert download_base("http://127.0.0.1:8080") == "http://127.0.0.1:8080"
    assert download_base("http://[::1]:8080") == "http://[::1]:8080"


@pytest.mark.parametrize(
    "name", ["../baselines/ours_ragchecker_meta_eval", "/etc/passwd", "..", ".x", "a/b", "x\x00y"]
)
def test_dataset_names_stay_in_the_card_folder(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(InputError, match="not a dataset name"):
        load_card(name)
    with pytest.raises(InputError, match="not a dataset name"):
        open_dataset(name)
    if "\x00" not in name:
        assert main(["data", "show", "--dataset", name]) == 2
        err = capsys.readouterr().err
        assert "not a dataset name" in err and "--input" in err


def test_symlinked_card_outside_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cards, outside = tmp_path / "cards", tmp_path / "outside.json"
    cards.mkdir()
    outside.write_text("{}")
    os.symlink(outside, cards / "evil.json")
    monkeypatch.setenv("METAJUDGE_CARDS_DIR", str(cards))
    with pytest.raises(InputError, match="leads outside"):
        load_card("evil")


def test_inside() -> None:
    assert inside("/data", "a/b").as_posix().endswith("data/a/b")
    for bad in ("../x", "/etc/passwd", "a/../../x"):
        with pytest.raises(InputError, match="leads outside"):
            inside("/data", bad)


def test_out_helpers(tmp_path: Path) -> None:
    f = tmp_path / "file.txt"
    f.write_text("keep")
    with pytest.raises(InputError, match="is a file; --out takes a folder"):
        prepare_out_dir(f)
    with pytest.raises(InputError, match="is a file, not a folder"):
        prepare_out_dir(f / "sub")
    with pytest.raises(InputError, match="is a folder"):
        check_output_file(tmp_path)
    with pytest.raises(InputError, match="is also an input"):
        check_output_file(tmp_path / "." / "file.txt", inputs=[f])
    with pytest.raises(InputError, match="is a file, not a folder"):
        check_output_file(f / "x.json")
    assert prepare_out_dir(tmp_path / "run" / "a").is_dir()
    assert check_output_file(tmp_path / "new.json", inputs=[f, None]) == tmp_path / "new.json"
    assert f.read_text() == "keep"
    assert hashlib.sha256(f.read_bytes()).hexdigest()
