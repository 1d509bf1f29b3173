"""WordNet for METEOR: find it, or build the NLTK corpus from Debian's WordNet 3.0 files.

NLTK's METEOR (``nltk.translate.meteor_score``) needs the WordNet corpus. Where the internet is
reachable, ``nltk.download("wordnet")`` is the normal path. Where it is not (offline CI), the
Debian packages ``wordnet-base`` and ``wordnet-sense-index`` install the WordNet 3.0 database in
``/usr/share/wordnet``, and this module turns them into an NLTK corpus:

- the 15 files NLTK's ``WordNetCorpusReader`` opens are copied as **real files** (NLTK's path
  sandbox refuses symlinks) into ``<nltk_data>/corpora/wordnet/``;
- the one file Debian does not ship, ``lexnames``, is generated: Debian has it only as the man
  page ``lexnames.5WN.gz`` (45 rows ``NN<TAB>name<TAB>C``, C = 1 noun, 2 verb, 3 adjective,
  4 adverb). We parse the man page's table when it is there and otherwise use the same 45 names
  (WordNet 3.0's fixed list, :data:`WORDNET30_LEXNAMES`); both are checked against the lexicographer
  file numbers actually used in the ``data.*`` files.

Where the data lives: ``$METAJUDGE_NLTK_DATA`` if set, else ``$XDG_DATA_HOME/metajudge/nltk_data``
(``~/.local/share/metajudge/nltk_data``). Deliberately *not* under the user cache
(``METAJUDGE_CACHE_DIR``), so one ``metajudge setup wordnet`` serves every run and test. METEOR
also finds a WordNet that ``nltk.download`` put anywhere on ``nltk.data.path``, and builds the
corpus on demand when only the Debian files are present.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import re
import shutil
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from metajudge.errors import MissingResourceError

log = logging.getLogger(__name__)

DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
DEBIAN_LEXNAMES_MAN = Path("/usr/share/man/man5/lexnames.5WN.gz")

#: The files ``nltk.corpus.reader.wordnet.WordNetCorpusReader`` opens (its ``_FILES``), minus lexnames.
NLTK_WORDNET_FILES: tuple[str, ...] = (
    "cntlist.rev",
    "index.sense",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
)

#: WordNet 3.0's 45 lexicographer file names, numbered 00..44 (``lexnames(5WN)``).
WORDNET30_LEXNAMES: tuple[str, ...] = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather", "adj.ppl",
)  # fmt: skip

_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}

FIX_HINT = (
    "run `metajudge setup wordnet` (it uses nltk.download where the internet is reachable; "
    "offline, install Debian's WordNet first: `apt-get install wordnet-base wordnet-sense-index`, "
    "or `make system-deps`)"
)


def managed_nltk_data_dir() -> Path:
    """Where ``metajudge setup wordnet`` puts the NLTK data.

    ``$METAJUDGE_NLTK_DATA``, else ``$XDG_DATA_HOME/metajudge/nltk_data``, else
    ``~/.local/share/metajudge/nltk_data``.
    """
    env = os.environ.get("METAJUDGE_NLTK_DATA")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return base / "metajudge" / "nltk_data"


# ---------------------------------------------------------------------------------------------
# lexnames


def parse_lexnames_manpage(text: str) -> list[str]:
    """The lexicographer file names, in number order, from the troff source of ``lexnames(5WN)``.

    Rows of the table look like ``05<TAB>noun.animal<TAB>nouns denoting animals``.

    >>> parse_lexnames_manpage("00\\tadj.all\\tall adjective clusters\\n01\\tadj.pert\\tx\\n")
    ['adj.all', 'adj.pert']
    """
    rows: dict[int, str] = {}
    for line in text.splitlines():
        m = re.match(r"^(\d\d)\s+((?:adj|adv|noun|verb)\.[A-Za-z]+)\s", line + " ")
        if m:
            rows[int(m.group(1))] = m.group(2)
    if not rows or sorted(rows) != list(range(len(rows))):
        raise ValueError("lexnames man page: no complete 00..NN table found")
    return [rows[i] for i in range(len(rows))]


def lexnames_text(names: Sequence[str]) -> str:
    """The NLTK/WordNet ``lexnames`` file: ``NN<TAB>name<TAB>category`` per line.

    >>> lexnames_text(["adj.all", "noun.Tops"])
    '00\\tadj.all\\t3\\n01\\tnoun.Tops\\t1\\n'
    """
    out = []
    for i, name in enumerate(names):
        out.append(f"{i:02d}\t{name}\t{_CATEGORY[name.split('.', 1)[0]]}\n")
    return "".join(out)


def lexnames_from_debian(man_page: Path = DEBIAN_LEXNAMES_MAN) -> tuple[list[str], str]:
    """The lexnames list and where it came from (the man page, or the built-in WordNet 3.0 list)."""
    if man_page.is_file():
        with gzip.open(man_page, "rt", encoding="utf-8", errors="replace") as fh:
            names = parse_lexnames_manpage(fh.read())
        if len(names) != len(WORDNET30_LEXNAMES) or tuple(names) != WORDNET30_LEXNAMES:
            log.warning("lexnames man page differs from WordNet 3.0's list; using the man page")
        return names, str(man_page)
    return list(WORDNET30_LEXNAMES), "built-in WordNet 3.0 list"


def lexfile_numbers_used(data_file: Path) -> set[int]:
    """The lexicographer file numbers (2nd field of each synset line) used in a ``data.*`` file."""
    used: set[int] = set()
    with open(data_file, encoding="latin-1") as fh:
        for line in fh:
            if line.startswith("  "):  # license header
                continue
            parts = line.split(" ", 2)
            if len(parts) >= 2 and parts[1].isdigit():
                used.add(int(parts[1]))
    return used


def check_lexnames(names: Sequence[str], wordnet_dir: Path) -> None:
    """Every lexicographer number used by a ``data.*`` file names a file of the right category."""
    pos_of = {"noun": "noun", "verb": "verb", "adj": "adj", "adv": "adv"}
    for pos in pos_of:
        data = wordnet_dir / f"data.{pos}"
        if not data.is_file():
            continue
        for n in lexfile_numbers_used(data):
            if n >= len(names):
                raise ValueError(
                    f"data.{pos} uses lexicographer file {n:02d}, lexnames has {len(names)} rows"
                )
            if names[n].split(".", 1)[0] != pos:
                raise ValueError(
                    f"data.{pos} uses lexicographer file {n:02d} = {names[n]!r}: wrong category"
                )


# ---------------------------------------------------------------------------------------------
# building and finding


@dataclass(frozen=True)
class WordNetSetup:
    path: Path  # the corpora/wordnet folder (or wordnet.zip)
    source: str  # "existing", "nltk.download", "debian"
    detail: str = ""


def build_from_debian(
    target_root: Path,
    *,
    source_dir: Path = DEBIAN_WORDNET_DIR,
    man_page: Path = DEBIAN_LEXNAMES_MAN,
) -> Path:
    """Build ``<target_root>/corpora/wordnet`` from Debian's WordNet 3.0 files. Returns that folder.

    Real copies (no symlinks) and a generated ``lexnames``; written into a temporary folder and
    renamed into place, so a half-built corpus is never left behind.
    """
    missing = [f for f in NLTK_WORDNET_FILES if not (source_dir / f).is_file()]
    if missing:
        raise MissingResourceError(
            f"WordNet files missing in {source_dir}: {', '.join(missing)}. Install Debian's "
            "`wordnet-base wordnet-sense-index` (apt-get install wordnet-base wordnet-sense-index)."
        )
    names, origin = lexnames_from_debian(man_page)
    check_lexnames(names, source_dir)
    corpora = target_root / "corpora"
    corpora.mkdir(parents=True, exist_ok=True)
    final = corpora / "wordnet"
    tmp = corpora / f".wordnet.tmp.{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        for f in NLTK_WORDNET_FILES:
            shutil.copyfile(source_dir / f, tmp / f)  # follows symlinks: real copies
        (tmp / "lexnames").write_text(lexnames_text(names), encoding="utf-8")
        (tmp / "README.metajudge").write_text(
            f"WordNet 3.0 for NLTK, built by metajudge from {source_dir} (Debian wordnet-base, "
            f"wordnet-sense-index); lexnames generated from {origin}.\n"
            "WordNet license: https://wordnet.princeton.edu/license-and-commercial-use\n",
            encoding="utf-8",
        )
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info("built NLTK WordNet in %s from %s (lexnames from %s)", final, source_dir, origin)
    return final


def _register_path(root: Path) -> None:
    import nltk.data

    s = str(root)
    if s not in nltk.data.path:
        nltk.data.path.insert(0, s)


def _wordnet_in(root: Path) -> Path | None:
    """``<root>/corpora/wordnet`` (a folder with lexnames) or ``<root>/corpora/wordnet.zip``, if present."""
    d = root / "corpora" / "wordnet"
    if (d / "lexnames").is_file():
        return d
    z = root / "corpora" / "wordnet.zip"
    return z if z.is_file() else None


def find_wordnet() -> Path | None:
    """The WordNet corpus METEOR uses, or None: the managed folder first, then ``nltk.data.path``
    in order (a folder or a ``wordnet.zip`` as ``nltk.download`` leaves it)."""
    root = managed_nltk_data_dir()
    found = _wordnet_in(root)
    if found is not None:
        return found  # load_wordnet_reader registers its root with NLTK (no NLTK import here)
    import nltk.data

    for p in list(nltk.data.path):
        raw = getattr(p, "path", p)
        if not isinstance(raw, str):
            continue
        found = _wordnet_in(Path(raw))
        if found is not None:
            return found
    return None


def _try_nltk_download(target_root: Path, timeout_s: float) -> bool:
    import nltk

    old = socket.getdefaulttimeout()
    socket.setdefaulttimeout(timeout_s)
    try:
        target_root.mkdir(parents=True, exist_ok=True)
        ok = bool(
            nltk.download("wordnet", download_dir=str(target_root), quiet=True, raise_on_error=True)
        )
    except (OSError, ValueError, LookupError) as e:  # no network, DNS, sandbox refusal: use Debian
        log.info("nltk.download('wordnet') failed: %s", e)
        ok = False
    finally:
        socket.setdefaulttimeout(old)
    return ok and (
        (target_root / "corpora" / "wordnet.zip").is_file()
        or (target_root / "corpora" / "wordnet").is_dir()
    )


def setup_wordnet(
    target_root: Path | None = None,
    *,
    source: Literal["auto", "nltk", "debian"] = "auto",
    force: bool = False,
    download_timeout_s: float = 20.0,
    debian_dir: Path = DEBIAN_WORDNET_DIR,
    man_page: Path = DEBIAN_LEXNAMES_MAN,
) -> WordNetSetup:
    """Make WordNet available to NLTK (what ``metajudge setup wordnet`` runs).

    ``auto``: nothing to do if a usable WordNet is already found (unless ``force``); else try
    ``nltk.download("wordnet")`` into the managed folder, and if that fails build from Debian's
    files. ``nltk`` / ``debian`` use only that route. Raises :class:`MissingResourceError` with
    the fix when no route works. The result is verified by loading it with NLTK.
    """
    root = Path(target_root) if target_root is not None else managed_nltk_data_dir()
    if not force and source == "auto":
        found = find_wordnet()
        if found is not None:
            verify_wordnet(found)
            return WordNetSetup(found, "existing")
    errors: list[str] = []
    if source in ("auto", "nltk"):
        if _try_nltk_download(root, download_timeout_s):
            _register_path(root)
            found = find_wordnet()
            if found is not None:
                verify_wordnet(found)
                return WordNetSetup(found, "nltk.download")
        errors.append("nltk.download('wordnet') failed (no internet?)")
    if source in ("auto", "debian"):
        try:
            path = build_from_debian(root, source_dir=debian_dir, man_page=man_page)
            _register_path(root)
            verify_wordnet(path)
            return WordNetSetup(path, "debian", f"from {debian_dir}")
        except MissingResourceError as e:
            errors.append(str(e))
    raise MissingResourceError(
        "could not set up WordNet: " + "; ".join(errors) + ". Fix: " + FIX_HINT
    )


def verify_wordnet(path: Path) -> None:
    """Load the corpus and look up one word; raises MissingResourceError if it does not work."""
    try:
        reader = load_wordnet_reader(path)
        if not reader.synsets("dog"):
            raise ValueError("no synsets for 'dog'")
    except MissingResourceError:
        raise
    except Exception as e:
        raise MissingResourceError(
            f"WordNet at {path} does not load in NLTK: {e}. Fix: {FIX_HINT}"
        ) from e


_READERS: dict[str, Any] = {}


def load_wordnet_reader(path: Path | None = None) -> Any:
    """A ``WordNetCorpusReader`` for ``path`` (default: :func:`wordnet_path`), cached per process."""
    import warnings

    if path is None:
        path = wordnet_path()
    key = str(path)
    if key not in _READERS:
        import nltk.data
        from nltk.corpus.reader.wordnet import WordNetCorpusReader

        _register_path(
            path.parent.parent
        )  # <root>/corpora/wordnet: NLTK's sandbox allows registered roots
        if path.suffix == ".zip":
            ptr: Any = nltk.data.ZipFilePathPointer(str(path), "wordnet/")
        else:
            ptr = nltk.data.FileSystemPathPointer(str(path))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "multilingual functions are not available" (no OMW)
            _READERS[key] = WordNetCorpusReader(ptr, None)
    return _READERS[key]


def wordnet_path(*, build_if_possible: bool = True) -> Path:
    """The WordNet corpus METEOR uses; builds it from Debian's files on demand when they exist.

    Raises :class:`MissingResourceError` (one message, with the fix) when there is none.
    """
    found = find_wordnet()
    if found is not None:
        return found
    if build_if_possible and all((DEBIAN_WORDNET_DIR / f).is_file() for f in NLTK_WORDNET_FILES):
        root = managed_nltk_data_dir()
        path = build_from_debian(root)
        _register_path(root)
        return path
    raise MissingResourceError("WordNet (needed by METEOR) is not installed. Fix: " + FIX_HINT)


def wordnet_version(path: Path) -> str | None:
    """The WordNet version written in ``data.adj``'s licence header, read as NLTK's
    ``WordNetCorpusReader.get_version`` reads it, without importing NLTK (a folder or a
    ``wordnet.zip``); None when the header names none."""
    import zipfile

    pattern = re.compile(r"Word[nN]et (\d+\+?|\d+\.\d+) Copyright")
    if path.is_file():
        with zipfile.ZipFile(path) as z:
            text = z.read("wordnet/data.adj")[: 1 << 16].decode("utf-8", "replace")
    else:
        with open(path / "data.adj", encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 16)
    for line in text.splitlines():
        match = pattern.search(line)
        if match is not None:
            return match.group(1)
    return None


_HASHES: dict[str, str] = {}


def wordnet_fingerprint(path: Path) -> str:
    """A short sha256 over the WordNet data files (what can change METEOR's synonym matches)."""
    key = str(path)
    if key not in _HASHES:
        h = hashlib.sha256()
        if path.is_file():  # wordnet.zip
            with open(path, "rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
        else:
            for f in ("lexnames", *NLTK_WORDNET_FILES):
                h.update(f.encode())
                with open(path / f, "rb") as fh:
                    while block := fh.read(1 << 20):
                        h.update(block)
        _HASHES[key] = h.hexdigest()[:12]
    return _HASHES[key]
