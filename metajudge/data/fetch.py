"""Where an upstream data file comes from: the local data folder, the user cache, a pinned download.

Resolution order for file ``relpath`` of dataset ``name``:

1. the local data folder: ``<data_dir>/<name>/<relpath>`` where ``data_dir`` is ``--data-dir`` or
   ``$METAJUDGE_DATA_DIR``;
2. the user cache: ``user_cache_dir()/data/<name>/<relpath>``;
3. a download of the raw file at the pinned commit,
   ``<base>/<repository>/<commit>/<upstream path>`` with ``base`` = ``base_url`` or
   ``$METAJUDGE_DOWNLOAD_BASE`` or ``https://raw.githubusercontent.com``, into the user cache.

Every file is checked against the sha256 pinned in the dataset card, wherever it was found. A
download is written to a temporary file and renamed only when its size and sha256 match, so a
truncated or corrupted body never reaches the cache. The project never ships upstream data.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from metajudge.data.formats import DatasetCard, SourceFile
from metajudge.errors import ChecksumError, InputError, MissingResourceError
from metajudge.io import atomic_write, inside, sha256_file
from metajudge.paths import data_dir_from_env, user_cache_dir

log = logging.getLogger(__name__)

DEFAULT_DOWNLOAD_BASE = "https://raw.githubusercontent.com"
DOWNLOAD_TIMEOUT_S = 60.0

# (resolved path, size, mtime_ns) -> sha256, so a file is hashed once per process.
_VERIFIED: dict[tuple[str, int, int], str] = {}


_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def local_relpath(sf: SourceFile) -> str:
    """The file's path inside ``<data_dir>/<name>/`` (the card's ``local``, else the basename);
    checked to be a relative path without ``..`` (:func:`~metajudge.data.names.check_relpath`)."""
    from metajudge.data.names import check_relpath

    return check_relpath(sf.local or sf.path.rsplit("/", 1)[-1], field="files.local")


def download_base(base_url: str | None = None) -> str:
    """``base_url``, else ``$METAJUDGE_DOWNLOAD_BASE``, else raw.githubusercontent.com.

    Only ``https://`` bases, and ``http://`` on a loopback host (tests, a local mirror), are
    accepted: ``file://`` and other schemes would read local files into the cache.
    """
    source = "base_url" if base_url else "METAJUDGE_DOWNLOAD_BASE"
    base = (base_url or os.environ.get("METAJUDGE_DOWNLOAD_BASE") or DEFAULT_DOWNLOAD_BASE).rstrip(
        "/"
    )
    parts = urllib.parse.urlsplit(base)
    ok = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOOPBACK)
    if not ok or not parts.hostname or parts.username or parts.query or parts.fragment:
        raise InputError(
            f"download base {base!r} refused: only https:// URLs, or http:// on 127.0.0.1, ::1 or "
            "localhost, without credentials or query",
            field=source,
        )
    return base


def source_url(card: DatasetCard, sf: SourceFile, base_url: str | None = None) -> str:
    """The raw-file URL of ``sf`` at its pinned commit."""
    from metajudge.data.names import check_card_sources

    repo = sf.repository or card.repository
    commit = sf.commit or card.commit
    check_card_sources(
        {"name": card.name, "repository": repo, "commit": commit, "files": [sf.to_dict()]}
    )
    if not repo or not commit:
        raise MissingResourceError(
            f"dataset {card.name!r}: the card pins no repository/commit for {sf.path!r}"
        )
    return f"{download_base(base_url)}/{repo}/{commit}/{urllib.parse.quote(sf.path, safe='/=,')}"


def find_source(card: DatasetCard, relpath: str) -> SourceFile:
    """The card's entry for ``relpath`` (its local path, or its upstream path)."""
    for sf in card.files:
        if local_relpath(sf) == relpath or sf.path == relpath:
            return sf
    known = ", ".join(local_relpath(f) for f in card.files[:8])
    more = " ..." if len(card.files) > 8 else ""
    raise InputError(
        f"dataset {card.name!r} has no file {relpath!r} in its card (files: {known}{more})",
        field="files",
    )


