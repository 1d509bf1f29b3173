"""issue 42: every message about missing scores matches what the run did, in every protocol
(pointwise default: drop, as metric papers do; pairwise differences under minmax: the median,
as RAGChecker); and ``--subset`` sets the other subsets' score rows aside without calling them
unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "byod" / "graded.jsonl"


def _scores_with_gaps(tmp_path: Path) -> Path:
    """A score file of the 12 responses in which 3 have no score (missing upstream)."""
    rows = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines()[1:]:
        r = json.loads(line)
        key = f"{r['id']}::{r['system']}"
        rows.append({"key": key, "metric": "m", "score": float(len(r["response"]) % 7)})
    for r in rows[:3]:
        r["score"] = None
    path = tmp_path / "gaps.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(tmp_path: Path, name: str, caplog: pytest.LogCaptureFixture, *extra: str) -> tuple:
    caplog.clear()
    out = tmp_path / name
    argv = ["meta-eval", "--input", str(FIXTURE), "--scores", str(_scores_with_gaps(tmp_path)),
            "--no-baselines", "--n-boot", "50", "--no-plots", "--out", str(out), *extra]  # fmt: skip
    assert main(argv) == 0
    res = json.loads((out / "result.json").read_text(encoding="utf-8"))
    return res, (out / "table.md").read_text(encoding="utf-8"), caplog.text, out


def test_pointwise_default_drops_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    res, md, log, out = _run(tmp_path, "pw", caplog, "--protocol", "pointwise")
    (miss,) = res["metrics"][0]["missing"].values()
    assert res["protocol"]["missing"] == "drop"
    assert miss["pairs_dropped"] == 3 and miss["pairs_imputed_median"] == 0
    lines = [x for x in md.splitlines() if x.startswith("- `m`: 3")]
    assert lines == ["- `m`: 3 of 12 responses dropped (no score)"]
    assert "missing=drop" in md  # the header line states the rule
    assert (
        "responses without a score 3 (--missing drop: imputed with the median 0, dropped 3)" in md
    )
    assert "3 of 12 responses dropped (no score) (--missing drop)" in log
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "0 responses imputed (median), 3 responses dropped (--missing drop)" in html
    # missing upstream, no error recorded: not called an error / parse failure
    assert "missing in the scores given, no error recorded" in html
    assert "parse failure" not in html
    assert res["cells"][0]["n_responses"] == 9


def test_pointwise_median_when_asked(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    res, md, _log, _ = _run(
        tmp_path, "med", caplog, "--protocol", "pointwise", "--missing", "median"
    )
    lines = [x for x in md.splitlines() if x.startswith("- `m`: 3")]
    assert lines == ["- `m`: 3 of 12 responses imputed with the median"]
    assert res["cells"][0]["n_responses"] == 12


def test_pairwise_minmax_imputes_the_median_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    res, md, log, _ = _run(tmp_path, "pd", caplog, "--protocol", "pairwise-difference")
    (miss,) = res["metrics"][0]["missing"].values()
    assert res["protocol"]["missing"] == "median" and miss["pairs_imputed_median"] > 0
    assert "pairs imputed with the median" in md and "missing=median" in md
    assert "(--missing median)" in log


def test_subset_sets_the_other_subsets_rows_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import metajudge as mj
    from metajudge.data.loading import open_dataset

    rows = [r for r in mj.shipped_scores(open_dataset("lftqa_eval")) if r["metric"] == "bleu"]
    path = tmp_path / "both_subsets.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"item": r["item"], "system": r["system"], "metric": "bleu", "score": r["score"]}
            )
            + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    out = tmp_path / "sub"
    argv = ["meta-eval", "--dataset", "lftqa_eval", "--subset", "fetaqa", "--scores", str(path),
            "--protocol", "pointwise", "--no-baselines", "--n-boot", "10", "--no-plots",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    res = json.loads((out / "result.json").read_text(encoding="utf-8"))
    ids = res["run"]["score_ids"]
    assert ids["rows_dropped"] == 0 and ids["rows_other_subsets"] == 1493
    assert "does not contain" not in caplog.text
    md = (out / "table.md").read_text(encoding="utf-8")
    assert "1493 score rows of the dataset's other subsets set aside (--subset fetaqa)" in md
    assert "Dropped score rows" not in md
