"""What the framework-file tests share: ``meta-eval`` on a framework's file and on the same
scores written as a plain score CSV (extracted by plain dict walking, independent of the
readers), compared number for number."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from metajudge.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "frameworks"
LABELS = FIX.parents[0] / "byod" / "graded.jsonl"


def _run(tmp: Path, name: str, *scores: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    out = tmp / name
    argv = ["meta-eval", "--input", str(LABELS), "--out", str(out), "--no-plots"]
    argv += [a for s in scores for a in ("--scores", s)]
    assert main([*argv, "--n-boot", "300", "--format", "json", *extra]) == 0
    return json.loads((out / "result.json").read_text(encoding="utf-8"))


def _numbers(res: dict[str, Any]) -> tuple[Any, Any]:
    """Every correlation with its CI per (metric, dimension), and every significance test."""
    cells = {(c["metric"], c["dimension"]): c["stats"] for c in res["cells"]}
    return cells, res["comparisons"]


def _plain_csv(path: Path, rows: list[tuple[str, str, str, float | None]]) -> Path:
    """``(item, system, metric, score)`` as a wide score CSV ``item,system,<metric>...``."""
    metrics = list(dict.fromkeys(m for _, _, m, _ in rows))
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for item, system, m, s in rows:
        table.setdefault((item, system), {})[m] = "" if s is None else repr(float(s))
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "system", *metrics])
        for (item, system), vals in table.items():
            w.writerow([item, system, *(vals.get(m, "") for m in metrics)])
    return path


def _same_as_plain(tmp: Path, fixture: Path, rows: list[Any], extra: tuple[str, ...] = ()) -> dict:
    got = _run(tmp, "framework", str(fixture), extra=extra)
    plain = _run(tmp, "plain", str(_plain_csv(tmp / "plain.csv", rows)))
    assert _numbers(got) == _numbers(plain)
    names = {c["metric"] for c in got["cells"]} - {"trivial.length_words", "trivial.random"}
    assert names == {m for _, _, m, _ in rows}
    return got
