"""WordNet for METEOR: lexnames generation, building the NLTK corpus from Debian's files, setup."""

from __future__ import annotations

from pathlib import Path

import pytest

from metajudge.errors import MissingResourceError
from metajudge.metrics import wordnet as wn

HAVE_DEBIAN = all((wn.DEBIAN_WORDNET_DIR / f).is_file() for f in wn.NLTK_WORDNET_FILES)
needs_debian = pytest.mark.skipif(
    not HAVE_DEBIAN,
    reason="Debian wordnet-base/wordnet-sense-index not installed (make system-deps)",
)


@pytest.fixture(autouse=True)
def _restore_nltk_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import nltk.data

    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))


def test_lexnames_text_format() -> None:
    text = wn.lexnames_text(wn.WORDNET30_LEXNAMES)
    lines = text.splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3"
    assert lines[2] == "02\tadv.all\t4"
    assert lines[3] == "03\tnoun.Tops\t1"
    assert lines[29] == "29\tverb.body\t2"
    assert lines[44] == "44\tadj.ppl\t3"
    for i, line in enumerate(lines):  # what NLTK's reader asserts when it loads lexnames
        index, name, cat = line.split()
        assert (
            int(index) == i
            and name.split(".")[0] in ("adj", "adv", "noun", "verb")
            and cat in "1234"
        )


@pytest.mark.skipif(not wn.DEBIAN_LEXNAMES_MAN.is_file(), reason="lexnames.5WN.gz man page absent")
def test_manpage_parses_to_the_wordnet30_list() -> None:
    names, origin = wn.lexnames_from_debian()
    assert tuple(names) == wn.WORDNET30_LEXNAMES and origin.endswith("lexnames.5WN.gz")


def test_builtin_list_when_manpage_absent(tmp_path: Path) -> None:
    names, origin = wn.lexnames_from_debian(tmp_path / "absent.gz")
    assert tuple(names) == wn.WORDNET30_LEXNAMES and "built-in" in origin
    with pytest.raises(ValueError):
        wn.parse_lexnames_manpage("no table here")


@needs_debian
def test_lexnames_agree_with_data_files() -> None:
    wn.check_lexnames(wn.WORDNET30_LEXNAMES, wn.DEBIAN_WORDNET_DIR)
    used = wn.lexfile_numbers_used(wn.DEBIAN_WORDNET_DIR / "data.verb")
    assert used == set(range(29, 44))  # verb.body .. verb.weather
    shifted = wn.WORDNET30_LEXNAMES[1:] + wn.WORDNET30_LEXNAMES[:1]
    with pytest.raises(ValueError, match="wrong category"):
        wn.check_lexnames(shifted, wn.DEBIAN_WORDNET_DIR)


@needs_debian
@pytest.mark.parametrize("with_manpage", [True, False])
def test_build_from_debian_loads_in_nltk(tmp_path: Path, with_manpage: bool) -> None:
    man = wn.DEBIAN_LEXNAMES_MAN if with_manpage else tmp_path / "absent.gz"
    path = wn.build_from_debian(tmp_path / "nltk_data", man_page=man)
    assert path == tmp_path / "nltk_data" / "corpora" / "wordnet"
    for f in (*wn.NLTK_WORDNET_FILES, "lexnames"):
        assert (path / f).is_file() and not (path / f).is_symlink()
    assert (path / "lexnames").read_text() == wn.lexnames_text(wn.WORDNET30_LEXNAMES)
    assert not list((tmp_path / "nltk_data" / "corpora").glob(".wordnet.tmp*"))
    if not with_manpage:
        return  # same files as with the man page; loading once is enough
    reader = wn.load_wordnet_reader(path)
    assert reader.get_version() == "3.0"
    assert reader.synset("dog.n.01").lexname() == "noun.animal"
    assert reader.synset("run.v.01").lexname() == "verb.motion"
    assert {"car", "auto", "automobile"} <= {
        lem.name() for lem in reader.synset("car.n.01").lemmas()
    }


def test_build_without_debian_files_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(MissingResourceError, match="wordnet-base wordnet-sense-index"):
        wn.build_from_debian(tmp_path / "out", source_dir=tmp_path / "nothing")


@needs_debian
def test_setup_falls_back_to_debian_when_nltk_download_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wn, "_try_nltk_download", lambda root, timeout: False)
    monkeypatch.setenv("METAJUDGE_NLTK_DATA", str(tmp_path / "managed"))
    res = wn.setup_wordnet(source="auto", force=True)
    assert res.source == "debian" and res.path == tmp_path / "managed" / "corpora" / "wordnet"
    assert wn.find_wordnet() == res.path
    again = wn.setup_wordnet()  # already there: nothing to do
    assert again.source == "existing"


def test_setup_with_no_route_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wn, "_try_nltk_download", lambda root, timeout: False)
    with pytest.raises(MissingResourceError) as ei:
        wn.setup_wordnet(tmp_path / "t", source="auto", force=True, debian_dir=tmp_path / "none")
    msg = str(ei.value)
    assert "nltk.download" in msg and "wordnet-base" in msg and "metajudge setup wordnet" in msg


def test_managed_dir_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("METAJUDGE_NLTK_DATA", str(tmp_path / "a"))
    assert wn.managed_nltk_data_dir() == tmp_path / "a"
    monkeypatch.delenv("METAJUDGE_NLTK_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert wn.managed_nltk_data_dir() == tmp_path / "xdg" / "metajudge" / "nltk_data"


@needs_debian
def test_cli_setup_wordnet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from metajudge.cli import main

    assert main(["setup", "wordnet", "--nltk-dir", str(tmp_path / "nd"), "--source", "debian"]) == 0
    out = capsys.readouterr().out
    assert "WordNet ready (debian" in out and "METAJUDGE_NLTK_DATA" in out
    assert (tmp_path / "nd" / "corpora" / "wordnet" / "lexnames").is_file()


@needs_debian
def test_zipped_corpus_as_nltk_download_leaves_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nltk.download('wordnet') leaves corpora/wordnet.zip: it must be found and loaded too."""
    import shutil
    import zipfile

    root = tmp_path / "nd"
    built = wn.build_from_debian(root)
    with zipfile.ZipFile(root / "corpora" / "wordnet.zip", "w") as z:
        for f in sorted(built.iterdir()):
            z.write(f, f"wordnet/{f.name}")
    shutil.rmtree(built)
    monkeypatch.setenv("METAJUDGE_NLTK_DATA", str(root))
    found = wn.find_wordnet()
    assert found == root / "corpora" / "wordnet.zip"
    reader = wn.load_wordnet_reader(found)
    assert reader.synset("dog.n.01").lexname() == "noun.animal"
    assert len(wn.wordnet_fingerprint(found)) == 12
