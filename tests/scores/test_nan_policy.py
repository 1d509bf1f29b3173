"""One rule for a score a file leaves without a number, in every format ``--scores`` reads
(issue 61): a NaN (as each format writes it) or an empty cell is a *missing* score — the
response keeps a row with a null score, ``meta-eval`` counts it among the column's unscored
responses and ``data doctor`` among the column's missing values; never dropped silently, never
0. An infinite score is refused in every format (exit 2 naming the file)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from metajudge.cli import main
from tests.scores.framework_helpers import FIX, LABELS, _run

#: the responses of the labelled file (tests/fixtures/byod/graded.jsonl)
RESPONSES = [(f"news{i}", s) for i in range(1, 7) for s in ("extractive", "abstractive")]


def _scores(bad: float) -> list[float]:
    """A score per response, the first one ``bad``."""
    return [bad, *(0.1 * k for k in range(1, len(RESPONSES)))]


def _csv(tmp: Path, bad: float) -> tuple[Path, str]:
    p = tmp / "wide.csv"
    cells = ["NaN" if math.isnan(v) else repr(v) for v in _scores(bad)]
    lines = [f"{i},{s},{c}" for (i, s), c in zip(RESPONSES, cells, strict=True)]
    p.write_text("item,system,judge\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return p, "judge"


def _jsonl(tmp: Path, bad: float) -> tuple[Path, str]:
    p = tmp / "rows.jsonl"
    rows = [
        {"item": i, "system": s, "metric": "judge", "score": v}
        for (i, s), v in zip(RESPONSES, _scores(bad), strict=True)
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")  # NaN as NaN
    return p, "judge"


def _wide_json(tmp: Path, bad: float) -> tuple[Path, str]:
    p = tmp / "wide.json"
    rows = [
        {"item": i, "system": s, "judge": v}
        for (i, s), v in zip(RESPONSES, _scores(bad), strict=True)
    ]
    p.write_text(json.dumps(rows), encoding="utf-8")
    return p, "judge"


def _ragas(tmp: Path, bad: float) -> tuple[Path, str]:
    with open(FIX / "ragas" / "results.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[0]["summary_rubric"] = str(bad)  # pandas' to_csv(na_rep="NaN")
    p = tmp / "ragas.csv"
    with open(p, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return p, "summary_rubric"


def _promptfoo(tmp: Path, bad: float) -> tuple[Path, str]:
    data = json.loads((FIX / "promptfoo" / "results.json").read_text(encoding="utf-8"))
    comp = data["results"]["results"][0]["gradingResult"]["componentResults"][0]
    comp["score"] = bad
    p = tmp / "promptfoo.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p, str(comp["assertion"].get("metric") or comp["assertion"]["type"])


def _deepeval(tmp: Path, bad: float) -> tuple[Path, str]:
    data = json.loads((FIX / "deepeval" / "test_run.json").read_text(encoding="utf-8"))
    metric = data["testCases"][0]["metricsData"][0]
    metric["score"] = bad
    p = tmp / "deepeval.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p, str(metric["name"])


def _inspect(tmp: Path, bad: float) -> tuple[Path, str]:
    """The log with one sample's score NaN in both epochs (as inspect_ai writes it when the
    grader gave no grade)."""
    log = json.loads((FIX / "inspect" / "graded.json").read_text(encoding="utf-8"))
    for s in log["samples"]:
        if s["id"] == "news1::extractive":
            s["scores"]["model_graded_qa"]["value"] = bad
    p = tmp / "graded.json"
    p.write_text(json.dumps(log), encoding="utf-8")
    return p, "model_graded_qa"


FORMATS: dict[str, Callable[[Path, float], tuple[Path, str]]] = {
    "csv": _csv,
    "jsonl": _jsonl,
    "json": _wide_json,
    "ragas": _ragas,
    "promptfoo": _promptfoo,
    "deepeval": _deepeval,
    "inspect": _inspect,
}


def _unscored(res: dict[str, Any], metric: str) -> int:
    return next(m["missing"][metric] for m in res["metrics"] if metric in m["missing"])[
        "responses_unscored"
    ]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_nan_score_is_a_missing_score_counted(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if fmt == "inspect":
        pytest.importorskip("inspect_ai")
    f, metric = FORMATS[fmt](tmp_path, 0.5)
    got = _run(tmp_path, "number", str(f))
    f, metric = FORMATS[fmt](tmp_path, math.nan)
    nan = _run(tmp_path, "nan", str(f))
    assert _unscored(nan, metric) == _unscored(got, metric) + 1, nan["metrics"]
    cells = [next(c for c in r["cells"] if c["metric"] == metric) for r in (got, nan)]
    assert cells[1]["n_responses"] == cells[0]["n_responses"] - 1  # not read as 0, not dropped
    capsys.readouterr()
    assert main(["data", "doctor", str(f)]) == 0
    out = capsys.readouterr().out
    scores = 2 if fmt == "inspect" else 1  # the log's two epochs: a missing score each
    assert f"format: {fmt} (" in out and f"missing values: {metric} {scores}" in out, out


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_an_infinite_score_is_refused(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if fmt == "inspect":
        pytest.importorskip("inspect_ai")
    f, _ = FORMATS[fmt](tmp_path, math.inf)
    argv = ["meta-eval", "--input", str(LABELS), "--scores", str(f), "--out", str(tmp_path / "x")]
    assert main([*argv, "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f.name in err and "inf" in err, err
