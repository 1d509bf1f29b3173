"""The README stays short and starts with the two commands; every number the user guide's
"Reproductions" page calls reproduced is asserted by a test (or is the published value a test
compares with)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
REPRODUCTIONS = ROOT / "docs" / "reproductions.md"
MAX_README_BYTES = 15 * 1024


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    assert len(README.read_bytes()) <= MAX_README_BYTES
    text = README.read_text(encoding="utf-8")
    first = re.match(r"# metajudge\n\n```bash\n(.*?)```", text, flags=re.DOTALL)
    assert first, "README does not start with its command block"
    commands = [ln.split("#", 1)[0].strip() for ln in first.group(1).splitlines()]
    assert commands == ["make demo", "make test"]


def _asserted() -> str:
    """The text of every test and of the published numbers the tests compare with."""
    files = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "metajudge/data/published").glob("*.json")]
    return "\n".join(p.read_text(encoding="utf-8") for p in files if p.name != Path(__file__).name)


def _spellings(number: str) -> set[str]:
    """How a test may write ``number``: as printed, or on the other scale (×100 / ÷100)."""
    v = float(number)
    return {number, str(v), f"{v / 100:.4f}", f"{v / 100:.3f}", f"{v * 100:.2f}", f"{v * 100:g}"}


def test_every_reproduced_number_is_asserted() -> None:
    numbers = dict.fromkeys(re.findall(r"(?<![\w.])\d+\.\d+", REPRODUCTIONS.read_text("utf-8")))
    assert len(numbers) > 50
    corpus = _asserted()
    missing = [n for n in numbers if not any(s in corpus for s in _spellings(n))]
    assert not missing, f"numbers on docs/reproductions.md no test asserts: {missing}"