def verify_file(path: Path, sf: SourceFile, *, dataset: str = "") -> None:
    """Raise :class:`ChecksumError` unless ``path`` has the pinned size and sha256."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    digest = _VERIFIED.get(key)
    if digest is None:
        if sf.bytes is not None and st.st_size != sf.bytes:
            raise ChecksumError(
                f"{path}: size {st.st_size} bytes, the card of {dataset or 'this dataset'} pins {sf.bytes} "
                f"bytes for {sf.path} (a different or truncated copy)"
            )
        digest = sha256_file(path)
    if digest != sf.sha256:
        raise ChecksumError(
            f"{path}: sha256 mismatch for {sf.path} of {dataset or 'this dataset'}: expected {sf.sha256}, "
            f"got {digest} (a different version of the file; delete it or point --data-dir elsewhere)"
        )
    _VERIFIED[key] = digest


def download_file(
    url: str, dest: Path, sf: SourceFile, *, dataset: str = "", timeout: float = DOWNLOAD_TIMEOUT_S
) -> Path:
    """Download ``url`` to ``dest`` atomically, checking length and sha256 before the rename."""
    log.info("downloading %s", url)
    h = hashlib.sha256()
    n = 0
    expected_len: int | None = None
    with atomic_write(dest, mode="wb") as out:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                cl = resp.headers.get("Content-Length")
                expected_len = int(cl) if cl and cl.isdigit() else None
                while True:
                    try:
                        block = resp.read(1 << 16)
                    except (
                        http.client.IncompleteRead,
                        OSError,
                        ValueError,
                    ) as e:  # cut short, reset, timeout
                        raise ChecksumError(
                            f"{url}: truncated download of {sf.path} for {dataset}: the connection ended "
                            f"after {n} bytes ({type(e).__name__})"
                        ) from None
                    if not block:
                        break
                    h.update(block)
                    out.write(block)
                    n += len(block)
        except urllib.error.HTTPError as e:
            raise MissingResourceError(
                f"{url}: HTTP {e.code} while downloading {sf.path} of {dataset}; put a local copy under "
                f"--data-dir / METAJUDGE_DATA_DIR ({dataset}/{local_relpath(sf)})"
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as e:
            raise MissingResourceError(
                f"{url}: cannot download {sf.path} of {dataset} ({getattr(e, 'reason', e)}); put a local copy "
                f"under --data-dir / METAJUDGE_DATA_DIR ({dataset}/{local_relpath(sf)})"
            ) from None
        if expected_len is not None and n < expected_len:
            raise ChecksumError(
                f"{url}: truncated download of {sf.path} for {dataset}: {n} of {expected_len} bytes received"
            )
        if sf.bytes is not None and n != sf.bytes:
            raise ChecksumError(
                f"{url}: downloaded {n} bytes for {sf.path} of {dataset}, the card pins {sf.bytes} bytes "
                f"(truncated or a different version)"
            )
        got = h.hexdigest()
        if got != sf.sha256:
            raise ChecksumError(
                f"{url}: sha256 mismatch for {sf.path} of {dataset}: expected {sf.sha256}, got {got}; the "
                f"download was discarded"
            )
    st = dest.stat()
    _VERIFIED[(str(dest.resolve()), st.st_size, st.st_mtime_ns)] = sf.sha256
    return dest


def cache_path(name: str, relpath: str) -> Path:
    """Where the user cache keeps file ``relpath`` of dataset ``name`` (refused unless inside
    ``<user cache>/data/<name>/``)."""
    from metajudge.data.names import check_dataset_name

    return inside(user_cache_dir() / "data" / check_dataset_name(name), relpath, what="files.local")


def resolve_source(
    card: DatasetCard,
    sf: SourceFile,
    data_dir: str | Path | None = None,
    *,
    base_url: str | None = None,
    download: bool = True,
) -> Path:
    """Find ``sf`` of ``card`` through the resolution order (module docstring); verify its sha256."""
    rel = local_relpath(sf)
    root = data_dir_from_env(data_dir)
    if root is not None:
        p = inside(root / card.name, rel, what="files.local")
        if p.is_file():
            verify_file(p, sf, dataset=card.name)
            return p
    cached = cache_path(card.name, rel)
    if cached.is_file():
        try:
            verify_file(cached, sf, dataset=card.name)
            return cached
        except ChecksumError:
            log.warning("cached %s does not match the card; downloading it again", cached)
            cached.unlink()
    if not download:
        where = f"{root / card.name / rel} or " if root is not None else ""
        raise MissingResourceError(
            f"{card.name}: {where}{cached} not found and downloads are disabled"
        )
    return download_file(source_url(card, sf, base_url), cached, sf, dataset=card.name)
