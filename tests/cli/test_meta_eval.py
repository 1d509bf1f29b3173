"""``metajudge meta-eval`` and ``metajudge report`` end to end on the real RAGChecker data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metajudge.cli import main


def test_meta_eval_external_scores_reproduce_ragchecker(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rc"
    rc = main(
        [
            "meta-eval",
            "--dataset",
            "ragchecker_meta_eval",
            "--data-dir",
            str(data_dir),
            "--scores",
            "shipped",
            "--n-boot",
            "200",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "normalize=minmax" in printed
    # one scale (issue 26): the terminal prints what table.md does, on [-1, 1] with CIs; ours
    # beside the published value (Table 17 prints 49.66: the same number, x100)
    assert _values(printed, "| ragchecker |") == [
        *("0.4966", "0.4966", "0.4695", "0.4695", "0.6067", "0.6067"),
        *("0.5811", "0.5811", "0.6193", "0.6193", "0.6090", "0.6090"),
    ]
    assert _values(printed, "| Inter-Human Correlation |")[:2] == ["0.6367", "0.6367"]
    assert "| ragchecker | 0.4966 [" in printed  # ours carries its CI
    res = json.loads((out / "result.json").read_text())
    assert res["protocol"]["normalize"] == "minmax" and res["protocol"]["n_boot"] == 200
    # --percent re-renders the same numbers x100, in the terminal and every file
    assert main(["report", "render", str(out), "--percent", "--no-plots"]) == 0
    printed = capsys.readouterr().out
    assert _values(printed, "| ragchecker |")[:6] == [
        *("49.66", "49.66", "46.95", "46.95", "60.67", "60.67")
    ]
    assert _values(printed, "| Inter-Human Correlation |")[:2] == ["63.67", "63.67"]
    assert "| ragchecker | 49.66 [" in (out / "table.md").read_text(encoding="utf-8")
    assert json.loads((out / "result.json").read_text())["display"] == {"percent": True}


def _values(printed: str, start: str) -> list[str]:
    """The cells of the table row that starts with ``start``, without their CIs."""
    row = next(line for line in printed.splitlines() if line.startswith(start))
    cells = row.strip().strip("|").split(" | ")[1:]
    return [re.sub(r" \[.*?\]| \(.*?\)", "", c).strip() for c in cells]


def test_meta_eval_computes_caches_and_reuses_scores(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "lex"
    args = [
        "meta-eval",
        "--dataset",
        "ragchecker_meta_eval",
        "--data-dir",
        str(data_dir),
        "--metrics",
        "bleu,rouge_l",
        "--n-boot",
        "100",
        "--out",
        str(out),
        "--paths-only",
    ]
    assert main(args) == 0
    for name in (
        "scores.jsonl",
        "result.json",
        "table.md",
        "table.csv",
        "table.json",
        "table.tex",
        "correlation_pearson.png",
        "scatter.png",
    ):
        assert (out / name).is_file(), name
    first = json.loads((out / "result.json").read_text())
    names = [m["name"] for m in first["metrics"]]
    # issue 14: the trivial baselines are extra rows after the metric rows
    assert names == ["bleu", "rouge_l", "trivial.length_words", "trivial.random"]
    assert first["metrics"][0]["signatures"]["bleu"][0].startswith("bleu|")

    from metajudge.scores import scoring

    def boom(*a: object, **k: object) -> None:
        raise AssertionError("scores should come from OUT/scores.jsonl")

    monkeypatch.setattr(scoring, "score_dataset", boom)
    assert main(args) == 0
    second = json.loads((out / "result.json").read_text())
    assert second["cells"] == first["cells"]


def test_meta_eval_bad_inputs(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "s.csv"
    bad.write_text("item,system,m\n999,x,1\n")
    rc = main(
        [
            "meta-eval",
            "--dataset",
            "ragchecker_meta_eval",
            "--data-dir",
            str(data_dir),
            "--scores",
            str(bad),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "s.csv:2" in err and "unknown item id '999'" in err
    rc = main(
        [
            "meta-eval",
            "--dataset",
            "ragchecker_meta_eval",
            "--data-dir",
            str(data_dir),
            "--metrics",
            "no_such_metric",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert rc == 2
    assert "no_such_metric" in capsys.readouterr().err
    assert not (tmp_path / "o" / "result.json").exists()


@pytest.mark.slow
def test_readme_demo_command(data_dir: Path, tmp_path: Path) -> None:
    """The README's main command: BLEU, ROUGE-L, METEOR and BERTScore on the embedded defaults."""
    out = tmp_path / "demo"
    rc = main(
        [
            "meta-eval",
            "--dataset",
            "ragchecker_meta_eval",
            "--metrics",
            "bleu,rouge_l,meteor,bertscore",
            "--out",
            str(out),
            "--paths-only",
        ]
    )
    assert rc == 0
    res = json.loads((out / "result.json").read_text())
    names = [m["name"] for m in res["metrics"]]  # + the trivial baseline rows (issue 14)
    assert names[:4] == ["bleu", "rouge_l", "meteor", "bertscore"]
    assert names[4:] == ["trivial.length_words", "trivial.random"]
    for c in res["cells"]:
        assert c["stats"]["pearson"]["value"] is not None, c["metric"]
    for name in ("table.md", "table.json", "correlation_pearson.png", "scatter.png"):
        assert (out / name).stat().st_size > 0


GRADED = Path(__file__).parents[1] / "fixtures" / "byod" / "faithfulness.jsonl"
AUTHORS = GRADED.with_name("faithfulness_authors.csv")


def test_meta_eval_drops_unknown_score_rows_once_and_chooses_the_protocol(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """issue 26: the authors' CSV has a row for an item the file lacks: dropped, counted in one
    warning and in result.json; Likert data without --protocol is meta-evaluated pointwise."""
    argv = ["meta-eval", "--input", str(GRADED), "--scores", str(AUTHORS), "--n-boot", "20"]
    assert main([*argv, "--no-plots", "--out", str(tmp_path / "o")]) == 0
    cap = capsys.readouterr()
    chosen = "protocol: pointwise (chosen from the data: per-response labels; --protocol to change)"
    assert cap.err.count(chosen) == 1
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    want = (
        "1 score row for ids the dataset does not contain was dropped (faithfulness_authors.csv: "
        "1; first ids: 39553812/abstractive; --strict-ids refuses them)"
    )
    assert [w for w in warned if "ids the dataset does not contain" in w] == [want]
    res = json.loads((tmp_path / "o" / "result.json").read_text())
    assert res["protocol"]["correlate"] == "pointwise"
    assert res["run"]["score_ids"]["rows_dropped"] == 1
    assert res["run"]["score_ids"]["first"] == ["39553812/abstractive"]
    md = (tmp_path / "o" / "table.md").read_text()
    assert md.count("first ids: 39553812/abstractive") == 1
    assert main([*argv, "--no-plots", "--out", str(tmp_path / "s"), "--strict-ids"]) == 2
    err = capsys.readouterr().err
    assert "faithfulness_authors.csv:26: field item: " in err and "'39553812'" in err


def test_meta_eval_on_pairs_keeps_the_pairwise_difference(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["meta-eval", "--dataset", "ragchecker_meta_eval", "--data-dir", str(data_dir)]
    argv += ["--scores", "shipped", "--n-boot", "20", "--no-plots", "--no-compare"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 0
    assert "protocol: pairwise-difference (chosen from the data: pairwise records" in (
        capsys.readouterr().err
    )
