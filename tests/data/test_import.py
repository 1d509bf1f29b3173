"""``import metajudge`` / ``import metajudge.data`` and the CLI stay light: no heavy module at import."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "pandas",
    "numpy",
    "scipy",
    "torch",
    "matplotlib",
    "sklearn",
    "transformers",
    "metajudge.data.converters",
)


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_metajudge_data_is_light() -> None:
    mods = _modules_after(
        "import metajudge, metajudge.data\nfrom metajudge.data import list_datasets\nlist_datasets()"
    )
    assert not [m for m in HEAVY if m in mods]


def test_cli_parser_is_light() -> None:
    mods = _modules_after("from metajudge.cli import build_parser\nbuild_parser()")
    assert not [m for m in HEAVY if m in mods]


def test_loading_a_dataset_needs_no_pandas(data_dir) -> None:  # type: ignore[no-untyped-def]
    mods = _modules_after(
        f"import os; os.environ['METAJUDGE_DATA_DIR']={str(data_dir)!r}\n"
        "from metajudge.data import load_dataset\nload_dataset('hanna')"
    )
    assert "pandas" not in mods and "numpy" not in mods
