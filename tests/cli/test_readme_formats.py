"""The file format of the user guide's "Your own data" page (docs/own-data.md): each kind's card scale
example, read from the card table, validates the example record of that kind (the signed
pairwise labels lie on the pairwise scale), through ``metajudge data validate``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metajudge.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    return (ROOT / "docs" / "own-data.md").read_text(encoding="utf-8")


def _scales() -> dict[str, dict]:
    """``kind -> scale`` from the card table's ``scale`` row (`kind`: `{...}` pairs)."""
    row = next(ln for ln in _section().splitlines() if ln.startswith("| `scale` |"))
    found = re.findall(r"`(\w+)`: (?:the signed preference, )?`(\{.*?\})`", row)
    return {kind: json.loads(js) for kind, js in found}


def _examples() -> list[dict]:
    block = re.search(r"```json\n(.*?)```", _section(), flags=re.DOTALL)
    assert block
    return [json.loads(ln) for ln in block.group(1).splitlines() if ln.strip()]


def test_pairwise_scale_example_is_signed() -> None:
    sc = _scales()
    assert set(sc) >= {"likert", "pairwise", "categorical", "binary"}
    assert sc["pairwise"]["min"] < 0 < sc["pairwise"]["max"]
    assert sc["likert"] == {"min": 1, "max": 5}


@pytest.mark.parametrize("kind", ["likert", "categorical", "pairwise"])
def test_each_example_record_validates_against_its_scale_example(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = next(
        r for r in _examples() if (("labels" in r) == (kind == "pairwise")) and _kind(r) == kind
    )
    dims = sorted((rec.get("labels") or rec["scores"]).keys())
    card = {"name": f"guide_{kind}", "kind": kind, "dimensions": dims, "scale": _scales()[kind]}
    path = tmp_path / f"{kind}.jsonl"
    path.write_text(json.dumps({"card": card}) + "\n" + json.dumps(rec) + "\n")
    code = main(["data", "validate", str(path)])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err


def _kind(rec: dict) -> str:
    if "labels" in rec:
        return "pairwise"
    vals = [v for vs in rec["scores"].values() for v in vs if v is not None]
    return "categorical" if any(isinstance(v, str) for v in vals) else "likert"
