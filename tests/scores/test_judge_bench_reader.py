"""Judges' replies in a JUDGE-BENCH file are one format of the score-file registry (issue 61):
detected by content, forced as ``judge_bench:PATH``, described by ``data doctor``, and read into
the same rows as ``--scores shipped`` on the same file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metajudge.cli import main
from metajudge.data.judge_bench import read_file
from metajudge.scores import readers
from metajudge.scores.files import read_scores
from metajudge.scores.readers.alignment import IdPolicy
from metajudge.scores.shipped import shipped_scores

#: (human scores, the judge's reply) of each instance; "no idea" is an invalid reply
ROWS = [
    ([1, 2], "Rating: 1"),
    ([2, 2], "Rating: 3"),
    ([3, 4], "4"),
    ([4, 4], "no idea"),
    ([5, 4], "Rating: 5"),
    ([2, 3], "Score 2"),
    ([4, 5], "5"),
    ([1, 1], "Rating: 2"),
]


def _file(tmp_path: Path, replies: bool = True, name: str = "jb.json") -> Path:
    insts = []
    for i, (human, reply) in enumerate(ROWS):
        ann = {"individual_human_scores": human, "mean_human": sum(human) / len(human)}
        insts.append(
            {
                "id": i,
                "instance": f"text {i}",
                "annotations": {"quality": ann | ({"toy/judge": reply} if replies else {})},
            }
        )
    obj = {
        "dataset": "toy",
        "dataset_url": "-",
        "annotations": [{"metric": "quality", "category": "graded", "worst": 1, "best": 5}],
        "instances": insts,
    }
    p = tmp_path / name
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


def test_detected_by_content_and_read_as_shipped(tmp_path: Path) -> None:
    f = _file(tmp_path)
    assert readers.detect(f).name == "judge_bench"
    assert "judge_bench" in readers.FORCIBLE
    ds = read_file(f)
    got = read_scores(f, ds.records)
    assert got == read_scores(f, ds.records, fmt="judge_bench") == shipped_scores(ds)
    assert [r["score"] for r in got] == [1.0, 3.0, 4.0, None, 5.0, 2.0, 5.0, 2.0]
    assert got[3]["error"] == "invalid reply: no label found"  # counted, never guessed
    assert {r["metric"] for r in got} == {"toy/judge"}


def test_a_file_without_replies_is_not_a_score_file(tmp_path: Path) -> None:
    f = _file(tmp_path, replies=False)
    assert not readers.READERS["judge_bench"].sniff(readers.base.Head(f))


def test_instances_the_dataset_lacks_are_dropped_and_counted(tmp_path: Path) -> None:
    f = _file(tmp_path)
    records = read_file(f).records[:5]
    ids = IdPolicy()
    got = read_scores(f, records, ids=ids)
    assert [r["item"] for r in got] == ["0", "1", "2", "3", "4"]
    assert ids.summary()["rows_dropped"] == 3


def test_meta_eval_reads_the_replies_as_shipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--scores judge_bench:FILE`` and ``--scores shipped`` on the same file: the same cell."""
    f = _file(tmp_path)
    cells = {}
    for spec in ("shipped", f"judge_bench:{f}", str(f)):
        out = tmp_path / f"run{len(cells)}"
        argv = ["meta-eval", "--input", str(f), "--scores", spec, "--protocol", "pointwise"]
        argv += ["--n-boot", "20", "--no-baselines", "--no-plots", "--quiet", "--out", str(out)]
        assert main(argv) == 0, capsys.readouterr().err
        res = json.loads((out / "result.json").read_text(encoding="utf-8"))
        cells[spec] = [(c["metric"], c["stats"]["pearson"]) for c in res["cells"]]
    first = next(iter(cells.values()))
    assert first and all(v == first for v in cells.values())


def test_doctor_names_the_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _file(tmp_path)
    assert main(["data", "doctor", str(f), "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["format"] == "judge_bench" and d["rows"] == len(ROWS)
    assert d["score_columns"] == ["toy/judge"] and d["missing"] == {"toy/judge": 1}
    # the file holds the human labels too: the command it prints reads it as both
    assert d["command"] == f"metajudge meta-eval --input {f} --scores {f} --out runs/jb"
